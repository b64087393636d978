# passk in a container: built in a Rust image, shipped in a slim Python image (candidates
# run under its python3) as an unprivileged user.
#
#   docker build -t passk .
#   docker run --rm -v "$PWD:/data" -w /data --user "$(id -u):$(id -g)" passk \
#       evaluate samples.jsonl --problems basic

FROM rust:1-slim-bookworm AS build
WORKDIR /src
COPY . .
RUN cargo build --release --locked -p passk-cli

FROM python:3.12-slim-bookworm
RUN useradd --create-home --uid 10001 passk
COPY --from=build /src/target/release/passk /usr/local/bin/passk
USER passk
WORKDIR /home/passk
ENTRYPOINT ["passk"]
CMD ["--help"]

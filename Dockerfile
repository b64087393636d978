# passk in a container: the binary built on the host, in a Debian image with python3
# (candidates run under it), run as an unprivileged user by default.
#
#   cargo build --release --locked -p passk-cli
#   docker build -t passk .
#   docker run --rm -v "$PWD:/data" -w /data passk evaluate samples.jsonl --problems basic
#
# BASE is any Debian bookworm image; without a registry, tests/support/make-docker-base
# makes one (passk-base:bookworm) with debootstrap. BINARY is the passk to ship.

ARG BASE=debian:bookworm-slim
FROM ${BASE}
ARG BINARY=target/release/passk
RUN if ! command -v python3 >/dev/null; then \
        apt-get update && apt-get install -y --no-install-recommends python3 && rm -rf /var/lib/apt/lists/*; \
    fi \
    && useradd --create-home --uid 10001 passk
COPY ${BINARY} /usr/local/bin/passk
USER passk
WORKDIR /home/passk
ENTRYPOINT ["passk"]
CMD ["--help"]

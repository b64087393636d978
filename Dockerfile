# passk in a container: the binary built on the host, in a Debian image with python3
# (candidates run under it), run as an unprivileged user by default, or as the owner of
# the folder it writes its results in:
#
#   cargo build --release --locked -p passk-cli
#   docker build -t passk .
#   docker run --rm --user "$(id -u):$(id -g)" -v "$PWD:/data" -w /data passk \
#     evaluate samples.jsonl --problems basic
#
# With nothing from the host but a samples file, the image fetches HumanEval itself:
#
#   docker run --rm --user "$(id -u):$(id -g)" -v "$PWD:/data" -w /data --entrypoint sh passk -c \
#     'passk evaluate samples.jsonl --problems "$(fetch-humaneval ~/humaneval)/HumanEval.jsonl.gz"'
#
# Any user gets /tmp as its home (the fetched HumanEval, passk's cache), so that a --user
# the image does not know needs no home of its own.
#
# BASE is any Debian bookworm image; without a registry, tests/support/make-docker-base
# makes one (passk-base:bookworm) with debootstrap. BINARY is the passk to ship.

ARG BASE=debian:bookworm-slim
FROM ${BASE}
ARG BINARY=target/release/passk
RUN if ! command -v python3 >/dev/null || [ ! -e /etc/ssl/certs/ca-certificates.crt ]; then \
        apt-get update && apt-get install -y --no-install-recommends python3 ca-certificates \
        && rm -rf /var/lib/apt/lists/*; \
    fi \
    && useradd --no-create-home --home-dir /tmp --uid 10001 passk
COPY ${BINARY} /usr/local/bin/passk
COPY problems/fetch-humaneval /usr/local/bin/fetch-humaneval
ENV HOME=/tmp
USER passk
WORKDIR /tmp
ENTRYPOINT ["passk"]
CMD ["--help"]

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
# LANGUAGES says which toolchains besides python3 the image holds: `python` (the
# default: none), `all`, or a space-separated list of cpp, java, go, rust, javascript,
# typescript and bash. Each comes from Debian's packages, as README's "Other languages"
# lists them, installed without recommends; a second tag holds them all:
#
#   docker build --build-arg LANGUAGES=all -t passk:languages .
#
# They are installed in a stage of their own (`toolchains`), before the binary is
# copied: a new passk reuses that layer, and `--target toolchains` makes it ahead of time
# (.ci/run does, while the tests build).
#
# BASE is any Debian bookworm image; without a registry, tests/support/make-docker-base
# makes one (passk-base:bookworm) with debootstrap. BINARY is the passk to ship.

ARG BASE=debian:bookworm-slim
FROM ${BASE} AS toolchains
ARG LANGUAGES=python
# openjdk's set-up links its manual pages, which slim images leave out: their folder is
# made first.
RUN set -eu; \
    packages=""; \
    if ! command -v python3 >/dev/null || [ ! -e /etc/ssl/certs/ca-certificates.crt ]; then \
        packages="python3 ca-certificates"; \
    fi; \
    [ "$LANGUAGES" = all ] && LANGUAGES="cpp java go rust javascript typescript bash"; \
    for language in $LANGUAGES; do \
        case "$language" in \
            python) ;; \
            cpp) packages="$packages g++ libboost-dev libssl-dev" ;; \
            java) packages="$packages openjdk-17-jdk-headless libjavatuples-java" ;; \
            go) packages="$packages golang-go golang-github-stretchr-testify-dev" ;; \
            rust) packages="$packages rustc librust-rand-dev librust-regex-dev librust-md5-dev librust-memchr-dev librust-aho-corasick-dev" ;; \
            javascript) packages="$packages nodejs" ;; \
            typescript) packages="$packages nodejs node-typescript" ;; \
            bash) packages="$packages bash" ;; \
            *) echo "LANGUAGES: $language is none of python, all, cpp, java, go, rust, javascript, typescript, bash" >&2; \
               exit 1 ;; \
        esac; \
    done; \
    if [ -n "$packages" ]; then \
        mkdir -p /usr/share/man/man1; \
        apt-get update; \
        DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $packages; \
        apt-get clean; \
        rm -rf /var/lib/apt/lists/*; \
    fi; \
    useradd --no-create-home --home-dir /tmp --uid 10001 passk
ENV HOME=/tmp
USER passk
WORKDIR /tmp
ENTRYPOINT ["passk"]
CMD ["--help"]

# passk itself, last: the layers above are made once, not again for each new binary (on
# a slow storage driver, each step costs many seconds).
FROM toolchains
ARG BINARY=target/release/passk
COPY ${BINARY} /usr/local/bin/passk
COPY problems/fetch-humaneval /usr/local/bin/fetch-humaneval

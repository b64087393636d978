# nginx from Debian's package, for deploy/compose: built on the same Debian base as
# passk's image, so that it needs no registry (BASE=passk-base:bookworm, made by
# tests/support/make-docker-base, where none is reachable).
ARG BASE=debian:bookworm-slim
FROM ${BASE}
RUN set -eu; \
    apt-get update; \
    DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends nginx-light; \
    apt-get clean; \
    rm -rf /var/lib/apt/lists/*; \
    ln -sf /dev/stdout /var/log/nginx/access.log; \
    ln -sf /dev/stderr /var/log/nginx/error.log
COPY nginx.conf /etc/nginx/nginx.conf
CMD ["nginx", "-g", "daemon off;"]

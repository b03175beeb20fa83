# The scanner's own image: `docker run ... mcp-sandbox scan TARGET`. It has no engine inside; it drives the HOST's
# Docker engine through a mounted socket (-v /var/run/docker.sock:/var/run/docker.sock), which gives it
# root-equivalent control of that host: see docs/ci.md ("The Docker image") before you run it.
#
#   docker build -t mcp-sandbox .
#
# Behind a TLS-intercepting proxy, put the proxy's CA bundle at ./ca-bundle.crt first: only the throwaway build stage
# trusts it (for pip); it never reaches the final image. The runtime images the scanner builds on the host engine come
# from images/, copied in with the source (an editable install reads them from there).
ARG BASE=debian:trixie-slim

FROM ${BASE} AS build
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends python3 python3-venv ca-certificates
# ca-bundle.crt is optional: the glob lets the build go on without it (pyproject.toml always matches).
COPY pyproject.toml ca-bundle.cr[t] /tmp/ca/
RUN python3 -m venv /opt/mcp-sandbox/venv \
 && if [ -s /tmp/ca/ca-bundle.crt ]; then export PIP_CERT=/tmp/ca/ca-bundle.crt; fi \
 && python3 -c "import tomllib; print('\n'.join(tomllib.load(open('/tmp/ca/pyproject.toml', 'rb'))['project']['dependencies']))" >/tmp/requirements.txt \
 && /opt/mcp-sandbox/venv/bin/pip install --no-cache-dir --disable-pip-version-check -q -r /tmp/requirements.txt "setuptools>=68"
# Dependencies above are cached as a layer; the source below changes more often.
COPY pyproject.toml README.md /opt/mcp-sandbox/
COPY scanner /opt/mcp-sandbox/scanner
COPY sandbox /opt/mcp-sandbox/sandbox
COPY images /opt/mcp-sandbox/images
RUN /opt/mcp-sandbox/venv/bin/pip install --no-cache-dir --disable-pip-version-check -q --no-deps \
      --no-build-isolation -e /opt/mcp-sandbox \
 && /opt/mcp-sandbox/venv/bin/python -m compileall -q /opt/mcp-sandbox/scanner /opt/mcp-sandbox/sandbox

FROM ${BASE}
# git: the scanner builds the sandbox's seeded /workspace repository with it (sandbox/workspace_seed.py).
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends python3 ca-certificates git \
 && rm -rf /var/lib/apt/lists/* /var/cache/apt/archives/*.deb \
 && useradd --uid 10000 --create-home --shell /usr/sbin/nologin scanner
COPY --from=build /opt/mcp-sandbox /opt/mcp-sandbox
ENV PATH=/opt/mcp-sandbox/venv/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    PYTHONDONTWRITEBYTECODE=1 \
    LANG=C.UTF-8
LABEL org.opencontainers.image.title="mcp-sandbox" \
      org.opencontainers.image.description="Vet an untrusted MCP server in a hardened throwaway Docker sandbox (drives the host engine through a mounted socket)" \
      org.opencontainers.image.licenses="Apache-2.0"
# Non-root; reaching the socket needs its group: --group-add "$(stat -c %g /var/run/docker.sock)".
USER 10000:10000
WORKDIR /work
ENTRYPOINT ["mcp-sandbox"]
CMD ["--help"]

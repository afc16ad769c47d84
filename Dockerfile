# The app on port 8000, with the CPU wheel of torch 2.13.0:
#   docker build -t anatomy . && docker run -p 8000:8000 anatomy
# Built and smoke-tested (page, a trace, the research desk's figures, /healthz) by
# scripts/container-smoke.sh, which also shows the build arguments for a machine without an image registry.
#
# BASE_IMAGE: any Debian 12 (bookworm) root file system: debian:bookworm-slim from a registry, or one made
#   from Debian's packages with mmdebstrap and imported (what scripts/container-smoke.sh does offline).
# TORCH: what pip installs torch from: by default the CPU wheel from PyTorch's CPU index (so nothing pulls the
#   CUDA build); offline, the path of a local CPU wheel mounted into the build.
# BUILD_CA: a CA bundle that pip and npm trust during the build only (a TLS-inspecting proxy's), mounted by
#   the build command; it is never copied into the image.
ARG BASE_IMAGE=debian:bookworm-slim

FROM ${BASE_IMAGE} AS build
ARG TORCH="torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu"
ARG BUILD_CA=
ENV DEBIAN_FRONTEND=noninteractive PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_CACHE_DIR=1
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 python3-venv nodejs npm ca-certificates \
 && rm -rf /var/lib/apt/lists/*
RUN python3 -m venv /opt/venv && /opt/venv/bin/pip install ${BUILD_CA:+--cert "$BUILD_CA"} $TORCH
# The dependencies exactly as pyproject.toml lists them (torch==2.13.0 is then already satisfied by the CPU wheel).
COPY pyproject.toml /src/
RUN python3 -c "import tomllib; print(*tomllib.load(open('/src/pyproject.toml', 'rb'))['project']['dependencies'], sep='\n')" \
      > /src/requirements.txt \
 && /opt/venv/bin/pip install ${BUILD_CA:+--cert "$BUILD_CA"} -r /src/requirements.txt \
 && /opt/venv/bin/python -c "import torch; assert torch.__version__.startswith('2.13.0') and not torch.version.cuda, torch.__version__"
# The browser libraries (three.js, KaTeX, Chart.js, Swagger UI), exactly as package-lock.json pins them, and
# the page's JavaScript bundled and minified from them and static/ (npm run build: esbuild, a devDependency,
# pruned once the bundle is written; app/startup/bundle.py).
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund ${BUILD_CA:+--cafile "$BUILD_CA"}
COPY scripts/build-js.mjs scripts/
COPY templates templates
COPY static static
RUN npm run build && npm prune --omit=dev --no-audit --no-fund
# The default input's live figures and go-deeper tables, computed ahead by the page's own JavaScript under Node
# (app/startup/prerender.py, into bundle/prerendered/), which the server renders for a reader without JavaScript: the
# final image has no Node.
COPY app app
COPY model model
COPY recorder recorder
COPY scene scene
COPY article article
COPY content content
COPY research research
COPY scripts/prerender.mjs scripts/
RUN /opt/venv/bin/python -m app.prerender

FROM ${BASE_IMAGE}
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PATH=/opt/venv/bin:$PATH
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends python3 \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --system --home-dir /srv/anatomy anatomy
COPY --from=build /opt/venv /opt/venv
WORKDIR /srv/anatomy
# Everything the app reads at run time (tests/test_container.py checks this list against a running copy):
# the code, the trained weights (model/artifacts), the article, the templates, the stage, the research
# desk (research/results.py renders its results and records; the gallery feeds step 28), the browser
# libraries and the page's bundle (checked at start-up against static/ and node_modules: app/startup/bundle.py).
COPY app app
COPY model model
COPY recorder recorder
COPY scene scene
COPY article article
COPY templates templates
COPY static static
COPY content content
COPY research research
COPY --from=build /src/node_modules node_modules
COPY --from=build /src/bundle bundle
USER anatomy
EXPOSE 8000
HEALTHCHECK --interval=30s --timeout=3s --start-period=60s \
  CMD python3 -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8000/healthz', timeout=2)"
# python -m puts its working directory (/srv/anatomy) first on sys.path: app, model and research import from here.
# app/startup/serve.py: the shipped files checked once (one line and exit 3 if one is missing or altered), then uvicorn
# with bounded request heads, head-read and keep-alive times and connections.
CMD ["python3", "-m", "app", "--host", "0.0.0.0", "--port", "8000"]

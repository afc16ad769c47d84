# Serves the app on port 8000 with CPU-only torch:  docker build -t anatomy . && docker run -p 8000:8000 anatomy

FROM node:20-slim AS assets
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund

FROM python:3.11-slim
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PIP_DISABLE_PIP_VERSION_CHECK=1
WORKDIR /srv/anatomy
# The CPU wheel first, from PyTorch's CPU index, so nothing pulls the CUDA build.
RUN pip install --no-cache-dir torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu
COPY pyproject.toml README.md ./
COPY app app
COPY model model
COPY templates templates
COPY static static
COPY content content
COPY research/results/views research/results/views
RUN pip install --no-cache-dir -e . && useradd --system --home /srv/anatomy anatomy
COPY --from=assets /src/node_modules node_modules
USER anatomy
EXPOSE 8000
HEALTHCHECK --interval=30s --timeout=3s --start-period=30s \
  CMD python -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8000/healthz', timeout=2)"
CMD ["uvicorn", "app.main:app", "--host", "0.0.0.0", "--port", "8000"]

#!/usr/bin/env bash
# Installs everything the project needs on a fresh Debian-like machine:
#   Python dependencies (torch pinned to the 2.13.0 CPU wheel) and the package itself, editable;
#   the browser libraries from npm (three.js, KaTeX, Swagger UI), exactly as package-lock.json says, and the
#   page's JavaScript bundled and minified from them and static/ by esbuild into bundle/ (`npm run build`,
#   about a second; the app refuses to start without it, app/startup/bundle.py), then the default input's go-deeper
#   tables computed ahead by that JavaScript under Node (`python3 -m app.prerender`, bundle/prerendered/), which
#   the server renders for a reader without JavaScript;
#   with --with-browser, Debian's Chromium for the browser tests (never `playwright install`) and the
#   optional extras `notebook` (pythreejs, ipywidgets, nbclient, ipykernel) that tests/scene/test_notebook.py
#   needs and `research` (Ray) for tests/research/test_research_ray.py: the test command installs them, the app
#   command stays lean.
# Idempotent: a second run only checks. Used by both commands at the top of README.md.
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON="${PYTHON:-python3}"
with_browser=0
for arg in "$@"; do
  case "$arg" in
    --with-browser) with_browser=1 ;;
    *) echo "usage: $0 [--with-browser]" >&2; exit 2 ;;
  esac
done

as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }
apt_install() {
  echo "setup: apt-get install $*"
  as_root apt-get update -qq
  DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq "$@" >/dev/null
}

if ! command -v npm >/dev/null 2>&1; then apt_install nodejs npm; fi
if [ "$with_browser" = 1 ] && [ ! -x /usr/bin/chromium ]; then apt_install chromium; fi

echo "setup: Python dependencies"
extras="test"
if [ "$with_browser" = 1 ]; then extras="test,notebook,research"; fi
"$PYTHON" -m pip install --quiet --disable-pip-version-check -e ".[$extras]"

echo "setup: npm packages"
npm ci --no-audit --no-fund --loglevel=error

echo "setup: the page's JavaScript bundle"
npm run --silent build

echo "setup: the default input's figures and tables, computed ahead by the page's own code (app/startup/prerender.py)"
"$PYTHON" -m app.prerender

echo "setup: done"

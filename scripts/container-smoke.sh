#!/usr/bin/env bash
# Builds the image from the Dockerfile, runs it and smoke-tests it over HTTP: /healthz, the page, a trace,
# every research-desk figure (each must have its results, none "not available"), a vendor library, a 422
# for bad input; then checks that the server runs as a non-root user with torch's CPU build and that the
# build's CA bundle did not end up in the image. Removes its container on exit; keeps the image (and, with
# podman's build mounts, IMAGE-build: the build stage, whose layers are the next build's cache).
#
#   bash scripts/container-smoke.sh            # build + run + checks
#   ENGINE=docker PORT=8000 bash scripts/container-smoke.sh
#
# ENGINE: podman or docker (default: the first whose `info` answers; podman is installed from Debian's
#   packages when neither is there and we are root). PORT: the host port (default 8808, on 127.0.0.1 only).
# IMAGE: the tag built (default localhost/anatomy:smoke).
# Offline, where no image registry is reachable:
# - BASE_IMAGE (default debian:bookworm-slim) is pulled if it can be; otherwise a Debian 12 minbase root file
#   system is made from Debian's packages with mmdebstrap and imported as localhost/anatomy-base:bookworm.
# - with podman, the torch 2.13.0 CPU wheel is taken from pip's find-links (pip config / PIP_FIND_LINKS),
#   or TORCH_WHEEL, and mounted into the build; and the CA bundle pip trusts here (pip config's cert /
#   PIP_CERT, or BUILD_CA) is mounted for pip and npm during the build only.
set -euo pipefail
cd "$(dirname "$0")/.."

PORT="${PORT:-8808}"
IMAGE="${IMAGE:-localhost/anatomy:smoke}"
BASE_IMAGE="${BASE_IMAGE:-debian:bookworm-slim}"
LOCAL_BASE="localhost/anatomy-base:bookworm"
DEBIAN_MIRROR="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
NAME="anatomy-smoke-$$"
say() { echo "container-smoke: $*"; }
die() { echo "container-smoke: FAILED: $*" >&2; exit 1; }
as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }

# ---- the engine ----------------------------------------------------------------------------------
engine_runs() { command -v "$1" >/dev/null 2>&1 && "$1" info >/dev/null 2>&1; }
if [ -z "${ENGINE:-}" ]; then
  for e in podman docker; do if engine_runs "$e"; then ENGINE="$e"; break; fi; done
fi
if [ -z "${ENGINE:-}" ]; then
  say "no container engine answers; installing podman from Debian's packages"
  as_root apt-get update -qq
  DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq podman >/dev/null
  ENGINE=podman
fi
engine_runs "$ENGINE" || die "$ENGINE info fails: $("$ENGINE" info 2>&1 | tail -3)"
say "engine: $("$ENGINE" --version)"

image_exists() { "$ENGINE" image inspect "$1" >/dev/null 2>&1; }

# ---- the base image ------------------------------------------------------------------------------
if ! image_exists "$BASE_IMAGE" && ! timeout 120 "$ENGINE" pull -q "$BASE_IMAGE" >/dev/null 2>&1; then
  say "cannot pull $BASE_IMAGE; making a Debian 12 root file system with mmdebstrap instead"
  if ! image_exists "$LOCAL_BASE"; then
    if ! command -v mmdebstrap >/dev/null 2>&1; then
      as_root apt-get update -qq
      DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq mmdebstrap >/dev/null
    fi
    tarball="$(mktemp --suffix=.tar)"
    as_root mmdebstrap --quiet --variant=minbase --mode=root bookworm "$tarball" \
      "deb $DEBIAN_MIRROR bookworm main" "deb $DEBIAN_MIRROR bookworm-updates main" \
      "deb ${DEBIAN_MIRROR%/debian}/debian-security bookworm-security main"
    "$ENGINE" import --change 'CMD ["/bin/bash"]' "$tarball" "$LOCAL_BASE" >/dev/null
    rm -f "$tarball"
  fi
  BASE_IMAGE="$LOCAL_BASE"
fi
say "base image: $BASE_IMAGE"

# ---- how containers start here -------------------------------------------------------------------
# Podman's defaults fail on some hosts. Seen on a Debian 12 VM with cgroups v1+v2 ("hybrid"), as root:
#   crun: setrlimit `RLIMIT_NOFILE`: Operation not permitted   (podman asks for more than the hard limit)
#   crun: cgroups in hybrid mode not supported, drop all controllers from cgroupv2
# There runc (Debian's package) with limits within the host's works, for the build's RUN steps too.
run_flags=()
if [ "$ENGINE" = podman ] && ! err=$("$ENGINE" run --rm --network none "$BASE_IMAGE" true 2>&1); then
  say "podman's defaults cannot start a container here: $err"
  command -v runc >/dev/null 2>&1 || { DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq runc >/dev/null; }
  run_flags=(--runtime runc --ulimit "nofile=$(ulimit -Hn):$(ulimit -Hn)" --ulimit nproc=4096:4096)
  err=$("$ENGINE" run --rm --network none "${run_flags[@]}" "$BASE_IMAGE" true 2>&1) || die "runc fails too: $err"
  say "using ${run_flags[*]}"
fi

# ---- the build -----------------------------------------------------------------------------------
pip_config() { python3 -m pip config get "global.$1" 2>/dev/null || true; }
build=(build --build-arg "BASE_IMAGE=$BASE_IMAGE" --network host "${run_flags[@]}")
mounts=()  # podman build -v: for the build stage only (see below)
if [ "$ENGINE" = podman ]; then
  build+=(--format docker)  # keeps the HEALTHCHECK (the OCI format has none)
  if [ -z "${TORCH_WHEEL:-}" ]; then
    for dir in ${PIP_FIND_LINKS:-} $(pip_config find-links); do
      for w in "$dir"/torch-2.13.0+cpu-cp311-cp311-*x86_64.whl; do [ -f "$w" ] && TORCH_WHEEL="$w" && break 2; done
    done
  fi
  if [ -n "${TORCH_WHEEL:-}" ]; then
    say "torch from the local wheel $TORCH_WHEEL"
    mounts+=(-v "$(dirname "$TORCH_WHEEL"):/run/wheels:ro")
    build+=(--build-arg "TORCH=/run/wheels/$(basename "$TORCH_WHEEL")")
  fi
  BUILD_CA="${BUILD_CA:-${PIP_CERT:-$(pip_config cert)}}"
  if [ -n "$BUILD_CA" ] && [ -f "$BUILD_CA" ]; then
    say "pip and npm trust $BUILD_CA during the build"
    mounts+=(-v "$BUILD_CA:/run/build-ca.crt:ro")
    build+=(--build-arg "BUILD_CA=/run/build-ca.crt")
  fi
fi
t0=$(date +%s)
if [ ${#mounts[@]} -gt 0 ]; then
  # A -v mount is given to every RUN step and leaves an empty mount point behind in the layer: so the build
  # stage is built first with the mounts, then the image without them, from the build stage's cached layers.
  "$ENGINE" "${build[@]}" "${mounts[@]}" --target build -t "$IMAGE-build" . || die "$ENGINE build --target build"
fi
"$ENGINE" "${build[@]}" -t "$IMAGE" . || die "$ENGINE build"
say "built $IMAGE in $(( $(date +%s) - t0 )) s, $("$ENGINE" image inspect -f '{{.Size}}' "$IMAGE") bytes"

# ---- run and check -------------------------------------------------------------------------------
cleanup() { "$ENGINE" rm -f "$NAME" >/dev/null 2>&1 || true; }
trap cleanup EXIT
"$ENGINE" run -d --name "$NAME" "${run_flags[@]}" -p "127.0.0.1:$PORT:8000" "$IMAGE" >/dev/null
URL="http://127.0.0.1:$PORT"
t0=$(date +%s)
until curl -fsS -o /dev/null "$URL/healthz" 2>/dev/null; do
  if [ "$("$ENGINE" inspect -f '{{.State.Running}}' "$NAME")" != true ]; then
    "$ENGINE" logs "$NAME" 2>&1 | tail -30; die "the container stopped before /healthz answered"
  fi
  [ $(( $(date +%s) - t0 )) -lt 300 ] || { "$ENGINE" logs "$NAME" 2>&1 | tail -30; die "no /healthz after 300 s"; }
  sleep 2
done
say "/healthz answered $(( $(date +%s) - t0 )) s after the start"

tmp="$(mktemp -d)"
trap 'cleanup; rm -rf "$tmp"' EXIT
get() {  # get PATH EXPECTED_STATUS: the body goes to $tmp/body
  local code
  code=$(curl -sS -o "$tmp/body" -w '%{http_code}' "$URL$1") || die "GET $1: no answer"
  [ "$code" = "$2" ] || { head -c 600 "$tmp/body"; echo; die "GET $1: HTTP $code, expected $2"; }
  say "GET $1 -> $code ($(wc -c <"$tmp/body") bytes)"
}
check() {  # check PYTHON_EXPRESSION_ON_body (str) and doc (JSON, when the body parses)
  python3 - "$tmp/body" "$1" <<'EOF' || die "check failed: $1"
import json, sys
body = open(sys.argv[1], encoding="utf-8").read()
try:
    doc = json.loads(body)
except ValueError:
    doc = None
ok = eval(sys.argv[2], {"body": body, "doc": doc})
if not ok:
    print("container-smoke: body:", body[:600], file=sys.stderr)
sys.exit(0 if ok else 1)
EOF
}

get /healthz 200
get / 200
check '"<html" in body and "id=\"stage\"" in body and "/bundle/stage/main.js" in body'
get "/api/trace?input=42" 200
check 'doc["format"] == "anatomy-trace/1" and doc["input"]["german"] == "zweiundvierzig" and len(doc["nodes"]) > 100'
get "/api/trace?input=not-a-number" 422
check '"accepted" in doc["detail"]'
get /api/figures 200
research=$(python3 -c 'import json,sys; print(*[n for n in json.load(open(sys.argv[1]))["names"] if n.startswith("research-")])' "$tmp/body")
[ -n "$research" ] || die "/api/figures lists no research figure"
for name in $research; do
  get "/api/figures/$name" 200
  check 'doc["data"]["status"] == "results" and doc["data"]["runs"] > 0'
done
get /api/figures/head-gallery 200
get /vendor/three/build/three.module.js 200
get /static/stage/main.js 200
get /bundle/stage/main.js 200  # the page's JavaScript, bundled in the build stage (npm run build)

user=$("$ENGINE" exec "$NAME" id -un)
[ "$user" = anatomy ] || die "the server runs as $user, not anatomy"
torch=$("$ENGINE" exec "$NAME" python3 -c 'import torch; print(torch.__version__, torch.version.cuda)')
[ "$torch" = "2.13.0+cpu None" ] || die "torch in the image: $torch (want 2.13.0+cpu without CUDA)"
"$ENGINE" exec "$NAME" sh -c 'test ! -e /run/build-ca.crt && test ! -e /run/wheels' || die "a build mount is in the image"
if [ "$ENGINE" = podman ]; then  # without systemd podman cannot time the HEALTHCHECK (it logs so): run it once
  "$ENGINE" healthcheck run "$NAME" || die "the image's HEALTHCHECK fails"
  say "the image's HEALTHCHECK passes"
fi
say "runs as $user; torch $torch; no build mounts left in the image"
say "passed"

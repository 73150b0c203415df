#!/usr/bin/env bash
# One entry point for a fresh Debian machine that has only python3:
#   bash scripts/run.sh notebooks   set everything up, then launch JupyterLab on notebooks/
#   bash scripts/run.sh test        set everything up, then run the whole test suite
# Set-up is idempotent: system packages are installed only when missing, the virtual
# environment (.venv) is created once and updated from pyproject.toml.
set -euo pipefail
cd "$(dirname "$0")/.."
mode="${1:-test}"
shift || true

need_apt=()
python3 -c "import ensurepip, venv" 2>/dev/null || need_apt+=(python3-venv python3-pip)
command -v git >/dev/null || need_apt+=(git)
command -v dot >/dev/null || need_apt+=(graphviz)  # pydot's write_png (seed 001's visualizer)
command -v cc >/dev/null || need_apt+=(gcc libc6-dev)  # target "c" and export_library(".so")
if [ ${#need_apt[@]} -gt 0 ]; then
  echo "== installing system packages: ${need_apt[*]}"
  export DEBIAN_FRONTEND=noninteractive
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi

# The real-browser tests (tests/browser/) drive Debian's Chromium with Playwright: pip's
# playwright cannot download browsers here. Optional: if it cannot be installed, those tests
# skip and say why, and everything else still runs.
if [ "$mode" = "test" ] && ! command -v chromium >/dev/null; then
  echo "== installing system packages: chromium (for tests/browser)"
  export DEBIAN_FRONTEND=noninteractive
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo"
  { $SUDO apt-get update -qq && $SUDO apt-get install -y -qq chromium >/dev/null; } \
    || echo "== could not install chromium: the browser tests will be skipped" >&2
fi

if [ ! -x .venv/bin/python ]; then
  echo "== creating .venv"
  python3 -m venv .venv
fi
extras="test,dnnl"  # dnnl: oneDNN for relay.ext.dnnl (tests/relay/backend/test_byoc_dnnl.py)
[ "$mode" = "notebooks" ] && extras="test,dnnl,notebook"
echo "== installing irlab[$extras] into .venv"
.venv/bin/python -m pip install -q --upgrade pip >/dev/null
.venv/bin/python -m pip install -q -e ".[$extras]"

case "$mode" in
  test)
    echo "== running the test suite"
    exec .venv/bin/python -m pytest -n 2 -q tests "$@"
    ;;
  notebooks)
    echo "== launching JupyterLab on notebooks/"
    exec .venv/bin/jupyter lab notebooks/ --ip=0.0.0.0 --no-browser --ServerApp.allow_root=True "$@"
    ;;
  *)
    echo "usage: bash scripts/run.sh [test|notebooks]" >&2
    exit 2
    ;;
esac

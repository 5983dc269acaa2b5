#!/usr/bin/env bash
# Set up everything mcp2repl needs on a fresh machine (Python 3.11+, Node 20): a virtualenv in
# .venv with the package installed editable, and the kernelspec registered in that env.
# Idempotent and quiet when nothing changed. Usage: scripts/bootstrap.sh [--test]
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
  .venv/bin/python -m pip install -q --upgrade pip
fi
extras=""
[ "${1:-}" = "--test" ] && extras="[test]"
stamp=".venv/.installed$extras"
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ]; then
  .venv/bin/python -m pip install -q -e ".$extras"
  touch "$stamp"
fi
.venv/bin/python -m mcp_kernel install --sys-prefix > /dev/null
# The JupyterLab display tests drive Debian's Chromium (no browser download): install it when
# we can (root, as in CI), else those tests say what is missing.
if [ "${1:-}" = "--test" ] && ! command -v chromium > /dev/null && [ "$(id -u)" = 0 ] && command -v apt-get > /dev/null; then
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium) > .venv/apt-chromium.log 2>&1 \
    || echo "could not install chromium (see .venv/apt-chromium.log)" >&2
fi
# Jupyter Enterprise Gateway for the gateway tests, in a venv of its own: it pins jupyter_client<7,
# jupyter_server<2 and pyzmq<25, which cannot share an environment with the kernel's.
if [ "${1:-}" = "--test" ] && [ ! -x .venv-gateway/bin/jupyter-enterprisegateway ]; then
  "$PY" -m venv .venv-gateway
  .venv-gateway/bin/python -m pip install -q -r tests/fixtures/gateway/requirements.txt
fi
if [ "${1:-}" = "--test" ] && [ -f tests/fixtures/node/package.json ]; then
  if [ ! -d tests/fixtures/node/node_modules ] || [ tests/fixtures/node/package.json -nt tests/fixtures/node/node_modules ]; then
    (cd tests/fixtures/node && npm install --no-audit --no-fund --loglevel=error)
  fi
fi

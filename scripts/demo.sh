#!/usr/bin/env bash
# The main job: set up, then run notebooks/quickstart.ipynb headless on the mcp2repl kernel.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/bootstrap.sh
exec .venv/bin/mcp2repl run notebooks/quickstart.ipynb --output build/quickstart.ipynb

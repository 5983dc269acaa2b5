#!/usr/bin/env bash
# Set up (with test extras and Node test servers), lint, then run the whole test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/bootstrap.sh --test
.venv/bin/ruff check mcp_kernel tests bench
# Two workers, one test file each at a time: most tests wait on kernels and servers, not on the CPU.
exec .venv/bin/python -m pytest -n 2 --dist loadfile "$@"

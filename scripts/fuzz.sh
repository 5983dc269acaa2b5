#!/usr/bin/env bash
# Fuzz at scale (not part of the test command): random cells, configs and tool results against a
# real Session, with fresh random inputs. Writes build/fuzz-report.md (counts, time, findings).
# Usage: scripts/fuzz.sh [CELLS [CONFIGS [RESULTS [DEEP]]]]   (default 10000 1000 1000 300; deep and big cells up to 2 MB)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/bootstrap.sh --test
cells=${1:-10000} configs=${2:-1000} results=${3:-1000} deep=${4:-300}
mkdir -p build
started=$(date +%s)
set +e
FUZZ_RANDOM=1 FUZZ_CELLS=$cells FUZZ_CONFIGS=$configs FUZZ_RESULTS=$results FUZZ_DEEP=$deep FUZZ_BIG_BYTES=2000000 \
  .venv/bin/python -m pytest tests/test_fuzz.py -p no:cacheprovider -q --timeout 0 -o addopts="" > build/fuzz.log 2>&1
status=$?
set -e
elapsed=$(( $(date +%s) - started ))
{
  echo "# Fuzz report"
  echo
  echo "Run on $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, ${elapsed} s."
  echo
  echo "| target | inputs | property |"
  echo "|---|---|---|"
  echo "| cells | $cells | ends with a JS or runtime error a user knows, never an internal one; the next cell runs |"
  echo "| deep and big cells | $deep | nesting of 16 kinds to 25,000 levels, literals to 2 MB: a value or a clear error, never a hang or runtime frames; the next cell runs |"
  echo "| configs | $configs | loads into messages (never raises); no configured secret in them |"
  echo "| tool results | $results | any result a server sends is unwrapped, shown or refused cleanly; the next cell runs |"
  echo
  if [ "$status" = 0 ]; then echo "All properties held."; else echo "Findings (pytest exit $status):"; echo; echo '```'; grep -E "Falsifying|^E |FAILED" build/fuzz.log | head -60; echo '```'; fi
} > build/fuzz-report.md
cat build/fuzz-report.md
exit $status

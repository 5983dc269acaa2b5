#!/usr/bin/env bash
# Run the MCP conformance suite (@modelcontextprotocol/conformance) against mcp2repl and write
# docs/conformance.md.
#
#   client scenarios: a real mcp2repl kernel is the client (scripts/conformance_client.py drives it)
#   server scenarios: the built-in demo server (mcp_kernel/demo) over Streamable HTTP
#
# Node 22 and the suite are installed from npm into .cache/conformance (gitignored); the system's
# Node is not used (the suite needs Node >= 22). Not part of the test command: it takes minutes.
#
# usage: scripts/conformance.sh [--client-only | --server-only] [SCENARIO ...]
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
CACHE=$ROOT/.cache/conformance
PY=${PYTHON:-$ROOT/.venv/bin/python}
OUT=$CACHE/results
DOC=$ROOT/docs/conformance.md

mode=all
scenarios=()
for arg in "$@"; do
  case $arg in
    --client-only) mode=client ;;
    --server-only) mode=server ;;
    -h|--help) sed -n 2,12p "$0"; exit 0 ;;
    *) scenarios+=("$arg") ;;
  esac
done

if [ ! -x "$CACHE/node_modules/.bin/conformance" ] || [ ! -x "$CACHE/node_modules/.bin/node" ]; then
  echo "installing node@22 and @modelcontextprotocol/conformance into $CACHE" >&2
  mkdir -p "$CACHE"
  npm install --silent --no-audit --no-fund --prefix "$CACHE" node@22 @modelcontextprotocol/conformance >&2
fi
export PATH=$CACHE/node_modules/.bin:$PATH
echo "node $(node --version), conformance $(conformance --version)" >&2
mkdir -p "$OUT"
[ "$mode" != server ] && rm -rf "$OUT/client" "$OUT/client.txt"
[ "$mode" != client ] && rm -rf "$OUT/server" "$OUT/server.txt"
mkdir -p "$OUT/client" "$OUT/server"

# scenario name and its spec-version tag, from `conformance list`
list() { conformance list "--$1" | sed -n 's/^  - \([^ ]*\) \[\(.*\)\]$/\1 \2/p'; }

if [ "$mode" != server ]; then
  list client > "$OUT/client.txt"
  while read -r name tags; do
    if [ ${#scenarios[@]} -gt 0 ] && [[ ! " ${scenarios[*]} " =~ " $name " ]]; then continue; fi
    echo "client: $name" >&2
    dir=$OUT/client/${name//\//_}
    mkdir -p "$dir"
    (cd "$dir" && timeout 300 conformance client --command "$PY $ROOT/scripts/conformance_client.py" \
        --scenario "$name" --timeout 90000 -o "$dir" > "$dir/run.log" 2>&1) || true
  done < "$OUT/client.txt"
fi

if [ "$mode" != client ]; then
  list server > "$OUT/server.txt"
  port=$("$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  "$PY" -m mcp_kernel.demo.server --transport streamable-http --port "$port" > "$OUT/demo-server.log" 2>&1 &
  demo=$!
  trap 'kill $demo 2>/dev/null || true' EXIT
  for _ in $(seq 100); do
    "$PY" -c "import socket; socket.create_connection(('127.0.0.1', $port), 1)" 2>/dev/null && break
    sleep 0.2
  done
  while read -r name tags; do
    if [ ${#scenarios[@]} -gt 0 ] && [[ ! " ${scenarios[*]} " =~ " $name " ]]; then continue; fi
    echo "server: $name" >&2
    dir=$OUT/server/$name
    mkdir -p "$dir"
    (cd "$dir" && timeout 300 conformance server --url "http://127.0.0.1:$port/mcp" --scenario "$name" \
        -o "$dir" > "$dir/run.log" 2>&1) || true
  done < "$OUT/server.txt"
fi

"$PY" "$ROOT/scripts/conformance_report.py" "$OUT" "$DOC" "$(conformance --version)" "$(node --version)"
echo "wrote $DOC" >&2

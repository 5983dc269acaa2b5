#!/usr/bin/env bash
# Run the MCP conformance suite (@modelcontextprotocol/conformance) against mcp2repl and write
# docs/conformance.md. Two pinned versions run:
#
#   0.1.16          every scenario it lists (protocol 2025-11-25 and older)
#   0.2.0-alpha.12  the scenarios its requirements/2026-07-28.yaml lists (scored) and the ones it runs
#                   and reports but never scores, all at the 2026-07-28 wire (--spec-version, --force)
#
#   client scenarios: a real mcp2repl kernel is the client (scripts/conformance_client.py drives it)
#   server scenarios: the built-in demo server (mcp_kernel/demo) over Streamable HTTP, and
#                     mcp2repl serve --http (through scripts/conformance_proxy.py, which adds the
#                     bearer token the suite does not send)
#
# Node 22 and each suite version are installed from npm into .cache/conformance/VERSION (gitignored);
# the system's Node is not used (the suite needs Node >= 22). Not part of the test command: it takes minutes.
#
# usage: scripts/conformance.sh [--client-only | --server-only | --serve-only] [--only VERSION] [SCENARIO ...]
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
CACHE=$ROOT/.cache/conformance
PY=${PYTHON:-$ROOT/.venv/bin/python}
RESULTS=$CACHE/results
DOC=$ROOT/docs/conformance.md
VERSIONS=(0.1.16 0.2.0-alpha.12)
MODERN=0.2.0-alpha.12
REVISION=2026-07-28

mode=all
only=
scenarios=()
while [ $# -gt 0 ]; do
  case $1 in
    --client-only) mode=client ;;
    --server-only) mode=server ;;
    --serve-only) mode=serve ;;
    --only) only=$2; shift ;;
    -h|--help) sed -n 2,18p "$0"; exit 0 ;;
    *) scenarios+=("$1") ;;
  esac
  shift
done

# scenario name and its tag, from `conformance list`: 0.1.16 tags each with its spec versions;
# the 2026-07-28 requirements list says "scored", or the group of a scenario run but never scored
list() {
  if [ "$VERSION" = "$MODERN" ]; then
    conformance list --requirements "$REVISION" | awk -v want="$1" '
      /^Server scenarios/ { kind = "server"; scored = 1; next }
      /^Client scenarios/ { kind = "client"; scored = 1; next }
      /^Run and reported/ { scored = 0; next }
      /^  [a-z-]+ \([0-9]+\):$/ { group = $1; next }
      scored && /^  - / && kind == want { print $2, "scored" }
      !scored && /^    - / && $3 == "[" want "]" { print $2, "not scored (" group ")" }'
  else
    conformance list "--$1" | sed -n 's/^  - \([^ ]*\) \[\(.*\)\]$/\1 \2/p'
  fi
}
# 0.2.0-alpha.12 runs every scenario at the 2026-07-28 wire; --force runs extensions too, as --requirements would
wire() { if [ "$VERSION" = "$MODERN" ]; then echo "--spec-version $REVISION --force"; fi; }
free_port() { "$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
wait_port() {
  for _ in $(seq 300); do
    "$PY" -c "import socket; socket.create_connection(('127.0.0.1', $1), 1)" 2>/dev/null && return 0
    sleep 0.2
  done
  return 1
}
# server scenarios against the URL $1, results under $OUT/$2
server_scenarios() {
  while read -r name tags; do
    if [ ${#scenarios[@]} -gt 0 ] && [[ ! " ${scenarios[*]} " =~ " $name " ]]; then continue; fi
    echo "$VERSION $2: $name" >&2
    dir=$OUT/$2/$name
    mkdir -p "$dir"
    (cd "$dir" && timeout 300 conformance server --url "$1" --scenario "$name" $(wire) -o "$dir" > "$dir/run.log" 2>&1) || true
  done < "$OUT/server.txt"
}
pids=()
trap 'kill "${pids[@]}" 2>/dev/null || true' EXIT

run_version() {
  VERSION=$1
  local prefix=$CACHE/$VERSION
  if [ ! -x "$prefix/node_modules/.bin/conformance" ] || [ ! -x "$prefix/node_modules/.bin/node" ]; then
    echo "installing node@22 and @modelcontextprotocol/conformance@$VERSION into $prefix" >&2
    mkdir -p "$prefix"
    npm install --silent --no-audit --no-fund --prefix "$prefix" node@22 "@modelcontextprotocol/conformance@$VERSION" >&2
  fi
  PATH=$prefix/node_modules/.bin:$BASE_PATH
  echo "node $(node --version), conformance $(conformance --version)" >&2
  OUT=$RESULTS/$VERSION
  mkdir -p "$OUT"
  node --version > "$OUT/node.txt"
  if [ "$mode" = all ] || [ "$mode" = client ]; then rm -rf "$OUT/client" "$OUT/client.txt"; fi
  if [ "$mode" = all ] || [ "$mode" = server ]; then rm -rf "$OUT/server" "$OUT/server.txt"; fi
  if [ "$mode" = all ] || [ "$mode" = serve ]; then rm -rf "$OUT/serve" "$OUT/serve.txt"; fi
  mkdir -p "$OUT/client" "$OUT/server" "$OUT/serve"

  if [ "$mode" = all ] || [ "$mode" = client ]; then
    list client > "$OUT/client.txt"
    while read -r name tags; do
      if [ ${#scenarios[@]} -gt 0 ] && [[ ! " ${scenarios[*]} " =~ " $name " ]]; then continue; fi
      echo "$VERSION client: $name" >&2
      dir=$OUT/client/${name//\//_}
      mkdir -p "$dir"
      (cd "$dir" && timeout 300 conformance client --command "$PY $ROOT/scripts/conformance_client.py" \
          --scenario "$name" $(wire) --timeout 90000 -o "$dir" > "$dir/run.log" 2>&1) || true
    done < "$OUT/client.txt"
  fi

  if [ "$mode" != client ]; then list server > "$OUT/server.txt"; fi

  if [ "$mode" = all ] || [ "$mode" = server ]; then
    port=$(free_port)
    "$PY" -m mcp_kernel.demo.server --transport streamable-http --port "$port" > "$OUT/demo-server.log" 2>&1 &
    pids+=($!)
    wait_port "$port"
    server_scenarios "http://127.0.0.1:$port/mcp" server
  fi

  if [ "$mode" = all ] || [ "$mode" = serve ]; then
    # mcp2repl serve with the demo behind it (no config: the built-in demo), in a folder of its own
    work=$CACHE/serve-cwd-$VERSION
    rm -rf "$work" && mkdir -p "$work"
    token=$("$PY" -c 'import secrets; print(secrets.token_urlsafe(24))')
    port=$(free_port)
    (cd "$work" && MCP2REPL_SERVE_TOKEN=$token exec "$ROOT/.venv/bin/mcp2repl" serve --http "127.0.0.1:$port") > "$OUT/serve-server.log" 2>&1 &
    pids+=($!)
    wait_port "$port"
    proxy=$(free_port)
    "$PY" "$ROOT/scripts/conformance_proxy.py" "http://127.0.0.1:$port/mcp" "$proxy" "$token" > "$OUT/serve-proxy.log" 2>&1 &
    pids+=($!)
    wait_port "$proxy"
    cp "$OUT/server.txt" "$OUT/serve.txt"
    server_scenarios "http://127.0.0.1:$proxy/mcp" serve
  fi
  kill "${pids[@]}" 2>/dev/null || true  # this version's servers: the next one starts its own
  pids=()
}
BASE_PATH=$PATH
for v in "${VERSIONS[@]}"; do
  if [ -z "$only" ] || [ "$only" = "$v" ]; then run_version "$v"; fi
done

"$PY" "$ROOT/scripts/conformance_report.py" "$RESULTS" "$DOC" "${VERSIONS[@]}"
echo "wrote $DOC" >&2

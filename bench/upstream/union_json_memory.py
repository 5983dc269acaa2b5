"""Minimal reproduction for the MCP Python SDK: reading one big message takes ~6x its size in memory.

    .venv/bin/python bench/upstream/union_json_memory.py [MB]   (default: 50)

``mcp/client/stdio.py`` and ``mcp/client/streamable_http.py`` turn each incoming line into a message
with ``jsonrpc_message_adapter.validate_json(line)``: JSON text validated against the union of the
four JSON-RPC message types. For a tool result holding one long text, that costs several times the
text in memory on top of the line itself; parsing the line once (``pydantic_core.from_json``) and
validating the parsed value (``validate_python``) gives the same message for far less, in about half
the time. Each way runs in a child process of its own, so that its peak memory is its own. Only the
SDK and pydantic are used here, nothing from mcp2repl. The report text is in
``bench/upstream/README.md``.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile

CHILD = """
import sys, time
import pydantic_core
import mcp_types as types

def peak():  # the high-water mark of this process's memory (ru_maxrss would start at the parent's)
    with open("/proc/self/status") as f:
        return next(int(l.split()[1]) for l in f if l.startswith("VmHWM:")) * 1024

path, how = sys.argv[1], sys.argv[2]
with open(path, "rb") as f:
    line = f.read()
before = peak()
start = time.perf_counter()
if how == "validate_json":
    message = types.jsonrpc_message_adapter.validate_json(line, by_name=False)
else:
    message = types.jsonrpc_message_adapter.validate_python(pydantic_core.from_json(line), by_name=False)
seconds = time.perf_counter() - start
after = peak()
assert message.result["content"][0]["text"].startswith('{"rows"')
print(len(line), after - before, seconds)
"""


def main() -> None:
    mb = int(sys.argv[1]) if len(sys.argv) > 1 else 50
    text = json.dumps({"rows": [{"index": i, "word": f"item-{i:07d}"} for i in range(mb * 1024 * 1024 // 40)]})
    line = json.dumps({"jsonrpc": "2.0", "id": 1, "result": {"content": [{"type": "text", "text": text}]}})
    del text
    print(f"one message holding a {mb} MB text (peak memory beyond the line itself, as a multiple of the line)")
    with tempfile.NamedTemporaryFile("w", suffix=".json") as f:
        f.write(line)
        f.flush()
        for how in ("validate_json", "from_json + validate_python"):
            out = subprocess.run([sys.executable, "-c", CHILD, f.name, how.split()[0]], capture_output=True, text=True, check=True).stdout.split()
            size, grew, seconds = int(out[0]), int(out[1]), float(out[2])
            print(f"  {how:28s} {grew / size:4.1f}x  {seconds:.2f} s")


if __name__ == "__main__":
    main()

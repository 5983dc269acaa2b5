"""Issue 28: 2,000 sequential async round trips JS -> Python -> JS, per design, interleaved rounds.

Designs: ``bridge`` (the engine as it is: outbox, ``receive`` + drain per answer), ``wrap``
(mini-racer's public ``wrap_py_function``: a JS callback per call, the answer resolved by a
synchronous call from the loop), ``doorbell`` (a JS callback that carries the outbox through a
shared buffer at the moment of the call, the answer one posted ``receive``, no drain). Prints µs
per round trip, median over rounds, and the ratio to ``bridge`` in the same round.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

N = 2000


async def bridge(n: int) -> float:
    from mcp_kernel.engine import Engine

    class Sink:
        def stream(self, *a: Any) -> None: ...
        def display(self, *a: Any) -> None: ...
        def clear_output(self, *a: Any) -> None: ...
        def note(self, *a: Any) -> None: ...

    engine = Engine(Sink())
    await engine.start()

    async def ping(args: Any, ctx: Any) -> Any:
        return args["i"]

    engine.register("ping", ping)
    code = f"let s = 0; for (let i = 0; i < {n}; i++) s += await __mcp2repl.call('ping', {{ i }}); s"
    await engine.run_cell(code.replace(str(n), "50"), "cell[0]")
    t = time.perf_counter()
    out = await engine.run_cell(code, "cell[1]")
    dt = time.perf_counter() - t
    assert out.error is None and out.data is not None and out.data["text/plain"] == str(n * (n - 1) // 2), out
    await engine.close()
    return dt / n * 1e6


async def wrap(n: int) -> float:
    from py_mini_racer import MiniRacer

    mr = MiniRacer()

    async def ping(i: Any) -> Any:
        return i

    async with mr.wrap_py_function(ping) as fn:
        loop = await mr.eval_cancelable(f"(f) => (async () => {{ let s = 0; for (let i = 0; i < {n}; i++) s += await f(i); return s; }})()")
        warm = await mr.eval_cancelable("(f) => (async () => { let s = 0; for (let i = 0; i < 50; i++) s += await f(i); return s; })()")
        p = await mr._ctx.call_function_cancelable(warm, fn)
        await p
        t = time.perf_counter()
        p = await mr._ctx.call_function_cancelable(loop, fn)
        s = await p
        dt = time.perf_counter() - t
    assert s == n * (n - 1) // 2, s
    mr.close()
    return dt / n * 1e6


DOORBELL_JS = r"""
(bell) => {
  const sab = new SharedArrayBuffer(1 << 16);
  const len = new Int32Array(sab, 0, 1);
  const units = new Uint16Array(sab, 4);
  const pending = new Map();
  let next = 1;
  globalThis.__pp = {
    sab,
    call(args) {
      const id = next++;
      const text = `[{"t":"req","id":${id},"cell":"c","name":"ping","args":${JSON.stringify(args)}}]`;
      for (let i = 0; i < text.length; i++) units[i] = text.charCodeAt(i);
      len[0] = text.length;
      bell();
      return new Promise((resolve, reject) => pending.set(id, { resolve, reject }));
    },
    receive() {
      const batch = JSON.parse(this);
      for (const item of batch.items) {
        const p = pending.get(item[1]);
        pending.delete(item[1]);
        p.resolve(item[3]);
      }
    },
  };
}
"""


async def doorbell(n: int, mode: str = "quiet") -> float:
    from py_mini_racer import MiniRacer

    from mcp_kernel.compat import QuietResults, V8Function

    mr = MiniRacer()
    ctx = mr._ctx
    loop = asyncio.get_running_loop()
    quiet = QuietResults(mr)  # answers' results stay on V8's thread
    rerouted = ctx.handle_callback_from_v8
    bell_id = 1 << 40
    view: memoryview | None = None
    kept = threading.local()

    tasks: set[asyncio.Task[None]] = set()

    def handle(text: str) -> None:
        for msg in json.loads(text):
            task = asyncio.ensure_future(serve(msg))
            tasks.add(task)
            task.add_done_callback(tasks.discard)

    def arrived(callback_id: int, raw: Any) -> None:
        if callback_id != bell_id:
            return rerouted(callback_id, raw)
        if not hasattr(kept, "h"):
            kept.h = []
        kept.h.append(raw)  # freed later, on the loop (freeing here would wait for V8: ourselves)
        assert view is not None
        size = int.from_bytes(view[0:4], "little")
        text = bytes(view[4 : 4 + 2 * size]).decode("utf-16-le")
        loop.call_soon_threadsafe(handle, text)

    object.__setattr__(ctx, "handle_callback_from_v8", arrived)
    bell = ctx._value_handle_to_python(ctx._wrap_raw_handle(ctx._dll.mr_make_js_callback(ctx._ctx, bell_id)))
    setup = await mr.eval_cancelable(DOORBELL_JS)
    await ctx.call_function_cancelable(setup, bell)
    view = await mr.eval_cancelable("__pp.sab")
    assert isinstance(view, memoryview)
    argv = await mr.eval_cancelable("[]")
    receive = V8Function(mr, await mr.eval_cancelable("__pp.receive"), argv)
    drain = V8Function(mr, await mr.eval_cancelable("() => ''"), argv)

    async def serve(msg: dict[str, Any]) -> None:
        result = msg["args"]["i"]
        batch = f'{{"items":[["settle",{msg["id"]},true,{json.dumps(result)}]]}}'
        if mode == "quiet":
            receive.call(batch, quiet)
        elif mode == "loud":
            receive.call(batch)
        else:  # quiet receive, the drain behind it as today (its result wakes the loop)
            head = receive.call(batch, quiet)
            drain.call("", arrived=lambda _t: quiet.release(head))

    async def run(k: int) -> Any:
        p = await mr.eval_cancelable(f"(async () => {{ let s = 0; for (let i = 0; i < {k}; i++) s += await __pp.call({{ i }}); return s; }})()")
        return await p

    await run(50)
    t = time.perf_counter()
    s = await run(n)
    dt = time.perf_counter() - t
    assert s == n * (n - 1) // 2, s
    mr.close()
    return dt / n * 1e6



async def doorbell_loud(n: int) -> float:
    return await doorbell(n, "loud")


async def doorbell_drain(n: int) -> float:
    return await doorbell(n, "drain")


DESIGNS = {"bridge": bridge, "wrap": wrap, "doorbell": doorbell, "doorbell_loud": doorbell_loud, "doorbell_drain": doorbell_drain}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--n", type=int, default=N)
    parser.add_argument("--only", default=",".join(DESIGNS))
    args = parser.parse_args()
    names = args.only.split(",")
    got: dict[str, list[float]] = {k: [] for k in names}
    ratios: dict[str, list[float]] = {k: [] for k in names}
    for r in range(args.rounds):
        order = names[r % len(names):] + names[: r % len(names)]
        this: dict[str, float] = {}
        for name in order:
            this[name] = asyncio.run(DESIGNS[name](args.n))
            got[name].append(this[name])
        for name in names:
            if "bridge" in this:
                ratios[name].append(this[name] / this["bridge"])
        print(f"round {r + 1}: " + ", ".join(f"{k} {v:.0f} µs" for k, v in this.items()), flush=True)
    for name in names:
        ratio = f" · {statistics.median(ratios[name]):.2f}× bridge" if ratios[name] else ""
        print(f"{name:9s} {statistics.median(got[name]):7.0f} µs/round trip ({min(got[name]):.0f}–{max(got[name]):.0f}){ratio}")


if __name__ == "__main__":
    main()

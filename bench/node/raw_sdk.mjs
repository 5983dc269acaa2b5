// The raw Node SDK baseline of bench/run.py: the same loops as bench/sdk_client.py, with the
// official TypeScript SDK, so the kernel can be compared with what a plain Node client pays.
//
//   node bench/node/raw_sdk.mjs '<spec json>'
//
// The spec and the output protocol are those of bench/sdk_client.py: "@event" lines that the
// parent timestamps on arrival, and one JSON line per measure.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

// Static imports are loaded before this line runs: "ready" means Node plus the SDK are up.
const say = (line) => process.stdout.write(line + "\n");
say("@ready");

const spec = JSON.parse(process.argv[2]);
const { server } = spec;
// The default 60 s request timeout could cut a 50 MB transfer on a busy machine.
const options = { timeout: 600_000 };
const call = (client, tool, args) => client.callTool({ name: tool, arguments: args }, undefined, options);
const echo = (client) => call(client, server.tool, server.arguments);

// The SDK refuses messages over 10 MB by default (maxBufferSize): lift that guard so the baseline
// can take the large result at all. BENCH_SERVER_STDERR=1 shows the server's stderr when debugging.
const transport = new StdioClientTransport({
  command: server.command,
  args: server.args,
  stderr: process.env.BENCH_SERVER_STDERR ? "inherit" : "ignore",
  maxBufferSize: 2 ** 30,
});
const client = new Client({ name: "mcp2repl-bench", version: "1.0.0" });
await client.connect(transport);
say("@initialized");

for (const measure of spec.measures) {
  if (measure === "cold") {
    await echo(client);
    say("@first");
    say(JSON.stringify({ measure }));
    continue;
  }
  if (!spec.warmed) {
    for (let i = 0; i < spec.warmup; i++) await echo(client);
    spec.warmed = true;
  }
  if (measure === "seq") {
    const t0 = performance.now();
    for (let i = 0; i < spec.calls; i++) await echo(client);
    const total = performance.now() - t0;
    say(JSON.stringify({ measure, total_s: total / 1000, us_per_call: (total * 1000) / spec.calls }));
  } else if (measure === "conc") {
    const t0 = performance.now();
    await Promise.all(Array.from({ length: spec.calls }, () => echo(client)));
    const total = performance.now() - t0;
    say(JSON.stringify({ measure, total_s: total / 1000, us_per_call: (total * 1000) / spec.calls }));
  } else if (measure === "big") {
    const rssBefore = process.memoryUsage().rss;
    say("@big_start");
    const t0 = performance.now();
    const result = await call(client, spec.big_tool, { kb: spec.kb });
    const seconds = (performance.now() - t0) / 1000;
    say("@big_end");
    say(JSON.stringify({ measure, time_s: seconds, rss_before: rssBefore, payload_bytes: result.content[0].text.length }));
  } else {
    throw new Error(`unknown measure ${measure}`);
  }
}
await client.close();

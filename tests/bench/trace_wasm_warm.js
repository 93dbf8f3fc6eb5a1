// Reads several traces (e.g. the shared real ones) with the wasm reader in one Node process, three
// passes over them all, fed in 4 MiB slices as the page's worker feeds a File, and prints each
// pass's MB/s by wall clock and CPU time. The first pass includes V8's compiling and tiering up
// of the module, which the page's worker does beforehand (src/web/warm_up.rs); a fresh process
// per small file measures mostly that. Build PKG_DIR as scripts/bench does. Usage:
//   node tests/bench/trace_wasm_warm.js PKG_DIR TRACE...
const fs = require('fs');
const path = require('path');

const [pkg, ...files] = process.argv.slice(2);
if (!pkg || files.length === 0) {
  console.error('usage: node tests/bench/trace_wasm_warm.js PKG_DIR TRACE...');
  process.exit(2);
}
const wasm = require(path.resolve(pkg, 'fusionscope_trace_wasm_bench.js'));
const SLICE = 4 << 20;
const texts = files.map((f) => fs.readFileSync(f));
const bytes = texts.reduce((n, t) => n + t.length, 0);
for (let pass = 0; pass < 3; pass++) {
  const cpu = process.cpuUsage();
  const start = process.hrtime.bigint();
  for (const text of texts) {
    const reader = new wasm.TraceBench();
    for (let at = 0; at < text.length; at += SLICE) reader.feed(text.subarray(at, Math.min(at + SLICE, text.length)));
    reader.finish();
    reader.free();
  }
  const wall = Number(process.hrtime.bigint() - start) / 1e9;
  const used = process.cpuUsage(cpu);
  const cpuS = (used.user + used.system) / 1e6;
  console.log(
    `pass ${pass + 1}: ${(bytes / 1e6).toFixed(0)} MB of ${files.length} traces in ${wall.toFixed(3)} s = ` +
      `${(bytes / 1e6 / wall).toFixed(0)} MB/s (${cpuS.toFixed(3)} s of CPU = ${(bytes / 1e6 / cpuS).toFixed(0)} MB/s)`,
  );
}

// Feeds the synthetic traces to the wasm reader in 4 MiB slices, as the page's worker feeds a File
// (`SLICE_BYTES` in src/web/file_bytes.rs), and prints MB/s and the wasm linear memory. Usage:
//   node tests/bench/trace_wasm_bench.js PKG_DIR NVIDIA_TRACE [AMD_TRACE]
// (without AMD_TRACE, the read of NVIDIA_TRACE alone).
const fs = require('fs');
const path = require('path');
const [pkg, nvPath, amdPath] = process.argv.slice(2);
const { OpenBench, TraceBench, memory_bytes } = require(path.resolve(pkg, 'fusionscope_trace_wasm_bench.js'));

const CHUNK = 4 << 20;
/** Feeds `file` to `target` (anything with `feed(bytes)`) in CHUNK slices; returns the bytes fed. */
function feedFile(target, file) {
  const fd = fs.openSync(file, 'r');
  const buf = Buffer.alloc(CHUNK);
  let total = 0;
  for (;;) {
    const n = fs.readSync(fd, buf, 0, CHUNK, null);
    if (n === 0) break;
    target.feed(buf.subarray(0, n));
    total += n;
  }
  fs.closeSync(fd);
  return total;
}

function read(bench, file) {
  const total = feedFile(bench, file);
  const kernels = bench.finish();
  return { total, kernels };
}

const mb = (b) => b / 1e6;
const bench = new TraceBench();
let t = process.hrtime.bigint();
const cpu = process.cpuUsage();
const one = read(bench, nvPath);
let secs = Number(process.hrtime.bigint() - t) / 1e9;
const used = process.cpuUsage(cpu);
// CPU time as well as wall clock: on a shared machine the wall clock also counts waiting.
const cpuSecs = (used.user + used.system) / 1e6;
console.log(`wasm read:    ${mb(one.total).toFixed(0)} MB in ${secs.toFixed(2)} s = ${(mb(one.total) / secs).toFixed(0)} MB/s (${cpuSecs.toFixed(2)} s of CPU = ${(mb(one.total) / cpuSecs).toFixed(0)} MB/s); ${one.kernels} kernels; wasm memory ${mb(memory_bytes()).toFixed(1)} MB (${(memory_bytes() / one.total).toFixed(3)}x the file)`);
bench.clear();

// The same file opened as the page's analysis worker opens it (the reader with the rank fold,
// then the summary, time report, fusion and rank summary): the worker's own time for a file.
{
  const open = new OpenBench(path.basename(nvPath));
  const t0 = process.hrtime.bigint();
  const bytes = feedFile(open, nvPath);
  const fed = Number(process.hrtime.bigint() - t0) / 1e9;
  open.finish();
  const all = Number(process.hrtime.bigint() - t0) / 1e9;
  console.log(`wasm open:    ${mb(bytes).toFixed(0)} MB fed in ${fed.toFixed(2)} s = ${(mb(bytes) / fed).toFixed(0)} MB/s, analysed ${(all - fed).toFixed(2)} s later: ${all.toFixed(2)} s as the page's worker opens it`);
}
if (!amdPath) process.exit(0); // the read alone

t = process.hrtime.bigint();
const a = read(bench, nvPath);
const b = read(bench, amdPath);
const readSecs = Number(process.hrtime.bigint() - t) / 1e9;
const rows = bench.compare();
secs = Number(process.hrtime.bigint() - t) / 1e9;
const total = a.total + b.total;
console.log(`wasm compare: ${mb(total).toFixed(0)} MB (both files) in ${secs.toFixed(2)} s (${readSecs.toFixed(2)} s reading) = ${(mb(total) / secs).toFixed(0)} MB/s; ${rows} mapping rows; wasm memory ${mb(memory_bytes()).toFixed(1)} MB (${(memory_bytes() / a.total).toFixed(3)}x one file)`);

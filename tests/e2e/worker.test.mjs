// End-to-end tests of the analysis worker and the list of opened traces: every shared trace
// kind opened through the worker shows the command line's figures; several traces are listed
// and any two compared; a long parse of a large synthetic trace keeps the page responsive and
// can be cancelled; malformed files give errors naming the file and where.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { cpSync, createWriteStream, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { dist, openPage, startBrowser, stopBrowser, cli, cliBin, digits, duration, recordFrames, root, screenshotDir } from './harness.mjs';

const rel = (kind, file) => `tests/data/traces/${kind}/${file}`;
/** Every trace of tests/data/traces (tests/data/PROVENANCE.md), as the CLI is given them. */
const TRACES = [
  rel('nvidia', 'hta_a100_compiled_rank0.json.gz'),
  rel('nvidia', 'tracelens_eager_b200.json.gz'),
  rel('amd', 'sglang_qwen3-8b_decode_hipgraph_mi300x.json.gz'),
  rel('amd', 'hta_mi250_minitoy_train_rocm6.2.json.gz'),
  rel('amd', 'torch_compile_triton_mi300x.json.gz'),
  rel('nvidia', 'hf_qwen1.5-0.5b_eager_h100.json.gz'),
  rel('amd', 'hf_qwen1.5-0.5b_eager_mi300x.json.gz'),
  rel('nvidia', 'hf_bert-small_eager_h100.json.gz'),
  rel('amd', 'hf_bert-small_eager_mi300x.json.gz'),
];
const base = (f) => path.basename(f);
const abs = (f) => path.join(root, f);

let env;
let tmp;
before(async () => {
  mkdirSync(screenshotDir, { recursive: true });
  tmp = mkdtempSync(path.join(os.tmpdir(), 'fusionscope-worker-'));
  env = await startBrowser();
});
after(async () => {
  await stopBrowser(env);
  rmSync(tmp, { recursive: true, force: true });
});

async function cells(page, id) {
  return page.getByTestId(`table-${id}`).locator('tbody tr').evaluateAll((rows) =>
    rows.map((r) => [...r.querySelectorAll('td')].map((td) => td.textContent.trim())));
}

/** The list's row of a file. */
function row(page, file) {
  return page.getByTestId('trace-row').filter({ has: page.getByTestId('trace-file').getByText(file, { exact: true }) });
}

/** The CLI's error message (stderr, without the `fusionscope: ` prefix) for a file it rejects. */
function cliError(args) {
  try {
    execFileSync(cliBin, args, { encoding: 'utf8', cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (e) {
    return e.stderr.trim().replace(/^fusionscope: /, '');
  }
  throw new Error(`the CLI accepted ${args.join(' ')}`);
}

test('every shared trace kind opens through the worker with the CLI\'s figures; the list shows each', async () => {
  const { page, check } = await openPage(env);
  await page.getByTestId('unfused-total').waitFor();
  await page.setInputFiles('#file-input', TRACES.map(abs));
  // Nine traces: the latest NVIDIA and the latest AMD trace (the BERT pair) are compared at once.
  await page.getByTestId('results-title').getByText('AMD vs NVIDIA compared').waitFor({ timeout: 60000 });
  assert.equal(await page.getByTestId('trace-row').count(), TRACES.length);
  assert.ok(await row(page, base(TRACES[7])).getByTestId('pick-a').isChecked());
  assert.ok(await row(page, base(TRACES[8])).getByTestId('pick-b').isChecked());
  await page.screenshot({ path: path.join(screenshotDir, 'worker-all-traces.png'), fullPage: true });
  for (const file of TRACES) {
    const s = cli(['trace', file, '--json']);
    const p = s.platforms[0];
    const r = row(page, base(file));
    assert.equal(await r.getByTestId('trace-kernels').textContent(), digits(p.kernels), file);
    assert.equal(await r.getByTestId('trace-platform').textContent(), `${p.vendor} on ${p.devices.length ? p.devices.join(', ') : 'no device'}`, file);
    await r.getByTestId('show-trace').click();
    await page.getByTestId('results-title').getByText(`Trace ${base(file)}`, { exact: true }).waitFor();
    const platforms = await page.getByTestId('platforms').textContent();
    assert.ok(platforms.includes(`${digits(p.kernels)} kernels, GPU time ${duration(p.gpu_time_us)}`), `${file}: ${platforms}`);
    const cats = await cells(page, 'categories');
    assert.deepEqual(cats.map((c) => c[0]), s.categories.map((c) => c.category), file);
    assert.deepEqual(cats.map((c) => c[2]), s.categories.map((c) => duration(c.trace.time_us)), file);
  }
  await check();
});

/** Checks the comparison shown against `fusionscope compare a b --json`. */
async function assertComparison(page, a, b) {
  const c = cli(['compare', a, b, '--json']);
  const platforms = await page.getByTestId('platforms').textContent();
  for (const p of c.platforms) {
    assert.ok(platforms.includes(`${p.file}: ${p.vendor} on ${p.devices.join(', ')}: ${digits(p.kernels)} kernels, GPU time ${duration(p.gpu_time_us)}`), platforms);
  }
  const cats = await cells(page, 'categories');
  assert.deepEqual(cats.map((r) => r[0]), c.categories.map((r) => r.category));
  for (const cat of c.categories) {
    const shown = cats.find((r) => r[0] === cat.category);
    assert.deepEqual(shown.slice(1, 3), [digits(cat.amd.count), duration(cat.amd.time_us)], cat.category);
    assert.deepEqual(shown.slice(5, 7), [digits(cat.nvidia.count), duration(cat.nvidia.time_us)], cat.category);
  }
}

test('three traces: the NVIDIA/AMD pair is the default, any two can be picked by keyboard, one removed', async () => {
  const [qwenNv, qwenAmd, bertNv] = [TRACES[5], TRACES[6], TRACES[7]];
  const { page, check } = await openPage(env);
  await page.setInputFiles('#file-input', [qwenNv, bertNv, qwenAmd].map(abs));
  await page.getByTestId('results-title').getByText('AMD vs NVIDIA compared').waitFor({ timeout: 30000 });
  // The latest NVIDIA trace (BERT) and the AMD trace.
  await assertComparison(page, bertNv, qwenAmd);
  // A radio group per side: the arrow keys move A from BERT to the Qwen H100 trace.
  const aOfBert = page.getByRole('radio', { name: `A: ${base(bertNv)}` });
  await aOfBert.focus();
  await page.keyboard.press('ArrowUp');
  assert.ok(await page.getByRole('radio', { name: `A: ${base(qwenNv)}` }).isChecked());
  const compare = page.getByRole('button', { name: 'Compare A with B' });
  await compare.focus();
  await page.keyboard.press('Enter');
  await page.getByTestId('platforms').getByText(base(qwenNv)).waitFor();
  await assertComparison(page, qwenNv, qwenAmd);
  await page.screenshot({ path: path.join(screenshotDir, 'worker-three-traces.png'), fullPage: true });
  await page.emulateMedia({ colorScheme: 'dark' });
  await page.screenshot({ path: path.join(screenshotDir, 'worker-three-traces-dark.png') });
  await page.emulateMedia({ colorScheme: 'light' });
  // Removing BERT leaves the Qwen pair, still comparable.
  await page.getByRole('button', { name: `Remove ${base(bertNv)}` }).click();
  assert.equal(await page.getByTestId('trace-row').count(), 2);
  await compare.click();
  await page.getByTestId('platforms').getByText(base(qwenAmd)).waitFor();
  await assertComparison(page, qwenNv, qwenAmd);
  await check();
});

/** Writes a Kineto trace of `kernels` kernel events (~150 bytes each) and returns its path. */
async function writeLargeTrace(file, kernels) {
  const out = createWriteStream(file);
  const write = (s) => new Promise((done) => (out.write(s) ? done() : out.once('drain', done)));
  await write('{"cupti_version": 24, "deviceProperties": [{"id": 0, "name": "NVIDIA H100 80GB HBM3", "warpSize": 32}],\n"traceEvents": [\n');
  const names = ['ampere_sgemm_128x64_nn', 'void at::native::vectorized_elementwise_kernel<4>', 'triton_red_fused_native_layer_norm_0'];
  const batch = 10000;
  for (let i = 0; i < kernels; i += batch) {
    let s = '';
    for (let j = i; j < Math.min(i + batch, kernels); j++) {
      s += `${j ? ',' : ''}{"ph": "X", "cat": "kernel", "name": "${names[j % 3]}", "pid": 0, "tid": 7, "ts": ${1e6 + j * 3}, "dur": 2.5, "args": {"correlation": ${j}}}\n`;
    }
    await write(s);
  }
  await write(']}\n');
  await new Promise((done) => out.end(done));
  return file;
}

test('a 170 MB trace is parsed off the main thread: frames and clicks go on; Cancel changes nothing', async () => {
  const kernels = 1_200_000;
  const big = await writeLargeTrace(path.join(tmp, 'large-synthetic.json'), kernels);
  const { page, check } = await openPage(env, '', { init: recordFrames });
  await page.getByTestId('unfused-total').waitFor();
  // A full parse: the main thread keeps drawing frames and answering input while the worker works.
  await page.evaluate(() => { window.__fsGap = 0; });
  await page.setInputFiles('#file-input', big);
  const progress = page.getByTestId('reading');
  await progress.getByText(/MiB of 1[0-9]{2}\.[0-9]{2} MiB, [0-9.]+ MB\/s/).waitFor();
  await page.fill('#in-heads', '16');
  await page.getByTestId('results-title').getByText('NH = 16').waitFor();
  await page.getByTestId('results-title').getByText('Trace large-synthetic.json').waitFor({ timeout: 60000 });
  await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
  const gap = await page.evaluate(() => window.__fsGap);
  assert.ok(gap < 250, `the main thread stalled for ${gap.toFixed(0)} ms`);
  assert.equal(await row(page, 'large-synthetic.json').getByTestId('trace-kernels').textContent(), digits(kernels));

  // The same file again, cancelled mid-parse: the list and the view stay as they were.
  await page.setInputFiles('#file-input', big);
  await progress.getByText(/MB\/s/).waitFor();
  await page.screenshot({ path: path.join(screenshotDir, 'worker-reading.png') });
  await page.getByTestId('cancel-read').click();
  await page.getByTestId('notice').getByText('Reading large-synthetic.json was cancelled; nothing changed.').waitFor();
  assert.equal(await progress.count(), 0);
  assert.equal(await page.getByTestId('trace-row').count(), 1);
  // The worker still holds the first trace: another one opens and the two compare.
  await page.setInputFiles('#file-input', abs(TRACES[6]));
  await page.getByTestId('results-title').getByText(`Trace ${base(TRACES[6])}`).waitFor();
  await page.getByTestId('compare-pair').click();
  await page.getByTestId('results-title').getByText('NVIDIA vs AMD compared').or(page.getByTestId('results-title').getByText('AMD vs NVIDIA compared')).waitFor({ timeout: 30000 });
  await check();
});

test('malformed files: the error names the file and the byte offset or line and column, as the CLI does', async () => {
  const badTrace = path.join(tmp, 'bad-event.json');
  writeFileSync(badTrace, '{"traceEvents": [\n{"ph": "X", "cat": "kernel", "name": "k", "ts": 1, "dur": 2, "pid": 0},\n{"ph": "X", "name": tru}]}\n');
  const badGraph = path.join(tmp, 'bad-graph.json');
  writeFileSync(badGraph, '{"ops": [\n  {"name": "a", "op_type": "matmul", "inputs": ["x"], "output": "y", "shape": [2, 2], "bytes_per_element": 2},\n  {"name": 7}\n]}\n');
  const cut = path.join(tmp, 'cut.json.gz');
  const gz = readFileSync(abs(TRACES[2]));
  writeFileSync(cut, gz.subarray(0, gz.length >> 1));
  const { page, check } = await openPage(env);
  await page.getByTestId('unfused-total').waitFor();
  const notice = page.getByTestId('notice');
  for (const [file, cmd] of [[badTrace, 'trace'], [badGraph, 'graph'], [cut, 'trace']]) {
    await page.setInputFiles('#file-input', file);
    await notice.getByText(new RegExp(`^${base(file).replace(/\./g, '\\.')} is `)).waitFor();
    const shown = await notice.locator('p').textContent();
    const expected = cliError([cmd, file]);
    // The page says the same thing as the CLI, after its "<file> is a … but cannot be read:".
    const where = expected.match(/at byte \d+ of the JSON text|at line \d+, column \d+|after \d+ compressed bytes/);
    assert.ok(where, `CLI: ${expected}`);
    assert.ok(shown.includes(where[0]), `page: ${shown}\nCLI: ${expected}`);
    assert.equal(await notice.getAttribute('role'), 'alert');
  }
  await page.screenshot({ path: path.join(screenshotDir, 'worker-error.png') });
  // Nothing was opened: the block's figures are still shown.
  assert.match(await page.getByTestId('results-title').textContent(), /Transformer block/);
  await check();
});

test('without a worker (its script fails), small files open on the page; traces and graphs say they need the worker', async () => {
  // The page's own build leaves out the trace and graph readers (import::READS_LARGE_KINDS):
  // they run in the worker, and would otherwise be most of the first download.
  const noWorker = mkdtempSync(path.join(os.tmpdir(), 'fusionscope-noworker-'));
  cpSync(dist, noWorker, { recursive: true });
  writeFileSync(path.join(noWorker, 'fusionscope-reader_loader.js'), 'throw new Error("this host cannot run workers");\n');
  const host = await startBrowser(noWorker);
  try {
    const { page, check } = await openPage(host);
    const warnings = [];
    page.on('console', (m) => m.type() === 'warning' && warnings.push(m.text()));
    await page.getByTestId('unfused-total').waitFor();
    const qwenNv = TRACES[5];
    await page.setInputFiles('#file-input', abs(qwenNv));
    const notice = page.getByTestId('notice');
    await notice.getByText(/is a PyTorch-profiler trace \(gzip-compressed\) but cannot be read: this page reads traces and op graphs in its analysis worker, which could not start/).waitFor();
    assert.ok(warnings.some((w) => w.includes('on the page')), warnings.join('\n'));
    await page.setInputFiles('#file-input', path.join(root, 'tests/data/graphs/worked_example.json'));
    await notice.getByText(/^worked_example\.json is an op graph but cannot be analysed: this page reads traces and op graphs in its analysis worker/).waitFor();
    // The block's figures are still shown, and a small kind opens on the page with the CLI's figures.
    assert.match(await page.getByTestId('results-title').textContent(), /Transformer block/);
    const file = 'spec_example.optrace';
    await page.setInputFiles('#file-input', path.join(root, 'tests/data/optrace', file));
    await page.getByTestId('results-title').getByText(`Op trace ${file}: fusion groups of its op graph`).waitFor();
    const report = cli(['optrace', `tests/data/optrace/${file}`, '--json']);
    assert.ok((await page.getByTestId('unfused-total').textContent()).includes(`${digits(report.analysis.unfused.total)} bytes`));
    await check();
  } finally {
    await stopBrowser(host);
    rmSync(noWorker, { recursive: true, force: true });
  }
});

/**
 * A copy of dist/ whose worker loader wraps the real worker: a file named `crash-*` makes the
 * worker fail after it started reading (as a trap or an allocation failure does), and a file
 * named `stuck-*` is never answered, nor its Cancel (as a worker busy in a step that cannot be
 * interrupted). Every other file goes to the real worker.
 */
function distWithFaultyWorker() {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'fusionscope-faulty-'));
  cpSync(dist, dir, { recursive: true });
  writeFileSync(path.join(dir, 'fusionscope-reader_loader.js'), `
importScripts("./fusionscope-reader.js");
const stuck = new Set();
wasm_bindgen("./fusionscope-reader_bg.wasm").then(() => {
  const real = self.onmessage;
  self.onmessage = (e) => {
    const request = Array.isArray(e.data) ? e.data[0] : e.data;
    const open = request instanceof Map ? request.get('open') : request.open;
    const cancel = request instanceof Map ? request.get('cancel') : request.cancel;
    const field = (o, k) => (o instanceof Map ? o.get(k) : o[k]);
    if (open && field(open, 'name').startsWith('stuck-')) { stuck.add(field(open, 'job')); return; }
    if (cancel && stuck.has(field(cancel, 'job'))) return;
    real(e);
    // As a trap does: the worker fails while the file is being read.
    if (open && field(open, 'name').startsWith('crash-')) throw new Error('RuntimeError: unreachable');
  };
});
`);
  return dir;
}

test('a worker that dies or ignores Cancel is replaced: the notice names the file, its traces leave the list, the next file opens', async () => {
  const dir = distWithFaultyWorker();
  const host = await startBrowser(dir);
  try {
    const { page, check } = await openPage(host);
    await page.getByTestId('unfused-total').waitFor();
    await page.setInputFiles('#file-input', abs(TRACES[7]));
    await page.getByTestId('results-title').getByText(`Trace ${base(TRACES[7])}`).waitFor();
    const crash = path.join(tmp, 'crash-me.json.gz');
    cpSync(abs(TRACES[8]), crash);
    await page.setInputFiles('#file-input', crash);
    const notice = page.getByTestId('notice');
    await notice.getByText(/^The analysis worker stopped \(.*unreachable.*\) reading crash-me\.json\.gz at .* of .*; a new one starts with the next file\. The trace it held \(hf_bert-small_eager_h100\.json\.gz\) is no longer listed: open it again to compare\.$/).waitFor();
    assert.equal(await notice.getAttribute('role'), 'alert');
    assert.equal(await page.getByTestId('trace-row').count(), 0);
    // The next file opens in a new worker.
    await page.setInputFiles('#file-input', abs(TRACES[8]));
    await page.getByTestId('results-title').getByText(`Trace ${base(TRACES[8])}`).waitFor();
    assert.equal(await page.getByTestId('trace-row').count(), 1);
    // A worker that does not answer Cancel within a second is terminated and replaced.
    const stuck = path.join(tmp, 'stuck-forever.json.gz');
    cpSync(abs(TRACES[7]), stuck);
    await page.setInputFiles('#file-input', stuck);
    await page.getByTestId('reading').waitFor();
    const cancelled = Date.now();
    await page.getByTestId('cancel-read').click();
    await notice.getByText(/^The analysis worker did not stop within a second of Cancel and was terminated; a new one starts with the next file\./).waitFor({ timeout: 5000 });
    assert.ok(Date.now() - cancelled < 4000, 'the stuck worker was replaced promptly');
    await page.setInputFiles('#file-input', abs(TRACES[7]));
    await page.getByTestId('results-title').getByText(`Trace ${base(TRACES[7])}`).waitFor();
    await check();
  } finally {
    await stopBrowser(host);
    rmSync(dir, { recursive: true, force: true });
  }
});

// Hostile files and links in the page: each ends fast with a notice that names the input and
// what was wrong, the page keeps its figures, and the next file opens. The native suites
// (tests/hostile_*.rs) cover every case through the core and the CLI; these check that the
// page, its worker and the link reader carry them through.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { deflateRawSync, gzipSync } from 'node:zlib';
import { openPage, startBrowser, stopBrowser, root } from './harness.mjs';

let env;
let tmp;
before(async () => {
  tmp = mkdtempSync(path.join(os.tmpdir(), 'fusionscope-hostile-'));
  env = await startBrowser();
});
after(async () => {
  await stopBrowser(env);
  rmSync(tmp, { recursive: true, force: true });
});

/** A share link's fragment holding `state` (format 2), as a hand-made link would. */
const link = (state) => `#s=2.${deflateRawSync(Buffer.from(JSON.stringify(state))).toString('base64url')}`;
const BLOCK = { view: 'transformer', config: { seq_len: 2048, hidden_dim: 4096, num_heads: 32, dtype_bytes: 2 } };
const DEFAULT_TOTAL = '2,348,810,240';

/** The page shows the default block's figures, and still opens a good file. */
async function stillWorks(page) {
  assert.ok((await page.getByTestId('unfused-total').textContent()).includes(DEFAULT_TOTAL));
  await page.setInputFiles('#file-input', path.join(root, 'tests/data/graphs/worked_example.json'));
  await page.getByTestId('results-title').getByText('Op graph worked_example.json').waitFor();
}

test('links that once hung or exhausted the page open the default view with a notice naming the problem', async () => {
  const cases = [
    [{ v: 2, state: BLOCK, chip: { custom: { name: 'evil', peak_flops: 1e308, hbm_bandwidth: 3.35e12, launch_overhead_us: 2, source: 'a link' } } },
      /chip field `peak_flops` is 1e308, outside the accepted range/],
    [{ v: 2, state: BLOCK, chip: { custom: { name: 'evil', peak_flops: 1e-320, hbm_bandwidth: 3.35e12, launch_overhead_us: 2, source: 'a link' } } },
      /chip field `peak_flops` is 1e-320/],
    [{ v: 2, state: { view: 'op_trace', file_name: 'big.optrace', text: 'x'.repeat(2 << 20) } },
      /more than 1 MiB/],
  ];
  for (const [state, why] of cases) {
    const started = Date.now();
    const { page, check } = await openPage(env, link(state));
    const notice = page.getByTestId('notice');
    await notice.waitFor();
    assert.match(await notice.textContent(), why);
    assert.equal(await notice.getAttribute('role'), 'alert');
    await page.getByTestId('unfused-total').waitFor();
    assert.ok(Date.now() - started < 20000, `${JSON.stringify(state).slice(0, 80)}… took ${Date.now() - started} ms`);
    await stillWorks(page);
    await check();
  }
});

test('a link with sizes whose traffic passes 2^64 restores them and says they cannot be analysed, never a wrapped total', async () => {
  const state = { v: 2, state: { view: 'transformer', config: { seq_len: 2 ** 31, hidden_dim: 2 ** 28, num_heads: 1, dtype_bytes: 2 } } };
  const { page, check } = await openPage(env, link(state));
  await page.locator('#form-error').getByText(/^These inputs cannot be analysed: the graph is too large: its memory traffic passes 2\^64 bytes/).waitFor();
  assert.equal(await page.locator('#in-seq-len').inputValue(), String(2 ** 31));
  assert.equal(await page.getByTestId('unfused-total').count(), 0, 'no figures for sizes that cannot be counted');
  await page.setInputFiles('#file-input', path.join(root, 'tests/data/graphs/worked_example.json'));
  await page.getByTestId('results-title').getByText('Op graph worked_example.json').waitFor();
  await check();
});

test('files that once hung, crashed or exhausted the reader end with a notice naming the file, the place and the limit', async () => {
  const file = (name, data) => {
    const p = path.join(tmp, name);
    writeFileSync(p, data);
    return p;
  };
  const cases = [
    // 100,000 nested list types: unbounded recursion once.
    [file('deep.optrace', `0:0:0 %1:<2xf16> = a.b.add(%0:${'list{'.repeat(100000)}f16)\n`), /deep\.optrace is an op trace but cannot be read: line 1, column \d+: types nested deeper than 64 levels/],
    // One 4 MB line of record prefixes: quadratic scanning once.
    [file('long.optrace', `0:0:0 %1:<2xf16> = a.b.add(%0:<2xf16>)\n${'0:0:0 '.repeat(700000)}\n`), /long\.optrace is an op trace but cannot be read: line 2: the line is [\d,]+ bytes long, over the budget/],
    // 200,000 identical simulator rows: quadratic grouping once.
    [file('big_inference_tpuv5p_bs1_prefill.csv', 'Fusion index,Description,OpType,Count,Bounded-by,Execution time,Compute time,Memory time,Bytes accessed,FLOP Count\n' +
      '3,-Q-3,MXU,32,Compute,1000,1000,20,2048,1000000\n'.repeat(200000)), /big_inference_tpuv5p_bs1_prefill\.csv is a simulator op table but cannot be read: line 100002: more than 100,000 rows/],
    // A gzip trace holding one string far over the event budget: buffered whole once.
    [file('huge-string.json.gz', gzipSync(Buffer.concat([Buffer.from('{"traceEvents": [{"name": "'), Buffer.alloc(80 << 20, 97), Buffer.from('"}]}')]))),
      /huge-string\.json\.gz is a PyTorch-profiler trace \(gzip-compressed\) but cannot be read: the event starting at byte \d+ of the JSON text is longer than the limit of 64\.00 MiB/],
  ];
  const { page, check } = await openPage(env);
  await page.getByTestId('unfused-total').waitFor();
  const notice = page.getByTestId('notice');
  for (const [p, why] of cases) {
    const started = Date.now();
    await page.setInputFiles('#file-input', p);
    await notice.getByText(why).waitFor({ timeout: 60000 });
    assert.ok(Date.now() - started < 60000, `${path.basename(p)} took ${Date.now() - started} ms`);
    assert.equal(await notice.getAttribute('role'), 'alert');
  }
  await stillWorks(page);
  await check();
});

test('exported CSV cannot run a formula from a name in a file', async () => {
  const graph = { ops: [{ name: '=HYPERLINK("http://x")', op_type: 'matmul', inputs: ['a', 'b'], output: 'c', shape: [2, 2], bytes_per_element: 2 }] };
  const p = path.join(tmp, 'formula.json');
  writeFileSync(p, JSON.stringify(graph));
  const { page, check } = await openPage(env);
  await page.setInputFiles('#file-input', p);
  await page.getByTestId('results-title').getByText('Op graph formula.json').waitFor();
  const [download] = await Promise.all([page.waitForEvent('download'), page.locator('[data-export="-groups.csv"]').click()]);
  const csv = await (await download.createReadStream()).toArray().then((parts) => Buffer.concat(parts).toString('utf8'));
  assert.ok(csv.includes(`'=HYPERLINK`), csv);
  assert.ok(!/(^|,)"?=HYPERLINK/m.test(csv), csv);
  await check();
});

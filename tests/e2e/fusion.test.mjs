// End-to-end tests of fusion in real traces: every kernel as a fusion group with its ops and
// bytes, the traffic bars, the fusion left on the table and the re-prediction, for one trace
// and for a pair; every figure against the command line's --json on the same files.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { openPage, startBrowser, stopBrowser, cli, allTableRows, digits, duration, root, screenshotDir } from './harness.mjs';

const traces = path.join(root, 'tests', 'data', 'traces');
const COMPILED = path.join(traces, 'amd', 'torch_compile_triton_mi300x.json.gz');
const REL_COMPILED = 'tests/data/traces/amd/torch_compile_triton_mi300x.json.gz';
const QWEN_NV = path.join(traces, 'nvidia', 'hf_qwen1.5-0.5b_eager_h100.json.gz');
const QWEN_AMD = path.join(traces, 'amd', 'hf_qwen1.5-0.5b_eager_mi300x.json.gz');
const REL_NV = 'tests/data/traces/nvidia/hf_qwen1.5-0.5b_eager_h100.json.gz';
const REL_AMD = 'tests/data/traces/amd/hf_qwen1.5-0.5b_eager_mi300x.json.gz';

let env;
before(async () => {
  env = await startBrowser();
});
after(async () => {
  await stopBrowser(env);
});

/** A group row as the page's table shows it: calls, time, ops, parts, how. */
const groupRow = (g) => [
  digits(g.calls),
  duration(g.time_us),
  g.ops.map((o) => o.op).join(', '),
  g.parts.join(' + '),
  g.bytes_unknown ? `${g.how}: ${g.bytes_unknown}` : g.how,
];
const shownGroupRow = (r) => [r[2], r[3], r[4], r[5], r[9]];

test('one compiled trace: the kernel groups, traffic bars, opportunities and re-prediction equal the CLI', async () => {
  const { page, check } = await openPage(env, '', { viewport: { width: 1300, height: 900 } });
  await page.setInputFiles('#file-input', COMPILED);
  await page.getByTestId('results-title').getByText('Trace torch_compile_triton_mi300x.json.gz').waitFor();
  const f = cli(['trace', REL_COMPILED, '--json']).fusion;
  // Every group, in the CLI's order, with its calls, time, ops, parts and how its bytes were known.
  const groups = await allTableRows(page, 'table-fusion-groups');
  assert.equal(groups.length, f.groups.length);
  assert.deepEqual(groups.map(shownGroupRow), f.groups.map(groupRow));
  const opportunities = await allTableRows(page, 'table-opportunities');
  assert.equal(opportunities.length, f.opportunities.length);
  // The headline's figures and the re-prediction.
  const headline = await page.getByTestId('fusion-headline').textContent();
  assert.ok(headline.includes(`${digits(f.totals.groups)} kernel groups of ${digits(f.totals.events)} GPU events`), headline);
  assert.ok(headline.includes(`bytes known for ${f.totals.bytes_known_pct.toFixed(2)} % of GPU time`), headline);
  const r = f.reprediction;
  assert.ok(r && r.kernels > 0, 'a compiled trace has Inductor kernels');
  const repredicted = await page.getByTestId('fusion-reprediction').textContent();
  assert.ok(repredicted.includes(`re-form ${digits(r.matched)} of ${digits(r.kernels)} Inductor kernels exactly (${r.matched_pct.toFixed(2)} %)`), repredicted);
  // One bar pair per group with known bytes; the total chart's bars are the totals.
  const known = f.groups.filter((g) => g.fused_bytes_per_call !== null && g.unfused_bytes_per_call !== null);
  const perGroup = page.getByTestId('chart-fusion-groups');
  assert.equal(await perGroup.locator('g > title').filter({ hasText: /^unfused: / }).count(), Math.min(known.length, 20));
  const total = await page.getByTestId('chart-fusion-total').locator('g > title').allTextContents();
  assert.ok(total.includes(`unfused: ${digits(f.totals.unfused_bytes)} bytes read + written`), total.join('|'));
  assert.ok(total.includes(`fused: ${digits(f.totals.fused_bytes)} bytes read + written`), total.join('|'));
  await page.getByTestId('table-fusion-groups').scrollIntoViewIfNeeded();
  await page.screenshot({ path: path.join(screenshotDir, 'fusion-trace.png'), fullPage: true });
  await check();
});

test('two traces: each side gets its kernel groups and opportunities, equal to the CLI', async () => {
  const { page, check } = await openPage(env, '', { viewport: { width: 1300, height: 900 } });
  await page.setInputFiles('#file-input', [QWEN_NV, QWEN_AMD]);
  await page.getByTestId('results-title').getByText('AMD vs NVIDIA compared').waitFor();
  const c = cli(['compare', REL_NV, REL_AMD, '--json']);
  const keys = c.platforms.map((p) => p.key);
  for (const [i, side] of ['a', 'b'].entries()) {
    const f = c.fusion[keys[i]];
    const groups = await allTableRows(page, `table-fusion-groups-${side}`);
    assert.deepEqual(groups.map(shownGroupRow), f.groups.map(groupRow), keys[i]);
    const opportunities = await allTableRows(page, `table-opportunities-${side}`);
    assert.equal(opportunities.length, f.opportunities.length, keys[i]);
    const headline = await page.getByTestId(`fusion-headline-${keys[i]}`).textContent();
    assert.ok(headline.startsWith(`${keys[i]}: Fusion: ${digits(f.totals.groups)} kernel groups`), headline);
  }
  const total = await page.getByTestId('chart-fusion-total').locator('g > title').allTextContents();
  for (const key of keys) {
    assert.ok(total.includes(`fused: ${digits(c.fusion[key].totals.fused_bytes)} bytes read + written`), key);
  }
  await check();
});

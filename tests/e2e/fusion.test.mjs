// End-to-end tests of fusion in real traces: every kernel as a fusion group with its ops and
// bytes, the traffic bars, the fusion left on the table and the re-prediction, for one trace
// and for a pair; every figure against the command line's --json on the same files.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { browserPerFile, QWEN_NV, QWEN_AMD, REL_NV, REL_AMD, openPage, cli, allTableRows, digits, duration, root, screenshotDir } from './harness.mjs';

const traces = path.join(root, 'tests', 'data', 'traces');
const COMPILED = path.join(traces, 'amd', 'torch_compile_triton_mi300x.json.gz');
const REL_COMPILED = 'tests/data/traces/amd/torch_compile_triton_mi300x.json.gz';

const env = browserPerFile();

/** A group row as the page's table shows it: calls, time, ops, parts, how. */
const groupRow = (g) => [
  digits(g.calls),
  duration(g.time_us),
  g.ops.map((o) => o.op).join(', '),
  g.parts.join(' + '),
  g.bytes_unknown ? `${g.how} (${g.bytes_unknown_cause}): ${g.bytes_unknown}` : g.how,
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
  assert.ok(
    headline.includes(`and for ${f.totals.bytes_known_of_recorded_pct.toFixed(2)} % of the time the trace records what they need`),
    headline,
  );
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
  // Every label is drawn whole inside its chart: a long one is cut to its column, with an
  // ellipsis, in the font the browser draws it with.
  const overflow = await page.locator('figure.chart svg').evaluateAll((svgs) =>
    svgs.flatMap((svg) => {
      const left = svg.getBoundingClientRect().left;
      return [...svg.querySelectorAll('text')].filter((t) => t.getBoundingClientRect().left < left - 0.5).map((t) => t.textContent);
    }),
  );
  assert.deepEqual(overflow, []);
  // Op time both ways: each op's own kernels and whole subtree, the CLI's rows, with units.
  const times = await allTableRows(page, 'table-op-times');
  assert.ok(f.op_times.length > 0);
  assert.deepEqual(
    times.map((r) => [r[0], r[2], r[3], r[4]]),
    f.op_times.map((o) => [o.op, digits(o.calls), duration(o.own_us), duration(o.subtree_us)]),
  );
  await page.getByTestId('table-fusion-groups').scrollIntoViewIfNeeded();
  await page.screenshot({ path: path.join(screenshotDir, 'fusion-trace.png'), fullPage: true });
  await page.getByTestId('table-op-times').scrollIntoViewIfNeeded();
  await page.screenshot({ path: path.join(screenshotDir, 'fusion-op-times.png') });
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

const execTraces = path.join(root, 'tests', 'data', 'exec-trace');
const REL_ET = 'tests/data/exec-trace';

/** The page's JSON export of the shown view, parsed. */
async function exported(page) {
  const [d] = await Promise.all([page.waitForEvent('download'), page.click('[data-export=".json"]')]);
  const parts = await (await d.createReadStream()).toArray();
  return JSON.parse(Buffer.concat(parts).toString('utf8'));
}

/** The CLI's report of a Kineto trace with its execution trace; the ET named by its file name,
 * as the page names a dropped file. */
function cliReportWithEt(kineto, et) {
  const r = cli(['trace', `${REL_ET}/${kineto}`, '--exec-trace', `${REL_ET}/${et}`, '--json']);
  r.fusion.exec_trace.file = et;
  return r;
}

/** The CLI's fusion of a Kineto trace with its execution trace. */
const cliWithEt = (kineto, et) => cliReportWithEt(kineto, et).fusion;

/** The op table and its coverage in the page's export equal the CLI's, rows priced with the
 * execution trace's shapes included, and the coverage line says where their shapes came from. */
async function checkOpTableWithEt(page, exportedReport, want, et) {
  assert.deepEqual(exportedReport.ops, want.ops);
  assert.deepEqual(exportedReport.op_coverage, want.op_coverage);
  const fromEt = want.ops.filter((o) => o.shapes_from === 'execution trace');
  assert.ok(fromEt.length > 0 && fromEt.every((o) => o.bytes_per_call > 0), 'rows priced with the ET');
  const coverage = await page.getByTestId('op-coverage').textContent();
  assert.ok(coverage.includes(`The trace was recorded without record_shapes. ${fromEt.length} op rows take their shapes from the execution trace ${et} (`), coverage);
}

for (const [run, order] of [['param_linear', 'trace first'], ['hta_simple_add', 'execution trace first']]) {
  test(`${run}: an execution trace dropped with its Kineto trace (${order}) gives the CLI's --exec-trace fusion`, async () => {
    const { page, check } = await openPage(env, '', { viewport: { width: 1300, height: 900 } });
    const files = [path.join(execTraces, `${run}_kineto.json.gz`), path.join(execTraces, `${run}_et.json.gz`)];
    await page.setInputFiles('#file-input', order === 'trace first' ? files : files.reverse());
    await page.getByTestId('results-title').getByText(`Trace ${run}_kineto.json.gz`).waitFor();
    const line = page.getByTestId('fusion-exec-trace');
    await line.waitFor();
    const report = cliReportWithEt(`${run}_kineto.json.gz`, `${run}_et.json.gz`);
    const want = report.fusion;
    const e = want.exec_trace;
    assert.ok(e.linked_ops > 0, 'the pair links');
    assert.equal(
      await line.textContent(),
      `Execution trace ${run}_et.json.gz: ${digits(e.linked_ops)} of its ${digits(e.ops)} ops linked to this trace's CPU ops (${e.linked_pct.toFixed(2)} %); the hand-offs of ${digits(e.linked_kernels)} kernel launch${e.linked_kernels === 1 ? '' : 'es'} are exact (its tensor ids).`,
    );
    // The export's fusion is the command line's, exec_trace, groups and opportunities included;
    // so is its op table, priced with the execution trace's shapes.
    const exportedReport = await exported(page);
    await checkOpTableWithEt(page, exportedReport, report, `${run}_et.json.gz`);
    const got = exportedReport.fusion;
    assert.deepEqual(got.exec_trace, e);
    assert.deepEqual(got.groups, want.groups);
    assert.deepEqual(got.opportunities, want.opportunities);
    assert.deepEqual(got, want);
    // The groups table shows the groups the execution trace told.
    const groups = await allTableRows(page, 'table-fusion-groups');
    assert.deepEqual(groups.map(shownGroupRow), want.groups.map(groupRow));
    if (run === 'param_linear') {
      await line.scrollIntoViewIfNeeded();
      await page.screenshot({ path: path.join(screenshotDir, 'fusion-exec-trace.png') });
    }
    await check();
  });
}

test('a trace opened after an execution trace of another run raises the alert too', async () => {
  const { page, check } = await openPage(env, '');
  const notice = page.getByTestId('notice');
  await page.setInputFiles('#file-input', path.join(execTraces, 'param_linear_et.json.gz'));
  await notice.getByText('param_linear_et.json.gz is an execution trace', { exact: false }).waitFor();
  await page.setInputFiles('#file-input', path.join(execTraces, 'hta_simple_add_kineto.json.gz'));
  const other = cli(['trace', `${REL_ET}/hta_simple_add_kineto.json.gz`, '--exec-trace', `${REL_ET}/param_linear_et.json.gz`, '--json']).fusion.exec_trace;
  await notice
    .getByText(`param_linear_et.json.gz is an execution trace of another run: none of its ${digits(other.ops)} ops has a CPU op with its record-function id and name in hta_simple_add_kineto.json.gz.`)
    .waitFor();
  assert.equal(await notice.getAttribute('role'), 'alert');
  // The trace opened all the same, its Fusion line saying the same.
  await page.getByTestId('fusion-exec-trace').getByText('Execution trace param_linear_et.json.gz: none of its', { exact: false }).waitFor();
  await check();
});

test('an execution trace alone needs its Kineto trace; one of another run says so, naming it', async () => {
  const { page, check } = await openPage(env, '');
  const notice = page.getByTestId('notice');
  await page.setInputFiles('#file-input', path.join(execTraces, 'hta_simple_add_et.json.gz'));
  await notice.getByText('hta_simple_add_et.json.gz is an execution trace (36 ops): it needs the Kineto trace of the same run.').waitFor();
  assert.equal(await notice.getAttribute('role'), 'status');
  // Its trace dropped after it: opened with it, its op table and fusion the CLI's.
  await page.setInputFiles('#file-input', path.join(execTraces, 'hta_simple_add_kineto.json.gz'));
  await page.getByTestId('fusion-exec-trace').getByText('Execution trace hta_simple_add_et.json.gz: 36 of its 36 ops linked').waitFor();
  const report = cliReportWithEt('hta_simple_add_kineto.json.gz', 'hta_simple_add_et.json.gz');
  const exportedReport = await exported(page);
  assert.deepEqual(exportedReport.fusion, report.fusion);
  await checkOpTableWithEt(page, exportedReport, report, 'hta_simple_add_et.json.gz');
  // Another run's execution trace dropped onto an open trace.
  await page.setInputFiles('#file-input', path.join(execTraces, 'param_linear_et.json.gz'));
  const other = cli(['trace', `${REL_ET}/hta_simple_add_kineto.json.gz`, '--exec-trace', `${REL_ET}/param_linear_et.json.gz`, '--json']).fusion.exec_trace;
  assert.equal(other.linked_ops, 0);
  await notice
    .getByText(`param_linear_et.json.gz is an execution trace of another run: none of its ${digits(other.ops)} ops has a CPU op with its record-function id and name in hta_simple_add_kineto.json.gz.`)
    .waitFor();
  assert.equal(await notice.getAttribute('role'), 'alert');
  await page.screenshot({ path: path.join(screenshotDir, 'fusion-exec-trace-other-run.png') });
  await check();
});

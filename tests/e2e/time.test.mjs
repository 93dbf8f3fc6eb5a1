// End-to-end tests of "where the time goes": a trace's GPU timeline, op table and roofline
// chart, the chip picker, and the gap table of a comparison; every figure against the command
// line's --json on the same files.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { browserPerFile, QWEN_NV, QWEN_AMD, REL_NV, REL_AMD, openPage, cli, allTableRows, digits, duration, root, screenshotDir } from './harness.mjs';

const traces = path.join(root, 'tests', 'data', 'traces');

const env = browserPerFile();

/** A figure as the table shows it (`—` for none). */
const fixed = (v, places) => (v === null || v === undefined ? '—' : v.toFixed(places));

test('one trace: the timeline, the op table and the roofline chart equal the CLI; picking a chip re-measures', async () => {
  const { page, check } = await openPage(env, '', { viewport: { width: 1300, height: 900 } });
  await page.setInputFiles('#file-input', QWEN_NV);
  await page.getByTestId('results-title').getByText('Trace hf_qwen1.5-0.5b_eager_h100.json.gz').waitFor();
  const s = cli(['trace', REL_NV, '--json']);
  assert.ok((await page.getByTestId('trace-chip-line').textContent()).includes(`against ${s.chip.name} (from ${s.chip.detected_from})`));
  const coverage = await page.getByTestId('op-coverage').textContent();
  assert.ok(coverage.startsWith(`Models cover ${s.op_coverage.modelled_pct.toFixed(2)} % of GPU time (${duration(s.op_coverage.modelled_us)})`), coverage);
  // One timeline row per window, whole trace first.
  const timeline = await allTableRows(page, 'table-timeline');
  const windows = [s.timeline, ...s.steps];
  assert.deepEqual(timeline.map((r) => r[0]), windows.map((w) => w.window));
  assert.deepEqual(timeline.map((r) => r.slice(1, 5)), windows.map((w) => [w.total_us, w.busy_us, w.idle_us, w.computation_us].map(duration)));
  assert.equal(await page.getByTestId('chart-timeline').locator('rect[data-part="computation"]').count(), windows.length);
  // Every op row, in the CLI's order, with its figures.
  const ops = await allTableRows(page, 'table-ops');
  assert.equal(ops.length, s.ops.length);
  assert.deepEqual(ops.map((r) => [r[0], r[2], r[3], r[4], r[7]]),
    s.ops.map((o) => [o.op, digits(o.calls), duration(o.kernel_time_us), fixed(o.tflops_per_s, 1), fixed(o.roofline_pct, 1)]));
  // One point per modelled row on the roofline chart; the chip's roof.
  const modelled = s.ops.filter((o) => o.flop_per_byte > 0 && o.tflops_per_s > 0);
  assert.ok(modelled.length >= 10, `${modelled.length} modelled rows`);
  const chart = page.getByTestId('chart-roofline');
  assert.equal(await chart.locator('circle[data-op]').count(), modelled.length);
  assert.equal(await chart.locator('[data-role="roof"]').count(), 1);
  // The step with the longest critical path drawn: one bar per event the CLI's JSON keeps.
  const drawn = s.critical_path.find((p) => p.drawn);
  const path_chart = page.getByTestId('chart-critical-path');
  assert.equal(await path_chart.locator('rect.path-event').count(), drawn.drawn.length);
  assert.ok((await path_chart.locator('svg > title').textContent()).startsWith(`Critical path of ${drawn.window}: `));
  await path_chart.screenshot({ path: path.join(screenshotDir, 'time-critical-path.png') });
  await page.screenshot({ path: path.join(screenshotDir, 'time-trace.png'), fullPage: true });

  // Another chip: the rows are re-measured as the CLI's --chip measures them.
  await page.getByTestId('trace-chip').selectOption('mi300x');
  await page.getByTestId('trace-chip-line').getByText('against MI300X (from picked on the page)').waitFor();
  const onMi300x = cli(['trace', REL_NV, '--chip', 'mi300x', '--json']);
  const after = await allTableRows(page, 'table-ops');
  assert.deepEqual(after.map((r) => r[7]), onMi300x.ops.map((o) => fixed(o.roofline_pct, 1)));
  assert.notDeepEqual(after.map((r) => r[7]), ops.map((r) => r[7]));
  await check();
});

test('a trace without shapes opened after its execution trace: the op table and roofline take its shapes, as the CLI', async () => {
  const { page, check } = await openPage(env, '', { viewport: { width: 1300, height: 900 } });
  const dir = path.join(root, 'tests', 'data', 'exec-trace');
  await page.setInputFiles('#file-input', path.join(dir, 'param_linear_et.json.gz'));
  await page.getByTestId('notice').getByText('param_linear_et.json.gz is an execution trace', { exact: false }).waitFor();
  await page.setInputFiles('#file-input', path.join(dir, 'param_linear_kineto.json.gz'));
  await page.getByTestId('results-title').getByText('Trace param_linear_kineto.json.gz').waitFor();
  // Its RTX 2080 Ti is no known chip: the roofline figures come with a chip picked, as --chip.
  await page.getByTestId('trace-chip').selectOption('h100');
  await page.getByTestId('trace-chip-line').getByText('against H100', { exact: false }).waitFor();
  const rel = 'tests/data/exec-trace';
  const s = cli(['trace', `${rel}/param_linear_kineto.json.gz`, '--exec-trace', `${rel}/param_linear_et.json.gz`, '--chip', 'h100', '--json']);
  const ops = await allTableRows(page, 'table-ops');
  assert.equal(ops.length, s.ops.length);
  assert.deepEqual(ops.map((r) => [r[0], r[1], r[2], r[3], r[4], r[7]]),
    s.ops.map((o) => [o.op, o.input_dims === null ? '—' : JSON.stringify(o.input_dims), digits(o.calls), duration(o.kernel_time_us), fixed(o.tflops_per_s, 1), fixed(o.roofline_pct, 1)]));
  const fromEt = s.ops.filter((o) => o.shapes_from === 'execution trace');
  assert.ok(fromEt.some((o) => o.op === 'aten::addmm' && o.roofline_pct > 0), 'the GEMM has a % of roofline');
  // A point per modelled row, each marked as priced with the execution trace's shapes.
  const modelled = s.ops.filter((o) => o.flop_per_byte > 0 && o.tflops_per_s > 0);
  assert.ok(modelled.length > 0 && modelled.every((o) => o.shapes_from === 'execution trace'));
  const points = page.getByTestId('chart-roofline').locator('circle[data-op]');
  assert.equal(await points.count(), modelled.length);
  for (const title of await points.locator('title').allTextContents()) {
    assert.ok(title.includes('(shapes from the execution trace)'), title);
  }
  const coverage = await page.getByTestId('op-coverage').textContent();
  assert.ok(coverage.includes(`${fromEt.length} op rows take their shapes from the execution trace param_linear_et.json.gz`), coverage);
  await page.getByTestId('table-ops').scrollIntoViewIfNeeded();
  await page.screenshot({ path: path.join(screenshotDir, 'time-exec-trace-shapes.png') });
  await check();
});

test('two traces: the headline and the gap table equal the CLI, both chips on one roofline; a link reopens it', async () => {
  const first = await openPage(env, '', { viewport: { width: 1300, height: 900 } });
  const { page } = first;
  await page.setInputFiles('#file-input', [QWEN_NV, QWEN_AMD]);
  await page.getByTestId('results-title').getByText('AMD vs NVIDIA compared').waitFor();
  const c = cli(['compare', REL_NV, REL_AMD, '--json']);
  const g = c.gap;
  const faster = g.headline.faster;
  const headline = await page.getByTestId('gap-headline').textContent();
  // The sides named by their devices, as the verdict names them.
  const name = Object.fromEntries(c.verdict.sides.map((s) => [s.key, s.name]));
  assert.ok(headline.startsWith(`${name[faster]} is faster: ${name.amd} ${duration(g.headline.gpu_time_us.amd)} vs ${name.nvidia} ${duration(g.headline.gpu_time_us.nvidia)}`), headline);
  assert.ok(name.amd === 'MI300X (AMD)' && name.nvidia === 'H100 SXM (NVIDIA)', JSON.stringify(name));
  // In "Where the time goes" the gap table comes first, every row plus the unattributed row,
  // in the CLI's order.
  await page.getByRole('tab', { name: 'Where the time goes' }).click();
  const firstTable = await page.locator('[data-testid^="table-"]').first().getAttribute('data-testid');
  assert.equal(firstTable, 'table-gap');
  const rows = await allTableRows(page, 'table-gap');
  assert.equal(rows.length, g.rows.length + 1);
  const time = (side) => (side ? duration(side.kernel_time_us) : '—');
  assert.deepEqual(rows.slice(0, -1).map((r) => [r[0], r[2], r[3], r[4]]),
    g.rows.map((r) => [r.op, time(r.amd), time(r.nvidia), duration(r.difference_us)]));
  assert.deepEqual(rows.at(-1).slice(2, 4), [duration(g.unattributed_us.amd), duration(g.unattributed_us.nvidia)]);
  // Both chips' roofs, and points of both colours.
  const chart = page.getByTestId('chart-roofline');
  assert.equal(await chart.locator('[data-role="roof"]').count(), 2);
  const colours = new Set(await chart.locator('circle[data-op]').evaluateAll((cs) => cs.map((c) => c.getAttribute('fill'))));
  assert.equal(colours.size, 2);
  await page.screenshot({ path: path.join(screenshotDir, 'time-compare.png'), fullPage: true });

  await page.getByTestId('share-button').click();
  const url = await page.getByTestId('share-url').inputValue();
  assert.ok(url.length < 8 * 1024, `${url.length} bytes`);
  await first.check();
  const second = await openPage(env, url.slice(env.server.url.length));
  await second.page.getByTestId('results-title').getByText('AMD vs NVIDIA compared').waitFor();
  assert.equal(await second.page.getByTestId('gap-headline').textContent(), headline);
  const shared = await allTableRows(second.page, 'table-gap');
  // The link keeps the largest differences, in the same order, and the unattributed row.
  assert.ok(shared.length >= 5, `${shared.length} rows`);
  assert.deepEqual(shared.slice(0, -1), rows.slice(0, shared.length - 1));
  assert.deepEqual(shared.at(-1), rows.at(-1));
  await second.check();
});

test('a serving trace: the step strip, its phases and layer equal the CLI; a pair shows the aligned layers', async () => {
  const { page, check } = await openPage(env, '', { viewport: { width: 1300, height: 900 } });
  const rel = 'tests/data/traces/amd/vllm_decode_graph_full_replay.json.gz';
  await page.setInputFiles('#file-input', path.join(root, rel));
  await page.getByTestId('results-title').getByText('Trace vllm_decode_graph_full_replay.json.gz').waitFor();
  const s = cli(['trace', rel, '--json']).structure;
  assert.equal(await page.getByTestId('chart-steps').locator('rect[data-step]').count(), s.steps.length);
  const phases = await allTableRows(page, 'table-phases');
  assert.deepEqual(phases.map((r) => [r[2], r[3], r[4]]), s.phases.map((p) => [digits(p.steps), digits(p.layers_per_step), digits(p.kernels_per_layer)]));
  const layer = (await allTableRows(page, 'table-layer')).filter((r) => r[1] === 'layer');
  assert.deepEqual(layer.map((r) => r[3]), s.phases.flatMap((p) => p.layer.map((k) => k.category)));
  await page.screenshot({ path: path.join(screenshotDir, 'layers-trace.png'), fullPage: true });

  const a = 'tests/data/traces/amd/sglang_qwen3-8b_decode_hipgraph_mi300x.json.gz';
  const b = 'tests/data/traces/amd/sglang_qwen3-8b_prefilldecode_mi300x.json.gz';
  await page.setInputFiles('#file-input', [path.join(root, a), path.join(root, b)]);
  await page.getByTestId('results-title').getByText(/compared/).waitFor();
  const c = cli(['compare', a, b, '--json']);
  const rows = await allTableRows(page, 'table-layer-alignment');
  const want = c.layer_alignment.flatMap((al) => al.rows);
  assert.ok(want.length > 0);
  assert.deepEqual(rows.map((r) => [r[1], r[6]]), want.map((r) => [r.category, r.difference ?? '']));
  // The differences found there are in the fusion-difference list too.
  const layered = c.fusion_differences.filter((d) => d.evidence.startsWith('layer alignment'));
  assert.ok(layered.length > 0);
  const listed = await allTableRows(page, 'table-fusion-differences');
  for (const d of layered) assert.ok(listed.some((r) => r.at(-1) === d.evidence), d.evidence);
  await page.screenshot({ path: path.join(screenshotDir, 'layers-compare.png'), fullPage: true });
  await check();
});

test('a graph replay and its capture trace, in either order: replayed kernels get their captured ops, as on the CLI', async () => {
  const REPLAY = 'tests/data/traces/amd/vllm_decode_graph_full_replay.json.gz';
  const CAPTURE = 'tests/data/traces/amd/vllm_decode_graph_full_capture.json.gz';
  const s = cli(['trace', REPLAY, '--capture', CAPTURE, '--json']);
  const captureLine = `Capture: ${s.capture.replays_matched} of ${s.capture.replays} graph replays matched to ` +
    `${s.capture.graphs_captured} captured graphs; ${s.capture.kernels_attributed} of ${s.capture.replay_kernels} replayed kernels attributed to captured ops.`;
  const expectedOps = s.ops.map((o) => [o.op, digits(o.calls), duration(o.kernel_time_us)]);
  for (const order of [[REPLAY, CAPTURE], [CAPTURE, REPLAY]]) {
    const { page, check } = await openPage(env, '', { viewport: { width: 1300, height: 900 } });
    await page.setInputFiles('#file-input', order.map((f) => path.join(root, f)));
    await page.getByTestId('capture-line').getByText(captureLine).waitFor();
    await page.getByTestId('results-title').getByText('Trace vllm_decode_graph_full_replay.json.gz').waitFor();
    // The capture is not listed as a trace of its own (nothing to compare it with).
    assert.equal(await page.getByTestId('trace-row').count(), 1);
    if (order[0] === REPLAY) {
      const notice = await page.getByTestId('notice').textContent();
      assert.ok(notice.includes('vllm_decode_graph_full_capture.json.gz (a graph capture) was joined to vllm_decode_graph_full_replay.json.gz'), notice);
    }
    const ops = await allTableRows(page, 'table-ops');
    assert.deepEqual(ops.map((r) => [r[0], r[2], r[3]]), expectedOps);
    assert.ok(ops.some((r) => r[0] === 'aten::addmm'));
    if (order[0] === REPLAY) await page.screenshot({ path: path.join(screenshotDir, 'time-capture.png'), fullPage: true });
    await check();
  }
});

// End-to-end tests of the time model, "Model × chip", calibration profiles and share links
// (format 2, and format-1 links still opening). Expected figures come from the command line.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { openPage, startBrowser, stopBrowser, cli, cliText, digits, root, screenshotDir } from './harness.mjs';

const CALIB = path.join(root, 'tests', 'data', 'calibration', 'i7_12700k_with_fusion.json');
const CALIB_NO_PATTERNS = path.join(root, 'tests', 'data', 'calibration', 'jetson_orin_nano_gpu_pytorch.json');
const SHARE = path.join(root, 'tests', 'data', 'share');

let env;
before(async () => {
  env = await startBrowser();
  mkdirSync(screenshotDir, { recursive: true });
});
after(async () => {
  await stopBrowser(env);
});

async function detail(page, id) {
  return (await page.getByTestId(id).locator('.unit').textContent()).trim();
}

/** Opens "Model × chip" and picks a model, phase and chip by their option labels. */
async function pickModel(page, { model, phase, chip }) {
  await page.getByTestId('tab-model').click();
  await page.getByTestId('model-picker').waitFor();
  if (model) await page.getByTestId('model-picker').selectOption({ label: model });
  if (phase) await page.getByTestId('phase-picker').selectOption({ label: phase });
  if (chip) await page.getByTestId('model-chip-picker').selectOption({ label: chip });
}

/** Asserts the time figures equal the CLI's `time_us` (to the nanosecond shown). */
async function assertTimes(page, json) {
  await page.getByTestId('time-unfused').getByText(`${json.time_us.unfused.toFixed(3)} µs`).waitFor();
  assert.equal(await detail(page, 'time-fused'), `${json.time_us.fused.toFixed(3)} µs`);
  assert.equal(
    (await page.getByTestId('time-speedup').locator('.exact').textContent()).trim(),
    `${json.time_us.speedup.toFixed(2)}×`,
  );
}

test('Model × chip: Llama3-8B on H100, prefill, matches `fusionscope model --json`', async () => {
  const { page, check } = await openPage(env);
  await page.getByTestId('unfused-total').waitFor();
  await pickModel(page, { model: 'llama3-8b', phase: 'prefill', chip: 'H100 SXM' });
  const json = cli(['model', '--model', 'llama3-8b', '--chip', 'h100', '--phase', 'prefill', '--json']);
  await page.getByTestId('results-title').getByText(/^Model llama3-8b, prefill: batch 1/).waitFor();
  assert.equal(await detail(page, 'model-layer-flops'), `${digits(json.per_layer_flops)} FLOP`);
  assert.equal(await detail(page, 'model-total-flops'), `${digits(json.total_flops)} FLOP`);
  assert.equal(await detail(page, 'time-flops'), `${digits(json.total_flops)} FLOP`);
  await assertTimes(page, json);
  // The groups and traffic views show the generated graph's analysis.
  assert.equal((await page.getByTestId('group-count').locator('.exact').textContent()).trim(), digits(json.analysis.groups.length));
  assert.equal(await page.locator('[data-testid=time-table] tbody tr').count(), json.groups.length);
  // The roofline chart: the roof and one point per group that does FLOPs and moves bytes.
  const chart = page.getByTestId('roofline-chart');
  assert.equal(await chart.locator('[data-role=roof]').count(), 1);
  assert.equal(await chart.locator('circle[data-group]').count(), json.roofline.points.length);
  const firstTip = await chart.locator('circle[data-group] title').first().textContent();
  assert.match(firstTip, new RegExp(`^Group ${json.roofline.points[0].group + 1}: `));
  // The op table export has the CLI's --csv columns and rows.
  const [download] = await Promise.all([page.waitForEvent('download'), page.locator('[data-export="-ops.csv"]').click()]);
  const csv = readFileSync(await download.path(), 'utf8');
  const lines = csv.trim().split('\n');
  assert.equal(lines[0], 'name,op_type,group,runs,flops,bytes,flop_per_byte,time_us,bound');
  assert.equal(lines.length, json.ops.length + 1);
  assert.equal(csv, cliText(['model', '--model', 'llama3-8b', '--chip', 'h100', '--phase', 'prefill', '--csv']));
  const [svgDownload] = await Promise.all([page.waitForEvent('download'), page.locator('[data-export="-roofline.svg"]').click()]);
  assert.match(readFileSync(await svgDownload.path(), 'utf8'), /^<svg[^>]*role="img"/);
  await page.screenshot({ path: path.join(screenshotDir, 'model-llama3-h100.png'), fullPage: true });
  await page.getByTestId('time-panel').screenshot({ path: path.join(screenshotDir, 'model-time-panel.png') });
  await page.locator('section[aria-labelledby=inputs-h]').screenshot({ path: path.join(screenshotDir, 'model-inputs.png') });
  await page.emulateMedia({ colorScheme: 'dark' });
  await page.getByTestId('time-panel').screenshot({ path: path.join(screenshotDir, 'model-time-panel-dark.png') });
  await check();
});

test('changing the chip or the phase updates the times; decode matches the CLI', async () => {
  const { page, check } = await openPage(env);
  await page.getByTestId('unfused-total').waitFor();
  await pickModel(page, { model: 'llama3-8b', phase: 'decode', chip: 'H100 SXM' });
  await assertTimes(page, cli(['model', '--model', 'llama3-8b', '--chip', 'h100', '--phase', 'decode', '--json']));
  await page.getByTestId('chip-picker').selectOption({ label: 'TPU v5p' });
  await page.getByRole('heading', { name: 'Time model on TPU v5p' }).waitFor();
  // The form's picker shows the time view's choice: one chip for the whole page.
  assert.equal(await page.locator('#in-model-chip option:checked').textContent(), 'TPU v5p');
  await assertTimes(page, cli(['model', '--model', 'llama3-8b', '--chip', 'tpuv5p', '--phase', 'decode', '--json']));
  // A numeric input changes the workload; a bad one names its field and keeps the last figures.
  await page.fill('#in-model-tp', '2');
  await assertTimes(page, cli(['model', '--model', 'llama3-8b', '--chip', 'tpuv5p', '--phase', 'decode', '--tp', '2', '--json']));
  await page.fill('#in-model-batch', 'four');
  await page.getByTestId('model-error').getByText('Batch size must be a whole number of at least 1 (got "four").').waitFor();
  assert.equal(await page.locator('#in-model-batch').getAttribute('aria-invalid'), 'true');
  // GLIGEN has a config but no op graph: the CLI's explanation.
  await page.fill('#in-model-batch', '');
  await page.getByTestId('model-picker').selectOption({ label: 'gligen' });
  await page.getByTestId('model-error').getByText(/GLIGEN is a UNet/).waitFor();
  await check();
});

test('the time view works on the transformer block too, with a chip loaded from a file', async () => {
  const { page, check } = await openPage(env);
  await page.getByTestId('time-panel').waitFor();
  assert.equal(await page.getByTestId('roofline-chart').locator('[data-role=roof]').count(), 1);
  const chip = { name: 'My NPU', peak_flops: 2e14, hbm_bw_GBps: 1000, launch_overhead_us: 1 };
  await page.setInputFiles('#file-input', { name: 'my-npu.json', mimeType: 'application/json', buffer: Buffer.from(JSON.stringify(chip)) });
  await page.getByRole('heading', { name: 'Time model on My NPU' }).waitFor();
  assert.equal(await page.getByTestId('unknown-k').count(), 0, 'the block declares every shape');
  // A graph whose matmul inputs have no declared shape says its FLOPs are lower bounds.
  const graph = [{ name: 'mm', op_type: 'matmul', inputs: ['a', 'b'], output: 'c', shape: [64, 64], bytes_per_element: 2 }];
  await page.setInputFiles('#file-input', { name: 'bare.json', mimeType: 'application/json', buffer: Buffer.from(JSON.stringify(graph)) });
  await page.getByTestId('unknown-k').getByText(/^1 matmul has no declared shape for either input/).waitFor();
  // The chip stays chosen when another graph opens.
  await page.getByRole('heading', { name: 'Time model on My NPU' }).waitFor();
  assert.match(await page.getByTestId('chip-line').textContent(), /200\.00 TFLOP\/s, bytes \/ 1000 GB\/s\) \+ 1\.00 µs launch/);
  await check();
});

test('a calibration profile: verdicts as `fusionscope calib --json`, calibrated groups as `model --calib`, unload', async () => {
  const { page, check } = await openPage(env);
  await page.getByTestId('unfused-total').waitFor();
  await pickModel(page, { model: 'llama3-8b', phase: 'prefill', chip: 'H100 SXM' });
  await page.setInputFiles('#file-input', CALIB);
  const panel = page.getByTestId('calibration-panel');
  await panel.waitFor();
  const calib = cli(['calib', 'tests/data/calibration/i7_12700k_with_fusion.json', '--json']);
  assert.match(await panel.locator('h2').textContent(), new RegExp(calib.hardware));
  const rows = page.locator('[data-testid=calibration-patterns] tbody tr');
  assert.equal(await rows.count(), calib.patterns.length);
  for (const [i, p] of calib.patterns.entries()) {
    const cells = await rows.nth(i).locator('td').allTextContents();
    assert.equal(cells[0], p.fusion_pattern);
    assert.equal(cells[1], `${p.speedup_factor.toFixed(3)}×`);
    assert.equal(cells[2], `${(100 * p.memory_reduction).toFixed(1)} %`);
    const signed = (x) => (x >= 0 ? '+' : '') + x.toFixed(2);
    assert.equal(cells[5], `${signed(p.gflops_change)} (${signed(p.gflops_change_pct)} %)`);
    assert.equal(cells[cells.length - 1], p.verdict_text);
  }
  // The time view uses the calibrated model: the same groups and totals as the CLI.
  const json = cli(['model', '--model', 'llama3-8b', '--chip', 'h100', '--phase', 'prefill',
    '--calib', 'tests/data/calibration/i7_12700k_with_fusion.json', '--json']);
  await assertTimes(page, json);
  const note = await page.getByTestId('calibration-note').textContent();
  for (const g of json.calibration.calibrated_groups) assert.match(note, new RegExp(`group ${g.group + 1} ↔ ${g.pattern}`));
  const slower = json.calibration.calibrated_groups.filter((g) => g.fusion_slower).map((g) => `group ${g.group + 1}`);
  assert.equal(await page.getByTestId('calibration-slower').textContent(), `Fusing here is slower on this hardware: ${slower.join(', ')}.`);
  assert.equal(await page.locator('[data-testid=time-table] tr.slower').count(), slower.length);
  await page.screenshot({ path: path.join(screenshotDir, 'model-calibrated.png'), fullPage: true });
  await page.getByTestId('calibration-panel').screenshot({ path: path.join(screenshotDir, 'model-calibration-panel.png') });
  await page.emulateMedia({ colorScheme: 'dark' });
  await page.getByTestId('time-panel').screenshot({ path: path.join(screenshotDir, 'model-calibrated-time-dark.png') });
  // Unloading goes back to the roofline.
  await page.getByTestId('unload-calibration').click();
  await assertTimes(page, cli(['model', '--model', 'llama3-8b', '--chip', 'h100', '--phase', 'prefill', '--json']));
  assert.equal(await page.getByTestId('calibration-note').count(), 0);
  // A profile without fusion_profiles says so.
  await page.setInputFiles('#file-input', CALIB_NO_PATTERNS);
  await page.getByTestId('no-patterns').waitFor();
  await page.getByTestId('calibration-unused').waitFor();
  // A measured-subgraph file lists its subgraphs (no baseline, so no verdicts).
  await page.setInputFiles('#file-input', path.join(root, 'tests', 'data', 'calibration', 'resnet18_b1.json'));
  const measured = cli(['calib', 'tests/data/calibration/resnet18_b1.json', '--json']);
  await page.getByTestId('calibration-subgraphs').waitFor();
  assert.equal(await page.locator('[data-testid=calibration-subgraphs] tbody tr').count(), measured.subgraphs.length);
  await check();
});

test('share link of Model × chip (with its chip) opens the same view in a fresh page', async () => {
  const { page, context, check } = await openPage(env);
  await page.getByTestId('unfused-total').waitFor();
  await pickModel(page, { model: 'deepseekv2-236b', phase: 'decode', chip: 'MI300X' });
  await page.fill('#in-model-batch', '4');
  const json = cli(['model', '--model', 'deepseekv2-236b', '--chip', 'mi300x', '--phase', 'decode', '--batch', '4', '--json']);
  await assertTimes(page, json);
  await context.grantPermissions(['clipboard-read', 'clipboard-write']);
  await page.getByTestId('share-button').click();
  const url = await page.getByTestId('share-url').inputValue();
  assert.match(url, /#s=2\./);
  const size = await page.getByTestId('share-size').textContent();
  assert.match(size, /Link size: \d+ bytes/);
  assert.ok(url.length < 400, `${url.length} bytes`);
  await check();
  const fresh = await openPage(env, url.slice(url.indexOf('#')));
  await fresh.page.getByTestId('results-title').getByText(/^Model deepseekv2-236b, decode: batch 4/).waitFor();
  await fresh.page.getByRole('heading', { name: 'Time model on MI300X' }).waitFor();
  await assertTimes(fresh.page, json);
  assert.equal(await fresh.page.locator('#in-model-batch').inputValue(), '4');
  await fresh.check();
});

test('format-1 links (written before format 2) still open', async () => {
  const link = (name) => readFileSync(path.join(SHARE, name), 'utf8').trim();
  const t = await openPage(env, `#${link('v1-transformer.txt')}`);
  await t.page.getByTestId('results-title').getByText('Transformer block: S = 1024, H = 2048, NH = 16, 2 bytes per element').waitFor();
  await t.check();
  const g = await openPage(env, `#${link('v1-graph.txt')}`);
  await g.page.getByTestId('results-title').getByText('Op graph worked_example.json').waitFor();
  await g.page.getByTestId('op-details').waitFor();
  await g.check();
  const c = await openPage(env, `#${link('v1-trace-comparison.txt')}`);
  await c.page.getByText('hf_bert-small_eager_mi300x.json.gz').first().waitFor();
  await c.check();
  // A link of a later format says so instead of misreading it.
  const newer = await openPage(env, `#${link('v1-transformer.txt').replace('s=1.', 's=9.')}`);
  await newer.page.getByTestId('notice').getByText(/made by a newer version of fusionscope \(format 9\); this page reads up to 2/).waitFor();
  await newer.check();
});

test('a dropped model config is offered, matches the CLI on that file, and its link carries it', async () => {
  const { page, context, check } = await openPage(env);
  await page.getByTestId('unfused-total').waitFor();
  const file = path.join(root, 'tests', 'data', 'models', 'models', 'llama2-13b.json');
  await page.setInputFiles('#file-input', { name: 'my-llama.json', mimeType: 'application/json', buffer: readFileSync(file) });
  await page.getByTestId('results-title').getByText(/^Model llama2-13b, prefill/).waitFor();
  assert.equal(await page.locator('#in-model option:checked').textContent(), 'my-llama.json (from file)');
  const json = cli(['model', '--model', 'tests/data/models/models/llama2-13b.json', '--chip', 'h100', '--phase', 'prefill', '--json']);
  assert.equal(await detail(page, 'model-total-flops'), `${digits(json.total_flops)} FLOP`);
  await assertTimes(page, json);
  await context.grantPermissions(['clipboard-read', 'clipboard-write']);
  await page.getByTestId('share-button').click();
  const url = await page.getByTestId('share-url').inputValue();
  await check();
  const fresh = await openPage(env, url.slice(url.indexOf('#')));
  await fresh.page.getByTestId('results-title').getByText(/^Model llama2-13b, prefill/).waitFor();
  await assertTimes(fresh.page, json);
  await fresh.check();
});

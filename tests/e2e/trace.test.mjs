// End-to-end tests of the trace view: one Kineto trace's summary, two traces compared, the
// bundled example and a damaged trace. Expected figures come from the command line's --json
// on the same files.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { browserPerFile, QWEN_NV, QWEN_AMD, openPage, cli, cliText, digits, duration, root, screenshotDir } from './harness.mjs';

const traces = path.join(root, 'tests', 'data', 'traces');
const TRITON = path.join(traces, 'amd', 'torch_compile_triton_mi300x.json.gz');

const env = browserPerFile();

/** The cells of a table's body, as text. */
async function cells(page, id) {
  return page.getByTestId(`table-${id}`).locator('tbody tr[aria-rowindex]').evaluateAll((rows) =>
    rows.map((r) => [...r.querySelectorAll('td')].map((td) => td.textContent.trim())));
}

test('a torch.compile trace shows its platform, category chart, kernels and fused Triton kernels', async () => {
  const { page, check } = await openPage(env);
  await page.setInputFiles('#file-input', TRITON);
  await page.getByTestId('results-title').getByText('Trace torch_compile_triton_mi300x.json.gz').waitFor();
  const s = cli(['trace', 'tests/data/traces/amd/torch_compile_triton_mi300x.json.gz', '--json']);
  const p = s.platforms[0];
  const platforms = await page.getByTestId('platforms').textContent();
  assert.ok(platforms.includes(`AMD on ${p.devices.join(', ')}: ${digits(p.kernels)} kernels, GPU time ${duration(p.gpu_time_us)}`), platforms);
  // One bar per category in the chart.
  assert.equal(await page.getByTestId('chart-categories').locator('svg rect[height="14"]').count(), s.categories.length);
  const cats = await cells(page, 'categories');
  assert.deepEqual(cats.map((r) => r[0]), s.categories.map((c) => c.category));
  assert.deepEqual(cats.map((r) => r[2]), s.categories.map((c) => duration(c.trace.time_us)));
  // Every fused kernel with its components; the full name is the cell's tooltip.
  const fused = page.getByTestId('table-fused');
  assert.equal(await fused.locator('tbody tr[aria-rowindex]').count(), s.fused_kernels.length);
  assert.ok(s.fused_kernels.length > 0);
  for (const k of s.fused_kernels) {
    assert.ok(k.name.startsWith('triton_'), k.name);
    const row = fused.locator('tbody tr[aria-rowindex]').filter({ hasText: k.components.join(' + ') }).first();
    await row.waitFor();
  }
  const titles = await fused.locator('tbody td[title]').evaluateAll((tds) => tds.map((td) => td.title));
  for (const k of s.fused_kernels) {
    if (k.name.length > 60) assert.ok(titles.includes(k.name), `tooltip of ${k.name}`);
  }
  // Filtering the kernel table.
  const kernels = page.getByTestId('table-kernels');
  // Every row is filtered, drawn or not: the counts come from the table's row count.
  const rowCount = async () => Number(await kernels.locator('table').getAttribute('aria-rowcount')) - 1;
  const all = await rowCount();
  assert.equal(all, s.categories.reduce((n, c) => n + c.trace.kernels.length, 0));
  await page.fill('#filter-kernels', 'triton_poi');
  await kernels.getByTestId('row-count').getByText(/ of .* rows match\./).waitFor();
  const poi = await rowCount();
  assert.ok(poi > 0 && poi < all, `${poi} of ${all}`);
  await kernels.getByTestId('row-count').getByText(`${digits(poi)} of ${digits(all)} rows match.`).waitFor();
  await page.fill('#filter-kernels', '');
  // Sorting by count: ascending after the second click.
  const countHeader = kernels.getByRole('button', { name: /^count/ });
  await countHeader.click();
  await countHeader.click();
  assert.equal(await kernels.locator('th[aria-sort="ascending"]').count(), 1);
  const counts = (await cells(page, 'kernels')).map((r) => Number(r[2].replaceAll(',', '')));
  assert.deepEqual(counts, [...counts].sort((a, b) => a - b));
  await page.screenshot({ path: path.join(screenshotDir, 'trace-summary.png'), fullPage: true });
  await check();
});

test('two traces dropped together are compared; the numbers match the CLI', async () => {
  const { page, check } = await openPage(env);
  await page.setInputFiles('#file-input', [QWEN_NV, QWEN_AMD]);
  await page.getByTestId('results-title').getByText('AMD vs NVIDIA compared').waitFor();
  const c = cli(['compare', 'tests/data/traces/nvidia/hf_qwen1.5-0.5b_eager_h100.json.gz',
    'tests/data/traces/amd/hf_qwen1.5-0.5b_eager_mi300x.json.gz', '--json']);
  const platforms = await page.getByTestId('platforms').textContent();
  for (const p of c.platforms) {
    assert.ok(platforms.includes(`${p.file}: ${p.vendor} on ${p.devices.join(', ')}: ${digits(p.kernels)} kernels, GPU time ${duration(p.gpu_time_us)}`), platforms);
  }
  const cats = await cells(page, 'categories');
  assert.equal(cats.length, c.categories.length);
  const gemm = c.categories.find((r) => r.category === 'gemm');
  const row = cats.find((r) => r[0] === 'gemm');
  assert.deepEqual(row.slice(1, 3), [digits(gemm.amd.count), duration(gemm.amd.time_us)]);
  assert.deepEqual(row.slice(5, 7), [digits(gemm.nvidia.count), duration(gemm.nvidia.time_us)]);
  const mapping = page.getByTestId('table-mapping');
  // Every mapping row is in the table (aria-rowcount counts the header row); a window is drawn.
  assert.equal(await mapping.locator('table').getAttribute('aria-rowcount'), String(c.op_mapping.length + 1));
  assert.ok(await mapping.locator('tbody tr[aria-rowindex]').count() <= Math.min(c.op_mapping.length, 80));
  const methods = new Set((await cells(page, 'mapping')).map((r) => r[1]));
  for (const m of methods) assert.ok(['op-anchored', 'sequence'].includes(m), m);
  const differences = page.getByTestId('table-fusion-differences');
  if (c.fusion_differences.length === 0) {
    assert.equal((await differences.getByTestId('row-count').textContent()).trim(), 'None found.');
  } else {
    assert.equal(await differences.locator('table').getAttribute('aria-rowcount'), String(c.fusion_differences.length + 1));
  }
  await page.screenshot({ path: path.join(screenshotDir, 'trace-compare.png'), fullPage: true });
  await check();
});

test('one trace after another: the list offers the pair, "Compare A with B" compares it', async () => {
  const { page, check } = await openPage(env);
  await page.setInputFiles('#file-input', QWEN_NV);
  await page.getByTestId('results-title').getByText('Trace hf_qwen1.5-0.5b_eager_h100.json.gz').waitFor();
  await page.setInputFiles('#file-input', QWEN_AMD);
  await page.getByTestId('results-title').getByText('Trace hf_qwen1.5-0.5b_eager_mi300x.json.gz').waitFor();
  assert.equal(await page.getByTestId('trace-row').count(), 2);
  await page.getByTestId('compare-pair').click();
  await page.getByTestId('results-title').getByText('AMD vs NVIDIA compared').waitFor();
  await check();
});

test('the bundled example opens the BERT-small comparison from the page\'s own origin', async () => {
  const { page, check } = await openPage(env);
  await page.getByTestId('example').click();
  await page.getByTestId('results-title').getByText('AMD vs NVIDIA compared').waitFor();
  const c = cli(['compare', 'tests/data/traces/nvidia/hf_bert-small_eager_h100.json.gz',
    'tests/data/traces/amd/hf_bert-small_eager_mi300x.json.gz', '--json']);
  const cats = await cells(page, 'categories');
  assert.deepEqual(cats.map((r) => r[0]), c.categories.map((r) => r.category));
  await page.screenshot({ path: path.join(screenshotDir, 'trace-example.png'), fullPage: true });
  await check(); // no request outside the page's origin
});

test('a truncated .json.gz trace gives an error naming the file and the problem', async () => {
  const { page, check } = await openPage(env);
  await page.getByTestId('unfused-total').waitFor();
  const bytes = readFileSync(QWEN_AMD);
  await page.setInputFiles('#file-input', { name: 'cut.json.gz', mimeType: 'application/gzip', buffer: bytes.subarray(0, bytes.length >> 1) });
  const notice = page.getByTestId('notice');
  await notice.getByText(/^cut\.json\.gz is a PyTorch-profiler trace \(gzip-compressed\) but cannot be read: .*gzip/).waitFor();
  assert.equal(await notice.getAttribute('role'), 'alert');
  await check();
});

test('a share link of a comparison shows the same tables in a fresh page with no file', async () => {
  const first = await openPage(env);
  await first.page.setInputFiles('#file-input', [QWEN_NV, QWEN_AMD]);
  await first.page.getByTestId('results-title').getByText('AMD vs NVIDIA compared').waitFor();
  const before = await cells(first.page, 'categories');
  const mappingBefore = (await cells(first.page, 'mapping')).map((r) => r.slice(0, 5));
  await first.page.getByTestId('share-button').click();
  const url = await first.page.getByTestId('share-url').inputValue();
  assert.match(url, /#s=2\.[A-Za-z0-9_-]+$/);
  assert.ok(url.length < 8 * 1024, `${url.length} bytes`);
  const size = await first.page.getByTestId('share-size').textContent();
  assert.ok(size.includes(`(${digits(url.length)} bytes)`) || size.includes(`${digits(url.length)} bytes.`), size);
  await first.check();

  const second = await openPage(env, url.slice(env.server.url.length));
  await second.page.getByTestId('results-title').getByText('AMD vs NVIDIA compared').waitFor();
  assert.deepEqual(await cells(second.page, 'categories'), before);
  assert.deepEqual((await cells(second.page, 'mapping')).map((r) => r.slice(0, 5)), mappingBefore);
  await second.page.getByTestId('trimmed-note').waitFor();
  await second.page.screenshot({ path: path.join(screenshotDir, 'trace-shared.png'), fullPage: true });
  await second.check();
});

test('trace exports: JSON equals the CLI, CSV has every row, Markdown and the chart SVG', async () => {
  const { page, check } = await openPage(env);
  await page.setInputFiles('#file-input', [QWEN_NV, QWEN_AMD]);
  await page.getByTestId('results-title').getByText('AMD vs NVIDIA compared').waitFor();
  const download = async (suffix) => {
    const [d] = await Promise.all([page.waitForEvent('download'), page.click(`[data-export="${suffix}"]`)]);
    return { name: d.suggestedFilename(), text: readFileSync(await d.path(), 'utf8') };
  };
  const base = 'hf_qwen1.5-0.5b_eager_h100-vs-hf_qwen1.5-0.5b_eager_mi300x';
  const json = await download('.json');
  assert.equal(json.name, `${base}.json`);
  assert.equal(json.text, cliText(['compare', 'tests/data/traces/nvidia/hf_qwen1.5-0.5b_eager_h100.json.gz',
    'tests/data/traces/amd/hf_qwen1.5-0.5b_eager_mi300x.json.gz', '--json']));
  const c = JSON.parse(json.text);
  const csv = await download('-mapping.csv');
  assert.equal(csv.name, `${base}-mapping.csv`);
  const lines = csv.text.trim().split('\n');
  assert.equal(lines[0], 'op,method,amd main kernel,nvidia main kernel,amd calls,amd kernels,amd time (µs),nvidia calls,nvidia kernels,nvidia time (µs)');
  assert.equal(lines.length, 1 + c.op_mapping.length);
  const md = await download('.md');
  assert.match(md.text, /^# Trace comparison: AMD vs NVIDIA\n/);
  assert.ok(md.text.includes('## Kernel mapping'));
  const svg = await download('-categories.svg');
  // The exported chart is the one on the page: same bars, same labels.
  assert.match(svg.text, /^<svg xmlns="http:\/\/www.w3.org\/2000\/svg"/);
  const chart = page.getByTestId('chart-categories');
  assert.equal(svg.text.match(/<rect /g).length, await chart.locator('svg rect').count());
  for (const label of await chart.locator('svg text').allTextContents()) {
    assert.ok(svg.text.includes(`>${label}</text>`), label);
  }
  await check();
});

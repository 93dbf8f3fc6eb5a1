// End-to-end tests of the kernel-group drawing of a trace's layer (src/web/components/
// fusion_dag_view.rs): the page's boxes for each layer equal the command line's `fusion_dag`
// windows of the same file, a click shows the group's bytes, and a pair shows both sides'
// aligned layer.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { browserPerFile, QWEN_NV, QWEN_AMD, REL_NV, REL_AMD, openPage, cli, allTableRows, digits, root, screenshotDir } from './harness.mjs';

const traces = path.join(root, 'tests', 'data', 'traces');

const env = browserPerFile();

/** The drawn boxes' kernels and group indices, in box order. */
async function boxes(page, suffix = '') {
  return page.getByTestId(`dag-boxes${suffix}`).locator('g.dag-group').evaluateAll((gs) =>
    gs.map((g) => ({ box: Number(g.dataset.box), kernel: g.dataset.kernel, group: Number(g.dataset.group) })));
}

test('the boxes of every Qwen layer equal the CLI, and a click shows the group\'s bytes', async () => {
  const { page, check } = await openPage(env, '', { viewport: { width: 1300, height: 900 } });
  await page.setInputFiles('#file-input', QWEN_AMD);
  await page.getByTestId('results-title').getByText('Trace hf_qwen1.5-0.5b_eager_mi300x.json.gz').waitFor();
  const j = cli(['trace', REL_AMD, '--json']);
  const dag = j.fusion_dag;
  assert.equal(dag.windows.length, 24);
  const picker = page.getByTestId('dag-window');
  const labels = await picker.locator('option').allTextContents();
  assert.deepEqual(labels, dag.windows.map((w) => w.label));
  for (const k of [0, 1, 23]) {
    await picker.selectOption(String(k));
    const w = dag.windows[k];
    const shown = await boxes(page);
    assert.deepEqual(shown.map((b) => b.kernel), w.boxes.map((b) => b.kernel), w.label);
    assert.deepEqual(shown.map((b) => b.group), w.boxes.map((b) => b.group), w.label);
    assert.equal(await page.getByTestId('dag-boxes').locator('path.dag-edge').count(), w.edges.length, w.label);
    // Every box's text fits its box: the name, wrapped onto at most two lines, the traffic
    // line and the op lines all end inside its 196 px.
    const overflow = await page.getByTestId('dag-boxes').locator('g.dag-group').evaluateAll((gs) =>
      gs.flatMap((g) => [...g.querySelectorAll('text')]
        .filter((t) => t.getAttribute('x') === '8' && 8 + t.getComputedTextLength() > 192)
        .map((t) => `${g.dataset.box}: ${t.textContent}`)));
    assert.deepEqual(overflow, [], w.label);
    // Each box with known bytes draws its fused bytes against its unfused ones.
    const known = w.boxes.filter((x) => j.fusion.groups[x.group].unfused_bytes_per_call > 0).length;
    assert.equal(await page.getByTestId('dag-boxes').locator('rect.dag-bar-fused').count(), known, w.label);
  }
  // Zoom: the drawing's size follows.
  const svg = page.getByTestId('dag-boxes');
  const width = Number(await svg.getAttribute('width'));
  await page.getByTestId('fusion-dag').getByRole('button', { name: 'Zoom out' }).click();
  await page.getByTestId('dag-zoom').getByText('85 %').waitFor();
  assert.ok(Math.abs(Number(await svg.getAttribute('width')) - width * 0.85) <= 1);
  await page.getByTestId('fusion-dag').getByRole('button', { name: 'Zoom in' }).click();
  await page.getByTestId('dag-zoom').getByText('100 %').waitFor();
  // The second layer's third box: its group's ops, bytes per call and how they were known.
  await picker.selectOption('1');
  const b = dag.windows[1].boxes[2];
  const g = j.fusion.groups[b.group];
  await page.getByTestId('dag-boxes').locator('g.dag-group[data-box="3"] .dag-head').click();
  const details = page.getByTestId('dag-box-details');
  await details.waitFor();
  const bytes = await page.getByTestId('dag-box-bytes').textContent();
  assert.ok(bytes.includes(`Known from: ${g.how}`), bytes);
  const ops = await details.locator('table.tensors tbody tr td:first-child').allTextContents();
  assert.deepEqual(ops, g.ops.map((o) => o.op));
  const dims = await details.locator('table.tensors tbody tr td:nth-child(2)').allTextContents();
  assert.deepEqual(dims, g.ops.map((o) => JSON.stringify(o.input_dims)));
  await page.getByTestId('fusion-dag').scrollIntoViewIfNeeded();
  await page.getByTestId('fusion-dag').screenshot({ path: path.join(screenshotDir, 'fusion-dag-layer.png') });
  await check();
});

test('a pair shows both sides\' aligned layer with their traffic, and a difference marks its boxes', async () => {
  const { page, check } = await openPage(env, '', { viewport: { width: 1400, height: 900 } });
  await page.setInputFiles('#file-input', [QWEN_NV, QWEN_AMD]);
  await page.getByTestId('results-title').getByText('AMD vs NVIDIA compared').waitFor();
  const c = cli(['compare', REL_NV, REL_AMD, '--json']);
  const files = { nvidia: REL_NV, amd: REL_AMD };
  const label = await page.getByTestId('fusion-pair-label').textContent();
  assert.ok(label.startsWith('The aligned layer'), label);
  for (const p of c.platforms) {
    const dag = cli(['trace', files[p.key], '--json']).fusion_dag;
    const phase = c.layer_alignment[0].phases[p.key];
    const w = dag.windows.find((x) => x.phase === phase && x.layer !== undefined);
    const shown = await boxes(page, `-${p.key}`);
    assert.deepEqual(shown.map((b) => b.kernel), w.boxes.map((b) => b.kernel), p.key);
    assert.equal(await page.getByTestId(`dag-window-${p.key}`).inputValue(), String(dag.windows.indexOf(w)));
  }
  // Where the alignment rotated the second side's layer, the label says where it lines up.
  const rotation = c.layer_alignment[0].rotation;
  assert.equal(label.includes(`The alignment reads ${c.platforms[1].key}'s layer from its box ${rotation + 1}`), rotation > 0, label);
  // The aligned layer drawn kernel by kernel: one row per row of the CLI's alignment, the rows
  // where the sides run different numbers of kernels marked with both counts.
  const rows = c.layer_alignment[0].rows;
  const aligned = page.getByTestId('aligned-layer');
  assert.equal(await aligned.locator('g.aligned-row').count(), rows.length);
  const marked = rows.filter((r) => r.difference);
  assert.ok(marked.length > 0);
  assert.deepEqual(await aligned.locator('g.aligned-row[data-differs="true"] text[text-anchor="middle"] title').allTextContents(),
    marked.map((r) => r.difference));
  await aligned.screenshot({ path: path.join(screenshotDir, 'fusion-aligned-layer.png') });
  const bars = await page.getByTestId('chart-fusion-pair').locator('g > title').allTextContents();
  assert.equal(bars.filter((t) => t.startsWith('fused: ')).length, 2, bars.join('|'));
  // Each difference names what each side runs, then gives its evidence: on this pair the
  // MI300X runs one kernel twice a layer where the H100 runs it once.
  const items = await page.getByTestId('fusion-pair-differences').locator('li').allTextContents();
  assert.ok(items.length > 0);
  for (const item of items) {
    const d = c.fusion_differences.find((x) => item.includes(` — ${x.evidence}; boxes `));
    assert.ok(d, item);
    const other = c.platforms.map((p) => p.key).find((k) => k !== d.fused_side);
    assert.ok(item.startsWith(`${d.fused_side} runs `) && item.includes(` where ${other} runs `), item);
  }
  assert.ok(items[0].includes('2 kernels per layer on amd vs 1 on nvidia'), items[0]);
  // The MI300X's layer has one kernel sharing no tensor with another: the note says so in the singular.
  await assert.doesNotReject(page.getByTestId('fusion-pair')
    .getByText('the one that shares none with another drawn kernel is in a row below the linked ones').waitFor());
  // Picking the first difference marks boxes on the page.
  const diffs = page.getByTestId('fusion-pair-differences').locator('li button');
  assert.ok((await diffs.count()) > 0);
  await diffs.first().click();
  assert.ok((await page.locator('[data-testid="fusion-pair"] g.dag-group.marked').count()) > 0);
  await page.getByTestId('fusion-pair').scrollIntoViewIfNeeded();
  await page.getByTestId('fusion-pair').screenshot({ path: path.join(screenshotDir, 'fusion-dag-pair.png') });
  await check();
});

test('a comparison\'s share link carries both sides\' fusion: headlines and longest groups', async () => {
  const first = await openPage(env, '', { viewport: { width: 1300, height: 900 } });
  await first.page.setInputFiles('#file-input', [QWEN_NV, QWEN_AMD]);
  await first.page.getByTestId('results-title').getByText('AMD vs NVIDIA compared').waitFor();
  const c = cli(['compare', REL_NV, REL_AMD, '--json']);
  const keys = c.platforms.map((p) => p.key);
  const headlines = [];
  for (const k of keys) headlines.push(await first.page.getByTestId(`fusion-headline-${k}`).textContent());
  await first.page.getByTestId('share-button').click();
  const url = await first.page.getByTestId('share-url').inputValue();
  assert.ok(url.length < 8 * 1024, `${url.length} bytes`);
  await first.check();

  const second = await openPage(env, url.slice(env.server.url.length), { viewport: { width: 1300, height: 900 } });
  await second.page.getByTestId('results-title').getByText('AMD vs NVIDIA compared').waitFor();
  for (const [i, k] of keys.entries()) {
    // The headline's figures are the totals, which the link keeps whole: the count is of every
    // opportunity, and a link that lists fewer says so.
    const shown = await second.page.getByTestId(`fusion-headline-${k}`).textContent();
    const all = c.fusion[k].opportunities.length;
    assert.ok(headlines[i].includes(`; ${digits(all)} opportunit`), headlines[i]);
    const cut = shown.match(/ \(the (\d+) that save most are listed\)\.$/);
    assert.equal(cut ? shown.replace(cut[0], '.') : shown, headlines[i], k);
    if (cut) assert.ok(Number(cut[1]) < all, shown);
    const listed = await allTableRows(second.page, `table-opportunities-${['a', 'b'][i]}`);
    assert.equal(Boolean(cut), listed.length < all, `${k}: ${listed.length} of ${all} listed`);
    // The longest groups, in the CLI's order.
    const side = ['a', 'b'][i];
    const rows = await allTableRows(second.page, `table-fusion-groups-${side}`);
    assert.ok(rows.length >= 1 && rows.length <= 8, `${k}: ${rows.length} groups`);
    assert.deepEqual(rows.map((r) => r[2]), c.fusion[k].groups.slice(0, rows.length).map((g) => digits(g.calls)), k);
  }
  await second.check();
});

test('a window of mostly unlinked kernels opens on its linked ones; the rest follow in rows, as the note says', async () => {
  const { page, check } = await openPage(env, '', { viewport: { width: 1440, height: 1000 } });
  const file = 'hta_a100_compiled_rank0.json.gz';
  await page.setInputFiles('#file-input', path.join(traces, 'nvidia', file));
  await page.getByTestId('results-title').getByText(`Trace ${file}`).waitFor();
  await page.getByRole('tab', { name: 'Fusion', exact: true }).click();
  const svg = page.getByTestId('dag-boxes');
  await svg.waitFor();
  const edges = cli(['trace', path.join('tests', 'data', 'traces', 'nvidia', file), '--json']).fusion_dag.windows[0].edges;
  const linked = new Set(edges.flatMap((e) => [e.from + 1, e.to + 1]));
  const drawn = await svg.locator('g.dag-group').evaluateAll((gs) => gs.map((g) => {
    const r = g.getBoundingClientRect();
    return { box: Number(g.dataset.box), top: r.top, left: r.left };
  }));
  const loose = drawn.filter((b) => !linked.has(b.box));
  assert.ok(linked.size > 0 && loose.length > drawn.length / 2, `${linked.size} linked of ${drawn.length}`);
  await assert.doesNotReject(page.getByTestId('dag-note')
    .getByText(`the ${loose.length} that share none with another drawn kernel are in rows below the linked ones`).waitFor());
  // The box at the drawing's top left is a linked one, and every loose box is below every linked one.
  const first = drawn.reduce((a, b) => (b.top < a.top - 1 || (Math.abs(b.top - a.top) <= 1 && b.left < a.left) ? b : a));
  assert.ok(linked.has(first.box), `box ${first.box} opens the drawing`);
  const lowestLinked = Math.max(...drawn.filter((b) => linked.has(b.box)).map((b) => b.top));
  assert.ok(loose.every((b) => b.top > lowestLinked));
  await check();
});

// End-to-end tests of other profilers' outputs on the page: a rocprofv3 results JSON, an XLA
// profile (xplane.pb), JAX's perfetto_trace.json.gz dropped on the page give the kernel
// counts, GPU time, category table and the sentence of what the format lacks of the command
// line's `trace --json`, and so does an Nsight Systems SQLite export (SQLite compiled into the
// analysis worker); two formats dropped together, of one vendor or across vendors (nsys A100
// against rocprofv3 MI350X), compare as `compare --json` does.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { browserPerFile, openPage, cli, cliText, allTableRows, digits, duration, root, screenshotDir } from './harness.mjs';

const rel = {
  rocprof: 'tests/data/formats/rocprofv3/tracelens_mi350x_results.json.gz',
  xplane: 'tests/data/formats/xplane/tracelens_jax_conv_mi300x.xplane.pb',
  perfetto: 'tests/data/formats/xla_json/tracelens_jax_conv_mi300x.perfetto_trace.json.gz',
  nsys: 'tests/data/formats/nsys/pipit_saxpy_mpi_a100.sqlite',
};
const abs = (r) => path.join(root, r);
const base = (r) => r.split('/').pop();

const env = browserPerFile();

/** Whether some kernel group of a trace's fusion has both byte figures. */
const knownBytes = (f) => f.groups.some((g) => g.fused_bytes_per_call !== null && g.unfused_bytes_per_call !== null);

/** The CLI's category table as the page's rows show it: category, kernels, total. */
const categoryRows = (s) => s.categories.map((c) => [c.category, digits(c.trace.count), duration(c.trace.time_us)]);

for (const [name, file, words] of [
  ['rocprofv3 results JSON', rel.rocprof, 'a rocprofv3 results file'],
  ['XLA profile (xplane.pb)', rel.xplane, 'an XLA profile'],
  ["JAX's perfetto_trace.json.gz", rel.perfetto, 'an XLA trace-event JSON'],
  ['Nsight Systems SQLite export', rel.nsys, 'an Nsight Systems export'],
]) {
  test(`${name}: kernels, GPU time, categories and what the format lacks equal the CLI`, async () => {
    const { page, check } = await openPage(env, '', { viewport: { width: 1300, height: 900 } });
    await page.setInputFiles('#file-input', abs(file));
    await page.getByTestId('results-title').getByText(`Trace ${base(file)}`).waitFor({ timeout: 120_000 });
    const s = cli(['trace', file, '--json']);
    const p = s.platforms[0];
    assert.ok(p.kernels > 0, `${name} has kernels`);
    const platforms = await page.getByTestId('platforms').textContent();
    assert.ok(platforms.includes(`${p.devices.join(', ')}: ${digits(p.kernels)} kernels, GPU time ${duration(p.gpu_time_us)}`), platforms);
    const cats = await allTableRows(page, 'table-categories');
    assert.deepEqual(cats.map((r) => r.slice(0, 3)), categoryRows(s));
    // The coverage line, with the sentence of what the format lacks, as the CLI prints it.
    const line = cliText(['trace', file]).split('\n').find((l) => l.startsWith('Models cover'));
    assert.ok(line.includes(`This trace is ${words}`), line);
    assert.equal((await page.getByTestId('op-coverage').textContent()).trim(), line);
    // No shapes, no bytes: the format's sentence in place of 0 B traffic bars (unless copies
    // record their sizes: Nsight Systems) and of a roofline without a point.
    const lacks = line.slice(line.indexOf('This trace is'));
    if (knownBytes(s.fusion)) {
      assert.equal(await page.getByTestId('fusion-bytes-unknown').count(), 0);
      assert.equal(await page.getByTestId('chart-fusion-total').count(), 1);
    } else {
      assert.equal(s.fusion.totals.fused_bytes + s.fusion.totals.unfused_bytes, 0);
      assert.equal(
        await page.getByTestId('fusion-bytes-unknown').textContent(),
        `No shapes recorded in this format: bytes unknown, so no traffic bars. ${lacks}`,
      );
      assert.equal(await page.getByTestId('chart-fusion-total').count(), 0);
      assert.equal(await page.getByTestId('chart-fusion-groups').count(), 0);
    }
    // An XLA profile's HLO prices its ops: they are on the roofline, as the CLI's op table says.
    const priced = s.ops.some((o) => o.flops_per_call !== null && o.bytes_per_call !== null);
    assert.equal(await page.getByTestId('chart-roofline').count(), priced && s.chip ? 1 : 0);
    if (s.chip && !priced) {
      assert.equal(
        await page.getByTestId('roofline-none').textContent(),
        `No shapes recorded in this format: FLOPs and bytes unknown, so no op on the roofline. ${lacks}`,
      );
    }
    await page.screenshot({ path: path.join(screenshotDir, `formats-${base(file).replaceAll('.', '_')}.png`), fullPage: true });
    await check();
  });
}

for (const [name, a, b, shot] of [
  ['rocprofv3 JSON and an XLA profile', rel.rocprof, rel.xplane, 'formats-compare.png'],
  ['An Nsight Systems export (A100) and a rocprofv3 run (MI350X)', rel.nsys, rel.rocprof, 'formats-compare-nsys.png'],
]) {
test(`${name} dropped together compare as \`compare --json\` does`, async () => {
  const { page, check } = await openPage(env, '', { viewport: { width: 1300, height: 900 } });
  await page.setInputFiles('#file-input', [abs(a), abs(b)]);
  await page.getByTestId('results-title').getByText(/ compared$/).waitFor({ timeout: 120_000 });
  const c = cli(['compare', a, b, '--json']);
  const platforms = await page.getByTestId('platforms').textContent();
  for (const p of c.platforms) {
    assert.ok(platforms.includes(`${p.file}: `) && platforms.includes(`${digits(p.kernels)} kernels, GPU time ${duration(p.gpu_time_us)}`), platforms);
  }
  // Every category with both sides' kernels and time, in the CLI's order and sides.
  const keys = c.platforms.map((p) => p.key);
  const cats = await allTableRows(page, 'table-categories');
  const side = (r, k) => [digits(r[k]?.count ?? 0), duration(r[k]?.time_us ?? 0)];
  assert.deepEqual(
    cats.map((r) => [r[0], r[1], r[2], r[5], r[6]]),
    c.categories.map((r) => [r.category, ...side(r, keys[0]), ...side(r, keys[1])]),
  );
  // Neither side records shapes: a side with no known bytes says so and has no traffic bar.
  const unknown = keys.filter((key) => !knownBytes(c.fusion[key]));
  assert.ok(unknown.length > 0);
  for (const key of unknown) {
    assert.ok((await page.getByTestId(`fusion-bytes-unknown-${key}`).textContent()).startsWith(`${key}: No shapes recorded in this format: bytes unknown`));
  }
  const totalRows = await page.getByTestId('chart-fusion-total').locator('g > title').filter({ hasText: /^fused: / }).count();
  assert.equal(totalRows, keys.length - unknown.length);
  // No kernel drawn in either side's layer has bytes: no 0 B bars, a sentence.
  assert.equal(await page.getByTestId('fusion-pair').count(), 1);
  assert.equal(await page.getByTestId('chart-fusion-pair').count(), 0);
  const why = await page.getByTestId('fusion-pair-bytes-unknown').textContent();
  assert.ok(why.startsWith(`No traffic bar for ${keys[0]} and ${keys[1]}: bytes unknown for every launch drawn`), why);
  await page.screenshot({ path: path.join(screenshotDir, shot), fullPage: true });
  await check();
});
}

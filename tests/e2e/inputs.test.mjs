// End-to-end tests of the op-trace and simulator-table views: every op trace in
// tests/data/optrace and every simulator CSV in tests/data/ops-csv is dropped on the page, and
// its figures are compared with the command line's --json on the same file; damaged files
// name the file and line; share links carry an op trace's text, or a simulator table's rows and
// workload.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { browserPerFile, openPage, cli, cliText, digits, duration, root, screenshotDir, allTableRows } from './harness.mjs';

const OPTRACE = path.join(root, 'tests', 'data', 'optrace');
const OPS_CSV = path.join(root, 'tests', 'data', 'ops-csv');
const optraces = readdirSync(OPTRACE).filter((f) => f.endsWith('.optrace') && !f.startsWith('malformed'));
const csvs = readdirSync(OPS_CSV).filter((f) => f.endsWith('.csv'));

const env = browserPerFile();

/**
 * A ratio cell is ours / simulator with two decimals (Rust rounds an exact tie such as 8.625 to
 * even, JavaScript up: compared as numbers), or a dash without a simulator figure.
 */
function assertRatio(cell, ours, sim, what) {
  if (!(sim > 0)) return assert.equal(cell, '—', what);
  assert.match(cell, /^\d+\.\d\d×$/, what);
  assert.ok(Math.abs(Number(cell.slice(0, -1)) - ours / sim) <= 0.005 + 1e-9, `${what}: ${cell} vs ${ours / sim}`);
}

/** The cells of a table's body, as text. */
/** Every row of a table (scrolled through: tables draw only the rows in view). */
function cells(page, id) {
  return allTableRows(page, `table-${id}`);
}

async function download(page, suffix) {
  const [d] = await Promise.all([page.waitForEvent('download'), page.click(`[data-export="${suffix}"]`)]);
  return { name: d.suggestedFilename(), text: readFileSync(await d.path(), 'utf8') };
}

const shape = (s) => JSON.stringify(s).replaceAll(',', ', ');
const hex = (a) => `0x${BigInt(a).toString(16)}`;

for (const file of optraces) {
  test(`op trace ${file}: the case view, the unmapped ops and the fusion figures match the CLI`, async () => {
    const { page, context, check } = await openPage(env);
    await page.setInputFiles('#file-input', path.join(OPTRACE, file));
    await page.getByTestId('optrace-panel').waitFor();
    const rel = `tests/data/optrace/${file}`;
    const j = cli(['optrace', rel, '--json']);
    // Every case, in file order, with shapes, dtype and the addresses in decimal and hex.
    const rows = await cells(page, 'cases');
    assert.equal(rows.length, j.cases.length);
    j.cases.forEach((c, i) => {
      const r = rows[i];
      assert.equal(r[0], String(c.line));
      assert.equal(r[1], c.op);
      assert.equal(r[3], c.case_type);
      assert.equal(r[4], shape(c.case_shape));
      assert.equal(r[5], c.dtype);
      assert.equal(r[6], c.input_ids.map((id, k) => `%${id} ${shape(c.input_shapes[k])}`).join('; '));
      assert.equal(r[7], c.output_ids.map((id, k) => `%${id} ${shape(c.output_shapes[k])}`).join('; '));
      assert.equal(r[8], c.input_addrs.join('; '));
      assert.equal(r[9], c.input_addrs.map(hex).join('; '));
      assert.equal(r[10], c.output_addrs.join('; '));
      assert.equal(r[11], c.output_addrs.map(hex).join('; '));
      // Collectives are their own kind.
      assert.equal(r[2] === 'collective', ['allreduce', 'allgather'].includes(c.op), `${c.op}: ${r[2]}`);
    });
    assert.ok(rows.some((r) => r[2] === 'collective'), 'both test traces hold a collective');
    // Unmapped ops, never fatal, and the skipped lines.
    const unmapped = await cells(page, 'unmapped');
    assert.deepEqual(unmapped.map((r) => [r[0], r[1], r[3]]), j.unmapped_cases.map((u) => [String(u.line), u.op, u.reason]));
    assert.deepEqual([...new Set(unmapped.map((r) => r[1]))], j.unmapped);
    const headline = await page.getByTestId('optrace-headline').textContent();
    assert.ok(headline.includes(`${j.skipped_lines} line${j.skipped_lines === 1 ? '' : 's'} skipped`), headline);
    // The converted op graph in the usual panels: the CLI's analysis.
    assert.equal(await page.getByTestId('results-title').textContent(), `Op trace ${file}: fusion groups of its op graph`);
    assert.ok((await page.getByTestId('unfused-total').textContent()).includes(`${digits(j.analysis.unfused.total)} bytes`));
    assert.ok((await page.getByTestId('fused-total').textContent()).includes(`${digits(j.analysis.fused.total)} bytes`));
    assert.equal(await page.locator('[data-testid=groups-table] tbody tr').count(), j.analysis.groups.length);
    // Exports: the JSON is the command line's, byte for byte; the CSV has every case.
    const json = await download(page, '-optrace.json');
    assert.equal(json.text, cliText(['optrace', rel, '--json']));
    const csv = await download(page, '-cases.csv');
    assert.equal(csv.text.trim().split('\n').length, 1 + j.cases.length);
    assert.match(csv.text, /^line,op,kind,case type,case shape,dtype,inputs,outputs,input addresses,input addresses \(hex\)/);
    // A share link carries the trace's text: a fresh page shows the same case view and figures.
    await context.grantPermissions(['clipboard-read', 'clipboard-write']);
    await page.getByTestId('share-button').click();
    const url = await page.getByTestId('share-url').inputValue();
    assert.match(url, /#s=2\./);
    assert.ok(url.length < 8000, `${url.length} bytes`);
    await check();
    const fresh = await openPage(env, url.slice(url.indexOf('#')));
    await fresh.page.getByTestId('optrace-panel').waitFor();
    assert.deepEqual(await cells(fresh.page, 'cases'), rows);
    assert.deepEqual(await cells(fresh.page, 'unmapped'), unmapped);
    assert.ok((await fresh.page.getByTestId('fused-total').textContent()).includes(`${digits(j.analysis.fused.total)} bytes`));
    await fresh.check();
  });
}

test('op-trace view: keyboard sorting, tables with roles, light and dark screenshots', async () => {
  const { page, check } = await openPage(env);
  await page.setInputFiles('#file-input', path.join(OPTRACE, 'gpt2_block_tp_rank1.optrace'));
  const panel = page.getByTestId('optrace-panel');
  await panel.waitFor();
  assert.equal(await panel.getByRole('table').count(), 2);
  const byLine = page.getByTestId('table-cases').getByRole('button', { name: /^line/ });
  await byLine.focus();
  await page.keyboard.press('Enter');
  await page.getByTestId('table-cases').locator('th[aria-sort="descending"]').waitFor();
  const lines = (await cells(page, 'cases')).map((r) => Number(r[0]));
  assert.deepEqual(lines, [...lines].sort((a, b) => b - a));
  await page.screenshot({ path: path.join(screenshotDir, 'optrace-light.png'), fullPage: true });
  await page.emulateMedia({ colorScheme: 'dark' });
  await page.screenshot({ path: path.join(screenshotDir, 'optrace-dark.png'), fullPage: true });
  // Closing goes back to the transformer block.
  await panel.getByRole('button', { name: 'Close the op trace' }).click();
  await page.getByTestId('results-title').getByText('Transformer block').waitFor();
  await check();
});

test('a malformed op trace names the file and the line', async () => {
  const { page, check } = await openPage(env);
  await page.setInputFiles('#file-input', path.join(OPTRACE, 'malformed_line4.optrace'));
  const notice = page.getByTestId('notice');
  await notice.waitFor();
  const text = await notice.textContent();
  assert.match(text, /^malformed_line4\.optrace is an op trace but cannot be read: line 4: malformed record/);
  assert.equal(await page.getByTestId('optrace-panel').count(), 0);
  await check();
});

/** The workload the page compares with, as CLI flags (read back from its sentence). */
function setupArgs(sentence) {
  const m = sentence.match(/^(\S+) on .+?, (prefill|decode): batch (\d+), (\d+) input tokens, (\d+) output tokens, tp (\d+)/);
  assert.ok(m, sentence);
  return ['--model', m[1], '--chip', 'tpuv5p', '--phase', m[2], '--batch', m[3], '--seq-len', m[4], '--output-len', m[5], '--tp', m[6]];
}

for (const file of csvs) {
  test(`simulator table ${file}: groups and the side-by-side match the CLI`, async () => {
    const { page, check } = await openPage(env);
    await page.setInputFiles('#file-input', path.join(OPS_CSV, file));
    await page.getByTestId('sim-panel').waitFor();
    const rel = `tests/data/ops-csv/${file}`;
    const t = cli(['simcsv', rel, '--json']);
    const groups = await cells(page, 'sim-groups');
    assert.equal(groups.length, t.groups.length);
    t.groups.forEach((g, i) => {
      const r = groups[i];
      assert.equal(r[0], digits(g.fusion_index));
      assert.equal(r[4], digits(g.count));
      assert.equal(r[5], g.bound);
      assert.equal(r[6], duration(g.execution_ns / 1000));
      assert.equal(r[7], duration(g.total_ns / 1000));
    });
    assert.ok((await page.getByTestId('sim-headline').textContent()).includes(`simulated total ${duration(t.total_ns / 1000)}`));
    // Our side: the same comparison as `fusionscope model … --simcsv FILE`. A table holding
    // both phases is compared by its prefill rows, which are the _prefill file's.
    const sentence = await page.getByTestId('sim-setup').textContent();
    const combined = !/_(prefill|decode)\.csv$/.test(file) && file.startsWith('llama');
    const against = combined ? rel.replace('.csv', '_prefill.csv') : rel;
    const c = cli(['model', ...setupArgs(sentence), '--simcsv', against, '--json']).simulator;
    const side = await cells(page, 'side-by-side');
    assert.deepEqual(side.map((r) => r[0]), c.roles.map((r) => r.role));
    c.roles.forEach((r, i) => {
      const row = side[i];
      assertRatio(row[1], r.our_flops, r.sim_flops, `${r.role} FLOPs`);
      assertRatio(row[2], r.our_bytes, r.sim_bytes, `${r.role} bytes`);
      assert.equal(row[8], duration(r.sim_time_us), `${r.role} sim time`);
      assert.equal(row[9], duration(r.our_time_us), `${r.role} our time`);
      assertRatio(row[3], r.our_time_us, r.sim_time_us, `${r.role} time`);
      assert.equal(row[10], r.sim_bound);
    });
    if (c.sim_only.length) assert.ok((await page.getByTestId('sim-only').textContent()).includes(c.sim_only[0]));
    if (combined) {
      assert.ok(sentence.includes('rows of the other phase left out'), sentence);
      await page.getByTestId('sim-notes').getByText(/prefill and decode rows/).waitFor();
    }
    await page.getByTestId('sim-docs').getByText(/docs\/time-model\.md/).waitFor();
    const csv = await download(page, '-side-by-side.csv');
    assert.equal(csv.text.trim().split('\n').length, 1 + c.roles.length);
    const g = await download(page, '-sim-groups.csv');
    assert.equal(g.text.trim().split('\n').length, 1 + t.groups.length);
    const json = await download(page, '-simcsv.json');
    assert.equal(json.text, cliText(['simcsv', rel, '--json']));
    await check();
  });
}

test('simulator view: the workload can be changed, bad sizes are named, the share link reopens it; screenshots', async () => {
  const { page, context, check } = await openPage(env);
  const file = 'llama3-8b_inference_tpuv5p_1chip_bs1_in1024_out128.csv';
  await page.setInputFiles('#file-input', path.join(OPS_CSV, file));
  await page.getByTestId('sim-panel').waitFor();
  await page.screenshot({ path: path.join(screenshotDir, 'simcsv-light.png'), fullPage: true });
  await page.emulateMedia({ colorScheme: 'dark' });
  await page.screenshot({ path: path.join(screenshotDir, 'simcsv-dark.png'), fullPage: true });
  await page.emulateMedia({ colorScheme: 'light' });
  // Decode: the decode rows are compared, as the _decode file's are by the CLI.
  await page.selectOption('#sim-phase', 'decode');
  await page.getByTestId('sim-setup').getByText(/, decode: batch 1, 1024 input tokens, 128 output tokens, tp 1/).waitFor();
  const c = cli(['model', '--model', 'llama3-8b', '--chip', 'tpuv5p', '--phase', 'decode', '--batch', '1', '--seq-len', '1024',
    '--output-len', '128', '--tp', '1', '--simcsv', `tests/data/ops-csv/${file.replace('.csv', '_decode.csv')}`, '--json']).simulator;
  assert.deepEqual((await cells(page, 'side-by-side')).map((r) => r[0]), c.roles.map((r) => r.role));
  // Another chip by keyboard: the select is reachable and changes the comparison.
  await page.focus('#sim-chip');
  await page.selectOption('#sim-chip', 'h100');
  await page.getByTestId('sim-setup').getByText(/on H100/).waitFor();
  await page.fill('#sim-batch', 'x');
  const err = page.getByTestId('sim-error');
  await err.getByText('Batch size must be a whole number of at least 1 (got "x").').waitFor();
  await page.fill('#sim-batch', '');
  await page.getByTestId('sim-setup').waitFor();
  // A share link carries the rows and the chosen workload: a fresh page shows the same view.
  await context.grantPermissions(['clipboard-read', 'clipboard-write']);
  await page.getByTestId('share-button').click();
  const url = await page.getByTestId('share-url').inputValue();
  assert.ok(url.length < 8000, `${url.length} bytes`);
  const fresh = await openPage(env, url.slice(url.indexOf('#')));
  await fresh.page.getByTestId('sim-panel').waitFor();
  assert.equal(await fresh.page.getByTestId('sim-setup').textContent(), await page.getByTestId('sim-setup').textContent());
  assert.deepEqual(await cells(fresh.page, 'sim-groups'), await cells(page, 'sim-groups'));
  assert.deepEqual(await cells(fresh.page, 'side-by-side'), await cells(page, 'side-by-side'));
  await fresh.check();
  await page.getByRole('button', { name: 'Close the simulator table' }).click();
  await page.getByTestId('results-title').getByText('Transformer block').waitFor();
  await check();
});

test('a broken simulator CSV names the file, line and column', async () => {
  const { page, check } = await openPage(env);
  const header = readFileSync(path.join(OPS_CSV, csvs[0]), 'utf8').split('\n')[0];
  const fields = header.split(',').length;
  const good = Array.from({ length: fields }, (_, i) => (i === 1 ? 'x' : '1')).join(',');
  const bad = good.replace(/^1,x,1,1,1,1/, '1,x,1,1,1,many');
  await page.setInputFiles('#file-input', { name: 'broken.csv', mimeType: 'text/csv', buffer: Buffer.from(`${header}\n${good}\n${bad}\n`) });
  const notice = page.getByTestId('notice');
  await notice.waitFor();
  assert.match(await notice.textContent(), /^broken\.csv is a simulator op table but cannot be read: line 3: column `Count` should be a number ≥ 0, got `many`\./);
  assert.equal(await page.getByTestId('sim-panel').count(), 0);
  await check();
});

test('empty states: a table with no rows, a trace with no case', async () => {
  const { page, check } = await openPage(env);
  const header = readFileSync(path.join(OPS_CSV, csvs[0]), 'utf8').split('\n')[0];
  await page.setInputFiles('#file-input', { name: 'llama3-8b_empty.csv', mimeType: 'text/csv', buffer: Buffer.from(`${header}\n`) });
  await page.getByTestId('sim-panel').waitFor();
  assert.equal(await page.getByTestId('sim-headline').textContent(), '0 ops in 0 fusion groups, simulated total 0 µs.');
  await page.getByTestId('table-sim-groups').getByText('None found.').waitFor();
  await page.getByTestId('table-side-by-side').getByText('None found.').waitFor();
  const trace = '# one op with no case\n0:0:0 %1:<2x4xf16> = nova_plus.1.0.0.softmax(%0:<2x4xf16>)\n';
  await page.setInputFiles('#file-input', { name: 'softmax.optrace', mimeType: 'text/plain', buffer: Buffer.from(trace) });
  await page.getByTestId('optrace-panel').waitFor();
  await page.getByTestId('table-cases').getByText('None found.').waitFor();
  assert.equal((await cells(page, 'unmapped')).map((r) => r[1]).join(), 'softmax');
  assert.equal(await page.getByTestId('optrace-headline').textContent(),
    '1 record: 0 with a case (0 collectives), 1 unmapped; 1 line skipped (not records). Unmapped ops: softmax.');
  await check();
});

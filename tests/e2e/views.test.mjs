// End-to-end tests of the page's views: the fusion groups drawn as a layered DAG, the
// virtualised tables at 100,000 rows, and the classifier's rule table. Expected figures come
// from the command line on the same files.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { openPage, startBrowser, stopBrowser, cli, digits, root, screenshotDir } from './harness.mjs';
import { groupEdges, writeRandomGraph } from './graphs.mjs';

const TRITON = path.join(root, 'tests', 'data', 'traces', 'amd', 'torch_compile_triton_mi300x.json.gz');

let env;
before(async () => {
  env = await startBrowser();
  mkdirSync(screenshotDir, { recursive: true });
});
after(async () => {
  await stopBrowser(env);
});

/** The drawn edges as "from->to" and whether each leaves its source's box bottom for a box below. */
async function drawnEdges(page) {
  return page.locator('svg.dag').evaluate((svg) => {
    const box = (g) => svg.querySelector(`[data-group="${g}"] .dag-box`).getBoundingClientRect();
    return [...svg.querySelectorAll('.dag-edge')].map((e) => {
      const [from, to] = [e.dataset.from, e.dataset.to];
      return { edge: `${from}->${to}`, down: box(from).bottom < box(to).top };
    });
  });
}

async function openGraph(page, file, title) {
  await page.getByTestId('unfused-total').waitFor();
  await page.setInputFiles('#file-input', file);
  await page.getByTestId('results-title').getByText(`Op graph ${title}`).waitFor({ timeout: 60000 });
}

test('the transformer block is drawn as a DAG whose edges go down, group 4 reading groups 1 and 3', async () => {
  const { page, check } = await openPage(env);
  await page.getByTestId('unfused-total').waitFor();
  const report = cli(['transformer', '--seq-len', '2048', '--hidden', '4096', '--heads', '32', '--dtype-bytes', '2', '--json', '--details']);
  assert.equal(await page.locator('svg.dag [data-group]').count(), report.groups.length);
  const edges = await drawnEdges(page);
  assert.ok(edges.length >= report.groups.length - 1, `${edges.length} edges`);
  assert.ok(edges.every((e) => e.down), JSON.stringify(edges));
  assert.deepEqual(edges.filter((e) => e.edge.endsWith('->4')).map((e) => e.edge).sort(), ['1->4', '3->4']);
  // Each box lists its group's ops.
  for (const [g, ops] of report.groups.entries()) {
    assert.deepEqual(await page.locator(`[data-group="${g + 1}"] .op-name`).allTextContents(), ops.slice(0, 6));
  }
  // Keyboard: a group header takes focus and Enter shows the group's ops and neighbours.
  await page.getByRole('button', { name: /^group 4,/ }).focus();
  await page.keyboard.press('Enter');
  const details = page.getByTestId('group-details');
  await details.waitFor();
  assert.match(await details.textContent(), /Reads from: group 1group 3/);
  for (const op of report.groups[3]) assert.ok((await details.textContent()).includes(op), op);
  // Selecting an op there shows its tensors and the rule that placed it.
  await details.getByRole('button', { name: report.groups[3][0], exact: true }).click();
  const d = report.op_details.find((o) => o.name === report.groups[3][0]);
  assert.equal((await page.getByTestId('op-reason').textContent()).trim(), `Why here: ${d.reason}`);
  // The edges into and out of the selected op's group are highlighted.
  assert.ok(await page.locator('.dag-edge.lit').count() >= 2);
  const panel = page.locator('section[aria-labelledby=groups-h]');
  await panel.screenshot({ path: path.join(screenshotDir, 'dag-transformer-light.png') });
  await page.emulateMedia({ colorScheme: 'dark' });
  await panel.screenshot({ path: path.join(screenshotDir, 'dag-transformer-dark.png') });
  await check();
});

test('a 500-op graph is drawn with every group and group edge; selecting an op shows its rule', async () => {
  const file = path.join(screenshotDir, 'random-500.json');
  const ops = writeRandomGraph(file, 500, 5);
  const report = cli(['graph', file, '--json', '--details']);
  const { page, check } = await openPage(env);
  await openGraph(page, file, 'random-500.json');
  assert.equal(await page.locator('svg.dag [data-group]').count(), report.groups.length);
  const expected = groupEdges(ops, report.op_details.map((d) => d.group));
  const edges = await drawnEdges(page);
  assert.deepEqual(new Set(edges.map((e) => e.edge)), expected);
  assert.ok(edges.every((e) => e.down), 'an edge goes up');
  // No two boxes overlap.
  const rects = await page.locator('svg.dag .dag-box').evaluateAll((rs) => rs.map((r) => r.getBoundingClientRect().toJSON()));
  for (let i = 0; i < rects.length; i++) {
    for (let j = i + 1; j < rects.length; j++) {
      const [a, b] = [rects[i], rects[j]];
      const apart = a.right <= b.left || b.right <= a.left || a.bottom <= b.top || b.bottom <= a.top;
      assert.ok(apart, `boxes ${i + 1} and ${j + 1} overlap`);
    }
  }
  await page.locator('section[aria-labelledby=groups-h]').screenshot({ path: path.join(screenshotDir, 'dag-500-top.png') });
  // A matmul op: it starts its group, and the details say so.
  const g = report.op_details.findIndex((d, i) => d.op_type === 'matmul' && i > 100);
  const op = report.op_details[g];
  await page.locator(`[data-group="${op.group + 1}"] .op`).filter({ hasText: op.name }).first().click();
  await page.getByTestId('op-details').getByText(`${op.name} (matmul) — group ${op.group + 1}`).waitFor();
  assert.equal((await page.getByTestId('op-reason').textContent()).trim(), `Why here: ${op.reason}`);
  assert.match(op.reason, /matmul always starts a new group/);
  await page.locator('.dag-scroll').screenshot({ path: path.join(screenshotDir, 'dag-500-light.png') });
  // The list view of the same graph, one click away.
  await page.getByTestId('view-toggle').click();
  await page.getByTestId('table-ops').getByTestId('row-count').getByText('500 rows.').waitFor();
  await check();
});

test('a 100,000-op graph is listed: the tables scroll to the last row, filter and sort every row', async () => {
  const file = path.join(screenshotDir, 'random-100k.json');
  const n = 100000;
  writeRandomGraph(file, n, 9);
  const report = cli(['graph', file, '--json', '--details']);
  const { page, check } = await openPage(env);
  await openGraph(page, file, 'random-100k.json');
  // Too large to draw: the list, and a sentence saying why.
  assert.match(await page.getByTestId('list-why').textContent(), /100,000 ops: a drawing of more than 2,000 is too large to read/);
  assert.equal(await page.locator('svg.dag').count(), 0);
  const table = page.getByTestId('table-ops');
  assert.equal(await table.locator('table').getAttribute('aria-rowcount'), String(n + 1));
  const drawn = await table.locator('tbody tr[aria-rowindex]').count();
  assert.ok(drawn > 10 && drawn < 80, `${drawn} rows in the page`);
  // Scrolled to the bottom, the last op is in view.
  await table.locator('.vscroll').evaluate((el) => { el.scrollTop = el.scrollHeight; });
  const last = table.locator(`tbody tr[aria-rowindex="${n + 1}"]`);
  await last.waitFor();
  assert.match(await last.textContent(), /op99999/);
  assert.ok(await last.isVisible());
  // Selecting it (keyboard) shows its tensors and rule.
  await last.focus();
  await page.keyboard.press('Enter');
  const lastOp = report.op_details[n - 1];
  assert.equal((await page.getByTestId('op-reason').textContent()).trim(), `Why here: ${lastOp.reason}`);
  // Filtering searches all rows.
  await page.fill('#filter-ops', 'op99999');
  await table.getByTestId('row-count').getByText(`1 of ${digits(n)} rows match.`).waitFor();
  const matmuls = report.op_details.filter((d) => d.reason.includes('a matmul always starts')).length;
  await page.fill('#filter-ops', 'a matmul always starts');
  await table.getByTestId('row-count').getByText(`${digits(matmuls)} of ${digits(n)} rows match.`).waitFor();
  await page.fill('#filter-ops', '');
  // Sorting by group, largest first: the last group leads.
  await table.getByRole('button', { name: /^group/ }).click();
  assert.equal(await table.locator('th[aria-sort="descending"]').count(), 1);
  const first = await table.locator('tbody tr[aria-rowindex="2"] td').nth(3).textContent();
  assert.equal(first, digits(report.groups.length));
  // The groups table is virtualised too.
  const groups = page.getByTestId('table-groups');
  await groups.getByTestId('row-count').getByText(`${digits(report.groups.length)} rows.`).waitFor();
  assert.ok(await groups.locator('tbody tr[aria-rowindex]').count() < 80);
  await table.screenshot({ path: path.join(screenshotDir, 'table-100k.png') });
  await check();
});

test('the classifier rules table is shown from the trace view and says which rule classified a kernel', async () => {
  // The table's two files, in the order they are joined.
  const table = ['table.rs', 'generic.rs'].map((f) => readFileSync(path.join(root, 'src', 'classify', 'rules', f), 'utf8')).join('\n');
  const ids = [...table.matchAll(/Rule::new\(\s*"([^"]+)"/g)].map((m) => m[1]);
  assert.ok(ids.length > 20, `${ids.length} rules`);
  const { page, check } = await openPage(env);
  await page.setInputFiles('#file-input', TRITON);
  await page.getByTestId('results-title').getByText('Trace torch_compile_triton_mi300x.json.gz').waitFor();
  await page.getByTestId('show-rules').click();
  const rules = page.getByTestId('table-rules');
  await rules.getByTestId('row-count').getByText(`${ids.length} rows.`).waitFor();
  // Every rule is in the table: the rows drawn at the top and, scrolled down, at the bottom.
  assert.equal(await rules.locator('table').getAttribute('aria-rowcount'), String(ids.length + 1));
  const shown = await rules.locator('tbody tr[aria-rowindex] td:nth-child(2)').allTextContents();
  await rules.locator('.vscroll').evaluate((el) => { el.scrollTop = el.scrollHeight; });
  await rules.locator(`tbody tr[aria-rowindex="${ids.length + 1}"]`).waitFor();
  shown.push(...await rules.locator('tbody tr[aria-rowindex] td:nth-child(2)').allTextContents());
  assert.deepEqual(new Set(shown), new Set(ids));
  await rules.locator('.vscroll').evaluate((el) => { el.scrollTop = 0; });
  assert.deepEqual(await rules.locator('thead th').allTextContents(), ['order', 'rule', 'matches', 'category', 'example vendor', 'notes', 'example']);
  // Clicking a fused Triton kernel's row names the rule that decided it and marks that rule.
  await page.getByTestId('table-fused').locator('tbody tr[aria-rowindex="2"]').click();
  await page.getByTestId('rule-verdict').getByText(/^Rule inductor-fused \(order 1\) decides: /).waitFor();
  assert.equal(await rules.locator('tbody tr.selected td:nth-child(2)').textContent(), 'inductor-fused');
  // Typing a name works too.
  await page.fill('#rule-kernel', 'Cijk_Alik_Bljk_BBS_BH_Bias_HA_S_SAV_UserArgs_MT256x192x64');
  await page.getByTestId('rule-verdict').getByText(/^Rule gemm-tensile /).waitFor();
  await page.getByTestId('rules-view').screenshot({ path: path.join(screenshotDir, 'rules-light.png') });
  await check();
});

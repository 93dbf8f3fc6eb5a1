// End-to-end tests of the overview: the verdict naming the devices and the findings ranked by
// the time they explain, on the first screen of a pair's and of one trace's results, the same
// rows as the command line's --json, carried word for word by a share link, first in the
// Markdown export.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { readFileSync, unlinkSync } from 'node:fs';
import { browserPerFile, QWEN_NV, QWEN_AMD, REL_NV, REL_AMD, openPage, cli, root, screenshotDir } from './harness.mjs';

const env = browserPerFile();

/** The verdict and the findings as the page shows them. */
async function overview(page) {
  const verdict = (await page.getByTestId('verdict').textContent()).trim();
  const findings = await page.getByTestId('finding').evaluateAll((items) =>
    items.map((li) => ({
      text: li.querySelector('.finding-text').textContent,
      time_us: Number(li.dataset.timeUs),
      bottom: li.getBoundingClientRect().bottom,
    })));
  return { verdict, findings };
}

/** What no scroll shows: everything above the viewport's bottom edge, the page not scrolled. */
async function assertFirstScreen(page, findings, height) {
  assert.equal(await page.evaluate(() => window.scrollY), 0);
  const onScreen = findings.filter((f) => f.bottom <= height);
  assert.ok(onScreen.length >= 3, `only ${onScreen.length} findings on the first screen: ${JSON.stringify(findings)}`);
  const verdictBottom = await page.getByTestId('verdict').evaluate((e) => e.getBoundingClientRect().bottom);
  assert.ok(verdictBottom <= height, `the verdict ends at ${verdictBottom} px`);
}

test('a pair: the verdict names both devices, the findings are the CLI\'s, on the first screen; a link keeps them', async () => {
  const viewport = { width: 1440, height: 900 };
  const first = await openPage(env, '', { viewport, fresh: true });
  const { page } = first;
  await page.setInputFiles('#file-input', [QWEN_NV, QWEN_AMD]);
  await page.getByTestId('results-title').getByText('AMD vs NVIDIA compared').waitFor();
  await page.evaluate(() => window.scrollTo(0, 0));
  const c = cli(['compare', REL_NV, REL_AMD, '--json']);
  const shown = await overview(page);
  assert.equal(shown.verdict, c.verdict.text);
  assert.match(shown.verdict, /^MI300X \(AMD\) takes .* H100 SXM \(NVIDIA\) .* faster/);
  // Row for row: the same sentences and times, in the same order.
  assert.deepEqual(shown.findings.map((f) => [f.text, f.time_us]), c.findings.map((f) => [f.text, f.time_us]));
  assert.ok(c.findings.length >= 5 && c.findings.length <= 8, `${c.findings.length} findings`);
  await assertFirstScreen(page, shown.findings, viewport.height);
  await page.screenshot({ path: path.join(screenshotDir, 'overview-pair-1440.png') });
  // A finding's evidence button opens the view that holds it and brings its table into view.
  const timeFinding = page.getByTestId('finding').filter({ hasText: 'Where the time goes' }).first();
  await timeFinding.getByRole('button').click();
  await page.getByRole('tab', { name: 'Where the time goes' }).and(page.locator('[aria-selected="true"]')).waitFor();
  await page.waitForFunction(() => {
    const t = document.querySelector('[data-testid="table-gap"]');
    const r = t && t.getBoundingClientRect();
    return r && r.top >= -1 && r.top < window.innerHeight;
  });
  assert.ok(page.url().endsWith('#view=time'), page.url());
  // The Markdown export opens with the verdict and the findings table.
  await page.evaluate(() => window.scrollTo(0, 0));
  const [d] = await Promise.all([page.waitForEvent('download'), page.click('[data-export=".md"]')]);
  const md = readFileSync(await d.path(), 'utf8');
  const lines = md.split('\n');
  assert.equal(lines[2], `- ${c.verdict.text.replaceAll('*', '\\*')}`);
  assert.ok(md.indexOf('## Findings, ranked by the time they explain') < md.indexOf('## Categories'), md.slice(0, 400));
  // The one-file report: it opens from a file:// URL with scripts disabled and shows the same
  // verdict and findings; the command line writes the same file.
  const [r] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Export report' }).click()]);
  assert.equal(r.suggestedFilename(), 'hf_qwen1.5-0.5b_eager_h100-vs-hf_qwen1.5-0.5b_eager_mi300x-report.html');
  const reportPath = path.join(screenshotDir, '..', 'overview-report.tmp.html');
  await r.saveAs(reportPath);
  const offline = await env.browser.newContext({ javaScriptEnabled: false, viewport });
  const doc = await offline.newPage();
  const requests = [];
  doc.on('request', (q) => { if (!q.url().startsWith('file://')) requests.push(q.url()); });
  await doc.goto(`file://${reportPath}`);
  assert.equal((await doc.getByTestId('verdict').textContent()).trim(), c.verdict.text);
  const reported = await doc.getByTestId('finding').evaluateAll((items) => items.map((li) => li.querySelector('.finding-text').textContent));
  assert.deepEqual(reported, c.findings.map((f) => f.text));
  assert.deepEqual(requests, [], 'the report loads nothing');
  await doc.screenshot({ path: path.join(screenshotDir, 'overview-report-1440.png') });
  await offline.close();
  unlinkSync(reportPath);
  // A share link: the reviewer reads the sender's verdict and findings.
  await page.getByTestId('share-button').click();
  const url = await page.getByTestId('share-url').inputValue();
  await first.check();
  const second = await openPage(env, url.slice(env.server.url.length), { viewport });
  await second.page.getByTestId('results-title').getByText('AMD vs NVIDIA compared').waitFor();
  // The link opens the view the sender was looking at.
  assert.equal(await second.page.getByRole('tab', { selected: true }).textContent(), 'Where the time goes');
  await second.page.getByTestId('table-gap').waitFor();
  await second.page.getByRole('tab', { name: 'Overview' }).click();
  const reopened = await overview(second.page);
  assert.equal(reopened.verdict, shown.verdict);
  assert.deepEqual(reopened.findings.map((f) => f.text), shown.findings.map((f) => f.text));
  await second.check();
});

test('one trace (B200, a vLLM MoE run): its device, GPU time and findings, as trace --json gives them', async () => {
  const rel = 'tests/data/traces/nvidia/tracelens_eager_b200.json.gz';
  const viewport = { width: 1024, height: 900 };
  const { page, check } = await openPage(env, '', { viewport, fresh: true });
  await page.setInputFiles('#file-input', path.join(root, rel));
  await page.getByTestId('results-title').getByText('Trace tracelens_eager_b200.json.gz').waitFor();
  await page.evaluate(() => window.scrollTo(0, 0));
  const t = cli(['trace', rel, '--json']);
  const shown = await overview(page);
  assert.equal(shown.verdict, t.verdict.text);
  assert.match(shown.verdict, /B200 \(NVIDIA\): .* of GPU time in [\d,]+ kernels/);
  assert.deepEqual(shown.findings.map((f) => [f.text, f.time_us]), t.findings.map((f) => [f.text, f.time_us]));
  await assertFirstScreen(page, shown.findings, viewport.height);
  await page.screenshot({ path: path.join(screenshotDir, 'overview-trace-1024.png') });
  await check();
});

/** axe-core's serious and critical violations inside `selector`, each with a few of its nodes. */
async function axeViolations(page, selector) {
  const source = readFileSync(path.join(root, 'tests', 'e2e', 'node_modules', 'axe-core', 'axe.min.js'), 'utf8');
  await page.evaluate(source);
  return page.evaluate(async (sel) => {
    const r = await globalThis.axe.run(document.querySelector(sel), { resultTypes: ['violations'] });
    return r.violations
      .filter((v) => v.impact === 'serious' || v.impact === 'critical')
      .map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.slice(0, 3).map((n) => n.target.join(' ')) }));
  }, selector);
}

for (const colorScheme of ['light', 'dark']) {
  test(`a pair's results have no serious or critical accessibility violation (axe-core, ${colorScheme})`, async () => {
    const { page, context, check } = await openPage(env, '', { viewport: { width: 1440, height: 900 } });
    await page.emulateMedia({ colorScheme });
    await page.setInputFiles('#file-input', [QWEN_NV, QWEN_AMD]);
    await page.getByTestId('results-title').getByText('AMD vs NVIDIA compared').waitFor();
    const found = await axeViolations(page, '[data-testid="trace-panel"]');
    assert.deepEqual(found, [], JSON.stringify(found, null, 1));
    await check();
    void context;
  });
}

test('views are one click (or key) away, in the address, and Back and Forward move between them', async () => {
  const { page, check } = await openPage(env, '', { viewport: { width: 1440, height: 900 }, fresh: true });
  await page.setInputFiles('#file-input', [QWEN_NV, QWEN_AMD]);
  await page.getByTestId('results-title').getByText('AMD vs NVIDIA compared').waitFor();
  const selected = async () => (await page.getByRole('tab', { selected: true }).textContent()).trim();
  assert.equal(await selected(), 'Overview');
  const names = await page.getByRole('tab').allTextContents();
  assert.deepEqual(names, ['Overview', 'Fusion', 'Kernels & mapping', 'Where the time goes', 'Layers', 'All views']);
  // What each view holds (and the overview's answer only in the overview).
  const holds = {
    'Fusion': 'table-fusion-groups-a',
    'Kernels & mapping': 'table-mapping',
    'Where the time goes': 'table-gap',
    'Layers': 'table-layer-alignment',
    'Overview': 'verdict',
  };
  for (const [name, testId] of Object.entries(holds)) {
    await page.getByRole('tab', { name }).focus();
    await page.keyboard.press('Enter');
    assert.equal(await selected(), name);
    await page.getByTestId(testId).first().waitFor();
    const others = Object.entries(holds).filter(([n]) => n !== name).map(([, id]) => id);
    for (const id of others) assert.equal(await page.getByTestId(id).count(), 0, `${id} in ${name}`);
  }
  assert.ok(page.url().endsWith('#view=overview'), page.url());
  // A step in the history is taken when the page handles its popstate: wait for the tab.
  const shows = async (name) => {
    await page.getByRole('tab', { name, selected: true }).waitFor({ timeout: 5000 });
    assert.equal(await selected(), name);
  };
  await page.goBack();
  await shows('Layers');
  await page.goBack();
  await shows('Where the time goes');
  await page.goForward();
  await shows('Layers');
  // All views: every table on one page, for find-in-page and printing.
  await page.getByRole('tab', { name: 'All views' }).click();
  for (const id of Object.values(holds)) await page.getByTestId(id).first().waitFor();
  await check();
});

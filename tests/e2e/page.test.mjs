// End-to-end tests of the built page (dist/) in Debian's headless Chromium.
//
// Expected figures come from docs/fusion-rules.md (the default transformer block) and from the
// command line (`fusionscope transformer … --json`) for changed inputs, so the page and the CLI are
// checked against each other. Every test also asserts that the page logged no console error
// and made no request outside its own origin.
//
// Environment: FUSIONSCOPE_DIST (default ../../dist), FUSIONSCOPE_BIN (the native CLI,
// default ../../target/debug/fusionscope), CHROMIUM (default /usr/bin/chromium).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { browserPerFile, openPage, startBrowser, stopBrowser, cli, digits, root, screenshotDir } from './harness.mjs';

const env = browserPerFile();

/** The headline figures as shown. */
async function figures(page) {
  const text = async (id) => (await page.getByTestId(id).locator('.exact').textContent()).trim();
  return {
    groups: await text('group-count'),
    unfused: await text('unfused-total'),
    fused: await text('fused-total'),
    saved: await text('saved-total'),
    pct: await text('savings-pct'),
  };
}

/** The figures the page should show for a CLI JSON report. */
function expectedFigures(report) {
  return {
    groups: digits(report.groups.length),
    unfused: `${digits(report.unfused.total)} bytes`,
    fused: `${digits(report.fused.total)} bytes`,
    saved: `${digits(report.fused.saved_by_fusion)} bytes`,
    pct: `${report.savings_pct.toFixed(2)} %`,
  };
}

test('opens on the transformer block with the spec figures', async () => {
  const { page, check } = await openPage(env);
  await page.getByTestId('unfused-total').waitFor();
  assert.deepEqual(await figures(page), {
    groups: '9',
    unfused: '2,348,810,240 bytes',
    fused: '1,962,934,272 bytes',
    saved: '385,875,968 bytes',
    pct: '16.43 %',
  });
  assert.match(await page.getByTestId('results-title').textContent(), /S = 2048, H = 4096, NH = 32, 2 bytes/);
  // One table row and two bars (read and written segments) per group, and a 4-swatch legend.
  assert.equal(await page.locator('[data-testid=groups-table] tbody tr').count(), 9);
  assert.equal(await page.locator('[data-testid=chart-groups] svg rect').count(), 4 + 4 * 9);
  assert.equal(await page.locator('[data-testid=chart-total] svg rect').count(), 4 + 4);
  // The group view: nine boxes in data-flow order; attention output reads softmax and V.
  assert.equal(await page.locator('[data-testid=group-boxes] [data-group]').count(), 9);
  assert.equal((await page.locator('[data-group="4"] .group-feeds').textContent()).trim(), 'reads from groups 1, 3');
  // Units are shown beside the exact numbers.
  assert.equal((await page.getByTestId('unfused-total').locator('.unit').textContent()).trim(), '2.19 GiB');
  mkdirSync(screenshotDir, { recursive: true });
  await page.screenshot({ path: path.join(screenshotDir, 'transformer-light.png'), fullPage: true });
  await page.emulateMedia({ colorScheme: 'dark' });
  await page.screenshot({ path: path.join(screenshotDir, 'transformer-dark.png'), fullPage: true });
  await check();
});

test('changed inputs give the command line figures', async () => {
  const { page, check } = await openPage(env);
  await page.getByTestId('unfused-total').waitFor();
  await page.fill('#in-seq-len', '1024');
  await page.fill('#in-hidden', '2048');
  await page.fill('#in-heads', '16');
  await page.selectOption('#in-dtype', '4');
  const report = cli(['transformer', '--seq-len', '1024', '--hidden', '2048', '--heads', '16', '--dtype-bytes', '4', '--json']);
  await assertFigures(page, expectedFigures(report));
  assert.match(await page.getByTestId('results-title').textContent(), /S = 1024, H = 2048, NH = 16, 4 bytes/);
  assert.equal(await page.locator('[data-testid=groups-table] tbody tr').count(), report.groups.length);
  await check();
});

test('invalid input shows a message naming the field and keeps the last figures', async () => {
  const { page, check } = await openPage(env);
  await page.getByTestId('unfused-total').waitFor();
  const before = await figures(page);

  await page.fill('#in-seq-len', 'abc');
  await assert.doesNotReject(page.getByText('Sequence length S must be a whole number of at least 1 (got "abc").').waitFor());
  assert.equal(await page.getAttribute('#in-seq-len', 'aria-invalid'), 'true');
  assert.deepEqual(await figures(page), before, 'the last valid figures stay on the page');
  assert.equal(await page.locator('[data-stale=true]').count(), 1);

  await page.fill('#in-seq-len', '');
  await page.getByText('Sequence length S is empty').waitFor();

  await page.fill('#in-seq-len', '2048');
  await page.fill('#in-heads', '3');
  await page.getByText('hidden_dim 4096 is not divisible by num_heads 3').waitFor();

  await page.fill('#in-heads', '0');
  await page.getByText('Heads NH must be at least 1 (got 0).').waitFor();

  // Tensor sizes beyond 64 bits are refused with a reason, not a panic.
  await page.fill('#in-heads', '32');
  await page.fill('#in-seq-len', '99999999999');
  await page.getByText('too large').waitFor();
  mkdirSync(screenshotDir, { recursive: true });
  await page.screenshot({ path: path.join(screenshotDir, 'invalid-input.png'), fullPage: true });

  await page.fill('#in-seq-len', '2048');
  await assertFigures(page, before);
  assert.equal(await page.locator('[data-stale=true]').count(), 0);
  await check();
});

/** Waits until the figures equal `want` (the page updates on the next frame). */
async function assertFigures(page, want) {
  const deadline = Date.now() + 5000;
  let got;
  while (Date.now() < deadline) {
    got = await figures(page);
    if (JSON.stringify(got) === JSON.stringify(want)) return;
    await page.waitForTimeout(50);
  }
  assert.deepEqual(got, want);
}

test('every control is reachable with the keyboard', async () => {
  const { page, check } = await openPage(env);
  await page.getByTestId('unfused-total').waitFor();
  const reached = new Set();
  for (let i = 0; i < 60; i++) {
    await page.keyboard.press('Tab');
    reached.add(await page.evaluate(() => {
      const el = document.activeElement;
      return el.dataset.testid || el.id || el.dataset.export || el.textContent.trim();
    }));
  }
  for (const want of ['open-button', 'in-seq-len', 'in-hidden', 'in-heads', 'in-dtype', 'share-button', '.json', '-groups.svg']) {
    assert.ok(reached.has(want), `${want} not reached by Tab: ${[...reached].join(' | ')}`);
  }
  // Exports and op buttons are buttons too.
  assert.ok([...reached].some((r) => r.startsWith('qkv_proj')), 'an op button');
  // Enter on an op button opens its details.
  await page.getByRole('button', { name: /^softmax/ }).focus();
  await page.keyboard.press('Enter');
  await page.getByTestId('op-details').getByText('softmax (reduction) — group 3').waitFor();
  await check();
});

test('the page bundle a first visit downloads stays within 885 KB gzipped', async () => {
  // A size budget, not a timing: deterministic for a given build. page-bench.mjs prints the
  // figures; this stops a change from quietly pushing the first download over the target.
  const { readdirSync, readFileSync } = await import('node:fs');
  const { gzipSync } = await import('node:zlib');
  const { dist } = await import('./harness.mjs');
  const firstLoad = readdirSync(dist).filter((f) => /^fusionscope-[0-9a-f]+(_bg\.wasm|\.js)$/.test(f));
  assert.equal(firstLoad.length, 2, `expected the page's wasm and its glue in ${dist}, found ${firstLoad}`);
  const gz = firstLoad.reduce((n, f) => n + gzipSync(readFileSync(path.join(dist, f)), { level: 9 }).length, 0);
  assert.ok(gz <= 885_000, `the page's wasm + glue is ${gz} bytes gzipped, over the 885 KB budget`);
});

test('the page has a Content-Security-Policy: no inline script, nothing from another origin', async () => {
  const { readFileSync } = await import('node:fs');
  const { dist } = await import('./harness.mjs');
  const html = readFileSync(path.join(dist, 'index.html'), 'utf8');
  const policy = html.match(/<meta http-equiv="Content-Security-Policy" content="([^"]+)">/);
  assert.ok(policy, 'a CSP meta element');
  for (const rule of ["default-src 'none'", "script-src 'self' 'wasm-unsafe-eval'", "connect-src 'self'", "object-src 'none'"]) {
    assert.ok(policy[1].includes(rule), `${rule} in ${policy[1]}`);
  }
  assert.ok(!/'unsafe-inline'/.test(policy[1].replace("style-src-attr 'unsafe-inline'", '')), policy[1]);
  const scripts = [...html.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/g)];
  assert.ok(scripts.length >= 1 && scripts.every(([, attrs, body]) => /\bsrc=/.test(attrs) && body.trim() === ''), 'every script is a file');
  // The page runs under it: the block renders and a trace opens in the worker (the harness's
  // check() fails on any console error, which is where CSP violations are reported).
  const env = await startBrowser();
  try {
    const { page, check } = await openPage(env);
    await page.getByTestId('unfused-total').waitFor();
    await page.setInputFiles('#file-input', path.join(root, 'tests/data/traces/nvidia/hf_bert-small_eager_h100.json.gz'));
    await page.getByTestId('results-title').getByText('Trace hf_bert-small_eager_h100.json.gz').waitFor();
    await check();
  } finally {
    await stopBrowser(env);
  }
});

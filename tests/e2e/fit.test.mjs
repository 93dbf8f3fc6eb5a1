// End-to-end tests of tables that fit: on the Qwen H100/MI300X pair, at 1440 and 1024 px wide,
// every table of every view is no wider than its panel (columns that do not fit are hidden,
// text columns first), and the "Columns" chooser brings a hidden one back.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { browserPerFile, QWEN_NV, QWEN_AMD, openPage, screenshotDir } from './harness.mjs';

const env = browserPerFile();

/** Each table box of the view that scrolls sideways: its test id, and by how many pixels. */
async function overflowing(page) {
  return page.locator('.data-table').evaluateAll((tables) =>
    tables
      .map((t) => {
        const wrap = t.querySelector('.table-wrap');
        return { id: t.dataset.testid, over: wrap ? wrap.scrollWidth - wrap.clientWidth : 0 };
      })
      .filter((t) => t.over > 1));
}

for (const width of [1440, 1024]) {
  test(`at ${width} px no table is wider than its panel, in any view; hidden columns are a click away`, async () => {
    const { page, check } = await openPage(env, '', { viewport: { width, height: 900 } });
    await page.setInputFiles('#file-input', [QWEN_NV, QWEN_AMD]);
    await page.getByTestId('results-title').getByText('AMD vs NVIDIA compared').waitFor();
    for (const name of ['Overview', 'Fusion', 'Kernels & mapping', 'Where the time goes', 'Layers']) {
      await page.getByRole('tab', { name }).click();
      // Fitting hides a column per drawing: let it settle.
      await page.waitForFunction(() => [...document.querySelectorAll('.data-table .table-wrap')]
        .every((w) => w.scrollWidth <= w.clientWidth + 1), null, { timeout: 10000 }).catch(() => {});
      assert.deepEqual(await overflowing(page), [], `${name} at ${width} px`);
      const slug = name.toLowerCase().replace(/[^a-z]+/g, '-');
      await page.screenshot({ path: path.join(screenshotDir, `fit-${slug}-${width}.png`), fullPage: false });
    }
    // Number headers wrap rather than hide text: the gap table keeps the input dims that tell
    // apart its rows of one op (three aten::mm rows here).
    if (width === 1440) {
      await page.getByRole('tab', { name: 'Where the time goes' }).click();
      const dims = page.getByTestId('table-gap').locator('th', { hasText: 'input dims' });
      assert.equal(await dims.evaluate((th) => th.classList.contains('col-hidden')), false, 'the input dims are shown');
    }
    // The mapping keeps its AMD and NVIDIA kernel columns by hiding others or none; whatever was
    // hidden is listed, and ticking it shows it again (the table may then scroll sideways).
    await page.getByRole('tab', { name: 'Kernels & mapping' }).click();
    const mapping = page.getByTestId('table-mapping');
    await mapping.waitFor();
    const chooser = mapping.getByTestId('column-chooser');
    if (await chooser.count()) {
      await chooser.locator('summary').click();
      const off = chooser.locator('input[type="checkbox"]:not(:checked)');
      const hidden = await off.count();
      assert.ok(hidden > 0);
      await off.first().check();
      assert.equal(await chooser.locator('input[type="checkbox"]:not(:checked)').count(), hidden - 1);
      assert.equal(await mapping.locator('th.col-hidden').count(), hidden - 1);
    }
    await check();
  });
}

test('resizing the window fits the tables again: narrower hides columns, wider brings them back', async () => {
  const { page, check } = await openPage(env, '', { viewport: { width: 1440, height: 900 } });
  await page.setInputFiles('#file-input', [QWEN_NV, QWEN_AMD]);
  await page.getByTestId('results-title').getByText('AMD vs NVIDIA compared').waitFor();
  await page.getByRole('tab', { name: 'Kernels & mapping' }).click();
  const mapping = page.getByTestId('table-mapping');
  await mapping.waitFor();
  const settled = () => page.waitForFunction(() => [...document.querySelectorAll('.data-table .table-wrap')]
    .every((w) => w.scrollWidth <= w.clientWidth + 1), null, { timeout: 10000 }).catch(() => {});
  const hiddenNow = () => mapping.locator('th.col-hidden').count();
  await settled();
  const wide = await hiddenNow();
  await page.setViewportSize({ width: 900, height: 900 });
  await page.waitForFunction(() => document.querySelectorAll('[data-testid="table-mapping"] th.col-hidden').length > 0,
    null, { timeout: 10000 });
  await settled();
  assert.deepEqual(await overflowing(page), [], 'after narrowing to 900 px');
  const narrow = await hiddenNow();
  assert.ok(narrow > wide, `900 px hides ${narrow} columns, 1440 px ${wide}`);
  await page.setViewportSize({ width: 1440, height: 900 });
  await page.waitForFunction((n) => document.querySelectorAll('[data-testid="table-mapping"] th.col-hidden').length === n,
    wide, { timeout: 10000 });
  assert.equal(await hiddenNow(), wide, 'widening back shows the columns again');
  await check();
});

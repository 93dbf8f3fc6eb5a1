// Overview benchmark (not a test): the time from dropping the shared H100/MI300X Qwen pair on
// the page to the overview's verdict and findings drawn, against the time to draw every view of
// the pair on one page (All views, the comparison as one long page), in headless Chromium on
// dist/ (build it first: trunk build --release). Run: node tests/e2e/overview-bench.mjs

import { QWEN_NV, QWEN_AMD, openPage, startBrowser, stopBrowser } from './harness.mjs';

const RUNS = Number(process.env.RUNS ?? 5);
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** Milliseconds from handing the page both files to `selector` being drawn. */
async function timeTo(env, suffix, selector) {
  const { page, context } = await openPage(env, suffix, { viewport: { width: 1440, height: 900 }, fresh: true });
  const start = Date.now();
  await page.setInputFiles('#file-input', [QWEN_NV, QWEN_AMD]);
  await page.locator(selector).first().waitFor();
  // The frame after: what the reader sees.
  await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => r())));
  const ms = Date.now() - start;
  await context.close();
  return ms;
}

const env = await startBrowser();
try {
  const overview = [];
  const all = [];
  for (let i = 0; i < RUNS; i++) {
    overview.push(await timeTo(env, '', '[data-testid="finding"]'));
    all.push(await timeTo(env, '#view=all', '[data-testid="table-fusion-differences"]'));
  }
  console.log(`Qwen pair, ${RUNS} runs each: overview drawn in median ${median(overview)} ms (${overview.join(', ')}); ` +
    `all views drawn in median ${median(all)} ms (${all.join(', ')})`);
} finally {
  await stopBrowser(env);
}

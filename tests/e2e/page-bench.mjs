// Page benchmark (not a test): the wasm bundle's size, raw and gzipped, and the time from
// navigation start to the first render of the default example's figures, in headless
// Chromium on dist/ (build it first: trunk build --release). Run: node tests/e2e/page-bench.mjs

import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { dist, openPage, startBrowser, stopBrowser } from './harness.mjs';

const RUNS = Number(process.env.RUNS ?? 5);

const kib = (n) => `${(n / 1024).toFixed(1)} KiB`;
for (const f of readdirSync(dist).filter((f) => /\.(wasm|js|css)$/.test(f))) {
  const bytes = readFileSync(path.join(dist, f));
  console.log(`${f.replace(/-[0-9a-f]{16}/, '')}: ${kib(bytes.length)} raw, ${kib(gzipSync(bytes, { level: 9 }).length)} gzipped`);
}

/** Runs in the page before its scripts: notes when the first figure enters the DOM
 * (milliseconds since navigation start). */
function recordFirstRender() {
  new MutationObserver((_, observer) => {
    if (document.querySelector('[data-testid=unfused-total]')) {
      window.__fsFirstRender = performance.now();
      observer.disconnect();
    }
  }).observe(document, { childList: true, subtree: true });
}

const env = await startBrowser();
const times = [];
try {
  for (let i = 0; i < RUNS; i++) {
    const { page, context } = await openPage(env, '', { init: recordFirstRender });
    await page.getByTestId('unfused-total').waitFor();
    times.push(await page.evaluate(() => window.__fsFirstRender));
    await context.close();
  }
} finally {
  await stopBrowser(env);
}
times.sort((a, b) => a - b);
console.log(`time to first render of the transformer block (${RUNS} runs): median ${times[Math.floor(RUNS / 2)].toFixed(0)} ms, best ${times[0].toFixed(0)} ms`);

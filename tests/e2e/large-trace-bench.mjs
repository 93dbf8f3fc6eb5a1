// Page benchmark (not a test): opening a very large Kineto trace (GBs) in headless Chromium.
// Prints the file's size, the time to the result, the rate, the browser's peak memory (all its
// processes' resident memory, sampled every 100 ms, less what they held before the file was
// dropped) and the longest gap between animation frames (how long the page's thread was
// blocked). Write the trace with `cargo run --release --example page_inputs -- DIR 1000 3000`
// (a ~3 GB trace).
// Run: node tests/e2e/large-trace-bench.mjs TRACE [DIST]   (DIST defaults to dist/)

import { execFileSync } from 'node:child_process';
import { statSync } from 'node:fs';
import path from 'node:path';
import { openPage, recordFrames, startBrowser, stopBrowser } from './harness.mjs';

const [trace, distDir] = process.argv.slice(2);
if (!trace) {
  console.error('usage: node tests/e2e/large-trace-bench.mjs TRACE [DIST]');
  process.exit(2);
}

/** Resident memory of every Chromium process, in bytes. */
function browserRss() {
  const out = execFileSync('ps', ['-C', 'chromium', '-o', 'rss='], { encoding: 'utf8' });
  return out.split('\n').filter(Boolean).reduce((n, kb) => n + Number(kb) * 1024, 0);
}

const bytes = statSync(trace).size;
const env = await startBrowser(distDir ? path.resolve(distDir) : undefined);
try {
  const { page } = await openPage(env, '', { init: recordFrames });
  await page.getByTestId('unfused-total').waitFor();
  // The file comes 2 s after the page drew, as a user's drop comes (the workers start once the
  // page drew, and warm up: src/web/warm_up.rs), as in compare-bench.mjs.
  await page.waitForTimeout(2000);
  await page.evaluate(() => { window.__fsGap = 0; });
  const before = browserRss();
  let peak = before;
  const sampler = setInterval(() => { peak = Math.max(peak, browserRss()); }, 100);
  const start = Date.now();
  await page.setInputFiles('#file-input', trace);
  await page.getByTestId('results-title').getByText(`Trace ${path.basename(trace)}`).waitFor({ timeout: 15 * 60 * 1000 });
  await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
  const seconds = (Date.now() - start) / 1000;
  clearInterval(sampler);
  peak = Math.max(peak, browserRss());
  const gap = await page.evaluate(() => window.__fsGap);
  const gb = (b) => `${(b / 1e9).toFixed(2)} GB`;
  console.log(`${path.basename(trace)}: ${gb(bytes)} read in ${seconds.toFixed(1)} s, ${(bytes / 1e6 / seconds).toFixed(0)} MB/s; ` +
    `browser memory +${gb(peak - before)} at peak (${gb(peak)} in all); longest frame gap ${gap.toFixed(0)} ms`);
} finally {
  await stopBrowser(env);
}

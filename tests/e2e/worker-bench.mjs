// Page benchmark (not a test): how long opening a large file blocks the page's main thread.
// Opens a 100,000-op random graph and a ~100 MB synthetic Kineto trace (written by
// `cargo run --release --example page_inputs -- DIR`) in headless Chromium and prints, per
// file, the time to the result, the longest main-thread task (PerformanceObserver
// 'longtask') and their sum, and the longest gap between animation frames.
// Run: node tests/e2e/worker-bench.mjs GRAPH TRACE [DIST]   (DIST defaults to dist/)

import path from 'node:path';
import { openPage, recordFrames, startBrowser, stopBrowser } from './harness.mjs';

const [graph, trace, distDir] = process.argv.slice(2);
if (!graph || !trace) {
  console.error('usage: node tests/e2e/worker-bench.mjs GRAPH TRACE [DIST]');
  process.exit(2);
}

/** Runs in the page before its scripts: records long tasks (and, by `recordFrames`, the
 * longest gap between animation frames). */
function recordLongTasks() {
  window.__fsLong = [];
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) window.__fsLong.push(e.duration);
  }).observe({ type: 'longtask', buffered: false });
}

const env = await startBrowser(distDir ? path.resolve(distDir) : undefined);
try {
  for (const [file, title] of [[graph, 'Op graph'], [trace, 'Trace']]) {
    const { page, context } = await openPage(env, '', { init: `(${recordLongTasks})(); (${recordFrames})();` });
    await page.getByTestId('unfused-total').waitFor();
    await page.evaluate(() => { window.__fsLong.length = 0; window.__fsGap = 0; });
    const start = Date.now();
    await page.setInputFiles('#file-input', file);
    await page.getByTestId('results-title').getByText(`${title} ${path.basename(file)}`).waitFor({ timeout: 120000 });
    // Two frames after the result, so that its rendering is counted.
    await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
    const seconds = (Date.now() - start) / 1000;
    const { long, gap } = await page.evaluate(() => ({ long: window.__fsLong, gap: window.__fsGap }));
    const sum = long.reduce((a, b) => a + b, 0);
    console.log(`${path.basename(file)}: result in ${seconds.toFixed(2)} s; main thread: longest task ${Math.max(0, ...long).toFixed(0)} ms, ` +
      `${long.length} long tasks totalling ${sum.toFixed(0)} ms, longest frame gap ${gap.toFixed(0)} ms`);
    await context.close();
  }
} finally {
  await stopBrowser(env);
}

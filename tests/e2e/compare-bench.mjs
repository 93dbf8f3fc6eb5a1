// Page benchmark (not a test): `compare` in the page — two trace files dropped together, read
// by the analysis workers, compared, and the comparison drawn — in headless Chromium on dist/
// (build it first: trunk build --release). Times, on the page's own clock, from the file
// input's change event (the files reaching the page) to two frames after the comparison's title
// appeared; best and median of RUNS (default 5). The files are handed over 2 s after the page
// drew, as a user's drop comes: the workers start once the page drew.
// Run: node tests/e2e/compare-bench.mjs A B [DIST]
// `fusionscope bench serving` writes a synthetic serving pair (AMD and NVIDIA graph replays).

import path from 'node:path';
import { openPage, startBrowser, stopBrowser } from './harness.mjs';

const [a, b, distDir] = process.argv.slice(2);
if (!a || !b) {
  console.error('usage: node tests/e2e/compare-bench.mjs A B [DIST]');
  process.exit(2);
}
const RUNS = Number(process.env.RUNS ?? 5);

/** Runs in the page: the time from the files' arrival to the drawn comparison, in ms. */
function timeComparison() {
  return new Promise((done) => {
    let start;
    document.querySelector('#file-input').addEventListener('change', () => { start = performance.now(); }, { once: true });
    new MutationObserver((_, observer) => {
      const title = document.querySelector('[data-testid=results-title]');
      if (start !== undefined && title && title.textContent.includes('compared')) {
        observer.disconnect();
        requestAnimationFrame(() => requestAnimationFrame(() => done(performance.now() - start)));
      }
    }).observe(document, { childList: true, subtree: true, characterData: true });
  });
}

const env = await startBrowser(distDir ? path.resolve(distDir) : undefined);
const times = [];
try {
  for (let i = 0; i < RUNS; i++) {
    const { page, context } = await openPage(env, '');
    await page.getByTestId('unfused-total').waitFor();
    await page.waitForTimeout(2000);
    const measured = page.evaluate(timeComparison);
    await page.setInputFiles('#file-input', [a, b]);
    times.push((await measured) / 1000);
    await context.close();
  }
} finally {
  await stopBrowser(env);
}
console.log(`runs: ${times.map((t) => t.toFixed(2)).join(' ')}`);
times.sort((x, y) => x - y);
console.log(`${path.basename(a)} + ${path.basename(b)}: compared in the page in ${times[0].toFixed(2)} s best, ` +
  `${times[Math.floor(times.length / 2)].toFixed(2)} s median of ${times.length}`);

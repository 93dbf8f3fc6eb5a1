// Views benchmark (not a test): scroll frame times of the virtualised op table of a
// 100,000-op graph, and the time to open and draw a 500-op graph as a DAG, in headless
// Chromium on dist/ (build it first: trunk build --release). Run: node tests/e2e/views-bench.mjs

import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openPage, startBrowser, stopBrowser } from './harness.mjs';
import { writeRandomGraph } from './graphs.mjs';

const FRAMES = Number(process.env.FRAMES ?? 240);
const dir = mkdtempSync(path.join(os.tmpdir(), 'fusionscope-bench-'));
const stats = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const at = (q) => s[Math.min(s.length - 1, Math.floor(q * s.length))];
  return `median ${at(0.5).toFixed(1)} ms, p95 ${at(0.95).toFixed(1)} ms, max ${s[s.length - 1].toFixed(1)} ms`;
};

/** In the page: scrolls `el` by `step` pixels per animation frame for `frames` frames (wrapping
 * at the bottom) and returns the time between frames in ms. */
function scrollFrames([selector, frames, step]) {
  const el = document.querySelector(selector);
  return new Promise((resolve) => {
    const times = [];
    let last = performance.now();
    let i = 0;
    const tick = (now) => {
      times.push(now - last);
      last = now;
      if (++i >= frames) return resolve(times.slice(1));
      el.scrollTop = el.scrollTop + step >= el.scrollHeight - el.clientHeight ? 0 : el.scrollTop + step;
      requestAnimationFrame(tick);
    };
    requestAnimationFrame(tick);
  });
}

const env = await startBrowser();
try {
  const big = path.join(dir, 'random-100k.json');
  writeRandomGraph(big, 100000, 9);
  const { page, context } = await openPage(env);
  await page.getByTestId('unfused-total').waitFor();
  let start = Date.now();
  await page.setInputFiles('#file-input', big);
  await page.getByTestId('table-ops').waitFor({ timeout: 120000 });
  console.log(`100,000-op graph: opened and listed in ${((Date.now() - start) / 1000).toFixed(2)} s`);
  const sel = '[data-testid=table-ops] .vscroll';
  for (const step of [120, 2000]) {
    const times = await page.evaluate(scrollFrames, [sel, FRAMES, step]);
    console.log(`op table, scrolling ${step} px per frame (${FRAMES} frames): ${stats(times)}`);
  }
  await page.fill('#filter-ops', 'matmul');
  start = Date.now();
  await page.getByTestId('table-ops').getByTestId('row-count').getByText(/ of 100,000 rows match/).waitFor();
  console.log(`filter over 100,000 rows: ${Date.now() - start} ms`);
  await context.close();

  const small = path.join(dir, 'random-500.json');
  writeRandomGraph(small, 500, 5);
  const second = await openPage(env);
  await second.page.getByTestId('unfused-total').waitFor();
  start = Date.now();
  await second.page.setInputFiles('#file-input', small);
  await second.page.getByTestId('results-title').getByText('Op graph random-500.json').waitFor();
  await second.page.locator('svg.dag [data-group]').first().waitFor();
  const groups = await second.page.locator('svg.dag [data-group]').count();
  console.log(`500-op graph: opened and drawn as a DAG (${groups} groups) in ${Date.now() - start} ms`);
  const times = await second.page.evaluate(scrollFrames, ['.dag-scroll', FRAMES, 60]);
  console.log(`DAG of 500 ops, scrolling 60 px per frame: ${stats(times)}`);
  await second.context.close();
} finally {
  await stopBrowser(env);
}

// Page benchmark (not a test): where the browser's threads spend an open. Drops FILES (one, or a
// pair to compare) on dist/ 2 s after the page drew, records a Chromium trace of it
// (`browser.startTracing`) and prints, for each busy thread, its busy time and the event names
// that took most of it (nested events count inside their parents as well). This is how
// docs/benchmarks.md splits a 1 GB open between parsing, taking the file's slices and drawing.
// Run: node tests/e2e/thread-profile.mjs FILE[,FILE] [DIST] [TRACE_OUT]

import { readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openPage, startBrowser, stopBrowser } from './harness.mjs';

const [list, distDir, out = path.join(os.tmpdir(), 'fusionscope-thread-profile.json')] = process.argv.slice(2);
if (!list) {
  console.error('usage: node tests/e2e/thread-profile.mjs FILE[,FILE] [DIST] [TRACE_OUT]');
  process.exit(2);
}
const files = list.split(',');
const done = files.length > 1 ? 'compared' : `Trace ${path.basename(files[0])}`;

const env = await startBrowser(distDir ? path.resolve(distDir) : undefined);
let seconds;
try {
  const { page } = await openPage(env, '');
  await page.getByTestId('unfused-total').waitFor();
  await page.waitForTimeout(2000);
  await env.browser.startTracing(page, { path: out, categories: ['devtools.timeline', 'toplevel', 'v8', 'blink'] });
  const start = Date.now();
  await page.setInputFiles('#file-input', files);
  await page.getByTestId('results-title').getByText(done).waitFor({ timeout: 15 * 60 * 1000 });
  await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
  seconds = (Date.now() - start) / 1000;
  await env.browser.stopTracing();
} finally {
  await stopBrowser(env);
}

const trace = JSON.parse(readFileSync(out, 'utf8'));
const events = trace.traceEvents ?? trace;
const names = new Map();
const threads = new Map(); // "pid:tid" -> { spans, byName }
for (const e of events) {
  const key = `${e.pid}:${e.tid}`;
  if (e.ph === 'M' && e.name === 'thread_name') names.set(key, e.args.name);
  if (e.ph !== 'X' || !e.dur) continue;
  const t = threads.get(key) ?? { spans: [], byName: new Map() };
  threads.set(key, t);
  t.spans.push([e.ts, e.ts + e.dur]);
  t.byName.set(e.name, (t.byName.get(e.name) ?? 0) + e.dur);
}
// A thread's busy time: the union of its events' spans (tasks, and the calls a microtask
// checkpoint runs outside any task).
for (const t of threads.values()) {
  t.spans.sort((a, b) => a[0] - b[0]);
  let [busy, end] = [0, -Infinity];
  for (const [from, to] of t.spans) {
    if (to <= end) continue;
    busy += to - Math.max(from, end);
    end = to;
  }
  t.busy = busy;
}
const ms = (us) => `${(us / 1000).toFixed(0)} ms`;
console.log(`${files.map((f) => path.basename(f)).join(' + ')}: ${seconds.toFixed(2)} s to the result (trace in ${out})`);
for (const [key, t] of [...threads].sort((a, b) => b[1].busy - a[1].busy).slice(0, 5)) {
  const top = [...t.byName].sort((a, b) => b[1] - a[1]).slice(0, 6);
  console.log(`${names.get(key) ?? key}: busy ${ms(t.busy)}; ${top.map(([n, d]) => `${n} ${ms(d)}`).join(', ')}`);
}

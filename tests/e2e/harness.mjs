// Shared set-up of the end-to-end tests: a static server for dist/, Debian's Chromium driven
// by playwright-core (which never downloads a browser), and checks every page must pass.

import assert from 'node:assert/strict';
import { spawn, execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { before, after } from 'node:test';
import { chromium } from 'playwright-core';

export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
export const dist = process.env.FUSIONSCOPE_DIST ?? path.join(root, 'dist');
export const cliBin = process.env.FUSIONSCOPE_BIN ?? path.join(root, 'target', 'debug', 'fusionscope');
export const screenshotDir = path.join(root, 'tests', 'e2e', 'screenshots');
const chromiumPath = process.env.CHROMIUM ?? '/usr/bin/chromium';

/** The Qwen1.5-0.5B eager pair most page tests open: absolute paths, and as the CLI is given them. */
export const REL_NV = 'tests/data/traces/nvidia/hf_qwen1.5-0.5b_eager_h100.json.gz';
export const REL_AMD = 'tests/data/traces/amd/hf_qwen1.5-0.5b_eager_mi300x.json.gz';
export const QWEN_NV = path.join(root, REL_NV);
export const QWEN_AMD = path.join(root, REL_AMD);

/** `1234567` → `"1,234,567"`, as the page writes exact byte counts. */
export function digits(n) {
  return BigInt(n).toLocaleString('en-US');
}

/** The page's duration text for µs, as fusionscope::units::format_duration_us writes it. */
export function duration(us) {
  const a = Math.abs(us);
  if (a === 0) return '0 µs';
  if (a < 1) return `${(us * 1000).toFixed(0)} ns`;
  if (a < 1000) return `${us.toFixed(2)} µs`;
  if (a < 1e6) return `${(us / 1000).toFixed(2)} ms`;
  return `${(us / 1e6).toFixed(2)} s`;
}

/** Runs in the page before its scripts (`openPage(env, '', { init: recordFrames })`): keeps
 * in `window.__fsGap` the longest gap between animation frames, i.e. how long the main thread
 * was blocked; reset it by setting it to 0. */
export function recordFrames() {
  window.__fsGap = 0;
  let last = performance.now();
  const frame = (t) => {
    window.__fsGap = Math.max(window.__fsGap, t - last);
    last = t;
    requestAnimationFrame(frame);
  };
  requestAnimationFrame(frame);
}

/** Runs the native command line and returns its standard output. */
export function cliText(args) {
  assert.ok(existsSync(cliBin), `the command line binary ${cliBin} is missing (cargo build --bin fusionscope)`);
  return execFileSync(cliBin, args, { encoding: 'utf8', cwd: root, maxBuffer: 1 << 30 });
}

/** Runs the native command line and parses its JSON output. */
export function cli(args) {
  return JSON.parse(cliText(args));
}

/** Serves `dist` on a free port of 127.0.0.1; resolves to { url, proc }. */
function serve(dir) {
  assert.ok(existsSync(path.join(dir, 'index.html')), `${dir}/index.html is missing: build the page first (trunk build --release)`);
  return new Promise((resolve, reject) => {
    const proc = spawn('python3', ['-u', '-m', 'http.server', '0', '--bind', '127.0.0.1', '--directory', dir], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    const timer = setTimeout(() => reject(new Error(`static server did not start: ${out}`)), 10000);
    proc.stdout.on('data', (chunk) => {
      out += chunk;
      const m = out.match(/port (\d+)/);
      if (m) {
        clearTimeout(timer);
        resolve({ url: `http://127.0.0.1:${m[1]}/`, proc });
      }
    });
    proc.stderr.on('data', () => {}); // request log
    proc.on('exit', (code) => reject(new Error(`static server exited with ${code}: ${out}`)));
  });
}

/** Serves `dir` (default: dist/) and starts Chromium. */
export async function startBrowser(dir = dist) {
  const server = await serve(dir);
  const browser = await chromium.launch({
    executablePath: chromiumPath,
    args: [
      '--headless', '--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage',
      '--disable-background-networking', '--disable-component-update', '--disable-sync',
      '--disable-quic', '--no-first-run',
    ],
  });
  return { server, browser, origin: new URL(server.url).origin };
}

/**
 * One server and browser for all the tests of the calling file: registers its `before` and
 * `after`, and returns the env object they fill in (pass it to `openPage`).
 */
export function browserPerFile() {
  const env = {};
  before(async () => {
    Object.assign(env, await startBrowser());
  });
  after(async () => {
    await stopBrowser(env);
  });
  return env;
}

export async function stopBrowser(env) {
  await env?.browser?.close();
  env?.server?.proc.kill();
}

/**
 * Opens the page (optionally at `suffix`, e.g. a `#fragment`) in a fresh context and returns
 * it with `check()`, which asserts no console error, no uncaught exception and no request
 * outside the page's own origin happened.
 */
export async function openPage(env, suffix = '', { init, viewport, fresh } = {}) {
  // A page opened without a link shows a trace's results in the "All views" tab
  // (`#view=all`), so that a test finds every table and chart of the results on one page;
  // `fresh` opens the page as a visitor does, in the overview, for the tests of the views.
  if (suffix === '' && !fresh) suffix = '#view=all';
  const context = await env.browser.newContext({ viewport: viewport ?? { width: 1280, height: 900 }, acceptDownloads: true });
  if (init) await context.addInitScript(init);
  const page = await context.newPage();
  const errors = [];
  const foreign = [];
  page.on('console', (msg) => {
    if (msg.type() === 'error') errors.push(msg.text());
  });
  page.on('pageerror', (e) => errors.push(`uncaught: ${e.message}`));
  page.on('request', (req) => {
    const url = req.url();
    if (!(url.startsWith(env.origin + '/') || url.startsWith('data:') || url.startsWith('blob:'))) foreign.push(url);
  });
  await page.goto(env.server.url + suffix);
  const check = async () => {
    assert.deepEqual(errors, [], 'console errors');
    assert.deepEqual(foreign, [], 'requests outside the page origin');
    await context.close();
  };
  return { page, context, check, errors };
}

/**
 * Every row of a virtualised table (data_table.rs draws only the rows in view): scrolls its
 * box from top to bottom, collecting each row's cell texts by `aria-rowindex`, and returns
 * them in order. Fails if the rows found do not add up to the table's `aria-rowcount`.
 */
export async function allTableRows(page, testId) {
  const table = page.getByTestId(testId);
  return table.evaluate(async (root) => {
    const box = root.querySelector('.vscroll');
    const grid = root.querySelector('[aria-rowcount]');
    if (!grid || !box) return []; // an empty table is a sentence, not a grid
    const want = Number(grid.getAttribute('aria-rowcount')) - 1; // minus the header row
    const rows = new Map();
    const frame = () => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
    const collect = () => {
      for (const tr of root.querySelectorAll('tbody tr[aria-rowindex]')) {
        rows.set(Number(tr.getAttribute('aria-rowindex')), [...tr.querySelectorAll('td')].map((td) => td.textContent.trim()));
      }
    };
    box.scrollTop = 0;
    await frame();
    collect();
    while (rows.size < want && box.scrollTop + box.clientHeight < box.scrollHeight) {
      box.scrollTop += Math.max(1, box.clientHeight - 30);
      await frame();
      collect();
    }
    box.scrollTop = 0;
    if (rows.size !== want) throw new Error(`${rows.size} of ${want} rows found while scrolling`);
    return [...rows.entries()].sort((a, b) => a[0] - b[0]).map(([, cells]) => cells);
  });
}

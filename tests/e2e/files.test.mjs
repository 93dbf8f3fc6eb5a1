// End-to-end tests of opening files (Open button, drop), the fusion-group view, share links
// and exports. Expected figures come from the command line on the same files.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { dist, openPage, startBrowser, stopBrowser, cli, cliText, digits, root, screenshotDir } from './harness.mjs';

const EXAMPLE = path.join(root, 'tests', 'data', 'graphs', 'worked_example.json');
const TRACE = path.join(root, 'tests', 'data', 'traces', 'amd', 'torch_compile_triton_mi300x.json.gz');

let env;
before(async () => {
  env = await startBrowser();
  mkdirSync(screenshotDir, { recursive: true });
});
after(async () => {
  await stopBrowser(env);
});

async function exact(page, id) {
  return (await page.getByTestId(id).locator('.exact').textContent()).trim();
}

/** Asserts the headline figures equal the CLI's report for the same graph. */
async function assertReport(page, report) {
  assert.equal(await exact(page, 'group-count'), digits(report.groups.length));
  assert.equal(await exact(page, 'unfused-total'), `${digits(report.unfused.total)} bytes`);
  assert.equal(await exact(page, 'fused-total'), `${digits(report.fused.total)} bytes`);
  assert.equal(await exact(page, 'savings-pct'), `${report.savings_pct.toFixed(2)} %`);
  assert.equal(await page.locator('[data-testid=group-boxes] [data-group]').count(), report.groups.length);
}

async function openExample(page) {
  await page.getByTestId('unfused-total').waitFor();
  await page.setInputFiles('#file-input', EXAMPLE);
  await page.getByTestId('results-title').getByText('Op graph worked_example.json').waitFor();
}

test('Open button: a graph file shows its groups, figures and op details', async () => {
  const { page, check } = await openPage(env);
  await openExample(page);
  const report = cli(['graph', 'tests/data/graphs/worked_example.json', '--json', '--details']);
  await assertReport(page, report);
  // The answer first: the command line's verdict and findings (at the page's default chip).
  const text = cliText(['graph', 'tests/data/graphs/worked_example.json']).split('\n');
  assert.equal(await page.getByTestId('verdict').textContent(), text[0]);
  const findings = text.slice(3, text.indexOf('', 3)).map((l) => l.replace(/^ *\d+\. +\S+ \S+ {2}/, '').replace(/ \[Fusion\]$/, ''));
  assert.ok(findings.length >= 2, text.join('\n'));
  assert.deepEqual(await page.getByTestId('finding').locator('.finding-text').allTextContents(), findings);
  // Each group box holds exactly that group's ops.
  for (const [g, ops] of report.groups.entries()) {
    const names = await page.locator(`[data-group="${g + 1}"] .op-name`).allTextContents();
    assert.deepEqual(names, ops);
  }
  // Selecting an op (keyboard) shows its tensors and why it joined.
  await page.getByRole('button', { name: /^relu/ }).focus();
  await page.keyboard.press('Enter');
  const details = page.getByTestId('op-details');
  await details.waitFor();
  const relu = report.op_details.find((d) => d.name === 'relu');
  assert.equal((await page.getByTestId('op-reason').textContent()).trim(), `Why here: ${relu.reason}`);
  assert.match(await details.textContent(), /y2.*8,388,608 bytes/s);
  await page.screenshot({ path: path.join(screenshotDir, 'graph-open.png'), fullPage: true });
  await check();
});

test('a file dropped anywhere in the window is opened', async () => {
  const { page, check } = await openPage(env);
  await page.getByTestId('unfused-total').waitFor();
  const text = readFileSync(EXAMPLE, 'utf8');
  await page.evaluate((content) => {
    const dt = new DataTransfer();
    dt.items.add(new File([content], 'dropped.json', { type: 'application/json' }));
    // On the page's margin, outside every element of the app: the window takes the drop.
    const target = document.documentElement;
    target.dispatchEvent(new DragEvent('dragover', { dataTransfer: dt, bubbles: true, cancelable: true }));
    target.dispatchEvent(new DragEvent('drop', { dataTransfer: dt, bubbles: true, cancelable: true }));
  }, text);
  await page.getByTestId('results-title').getByText('Op graph dropped.json').waitFor();
  await assertReport(page, cli(['graph', 'tests/data/graphs/worked_example.json', '--json']));
  await check();
});

test('malformed and unknown files are explained and the page keeps its figures', async () => {
  const { page, check } = await openPage(env);
  await page.getByTestId('unfused-total').waitFor();
  const before = await exact(page, 'unfused-total');

  await page.setInputFiles('#file-input', { name: 'broken.json', mimeType: 'application/json', buffer: Buffer.from('[{"name": "a", "op_type": "matmul", "inputs": [') });
  const notice = page.getByTestId('notice');
  await notice.getByText('broken.json is an op graph but cannot be analysed: malformed JSON at line 1').waitFor();
  assert.equal(await notice.getAttribute('role'), 'alert');
  assert.equal(await exact(page, 'unfused-total'), before);

  await page.setInputFiles('#file-input', { name: 'cycle.json', mimeType: 'application/json', buffer: Buffer.from(
    '[{"name":"a","op_type":"elementwise","inputs":["t2"],"output":"t1","shape":[4],"bytes_per_element":2},' +
    ' {"name":"b","op_type":"elementwise","inputs":["t1"],"output":"t2","shape":[4],"bytes_per_element":2}]') });
  await notice.getByText('the graph has a cycle: a -> b -> a').waitFor();

  await page.setInputFiles('#file-input', { name: 'notes.txt', mimeType: 'text/plain', buffer: Buffer.from('hello world\n') });
  await notice.getByText('notes.txt cannot be opened: it is text starting with "hello world"').waitFor();
  await page.screenshot({ path: path.join(screenshotDir, 'file-error.png'), fullPage: true });

  // A Kineto trace is recognised (through gzip) and shown in the trace view; closing it
  // brings back the figures of the graph as they were.
  await page.setInputFiles('#file-input', TRACE);
  await page.getByTestId('results-title').getByText('Trace torch_compile_triton_mi300x.json.gz').waitFor();
  await page.getByRole('button', { name: 'Close the trace view' }).click();
  assert.equal(await exact(page, 'unfused-total'), before);
  await check();
});

test('a share link restores a graph and its selected op in a fresh page', async () => {
  const first = await openPage(env);
  await openExample(first.page);
  await first.page.getByRole('button', { name: /^relu/ }).click();
  await first.page.getByTestId('share-button').click();
  const url = await first.page.getByTestId('share-url').inputValue();
  assert.match(url, /#s=2\.[A-Za-z0-9_-]+$/);
  const size = await first.page.getByTestId('share-size').textContent();
  assert.match(size, new RegExp(`^Link size: ${digits(url.length)} bytes\\. `));
  await first.check();

  const second = await openPage(env, url.slice(env.server.url.length));
  await second.page.getByTestId('results-title').getByText('Op graph worked_example.json').waitFor();
  await assertReport(second.page, cli(['graph', 'tests/data/graphs/worked_example.json', '--json']));
  // The selected op comes back too.
  await second.page.getByTestId('op-details').getByText('relu (elementwise) — group 1').waitFor();
  await second.check();
});

test('a share link restores changed transformer inputs', async () => {
  const first = await openPage(env);
  await first.page.getByTestId('unfused-total').waitFor();
  await first.page.fill('#in-seq-len', '512');
  await first.page.selectOption('#in-dtype', '1');
  await first.page.getByText('S = 512, H = 4096, NH = 32, 1 byte per element').waitFor();
  await first.page.getByTestId('share-button').click();
  const url = await first.page.getByTestId('share-url').inputValue();
  await first.check();

  const second = await openPage(env, url.slice(env.server.url.length));
  await second.page.getByText('S = 512, H = 4096, NH = 32, 1 byte per element').waitFor();
  assert.equal(await second.page.inputValue('#in-seq-len'), '512');
  const report = cli(['transformer', '--seq-len', '512', '--hidden', '4096', '--heads', '32', '--dtype-bytes', '1', '--json']);
  assert.equal(await exact(second.page, 'unfused-total'), `${digits(report.unfused.total)} bytes`);
  await second.check();
});

test('a damaged or newer share link says why and shows the default block', async () => {
  for (const [fragment, why] of [
    ['#s=9.abc', 'made by a newer version of fusionscope (format 9); this page reads up to 2'],
    ['#s=1.@@@', 'its data is not base64url'],
    ['#s=1.AAAA', 'its data does not inflate'],
  ]) {
    const { page, check } = await openPage(env, fragment);
    await page.getByTestId('notice').getByText(why).waitFor();
    assert.equal(await exact(page, 'unfused-total'), '2,348,810,240 bytes');
    await check();
  }
});

test('exports: JSON equals the command line, CSV, Markdown and SVG are complete', async () => {
  const { page, check } = await openPage(env);
  await openExample(page);
  const download = async (selector) => {
    const [d] = await Promise.all([page.waitForEvent('download'), page.click(selector)]);
    return { name: d.suggestedFilename(), text: readFileSync(await d.path(), 'utf8') };
  };
  const json = await download('[data-export=".json"]');
  assert.equal(json.name, 'worked_example.json');
  // The export holds the details: it is `--json --details`, byte for byte.
  assert.equal(json.text, cliText(['graph', 'tests/data/graphs/worked_example.json', '--json', '--details']));
  const csv = await download('[data-export="-groups.csv"]');
  assert.equal(csv.name, 'worked_example-groups.csv');
  const lines = csv.text.trim().split('\n');
  assert.equal(lines[0], '#,kind,ops,read (fused),written (fused),fused total,unfused total,saved');
  assert.equal(lines.length, 1 + JSON.parse(json.text).groups.length);
  const md = await download('[data-export=".md"]');
  assert.match(md.text, /^\*\*4 ops in 2 fusion groups\*\*/);
  const svg = await download('[data-export="-groups.svg"]');
  assert.match(svg.text, /^<svg xmlns="http:\/\/www.w3.org\/2000\/svg"/);
  // The exported chart is the one on the page: same bars, same labels.
  assert.equal(svg.text.match(/<rect /g).length, await page.locator('[data-testid=chart-groups] svg rect').count());
  for (const label of await page.locator('[data-testid=chart-groups] svg text').allTextContents()) {
    assert.ok(svg.text.includes(`>${label}</text>`), label);
  }
  await check();
});

test('a 20,000-op graph opens, matches the command line and draws a bounded page', async () => {
  // A layered graph: each op reads the previous output and sometimes one from further back.
  const types = ['matmul', 'elementwise', 'elementwise', 'reduction', 'reshape', 'elementwise'];
  const ops = [];
  for (let i = 0; i < 20000; i++) {
    const inputs = i === 0 ? ['x'] : [`t${i - 1}`];
    if (i > 7 && i % 5 === 0) inputs.push(`t${i - 7}`);
    if (types[i % types.length] === 'matmul') inputs.push(`w${i}`);
    ops.push({ name: `op${i}`, op_type: types[i % types.length], inputs, output: `t${i}`, shape: [64, 128 + (i % 7) * 64], bytes_per_element: 2 });
  }
  const file = path.join(screenshotDir, 'big-graph.json');
  const text = JSON.stringify({ ops });
  writeFileSync(file, text);
  const report = cli(['graph', file, '--json']);

  const { page, check } = await openPage(env);
  await page.getByTestId('unfused-total').waitFor();
  const start = Date.now();
  await page.setInputFiles('#file-input', file);
  await page.getByTestId('results-title').getByText('Op graph big-graph.json').waitFor({ timeout: 30000 });
  const seconds = (Date.now() - start) / 1000;
  assert.ok(seconds < 20, `opening took ${seconds} s`);
  assert.equal(await exact(page, 'group-count'), digits(report.groups.length));
  assert.equal(await exact(page, 'unfused-total'), `${digits(report.unfused.total)} bytes`);
  assert.equal(await exact(page, 'fused-total'), `${digits(report.fused.total)} bytes`);
  assert.equal(await exact(page, 'savings-pct'), `${report.savings_pct.toFixed(2)} %`);
  // The page is bounded: too many ops to draw, so they are listed (a virtualised table), 40
  // groups charted, and the groups table draws a window of its rows.
  assert.equal(await page.locator('[data-testid=group-boxes]').count(), 0);
  assert.match(await page.getByTestId('list-why').textContent(), /20,000 ops/);
  assert.ok(await page.getByTestId('table-ops').locator('tbody tr[aria-rowindex]').count() < 80);
  assert.equal(await page.locator('[data-testid=chart-groups] svg rect').count(), 4 + 4 * 40);
  assert.ok(await page.locator('[data-testid=groups-table] tbody tr[aria-rowindex]').count() < 80);
  await page.screenshot({ path: path.join(screenshotDir, 'big-graph.png') });
  await check();
});

test('reading runs in a worker with progress, and Cancel stops it', async () => {
  // A copy of the page whose reader worker is slowed down (400 ms per read of at most 4 MiB,
  // whether it reads the file's stream or slices of it), so that the test can see the
  // progress and cancel before the end.
  const slowDist = mkdtempSync(path.join(os.tmpdir(), 'fusionscope-slow-'));
  cpSync(dist, slowDist, { recursive: true });
  const loader = path.join(slowDist, 'fusionscope-reader_loader.js');
  writeFileSync(loader, `{ const slow = (proto, name) => { const read = proto[name];
      proto[name] = function (...args) {
        return new Promise((done) => setTimeout(done, 400)).then(() => read.apply(this, args)); }; };
    slow(Blob.prototype, 'arrayBuffer'); slow(ReadableStreamBYOBReader.prototype, 'read'); }\n` +
    readFileSync(loader, 'utf8'));
  const big = path.join(screenshotDir, 'padded-graph.json');
  // 40 MiB: the worked example followed by whitespace (still a valid graph).
  writeFileSync(big, readFileSync(EXAMPLE, 'utf8') + ' '.repeat(40 * 1024 * 1024));
  const slow = await startBrowser(slowDist);
  try {
    const { page, check } = await openPage(slow);
    await page.getByTestId('unfused-total').waitFor();
    await page.setInputFiles('#file-input', big);
    const progress = page.getByTestId('reading');
    await progress.getByText(/MiB of 40\.00 MiB, [0-9.]+ MB\/s/).waitFor();
    assert.match(await progress.textContent(), /Reading padded-graph\.json/);
    // The page stays responsive while the worker reads: typing recomputes at once.
    await page.fill('#in-heads', '16');
    await page.getByTestId('results-title').getByText('NH = 16').waitFor();
    await page.screenshot({ path: path.join(screenshotDir, 'reading.png') });
    await page.getByTestId('cancel-read').click();
    await page.getByTestId('notice').getByText('Reading padded-graph.json was cancelled; nothing changed.').waitFor();
    assert.equal(await progress.count(), 0);
    assert.match(await page.getByTestId('results-title').textContent(), /NH = 16/);
    // A later file opens normally.
    await page.setInputFiles('#file-input', EXAMPLE);
    await page.getByTestId('results-title').getByText('Op graph worked_example.json').waitFor();
    await check();
  } finally {
    await stopBrowser(slow);
    rmSync(slowDist, { recursive: true, force: true });
    rmSync(big, { force: true });
  }
});

test('the padded 40 MiB graph opens through the worker at full speed', async () => {
  const big = path.join(screenshotDir, 'padded-graph-fast.json');
  writeFileSync(big, readFileSync(EXAMPLE, 'utf8') + ' '.repeat(40 * 1024 * 1024));
  try {
    const { page, check } = await openPage(env);
    await page.getByTestId('unfused-total').waitFor();
    await page.setInputFiles('#file-input', big);
    await page.getByTestId('results-title').getByText('Op graph padded-graph-fast.json').waitFor({ timeout: 20000 });
    await assertReport(page, cli(['graph', 'tests/data/graphs/worked_example.json', '--json']));
    await check();
  } finally {
    rmSync(big, { force: true });
  }
});

test('the page works from a sub-folder of a static host', async () => {
  const host = mkdtempSync(path.join(os.tmpdir(), 'fusionscope-host-'));
  cpSync(dist, path.join(host, 'tools', 'fusionscope'), { recursive: true });
  writeFileSync(path.join(host, 'index.html'), '<!doctype html><a href="tools/fusionscope/">fusionscope</a>');
  const sub = await startBrowser(host);
  try {
    const { page, check } = await openPage(sub, 'tools/fusionscope/');
    await page.getByTestId('unfused-total').getByText('2,348,810,240 bytes').waitFor();
    await page.setInputFiles('#file-input', EXAMPLE);
    await page.getByTestId('results-title').getByText('Op graph worked_example.json').waitFor();
    await check();
  } finally {
    await stopBrowser(sub);
    rmSync(host, { recursive: true, force: true });
  }
});

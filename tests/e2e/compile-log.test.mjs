// End-to-end tests of torch.compile logs (TORCH_TRACE) on the page: a log alone lists
// Inductor's kernels with their exact nodes and bytes; dropped with the profiler trace of its
// run, in either order, its kernels get their calls and time in the trace's Fusion view, the
// figures of `fusionscope trace TRACE --compile-log LOG --json`.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { browserPerFile, openPage, cli, allTableRows, digits, root, screenshotDir } from './harness.mjs';

const REL = 'tests/data/compiled';
const compiled = path.join(root, REL);
const env = browserPerFile();

test('a compile log alone lists every kernel with its exact nodes and bytes', async () => {
  const { page, check } = await openPage(env, '', { viewport: { width: 1440, height: 900 } });
  await page.setInputFiles('#file-input', path.join(compiled, 'torch_block_cpu.compile.log.gz'));
  const panel = page.getByTestId('compile-log-panel');
  await panel.waitFor();
  const line = await page.getByTestId('compile-log-line').textContent();
  assert.ok(line.startsWith('1 compiled graph and 9 kernels with their exact post-grad nodes (Inductor provenance)'), line);
  const notice = await page.getByTestId('notice').textContent();
  assert.ok(notice.includes('torch_block_cpu.compile.log.gz is a torch.compile log of 9 kernels'), notice);
  const want = cli(['compile-log', `${REL}/torch_block_cpu.compile.log.gz`, '--json']).log.graphs[0].kernels;
  const rows = await allTableRows(page, 'table-compiled-kernels');
  assert.equal(rows.length, want.length);
  // graph, kernel (with its debug handle), kind, nodes.
  assert.deepEqual(rows.map((r) => [r[0], r[1], r[3]]), want.map((k) => ['0/0', `${k.name}:${k.handle}`, digits(k.nodes.length)]));
  await page.screenshot({ path: path.join(screenshotDir, 'compile-log-alone.png') });
  await page.getByRole('button', { name: 'Close the compile log' }).click();
  await panel.waitFor({ state: 'detached' });
  await check();
});

for (const order of ['trace first', 'log first']) {
  test(`a compile log dropped with its trace (${order}) gives the CLI's joined kernels`, async () => {
    const { page, check } = await openPage(env, '', { viewport: { width: 1440, height: 900 } });
    const files = [path.join(compiled, 'torch_convnet_cpu.trace.json.gz'), path.join(compiled, 'torch_convnet_cpu.compile.log.gz')];
    await page.setInputFiles('#file-input', order === 'trace first' ? files : files.reverse());
    await page.getByTestId('results-title').getByText('Trace torch_convnet_cpu.trace.json.gz').waitFor();
    // A CPU run's overview speaks of the CPU, as `trace` prints it.
    const { verdict } = cli(['trace', `${REL}/torch_convnet_cpu.trace.json.gz`, '--json']);
    assert.ok(/^CPU: .* of CPU time in \d+ kernels; CPU busy /.test(verdict.text), verdict.text);
    assert.equal((await page.getByTestId('verdict').textContent()).trim(), verdict.text);
    await page.getByRole('tab', { name: 'Fusion' }).click();
    const table = page.getByTestId('table-compiled-kernels');
    await table.waitFor();
    const want = cli(['trace', `${REL}/torch_convnet_cpu.trace.json.gz`, '--compile-log', `${REL}/torch_convnet_cpu.compile.log.gz`, '--json']).compiled_kernels;
    assert.ok(want.line.includes('6 of 6 ran in the trace (3 compiled regions)'), want.line);
    const rows = await allTableRows(page, 'table-compiled-kernels');
    // graph, kernel, kind, calls: every kernel ran three times.
    assert.deepEqual(rows.map((r) => r.slice(0, 4)), want.kernels.map((k) => [k.graph, k.kernel, k.kind, digits(k.calls)]));
    assert.ok(rows.every((r) => r[3] === '3'));
    if (order === 'trace first') {
      await table.scrollIntoViewIfNeeded();
      await page.screenshot({ path: path.join(screenshotDir, 'compile-log-joined.png') });
    }
    await check();
  });
}

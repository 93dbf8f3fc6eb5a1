import { test } from 'node:test';
import path from 'node:path';
import { browserPerFile, openPage, root, screenshotDir } from './harness.mjs';
const env = browserPerFile();
test('b200 kernels', async () => {
  const { page } = await openPage(env, '', { viewport: { width: 1440, height: 1000 }, fresh: true });
  await page.setInputFiles('#file-input', path.join(root, 'tests/data/traces/nvidia/tracelens_eager_b200.json.gz'));
  await page.getByTestId('results-title').getByText('Trace tracelens_eager_b200.json.gz').waitFor();
  await page.getByRole('tab', { name: 'Kernels & mapping' }).click();
  await page.waitForTimeout(500);
  await page.screenshot({ path: path.join(screenshotDir, 'zz-b200-kernels.png'), fullPage: false });
});
test('vllm amd layers', async () => {
  const { page } = await openPage(env, '', { viewport: { width: 1440, height: 1000 }, fresh: true });
  await page.setInputFiles('#file-input', path.join(root, 'tests/data/traces/amd/vllm_decode_graph_full_replay.json.gz'));
  await page.getByTestId('results-title').getByText('Trace vllm_decode_graph_full_replay.json.gz').waitFor();
  await page.getByRole('tab', { name: 'Layers' }).click();
  await page.waitForTimeout(500);
  await page.screenshot({ path: path.join(screenshotDir, 'zz-vllm-layers.png'), fullPage: true });
});
test('cpu rank', async () => {
  const { page } = await openPage(env, '', { viewport: { width: 1300, height: 900 } });
  await page.setInputFiles('#file-input', [path.join(root, 'tests/data/compiled/jax_block_cpu.xplane.pb'), path.join(root, 'tests/data/compiled/jax_convnet_cpu.xplane.pb')]);
  await page.waitForTimeout(4000);
  await page.screenshot({ path: path.join(screenshotDir, 'zz-cpu-ranks.png'), fullPage: false });
});

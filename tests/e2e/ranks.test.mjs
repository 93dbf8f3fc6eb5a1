// End-to-end tests of the Ranks view: the ranks of one distributed job dropped together (and
// added by later drops) give the figures of `fusionscope ranks --json` on the same files — the
// ranks' timelines and clock offsets, every matched collective, the stragglers — with a strip
// per rank; clicking a rank opens its trace; a share link reopens the view.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { browserPerFile, openPage, cli, allTableRows, digits, duration, root, screenshotDir } from './harness.mjs';

const multirank = path.join(root, 'tests', 'data', 'multirank');
const SHARED = ['hta_sampled_128rank_rank0.json.gz', 'hta_sampled_128rank_rank1.json.gz'];
const SYNTHETIC = [0, 1, 2, 3].map((r) => `synthetic_small/synthetic_rank${r}.json`);
const rel = (f) => `tests/data/multirank/${f}`;
const abs = (f) => path.join(multirank, f);

const env = browserPerFile();

const fixed = (v, places) => (v === null || v === undefined ? '—' : v.toFixed(places));

/** The Ranks view's tables and strips against the CLI's report. */
async function assertAgrees(page, r) {
  await page.getByTestId('results-title').getByText(`Ranks of one job (${r.ranks.length})`).waitFor();
  const ranks = await allTableRows(page, 'table-ranks');
  // The share of the rank's streams' idle time spent waiting on the host, as the CLI's waits give it.
  const hostShare = (w) => {
    const total = w ? w.host_wait_us + w.kernel_wait_us + w.other_us : 0;
    return total > 0 ? `${(100 * w.host_wait_us / total).toFixed(2)} %` : '—';
  };
  assert.deepEqual(ranks.map((row) => [row[0], ...row.slice(3, 9), row[11], row[12], row[13]]),
    r.ranks.map((e) => [digits(e.rank), ...[e.timeline.total_us, e.timeline.busy_us, e.timeline.idle_us].map(duration),
      hostShare(e.waits), ...[e.timeline.computation_us, e.timeline.communication_us].map(duration),
      duration(e.clock.offset_us), digits(e.collectives), digits(e.kernels)]));
  const collectives = await allTableRows(page, 'table-collectives');
  assert.equal(collectives.length, r.collectives.length);
  assert.ok(r.collectives.length > 0);
  assert.deepEqual(collectives.map((row) => [row[0], row[1], row[2], row[5], row[6], row[8], row[11]]),
    r.collectives.map((m) => [m.group, digits(m.seq), m.kind, duration(m.start_skew_us),
      m.last_rank === null || m.last_rank === undefined ? '—' : digits(m.last_rank), duration(m.duration_us), fixed(m.busbw_gbps, 2)]));
  const stragglers = await allTableRows(page, 'table-stragglers');
  assert.deepEqual(stragglers.map((row) => row.slice(0, 3)),
    r.stragglers.map((s) => [digits(s.rank), duration(s.caused_wait_us), digits(s.late_collectives)]));
  // The overview first: the CLI's verdict and findings, in its order, each with its time.
  const panel = page.getByTestId('ranks-panel');
  assert.equal(await panel.getByTestId('verdict').textContent(), r.overview.verdict.text);
  const findings = panel.getByTestId('finding');
  assert.deepEqual(await findings.locator('.finding-text').allTextContents(), r.overview.findings.map((f) => f.text));
  assert.deepEqual(await findings.evaluateAll((ls) => ls.map((l) => Number(l.dataset.timeUs))),
    r.overview.findings.map((f) => f.time_us));
  const strips = page.getByTestId('chart-ranks');
  assert.deepEqual(await strips.locator('g[data-rank]').evaluateAll((gs) => gs.map((g) => g.getAttribute('data-rank'))),
    r.ranks.map((e) => String(e.rank)));
  assert.equal(await strips.locator('rect[data-part="computation"]').count(), r.ranks.length);
}

test('the shared ranks dropped together: the Ranks view equals `ranks --json`; a rank opens its trace and back', async () => {
  const { page, check } = await openPage(env, '', { viewport: { width: 1300, height: 900 } });
  await page.setInputFiles('#file-input', SHARED.map(abs));
  const r = cli(['ranks', ...SHARED.map(rel), '--json']);
  await assertAgrees(page, r);
  // The verdict says whose job and who straggled; the line under it what the verdict does not.
  const verdict = await page.getByTestId('verdict').textContent();
  assert.ok(verdict.startsWith(`2 ranks of one job (world size ${r.world_size})`), verdict);
  const headline = await page.getByTestId('ranks-headline').textContent();
  assert.equal(headline, `${r.collectives.length} collectives matched across the 2 ranks given.`);
  await page.screenshot({ path: path.join(screenshotDir, 'ranks-shared.png'), fullPage: true });
  // The first screen holds the verdict and at least three findings; a finding's button brings
  // its table into view.
  const first = await page.getByTestId('finding').evaluateAll((ls) => ls.map((l) => l.getBoundingClientRect().bottom));
  assert.ok(first.length >= 3 && first.slice(0, 3).every((b) => b <= 900), JSON.stringify(first));
  await page.getByTestId('finding').first().locator('button').click();
  await page.waitForFunction(() => {
    const t = document.querySelector('[data-testid="table-ranks"]').getBoundingClientRect();
    return t.top >= -1 && t.top < window.innerHeight;
  });
  // A rank's strip opens its trace view; the button brings the Ranks view back.
  await page.getByTestId('chart-ranks').locator('g[data-rank="1"] rect').first().click();
  await page.getByTestId('results-title').getByText('Trace hta_sampled_128rank_rank1.json.gz').waitFor();
  await page.getByTestId('show-ranks').click();
  await page.getByTestId('ranks-panel').waitFor();
  // A rank's row opens it too.
  await page.getByTestId('table-ranks').locator('tbody tr[aria-rowindex]').first().click();
  await page.getByTestId('results-title').getByText('Trace hta_sampled_128rank_rank0.json.gz').waitFor();
  await check();
});

test('the synthetic job, dropped in two goes: the later drop joins the job; figures and straggler equal the CLI', async () => {
  const { page, check } = await openPage(env, '', { viewport: { width: 1300, height: 900 } });
  await page.setInputFiles('#file-input', SYNTHETIC.slice(0, 2).map(abs));
  await assertAgrees(page, cli(['ranks', ...SYNTHETIC.slice(0, 2).map(rel), '--json']));
  await page.setInputFiles('#file-input', SYNTHETIC.slice(2).map(abs));
  const r = cli(['ranks', ...SYNTHETIC.map(rel), '--json']);
  await assertAgrees(page, r);
  // SyntheticJob::small: rank 2 straggles, rank 3's clock is 2.5 s ahead.
  assert.equal(r.stragglers[0].rank, 2);
  const headline = await page.getByTestId('ranks-headline').textContent();
  assert.ok((await page.getByTestId('verdict').textContent()).includes('the others wait longest for rank 2'));
  assert.ok(Math.abs(r.ranks[3].clock.offset_us - 2_500_000) < 1, `${r.ranks[3].clock.offset_us}`);
  await page.screenshot({ path: path.join(screenshotDir, 'ranks-synthetic.png'), fullPage: true });
  // A share link carries the view (under 8 KB): it reopens with the same figures.
  const rows = await allTableRows(page, 'table-ranks');
  await page.getByTestId('share-button').click();
  const url = await page.getByTestId('share-url').inputValue();
  assert.ok(url.length < 8 * 1024, `${url.length} bytes`);
  await check();
  const second = await openPage(env, url.slice(env.server.url.length));
  await assertAgrees(second.page, r);
  assert.equal(await second.page.getByTestId('ranks-headline').textContent(), headline);
  assert.deepEqual(await allTableRows(second.page, 'table-ranks'), rows);
  await second.check();
});

test('a rank removed while the Ranks view shows: the job of the others, equal to the CLI on those files', async () => {
  const { page, check } = await openPage(env, '', { viewport: { width: 1300, height: 900 } });
  await page.setInputFiles('#file-input', SYNTHETIC.map(abs));
  await assertAgrees(page, cli(['ranks', ...SYNTHETIC.map(rel), '--json']));
  await page.getByRole('button', { name: `Remove ${path.basename(SYNTHETIC[2])}` }).click();
  const rest = [SYNTHETIC[0], SYNTHETIC[1], SYNTHETIC[3]];
  const r3 = cli(['ranks', ...rest.map(rel), '--json']);
  assert.deepEqual(r3.ranks.map((e) => e.rank), [0, 1, 3]);
  await assertAgrees(page, r3);
  await check();
});

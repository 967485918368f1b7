// The customer console's figures, in headless Chromium against `palisade api` on loopback:
//   1. First load: bytes transferred (compressed, headers included) for /console/ and its assets,
//      and for the first domain list after sign-in (target: the page ≤ 150 KB).
//   2. Navigation → interactive domain list for an account of 1,000 domains (the first page of
//      100 rows shown, its links focusable), signed in already (target ≤ 1 s).
//   3. The uptime page of a domain with 30 days of reports from 10 nodes: from the answer's arrival
//      in the page to both charts drawn, per resolution (target ≤ 300 ms).
// Each timing is the median of RUNS (default 5) fresh page loads.
//   node --import tsx bench/console.ts
import { open } from 'lmdb';
import type { Browser } from 'playwright-core';
import { DOMAIN_DEFAULTS } from '../src/model/domain.ts';
import { openStore } from '../src/store/index.ts';
import { launchChromium } from '../test/helpers/console-browser.ts';
import { runAdminCli, startServe, stopProcess } from '../test/helpers/spawn-palisade.ts';
import { removeTempDirs, tempDir } from '../test/helpers/temp.ts';

const DOMAINS = Number(process.env.BENCH_CONSOLE_DOMAINS ?? 1000);
const NODES = 10;
const RUNS = Number(process.env.BENCH_CONSOLE_RUNS ?? 5);
const MEASURED = 'load0.example';

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

/** 1,000 domains of one account; 30 days × 10 nodes of uptime for the first (hours, then the last two hours by minute). */
async function seed(dataDir: string): Promise<number> {
  const store = openStore({ dataDir });
  const user = await store.createUser({ name: 'console', email: 'console@example.org', limits: { max_domains: DOMAINS + 10 } });
  for (let i = 0; i < DOMAINS; i += 250) {
    await Promise.all(
      Array.from({ length: Math.min(250, DOMAINS - i) }, (_, j) =>
        store.createZone((ctx) => ({ domain: { ...DOMAIN_DEFAULTS, backend: '198.51.100.1', domain: `load${i + j}.example`, tags: ['bench'], ownerId: user.id, ns_active: false, created: ctx.now, updated: ctx.now, revision: 0 }, records: [] })),
      ),
    );
  }
  for (let n = 1; n <= NODES; n++) await store.createNode({ name: `n${n}`, ipv4: `198.51.100.${n}`, ipv6: null, location: 'DE', status: 'active' });
  const measure = (c: number, failed: number) => ({ c, u: c - failed, r: 20, o: 20, ch: { 0: c }, rh: { 8: 12, 9: 6, 11: 2 } });
  const now = Date.now();
  const rows = [];
  for (let n = 1; n <= NODES; n++) {
    // An outage of a few hours on each node, at a different time for each, so the charts mark some.
    for (let h = 30 * 24; h >= 2; h--) rows.push({ domain: MEASURED, node: n, minute: now - (now % 3_600_000) - h * 3_600_000, measure: measure(720, h % 97 === n ? 300 : 0) });
    for (let m = 119; m >= 0; m--) rows.push({ domain: MEASURED, node: n, minute: now - (now % 60_000) - m * 60_000, measure: measure(12, 0) });
  }
  await store.addUptime(rows);
  await store.close();
  // The endpoint shows no period before the domain's creation: registered 31 days ago, as far as it knows.
  const db = open({ path: dataDir, compression: false });
  const head = db.get(['zone', MEASURED]) as { domain: { created: string } };
  head.domain.created = new Date(now - 31 * 86_400_000).toISOString();
  await db.put(['zone', MEASURED], head);
  await db.close();
  return user.id;
}

async function firstLoad(browser: Browser, base: string, key: string): Promise<void> {
  const context = await browser.newContext();
  const page = await context.newPage();
  const sizes: Array<{ url: string; bytes: number; phase: string }> = [];
  let phase = 'page';
  page.on('requestfinished', (request) => {
    const at = phase;
    void request.sizes().then((s) => sizes.push({ url: request.url(), bytes: s.responseBodySize + s.responseHeadersSize, phase: at }));
  });
  await page.goto(`${base}/console/`, { waitUntil: 'networkidle' });
  phase = 'sign-in';
  await page.getByLabel('API key').fill(key);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.locator('#domain-list tbody tr').first().waitFor();
  await page.waitForLoadState('networkidle');
  await context.close();
  const sum = (which: string) => sizes.filter((s) => s.phase === which).reduce((n, s) => n + s.bytes, 0);
  for (const s of sizes) console.log(`  ${s.phase.padEnd(8)} ${(s.bytes / 1024).toFixed(1).padStart(7)} KB  ${new URL(s.url).pathname}${new URL(s.url).search}`);
  console.log(`first load of /console/: ${(sum('page') / 1024).toFixed(1)} KB transferred (${sizes.filter((s) => s.phase === 'page').length} responses; target ≤ 150 KB)`);
  console.log(`sign-in and the first page of ${DOMAINS.toLocaleString()} domains: ${(sum('sign-in') / 1024).toFixed(1)} KB more`);
}

async function domainList(browser: Browser, base: string, key: string): Promise<void> {
  const times: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const context = await browser.newContext();
    // Signed in already: the key in the tab's sessionStorage before the page's own script runs.
    await context.addInitScript((k) => sessionStorage.setItem('palisade.apiKey', k), key);
    const page = await context.newPage();
    await page.goto(`${base}/console/#/domains`, { waitUntil: 'commit' });
    await page.locator('#domain-list tbody tr:nth-child(100) th a').waitFor();
    // Time since the navigation started, read in the page when the list's last row is there.
    times.push(await page.evaluate(() => performance.now()));
    await context.close();
  }
  console.log(`navigation → interactive domain list (${DOMAINS.toLocaleString()} domains, first 100 rows): median ${median(times).toFixed(0)} ms (runs: ${times.map((t) => t.toFixed(0)).join(', ')}; target ≤ 1000 ms)`);
}

async function uptimePage(browser: Browser, base: string, key: string): Promise<void> {
  for (const resolution of ['minute', 'hour', 'day'] as const) {
    const times: number[] = [];
    const fromNavigation: number[] = [];
    let periods = 0;
    for (let i = 0; i < RUNS; i++) {
      const context = await browser.newContext();
      await context.addInitScript((k) => sessionStorage.setItem('palisade.apiKey', k), key);
      const page = await context.newPage();
      await page.goto(`${base}/console/#/domains/${MEASURED}/uptime`);
      await page.locator('figure.chart canvas').nth(1).waitFor();
      if (resolution !== 'minute') {
        await page.evaluate(() => performance.clearMarks());
        const started = await page.evaluate(() => performance.now());
        await page.getByLabel('Per', { exact: true }).selectOption(resolution);
        await page.waitForFunction(() => performance.getEntriesByName('palisade:chart-drawn').length >= 2);
        const drawn = await page.evaluate(() => performance.getEntriesByName('palisade:chart-drawn')[1]!.startTime);
        times.push(drawn - started);
      } else {
        const [render, total] = await page.evaluate(() => {
          const data = performance.getEntriesByName('palisade:uptime-data')[0]!.startTime;
          const drawn = performance.getEntriesByName('palisade:chart-drawn');
          // Marks are timed from the navigation's start.
          return [drawn[drawn.length - 1]!.startTime - data, drawn[drawn.length - 1]!.startTime];
        });
        times.push(render);
        fromNavigation.push(total);
      }
      periods = await page.evaluate(
        async ([d, r]) => {
          const k = sessionStorage.getItem('palisade.apiKey')!;
          const body = (await (await fetch(`/domains/${d}/uptime`, { headers: { 'x-auth-key': k } })).json()) as Record<string, { periods: unknown[] }>;
          return body[r]!.periods.length;
        },
        [MEASURED, resolution] as const,
      );
      await context.close();
    }
    const note = `${periods} periods, ${resolution === 'minute' ? 'the answer in the page' : 'choosing the resolution'} → both charts drawn`;
    console.log(`uptime page, 30 days × ${NODES} nodes, per ${resolution}: ${note}: median ${median(times).toFixed(0)} ms (runs: ${times.map((t) => t.toFixed(0)).join(', ')}; target ≤ 300 ms)`);
    if (fromNavigation.length) console.log(`  navigation → both charts drawn (page, scripts, sign-in check, the API's answer included): median ${median(fromNavigation).toFixed(0)} ms`);
  }
}

const dataDir = tempDir();
const owner = await seed(dataDir);
const env = { PALISADE_DATA_DIR: dataDir };
const key = (JSON.parse((await runAdminCli(env, ['key', 'create', '--user', String(owner), '--label', 'bench'])).stdout) as { api_key: string }).api_key;
const api = await startServe(env, 60_000, 'api');
const browser = await launchChromium();
try {
  await firstLoad(browser, api.url, key);
  await domainList(browser, api.url, key);
  await uptimePage(browser, api.url, key);
} finally {
  await browser.close();
  await stopProcess(api);
  removeTempDirs();
}

// What a scraper sees at /metrics of the real processes — `palisade serve`, `palisade dns` with two
// workers and `palisade edge` with two workers, after some traffic — is valid Prometheus text
// (each family's HELP and TYPE once, before its samples; no series twice; histograms cumulative,
// +Inf equal to the count), and every family keeps its name, type, help and label names
// (dashboards and alerts are written against them). The families are kept in
// test/fixtures/metrics-families.json, recorded from the processes themselves: run this file with
// METRICS_FAMILIES_RECORD=1 to write it again after a deliberate change, and review the diff.
import { readFileSync, writeFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dig } from '../helpers/dig.ts';
import { readPrometheusText, type SeenFamily } from '../helpers/prometheus-text.ts';
import { freePort } from '../helpers/redis-server.ts';
import { runAdminCli, startEdge, startNameServer, startServe, stopProcess, type RunningEdge, type RunningNameServer, type RunningServer } from '../helpers/spawn-palisade.ts';
import { removeTempDirs, tempDir } from '../helpers/temp.ts';
import { until } from '../helpers/until.ts';

const FIXTURE = new URL('../fixtures/metrics-families.json', import.meta.url);
const RECORD = process.env.METRICS_FAMILIES_RECORD === '1';

let api: RunningServer;
let serve: RunningServer;
let ns: RunningNameServer;
let edge: RunningEdge;
const scraped: Record<string, string> = {};

const admin = async (env: Record<string, string>, args: string[]) => JSON.parse((await runAdminCli(env, args)).stdout) as Record<string, any>;
const text = async (url: string) => (await fetch(url)).text();
const metricsOf = (notifyUrl: string) => text(notifyUrl.replace(/\/notify$/, '/metrics'));
const sumOf = (metrics: string, family: string) => [...readPrometheusText(metrics).samples].filter(([series]) => series.startsWith(`${family}{`)).reduce((a, [, n]) => a + n, 0);
const families = (name: string): SeenFamily[] => readPrometheusText(scraped[name]!).families.sort((a, b) => a.name.localeCompare(b.name));

/** A request to the edge at `base` for a name it does not serve (counted by class and protocol). */
const unknownHost = (base: string) => fetch(base, { headers: { host: 'nobody.example' } }).then((r) => r.arrayBuffer());

beforeAll(async () => {
  const apiEnv = { PALISADE_DATA_DIR: tempDir(), PALISADE_API_PORT: String(await freePort()) };
  await admin(apiEnv, ['node', 'add', '--name', 'e1', '--ipv4', '127.0.0.1', '--location', 'DE']);
  const nsNotify = await freePort();
  const edgeNotify = await freePort();
  const nsConsumer = await admin(apiEnv, ['consumer', 'add', '--name', 'ns1', '--url', `http://127.0.0.1:${nsNotify}/notify`]);
  const edgeConsumer = await admin(apiEnv, ['consumer', 'add', '--name', 'edge-e1', '--node', '1', '--url', `http://127.0.0.1:${edgeNotify}/notify`]);
  api = await startServe(apiEnv, 30_000, 'api');
  const sync = (c: Record<string, any>, port: number) => ({ PALISADE_SYNC_URL: api.url, PALISADE_SYNC_TOKEN: c.token, PALISADE_SYNC_SECRET: c.secret, PALISADE_SYNC_PORT: String(port), PALISADE_SYNC_POLL_MS: '500' });
  [serve, ns, edge] = await Promise.all([
    startServe({ PALISADE_DATA_DIR: tempDir() }),
    startNameServer({ PALISADE_DATA_DIR: tempDir(), PALISADE_DNS_WORKERS: '3', ...sync(nsConsumer, nsNotify) }),
    startEdge({ PALISADE_DATA_DIR: tempDir(), PALISADE_EDGE_NODE: '1', PALISADE_EDGE_NAME: 'e1', PALISADE_EDGE_WORKERS: '2', ...sync(edgeConsumer, edgeNotify) }),
  ]);
  // The primary and both DNS workers live (PALISADE_DNS_WORKERS counts the primary), so that the workers' figures are in the primary's.
  await until('both DNS workers live', async () => {
    const health = (await (await fetch(ns.notifyUrl.replace(/\/notify$/, '/healthz'))).json()) as { workers?: Array<{ live: boolean }> };
    return health.workers?.length === 3 && health.workers.every((w) => w.live);
  }, 30_000);
  // Traffic, so that the labelled families have series: queries over UDP and TCP, edge requests.
  for (const port of [serve.dnsPort, ns.dnsPort]) {
    await dig(port, 'nothing.example', 'A');
    await dig(port, 'nothing.example', 'SOA', ['+tcp']);
  }
  for (let i = 0; i < 4; i++) await Promise.all([unknownHost(edge.httpUrl), unknownHost(serve.edgeUrl!)]);
  // The edge workers send their figures every half second.
  await until('the edge workers\' requests in the primary\'s /metrics', async () => sumOf(await metricsOf(edge.notifyUrl), 'palisade_edge_requests_total') === 4, 20_000);
  scraped.serve = await text(`${serve.url}/metrics`);
  scraped.dns = await metricsOf(ns.notifyUrl);
  scraped.edge = await metricsOf(edge.notifyUrl);
  if (RECORD) writeFileSync(FIXTURE, `${JSON.stringify({ serve: families('serve'), dns: families('dns'), edge: families('edge') }, null, 1)}\n`);
}, 120_000);

afterAll(async () => {
  await Promise.all([serve, ns, edge, api].filter(Boolean).map((p) => stopProcess(p)));
  removeTempDirs();
});

describe('/metrics as a scraper reads it', () => {
  const recorded = (name: string) => (JSON.parse(readFileSync(FIXTURE, 'utf8')) as Record<string, SeenFamily[]>)[name];
  for (const name of ['serve', 'dns', 'edge']) {
    it(`${name}: valid Prometheus text`, () => {
      expect(readPrometheusText(scraped[name]!).problems).toEqual([]);
    });
    it(`${name}: the same families (name, type, help, label names) as recorded`, () => {
      expect(families(name)).toEqual(recorded(name));
    });
  }

  it('the DNS workers\' queries are added up with the primary\'s, one series each', () => {
    // Two queries per process asked of the name server; whichever process answered, the sum is theirs.
    expect(sumOf(scraped.dns!, 'palisade_dns_queries_total')).toBe(2);
  });
});

// The dns role: an authoritative name server (ns1, ns2, …) on its own host, fed by a remote API's
// change feed, serving from its local state whenever the API is away. With PALISADE_DNS_WORKERS
// above 1 (the default: one per core) this process is also the primary of DNS workers that share
// its port (dns-workers/): it stays the host's one feed consumer and forwards what it applies.
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import type { Config } from '../config.ts';
import { createLogger } from '../log.ts';
import { NotifyListener } from '../sync/notify-listener.ts';
import { RemoteFeed } from '../sync/remote-feed.ts';
import { newDnsServer, openGeo } from './dns-parts.ts';
import { StartupError } from './startup-error.ts';
import { ensureWritableDir } from './writable-dir.ts';
import { closeOnSignal } from './shutdown.ts';
import { feedHealth, feedMetrics } from './feed-health.ts';
import { dnsWorkerCount, dnsWorkerZoneMode, rateLimitPerWorker, tcpLimitsPerWorker } from './dns-workers/settings.ts';
import { DnsWorkers } from './dns-workers/supervisor.ts';
import { dnsWorkersMetrics } from './dns-workers/workers-metrics.ts';
import { mergeSnapshots } from '../common/metrics/merge.ts';

export async function runNameServer(config: Config): Promise<void> {
  const { sync } = config;
  const missing = (['url', 'token', 'secret'] as const).filter((k) => !sync[k]).map((k) => `PALISADE_SYNC_${k.toUpperCase()}`);
  if (missing.length > 0) throw new StartupError(`the dns role needs ${missing.join(', ')} (from \`palisade admin consumer add\` on the API side)`);
  const count = dnsWorkerCount();
  const workerZones = dnsWorkerZoneMode();
  ensureWritableDir(config.dataDir, 'PALISADE_DATA_DIR');
  const log = createLogger(config.logLevel);
  const geo = openGeo(config, log);
  // Workers share the cookie secret (a client's cookie holds whichever worker it reaches) and
  // split the response-rate limit and the TCP bounds.
  const cookieSecret = config.dns.cookieSecret ?? randomBytes(16);
  const rateLimit = rateLimitPerWorker(config.dns.rateLimit, count);
  const tcp = tcpLimitsPerWorker(config.dns.tcp, count);
  const dns = newDnsServer(config, log, geo, count > 1 ? { cookieSecret, rateLimit, tcp, reusePort: 'claim' } : { cookieSecret });
  const stateDir = join(config.dataDir, 'ns-state');
  let workers: DnsWorkers | undefined;
  const feed = new RemoteFeed(dns.index, {
    url: sync.url!,
    token: sync.token!,
    pollMs: sync.pollMs,
    dataDir: stateDir,
    log: log.child({ component: 'sync' }),
    onApplied: count > 1 ? (event) => workers?.onApplied(event) : undefined,
  });
  dns.metrics.revisionApplied = () => feed.applied;
  if (count > 1) {
    // Started first: they read the stored state while this process does.
    workers = new DnsWorkers({ count, cookieSecret, rateLimit, tcp, stateDir, zones: workerZones, applied: () => feed.applied, log: log.child({ component: 'dns-workers' }) });
    workers.start();
  }
  feed.start();
  workers?.stateLoaded();
  const dnsPort = await dns.listen().catch(async (error: NodeJS.ErrnoException) => {
    await workers?.stop();
    throw new StartupError(`dns: cannot listen on ${config.dns.host}:${config.dns.port} (${error.code ?? error.message})`);
  });
  workers?.serve(dnsPort);
  const health = () => {
    const report = feedHealth(feed, sync.maxLagMs, { zones: dns.index.size, ...(workers && { workers: workers.health() }) });
    const lagging = workers?.lagging(sync.maxLagMs);
    return lagging && report.ok ? { ...report, ok: false, status: 'degraded', reason: lagging } : report;
  };
  const listener: NotifyListener = new NotifyListener({
    secret: sync.secret!,
    applied: () => feed.applied,
    onNotify: () => void feed.catchUp(),
    health,
    metrics: async () => {
      // The primary's own figures first: the families it alone knows (`first`) are taken from it.
      const own = [...dns.metrics.snapshot(), ...feedMetrics(Math.max(0, feed.current - feed.applied), listener), ...(workers ? dnsWorkersMetrics(workers) : [])];
      return workers ? mergeSnapshots([own, ...(await workers.metrics())]) : own;
    },
    log: log.child({ component: 'sync' }),
  });
  const syncPort = await listener.listen(sync.port, sync.host).catch((error: NodeJS.ErrnoException) => {
    throw new StartupError(`sync: cannot listen on ${sync.host}:${sync.port} (${error.code ?? error.message}); set PALISADE_SYNC_HOST/PALISADE_SYNC_PORT`);
  });
  log.info({ dns: `${config.dns.host}:${dnsPort}`, notify: `http://${sync.host}:${syncPort}/notify`, api: sync.url, revision: feed.applied, ...(count > 1 && { workerZones }), workers: count }, 'palisade name server serving');

  closeOnSignal(log, async () => {
    await listener.close();
    await workers?.stop();
    dns.stopTransfers();
    await dns.close();
    await feed.stop();
    geo?.close();
  });
}

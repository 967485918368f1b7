// The dns role: an authoritative name server (ns1, ns2, …) on its own host, fed by a remote API's
// change feed, serving from its local state whenever the API is away.
import { join } from 'node:path';
import type { Config } from '../config.ts';
import { createLogger } from '../log.ts';
import { NotifyListener } from '../sync/notify-listener.ts';
import { RemoteFeed } from '../sync/remote-feed.ts';
import { newDnsServer, openGeo } from './dns-parts.ts';
import { StartupError } from './startup-error.ts';
import { ensureWritableDir } from './writable-dir.ts';
import { closeOnSignal } from './shutdown.ts';

export async function runNameServer(config: Config): Promise<void> {
  const { sync } = config;
  const missing = (['url', 'token', 'secret'] as const).filter((k) => !sync[k]).map((k) => `PALISADE_SYNC_${k.toUpperCase()}`);
  if (missing.length > 0) throw new StartupError(`the dns role needs ${missing.join(', ')} (from \`palisade admin consumer add\` on the API side)`);
  ensureWritableDir(config.dataDir, 'PALISADE_DATA_DIR');
  const log = createLogger(config.logLevel);
  const geo = openGeo(config, log);
  const dns = newDnsServer(config, log, geo);
  const feed = new RemoteFeed(dns.index, { url: sync.url!, token: sync.token!, pollMs: sync.pollMs, dataDir: join(config.dataDir, 'ns-state'), log: log.child({ component: 'sync' }) });
  dns.metrics.revisionApplied = () => feed.applied;
  feed.start();
  const dnsPort = await dns.listen().catch((error: NodeJS.ErrnoException) => {
    throw new StartupError(`dns: cannot listen on ${config.dns.host}:${config.dns.port} (${error.code ?? error.message})`);
  });
  // Degraded (503) once the API's revision has not been applied for longer than the bound:
  // pulls failing (API away, bad token) or the feed stuck behind.
  const health = () => {
    const now = Date.now();
    const lag = Math.max(0, feed.current - feed.applied);
    const age = feed.lastSuccess === 0 ? null : now - feed.lastSuccess;
    const bound = sync.maxLagMs;
    let reason: string | undefined;
    if (feed.applied === 0) reason = 'no state yet: the first snapshot has not been loaded';
    else if ((age ?? now - feed.startedAt) > bound) reason = `no successful pull from the API for ${Math.round((age ?? now - feed.startedAt) / 1000)} s`;
    else if (feed.behindSince !== 0 && now - feed.behindSince > bound) reason = `${lag} revisions behind the API for ${Math.round((now - feed.behindSince) / 1000)} s`;
    return { ok: reason === undefined, status: reason ? 'degraded' : 'ok', reason, revision: feed.applied, api_revision: feed.current, lag, last_sync_ms_ago: age, zones: dns.index.size };
  };
  const listener: NotifyListener = new NotifyListener({
    secret: sync.secret!,
    applied: () => feed.applied,
    onNotify: () => void feed.catchUp(),
    health,
    metrics: (): string => {
      const h = health();
      return `${dns.metrics.render()}# HELP palisade_sync_lag_revisions Revisions the API is ahead of this name server.\n# TYPE palisade_sync_lag_revisions gauge\npalisade_sync_lag_revisions ${h.lag}\n# HELP palisade_sync_notifications_total Push notifications, by outcome.\n# TYPE palisade_sync_notifications_total counter\npalisade_sync_notifications_total{outcome="accepted"} ${listener.accepted}\npalisade_sync_notifications_total{outcome="up_to_date"} ${listener.upToDate}\npalisade_sync_notifications_total{outcome="rejected"} ${listener.rejected}\n`;
    },
    log: log.child({ component: 'sync' }),
  });
  const syncPort = await listener.listen(sync.port, sync.host).catch((error: NodeJS.ErrnoException) => {
    throw new StartupError(`sync: cannot listen on ${sync.host}:${sync.port} (${error.code ?? error.message}); set PALISADE_SYNC_HOST/PALISADE_SYNC_PORT`);
  });
  log.info({ dns: `${config.dns.host}:${dnsPort}`, notify: `http://${sync.host}:${syncPort}/notify`, api: sync.url, revision: feed.applied }, 'palisade name server serving');

  closeOnSignal(log, async () => {
    await listener.close();
    await dns.close();
    await feed.stop();
    geo?.close();
  });
}

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
import { feedHealth, feedMetrics } from './feed-health.ts';

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
  const health = () => feedHealth(feed, sync.maxLagMs, { zones: dns.index.size });
  const listener: NotifyListener = new NotifyListener({
    secret: sync.secret!,
    applied: () => feed.applied,
    onNotify: () => void feed.catchUp(),
    health,
    metrics: () => dns.metrics.render() + feedMetrics(Math.max(0, feed.current - feed.applied), listener),
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

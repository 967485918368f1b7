// The edge role: one edge node's reverse proxy on its own host, fed by a remote API's change feed
// with that node's share (its domains, their certificates, the IP lists on it), serving from its
// local state whenever the API is away. PALISADE_EDGE_WORKERS=1: all of it in this one process;
// more: see edge-workers/.
import { join } from 'node:path';
import type { Config } from '../config.ts';
import { EdgeState } from '../edge/edge-state.ts';
import { RemoteEdgeFeed } from '../edge/feed/edge-feeds.ts';
import { createLogger } from '../log.ts';
import { NotifyListener } from '../sync/notify-listener.ts';
import { openGeo } from './dns-parts.ts';
import { listenEdge, newEdgeServer } from './edge-parts.ts';
import { feedHealth, feedMetrics } from './feed-health.ts';
import { closeOnSignal } from './shutdown.ts';
import { StartupError } from './startup-error.ts';
import { ensureWritableDir } from './writable-dir.ts';
import { UptimeReporter } from '../edge/uptime-reporter.ts';
import { edgeFeedFigures } from '../edge/edge-families.ts';
import type { UptimeReport } from '../uptime/report.ts';

/** One report to the API's edge channel (authenticated by the node's consumer token). */
async function postReport(api: string, token: string, report: UptimeReport): Promise<void> {
  const response = await fetch(`${api}/sync/edge/report`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(report),
    // Generous: the first report after new domains or nodes records every verdict (seconds for 10,000).
    signal: AbortSignal.timeout(120_000),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`the API answered ${response.status}: ${text.slice(0, 200)}`);
}

/** The command-line flag of a worker process (started by the primary, see edge-workers/). */
const WORKER_FLAG = '--edge-worker';

export async function runEdge(config: Config): Promise<void> {
  const { sync, edge } = config;
  if (process.argv.includes(WORKER_FLAG)) return (await import('./edge-workers/worker.ts')).runEdgeWorker(config);
  const missing = (['url', 'token', 'secret'] as const).filter((k) => !sync[k]).map((k) => `PALISADE_SYNC_${k.toUpperCase()}`);
  if (edge.node === undefined) missing.unshift('PALISADE_EDGE_NODE');
  if (missing.length > 0) throw new StartupError(`the edge role needs ${missing.join(', ')} (from \`palisade admin consumer add --node ID\` on the API side)`);
  ensureWritableDir(config.dataDir, 'PALISADE_DATA_DIR');
  // More than one worker: this process feeds and supervises them (edge-workers/primary.ts).
  if (edge.workers > 1) return (await import('./edge-workers/primary.ts')).runEdgePrimary(config, (report) => postReport(sync.url!, sync.token!, report));
  const log = createLogger(config.logLevel);
  const state = new EdgeState(edge.node);
  const feed = new RemoteEdgeFeed(state, { url: sync.url!, token: sync.token!, secret: sync.secret!, pollMs: sync.pollMs, dataDir: join(config.dataDir, 'edge-state'), log: log.child({ component: 'sync' }) });
  feed.start();
  // Clients are located for the domains' country rules (the same database as the name servers').
  const geo = openGeo(config, log);
  const server = newEdgeServer(config, state, log.child({ component: 'edge' }), geo);
  const addresses = await listenEdge(config, server);
  const reporter = new UptimeReporter(server.uptime, (report) => postReport(sync.url!, sync.token!, report), edge.reportMs, log.child({ component: 'uptime' }));
  reporter.start();
  const health = () => feedHealth(feed, sync.maxLagMs, { node: edge.node, node_status: state.node?.status ?? null, domains: state.routes.size, certificates: state.certificates.size });
  const listener: NotifyListener = new NotifyListener({
    secret: sync.secret!,
    applied: () => feed.applied,
    onNotify: () => void feed.catchUp(),
    health,
    metrics: () => [...server.metricsSnapshot(edgeFeedFigures(feed.applied, reporter)), ...feedMetrics(Math.max(0, feed.current - feed.applied), listener)],
    log: log.child({ component: 'sync' }),
  });
  const syncPort = await listener.listen(sync.port, sync.host).catch((error: NodeJS.ErrnoException) => {
    throw new StartupError(`sync: cannot listen on ${sync.host}:${sync.port} (${error.code ?? error.message}); set PALISADE_SYNC_HOST/PALISADE_SYNC_PORT`);
  });
  log.info({ node: edge.node, ...addresses, notify: `http://${sync.host}:${syncPort}/notify`, api: sync.url, revision: feed.applied, domains: state.routes.size }, 'palisade edge serving');

  closeOnSignal(log, async () => {
    reporter.stop();
    await listener.close();
    await server.close();
    await feed.stop();
    geo?.close();
  });
}

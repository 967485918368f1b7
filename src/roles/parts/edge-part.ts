// serve's edge, run as its own process (`palisade edge --in-serve`): the reverse proxy for every
// domain (this single host stands for every node), fed from the store on this host like the
// name server part. Its uptime reports go to the API part through the supervisor, as node 0's.
import type { Config } from '../../config.ts';
import { SecretBox, withOpenKey } from '../../certs/secret-box.ts';
import { edgeFeedFigures } from '../../edge/edge-families.ts';
import { EdgeState } from '../../edge/edge-state.ts';
import { StoreEdgeFeed } from '../../edge/feed/edge-feeds.ts';
import { UptimeReporter } from '../../edge/uptime-reporter.ts';
import { createLogger } from '../../log.ts';
import { openStore } from '../../store/index.ts';
import type { UptimeReport } from '../../uptime/report.ts';
import { openGeo } from '../dns-parts.ts';
import { listenEdge, newEdgeServer } from '../edge-parts.ts';
import { closeOnSignal } from '../shutdown.ts';
import { PartChannel } from '../supervisor/part-channel.ts';
import { StartupError } from '../startup-error.ts';

/** The API may take long over a first report naming many domains (see the edge role). */
const REPORT_TIMEOUT_MS = 120_000;

export async function runEdgePart(config: Config): Promise<void> {
  const channel = new PartChannel(true);
  const log = createLogger(config.logLevel).child({ part: 'edge', component: 'edge' });
  const store = openStore({ dataDir: config.dataDir, changeRetention: config.changeRetention, redisPrefix: config.redisPrefix, redis: config.redis });
  // The API part checks the operator key against the store at its start; here it only opens keys.
  const box = config.certs.secretKey ? new SecretBox(config.certs.secretKey) : undefined;
  const state = new EdgeState();
  const feed = new StoreEdgeFeed(store, state, log, undefined, (cert) => withOpenKey(box, cert));
  // Certificates are opened as they load: a missing or wrong operator key is a start-up error.
  await feed.start().catch((error: Error) => {
    throw new StartupError(`certificates: ${error.message}`);
  });
  // The API part committed: read past any snapshot this process still holds, then catch up.
  channel.on('committed', () => {
    store.committedElsewhere();
    void feed.catchUp();
  });
  const geo = openGeo(config, log);
  const edge = newEdgeServer(config, state, log, geo);
  const addresses = await listenEdge(config, edge);
  const reporter = new UptimeReporter(edge.uptime, (report: UptimeReport) => channel.request<void>('api', 'uptime-report', report, REPORT_TIMEOUT_MS), config.edge.reportMs, log);
  channel.handle('metrics', () => edge.metricsSnapshot(edgeFeedFigures(feed.revision, reporter)));
  reporter.start();
  channel.ready({ http: Number(new URL(addresses.http).port), https: Number(new URL(addresses.https).port) }, { edge: addresses });

  closeOnSignal(log, async () => {
    feed.stop();
    reporter.stop();
    await edge.close();
    geo?.close();
    await store.close();
  });
}

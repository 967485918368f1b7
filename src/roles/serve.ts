// The all-in-one role: the API and the DNS server in one process on the embedded store, the DNS
// index fed from the store in-process. Shuts down cleanly on SIGTERM/SIGINT: stops accepting,
// finishes requests, closes the store.
import type { Config } from '../config.ts';
import { buildApp } from '../api/app.ts';
import { createLogger } from '../log.ts';
import { openStore } from '../store/index.ts';
import { StartupError } from './startup-error.ts';
import { ensureWritableDir } from './writable-dir.ts';
import { PushNotifier } from '../sync/notifier.ts';
import { StoreFeed } from '../sync/store-feed.ts';
import { newDnsServer, openGeo } from './dns-parts.ts';
import { closeOnSignal } from './shutdown.ts';
import type { EdgeServer } from '../edge/edge-server.ts';
import { EdgeState } from '../edge/edge-state.ts';
import { StoreEdgeFeed } from '../edge/store-edge-feed.ts';
import { listenEdge, newEdgeServer } from './edge-parts.ts';
import { openSecrets, startCertificates } from './cert-parts.ts';
import { withOpenKey } from '../certs/secret-box.ts';
import { UptimeReporter } from '../edge/uptime-reporter.ts';
import { notifyParts } from './notify-parts.ts';

/** A start-up failure the operator can fix; printed as one line, no stack. */
export { StartupError };

export interface ServeOptions {
  /** Run the DNS server too (the serve role); the api role runs the API alone. */
  dns: boolean;
}

export async function serve(config: Config, options: ServeOptions = { dns: true }): Promise<void> {
  const log = createLogger(config.logLevel);
  if (!config.redisUrl) ensureWritableDir(config.dataDir, 'PALISADE_DATA_DIR');
  const store = openStore({ dataDir: config.dataDir, changeRetention: config.changeRetention, redisUrl: config.redisUrl, redisPrefix: config.redisPrefix });
  const secrets = await openSecrets(store, config, log);

  const geo = options.dns ? openGeo(config, log) : undefined;
  const dns = options.dns ? newDnsServer(config, log, geo) : undefined;
  const feed = dns && new StoreFeed(store, dns.index, log.child({ component: 'sync' }));
  let dnsAddress: string | undefined;
  let dnsPort: number | undefined;
  if (dns && feed) {
    dns.metrics.revisionApplied = () => feed.revision;
    await feed.start();
    const port = await dns.listen().catch((error: NodeJS.ErrnoException) => {
      throw new StartupError(`dns: cannot listen on ${config.dns.host}:${config.dns.port} (${error.code ?? error.message}); free the port or set PALISADE_DNS_HOST/PALISADE_DNS_PORT`);
    });
    dnsAddress = `${config.dns.host}:${port}`;
    dnsPort = port;
  }

  // The edge: every domain (this all-in-one process stands for every node), fed from the store.
  let edge: EdgeServer | undefined;
  let edgeFeed: StoreEdgeFeed | undefined;
  let edgeAddress: { http: string; https: string } | undefined;
  let edgeHttpPort: number | undefined;
  if (options.dns) {
    const state = new EdgeState();
    edgeFeed = new StoreEdgeFeed(store, state, log.child({ component: 'edge' }), undefined, (cert) => withOpenKey(secrets, cert));
    await edgeFeed.start();
    edge = newEdgeServer(config, state, log.child({ component: 'edge' }), geo);
    edgeAddress = await listenEdge(config, edge);
    edgeHttpPort = Number(new URL(edgeAddress.http).port);
  }

  const notifier = new PushNotifier(store, log.child({ component: 'sync' }));
  await notifier.start();

  const notifications = notifyParts(store, config, log.child({ component: 'notify' }));
  // The all-in-one edge reports in-process, as node 0.
  const reporter = edge && new UptimeReporter(edge.uptime, async (report) => void (await notifications.notify.intake.accept(0, report)), config.edge.reportMs, log.child({ component: 'edge' }));
  const certs = await startCertificates(store, config, secrets, log.child({ component: 'certs' }), { dns: dnsPort === undefined ? undefined : { host: config.dns.host, port: dnsPort }, edgeHttpPort }, notifications.notify.events);
  const app = await buildApp({
    store,
    config,
    tasks: certs.book,
    notify: notifications.notify,
    logger: log.child({ component: 'api' }),
    metrics: () => (dns ? dns.metrics.render() : '') + (edge && edgeFeed ? edge.renderMetrics({ palisade_edge_revision_applied: edgeFeed.revision }) : '') + notifier.metrics() + certs.worker.metrics() + notifications.metrics(),
  });
  await app.listen({ host: config.api.host, port: config.api.port }).catch((error: NodeJS.ErrnoException) => {
    throw new StartupError(`api: cannot listen on ${config.api.host}:${config.api.port} (${error.code ?? error.message}); free the port or set PALISADE_API_HOST/PALISADE_API_PORT`);
  });
  certs.worker.start();
  notifications.start();
  reporter?.start();
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : config.api.port;
  log.info(
    { dataDir: config.dataDir, store: store.kind, api: `http://${config.api.host}:${port}`, dns: dnsAddress, edge: edgeAddress, zones: dns?.index.size },
    'palisade serving',
  );
  if ((await store.listUsers()).length === 0) {
    log.info('no users yet: create one with `npm run admin -- user create --name NAME --email EMAIL`; it prints an API key for X-Auth-Key');
  }

  closeOnSignal(log, async () => {
    feed?.stop();
    edgeFeed?.stop();
    notifier.stop();
    reporter?.stop();
    await notifications.stop();
    await certs.worker.stop();
    await edge?.close();
    await app.close();
    await dns?.close();
    geo?.close();
    await store.close();
  });
}

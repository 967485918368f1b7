// The control-plane API with what runs beside it (pushes to consumers, certificates, notifications):
// the `api` role on its own, and serve's API part (`palisade api --in-serve`) under the
// supervisor. As a part it announces every commit (so the name server and edge parts catch up
// within milliseconds), takes the edge part's uptime reports as node 0's, and serves the other
// parts' metrics (asked of the supervisor) with its own at /metrics.
import type { Config } from '../../config.ts';
import type { Server as TlsServer } from 'node:tls';
import { buildApp } from '../../api/app.ts';
import type { MetricsSnapshot } from '../../common/metrics/family.ts';
import { isLoopback } from '../../api/routes/metrics.ts';
import { describeCertificate, followTlsFiles, readTlsPair, type TlsPair } from '../../api/tls-files.ts';
import { createLogger } from '../../log.ts';
import { poolWarning } from '../../ownership/pairs.ts';
import { openStore } from '../../store/index.ts';
import { PushNotifier } from '../../sync/notifier.ts';
import type { UptimeReport } from '../../uptime/report.ts';
import { openSecrets, startCertificates } from '../cert-parts.ts';
import { notifyParts } from '../notify-parts.ts';
import { closeOnSignal } from '../shutdown.ts';
import { StartupError } from '../startup-error.ts';
import { PartChannel } from '../supervisor/part-channel.ts';
import { ensureWritableDir } from '../writable-dir.ts';

/** Where serve's other parts listen, for the certificate checks (DNS-01 on our own listener, HTTP-01 on our edge). */
export interface PeerPorts {
  dns?: number;
  edgeHttp?: number;
}

/** How long /metrics waits for the other parts' figures (a part that is restarting is left out). */
const METRICS_WAIT_MS = 2_000;

/** The API's certificate and key when configured, checked to load (else a one-line start-up error). */
function apiTls(config: Config): TlsPair | undefined {
  if (!config.api.tls) return undefined;
  try {
    return readTlsPair(config.api.tls);
  } catch (error) {
    throw new StartupError(`api: PALISADE_API_TLS_CERT/PALISADE_API_TLS_KEY: ${(error as Error).message}`);
  }
}

/**
 * Keys and customer data in clear text across a network: refused unless asked for. Loopback stays
 * plain HTTP by default (a newcomer's first minutes), and a TLS terminator in front says so with
 * PALISADE_API_PLAIN_HTTP=true.
 */
function refusePlainHttpAfar(config: Config, tls: boolean): void {
  if (tls || config.api.plainHttp || config.api.host === 'localhost' || isLoopback(config.api.host)) return;
  throw new StartupError(
    `api: PALISADE_API_HOST=${config.api.host} is reachable from other hosts and the API would speak plain HTTP (API keys in clear text): set PALISADE_API_TLS_CERT and PALISADE_API_TLS_KEY, or PALISADE_API_PLAIN_HTTP=true when a TLS terminator in front of it does TLS`,
  );
}

/** `inServe`: started by serve's supervisor (--in-serve); otherwise the api role on its own. */
export async function runApiPart(config: Config, inServe: boolean): Promise<void> {
  const channel = new PartChannel(inServe);
  const log = createLogger(config.logLevel).child(channel.supervised ? { part: 'api' } : {});
  if (!config.redis) ensureWritableDir(config.dataDir, 'PALISADE_DATA_DIR');
  const store = openStore({ dataDir: config.dataDir, changeRetention: config.changeRetention, redisPrefix: config.redisPrefix, redis: config.redis });
  const secrets = await openSecrets(store, config, log);

  const notifier = new PushNotifier(store, log.child({ component: 'sync' }));
  await notifier.start();
  const notifications = notifyParts(store, config, log.child({ component: 'notify' }));
  let unfollow: (() => void) | undefined;
  let peers: PeerPorts = {};
  if (channel.supervised) {
    unfollow = store.onCommit(() => channel.emit('committed'));
    channel.handle('uptime-report', async (report) => void (await notifications.notify.intake.accept(0, report as UptimeReport)));
    peers = await channel.request<PeerPorts>('supervisor', 'peers', undefined, 60_000);
  }
  const certs = await startCertificates(
    store,
    config,
    secrets,
    log.child({ component: 'certs' }),
    { dns: peers.dns === undefined ? undefined : { host: config.dns.host, port: peers.dns }, edgeHttpPort: peers.edgeHttp },
    notifications.notify.events,
  );
  const partsMetrics = async (): Promise<MetricsSnapshot> => (channel.supervised ? await channel.request<MetricsSnapshot>('supervisor', 'metrics', undefined, METRICS_WAIT_MS).catch(() => []) : []);
  const https = apiTls(config);
  refusePlainHttpAfar(config, https !== undefined);
  const app = await buildApp({
    store,
    config,
    https,
    tasks: certs.book,
    notify: notifications.notify,
    logger: log.child({ component: 'api' }),
    metrics: async () => [...(await partsMetrics()), ...notifier.metrics(), ...certs.worker.metrics(), ...notifications.metrics()],
  });
  await app.listen({ host: config.api.host, port: config.api.port }).catch((error: NodeJS.ErrnoException) => {
    throw new StartupError(`api: cannot listen on ${config.api.host}:${config.api.port} (${error.code ?? error.message}); free the port or set PALISADE_API_HOST/PALISADE_API_PORT`);
  });
  const unwatchTls = https && config.api.tls ? followTlsFiles(app.server as unknown as TlsServer, config.api.tls, log) : undefined;
  certs.worker.start();
  notifications.start();
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : config.api.port;
  const scheme = https ? 'https' : 'http';
  if (channel.supervised) channel.ready({ api: port });
  else log.info({ dataDir: config.dataDir, store: store.kind, api: `${scheme}://${config.api.host}:${port}` }, 'palisade serving');
  if (https) log.info({ certificate: describeCertificate(https.cert) }, 'api: serving HTTPS');
  const pool = poolWarning(config.ownership.pool, config.ownership.proof === 'required');
  if (pool) log.warn({ pool: config.ownership.pool }, pool);
  if ((await store.listUsers()).length === 0) {
    log.info('no users yet: create one with `npm run admin -- user create --name NAME --email EMAIL`; it prints an API key for X-Auth-Key');
  }

  closeOnSignal(log, async () => {
    unwatchTls?.();
    unfollow?.();
    notifier.stop();
    await notifications.stop();
    await certs.worker.stop();
    await app.close();
    await store.close();
  });
}

// The all-in-one role: the API, a name server and an edge on one store, each in its own process
// (`palisade api|dns|edge --in-serve`) under this one, which starts them, starts a part again
// when it stops on its own (a crash of the edge leaves DNS and the API answering), passes the
// API's commits on to the other parts and stops them all on SIGTERM/SIGINT.
import { byLabel, family, type MetricsSnapshot } from '../common/metrics/family.ts';
import type { Config } from '../config.ts';
import { createLogger } from '../log.ts';
import { closeOnSignal } from './shutdown.ts';
import { StartupError } from './startup-error.ts';
import { ensureWritableDir } from './writable-dir.ts';
import type { PartName } from './supervisor/messages.ts';
import { Supervisor, type PartSpec } from './supervisor/supervisor.ts';
import type { PeerPorts } from './parts/api-part.ts';

/** Above the parts' own shutdown bound, so that they normally finish first. */
const STOP_BOUND_MS = 12_000;

/** Where each part listened when last ready. */
type PortBook = Map<PartName, Record<string, number>>;

/** A part started again listens where its first start did (a port of 0 was chosen once). */
function partEnv(book: PortBook, name: PartName, toEnv: (ports: Record<string, number>) => Record<string, string>): () => NodeJS.ProcessEnv {
  return () => {
    const ports = book.get(name);
    return { ...process.env, ...(ports ? toEnv(ports) : {}) };
  };
}

/**
 * The API part's young generation kept small. V8 grows it to its largest (16 MiB a semi-space here)
 * while a process starts — loading modules and compiling schemas allocate fast — and gives it back
 * only when its memory reducer runs, one to two idle minutes later: until then the API part held
 * ~40–60 MB more than it uses (at 30 s idle: 139 → 96 MB PSS with 2 MiB). The API is the control
 * plane: a few more scavenges under a bulk import cost little.
 * Not for the name server and the edge, whose answers per CPU-second fall with it (DNS part −7%).
 */
const API_NODE_OPTIONS = ['--max-semi-space-size=2'];

export async function serve(config: Config): Promise<void> {
  const log = createLogger(config.logLevel);
  if (!config.redis) ensureWritableDir(config.dataDir, 'PALISADE_DATA_DIR');
  const book: PortBook = new Map();
  const specs: PartSpec[] = [
    { name: 'dns', args: ['dns', '--in-serve'], env: partEnv(book, 'dns', (p) => ({ PALISADE_DNS_PORT: String(p.dns) })) },
    { name: 'edge', args: ['edge', '--in-serve'], env: partEnv(book, 'edge', (p) => ({ PALISADE_EDGE_HTTP_PORT: String(p.http), PALISADE_EDGE_HTTPS_PORT: String(p.https) })) },
    { name: 'api', args: ['api', '--in-serve'], env: partEnv(book, 'api', (p) => ({ PALISADE_API_PORT: String(p.api) })), nodeOptions: API_NODE_OPTIONS },
  ];
  const running = new Supervisor(specs, log);
  running.onReady = (name, ready) => book.set(name, ready.ports);
  // The API part's certificate checks need the name server's and the edge's ports.
  running.handle('peers', async (): Promise<PeerPorts> => {
    await Promise.all([running.whenReady('dns'), running.whenReady('edge')]);
    return { dns: book.get('dns')?.dns, edgeHttp: book.get('edge')?.http };
  });
  running.handle('metrics', async () => {
    const parts = await Promise.all((['dns', 'edge'] as const).map((name) => running.ask<MetricsSnapshot>(name, 'metrics', undefined, 1_500).catch((): MetricsSnapshot => [])));
    return [...parts.flat(), ...supervisorMetrics(running)];
  });

  let ports: Map<PartName, { ports: Record<string, number>; info?: Record<string, unknown> }>;
  try {
    ports = await running.start();
  } catch (error) {
    await running.stop(2_000);
    throw new StartupError((error as Error).message);
  }
  const api = ports.get('api')!.ports.api;
  const dnsInfo = ports.get('dns')!;
  const edgeInfo = ports.get('edge')!;
  const pids = Object.fromEntries(running.status().map((p) => [p.name, p.pid]));
  log.info(
    { dataDir: config.dataDir, store: config.redis ? 'redis' : 'embedded', api: `${config.api.tls ? 'https' : 'http'}://${config.api.host}:${api}`, dns: `${config.dns.host}:${dnsInfo.ports.dns}`, edge: edgeInfo.info?.edge, zones: dnsInfo.info?.zones, parts: pids },
    'palisade serving',
  );

  closeOnSignal(log, () => running.stop(STOP_BOUND_MS), { boundMs: STOP_BOUND_MS + 1_000 });
}

const PART_UP = family({ name: 'palisade_part_up', type: 'gauge', help: 'Whether a part of serve (api, dns, edge) is running and ready.', labels: ['part'] });
const PART_RESTARTS = family({ name: 'palisade_part_restarts_total', type: 'counter', help: 'Times the supervisor started a part again after it stopped on its own.', labels: ['part'] });

function supervisorMetrics(supervisor: Supervisor): MetricsSnapshot {
  const parts = supervisor.status();
  return [byLabel(PART_UP, parts.map((p) => [p.name, p.up ? 1 : 0] as const)), byLabel(PART_RESTARTS, parts.map((p) => [p.name, p.restarts] as const))];
}

// A DNS worker of `palisade dns` (PALISADE_DNS_WORKERS > 1), a child process of the name server:
// answers queries on the port the primary claimed (SO_REUSEPORT), from the zones of the primary's
// local state — every one built into its index, or with PALISADE_DNS_WORKER_ZONES=stored each on
// its first question from the state pinned at one revision (worker-zones.ts) — kept current with
// the batches the primary forwards (it binds once it has caught up with the primary: never behind
// the others). It pulls nothing from the API and listens on no HTTP port. It ends when the primary
// tells it (SIGTERM) or goes away (the IPC channel closes).
import { deserialize } from 'node:v8';
import type { Logger } from 'pino';
import { applyBatch } from '../../dns/zone/apply.ts';
import type { DnsServer } from '../../dns/dns-server.ts';
import { loadConfig } from '../../config.ts';
import { createLogger } from '../../log.ts';
import { newDnsServer, openGeo } from '../dns-parts.ts';
import { IndexedZones } from './indexed-zones.ts';
import type { FromWorker, ToWorker, WorkerInit, BatchEntry } from './messages.ts';
import { PinnedZones } from './pinned-zones.ts';
import type { BatchBody, WorkerStatus, WorkerZones, WorkerZonesContext } from './worker-zones.ts';

const send = (message: FromWorker) => process.send?.(message);

async function run(init: WorkerInit): Promise<void> {
  const config = loadConfig();
  const log = createLogger(config.logLevel).child({ worker: init.worker });
  const geo = openGeo(config, log, true);
  const fromStored = init.zones === 'stored';
  const dns = newDnsServer(config, log, geo, { cookieSecret: Buffer.from(init.cookieSecret), rateLimit: init.rateLimit, tcp: init.tcp, reusePort: 'join' }, false, fromStored);
  const status: WorkerStatus = { applied: 0, mode: 'loading', port: 0 };
  dns.metrics.revisionApplied = () => status.applied;
  const ctx: WorkerZonesContext = { index: dns.index, status, log, send };
  const zones: WorkerZones = fromStored ? new PinnedZones(init.stateDir, ctx) : new IndexedZones(init.stateDir, ctx);
  let portGiven: (port: number) => void = () => undefined;
  const portKnown = new Promise<number>((resolve) => (portGiven = resolve));
  if (init.port) portGiven(init.port);

  const stop = stopper(dns, zones, () => geo?.close());
  if (!process.connected) return stop();
  // Listening from the start: a reload asked for while the first load runs is done after it.
  process.on('message', messageHandler(dns, zones, ctx, portGiven));
  zones.prepare();
  status.port = await portKnown;
  zones.announce();
}

/** Stops on SIGTERM or when the primary goes away, within a bound; the stop, for a start that finds the primary gone. */
function stopper(dns: DnsServer, zones: WorkerZones, closeGeo: () => void): () => Promise<void> {
  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    const bound = setTimeout(() => process.exit(0), 5000);
    bound.unref();
    try {
      await dns.close();
      await zones.close();
      closeGeo();
    } finally {
      process.exit(0);
    }
  };
  process.on('SIGTERM', () => void stop());
  // The primary decides when to stop (Ctrl-C reaches the whole process group).
  process.on('SIGINT', () => undefined);
  process.on('disconnect', () => void stop());
  return stop;
}

/** Applies batches in order when live; a gap or a failure makes the zones read the state again. */
function batchTaker(zones: WorkerZones, ctx: WorkerZonesContext): (entries: BatchEntry[]) => void {
  const { status, index, log } = ctx;
  /** False when the entry does not follow what this index holds (a gap). */
  const take = (entry: BatchEntry): boolean => {
    if (entry.revision <= status.applied) return true;
    if (entry.since !== status.applied) return false;
    const body = deserialize(entry.body) as BatchBody;
    applyBatch(index, body.batch, zones.source(body.read));
    status.applied = entry.revision;
    return true;
  };
  return (entries) => {
    try {
      for (const entry of entries) {
        if (!take(entry)) {
          zones.again(`batch ${entry.since}→${entry.revision} does not follow revision ${status.applied}`);
          return;
        }
      }
    } catch (error) {
      log.error({ err: error, revision: status.applied }, 'dns worker: a batch failed to apply; reading the local state again');
      zones.again('a batch failed');
      return;
    }
    send({ type: 'applied', revision: status.applied });
    zones.afterBatches();
  };
}

/** Binds the port the first time the worker is live: a new worker never answers older data than the others. */
function binder(dns: DnsServer, status: WorkerStatus, log: Logger): () => void {
  let bound = false;
  return () => {
    if (bound || status.mode !== 'live') return;
    bound = true;
    dns.listen(status.port).then(
      () => send({ type: 'applied', revision: status.applied }),
      (error: unknown) => {
        log.error({ err: error, port: status.port }, 'dns worker: cannot bind the port');
        process.exit(1);
      },
    );
  };
}

function messageHandler(dns: DnsServer, zones: WorkerZones, ctx: WorkerZonesContext, portGiven: (port: number) => void): (message: ToWorker) => void {
  const { status } = ctx;
  const takeAll = batchTaker(zones, ctx);
  const bindOnce = binder(dns, status, ctx.log);
  return (message) => {
    switch (message.type) {
      case 'port':
        portGiven(message.port);
        break;
      case 'reload':
        zones.reloadAsked(message.pinned);
        break;
      case 'catchup': {
        const revision = zones.caughtUp();
        if (revision === undefined) break;
        status.applied = revision;
        status.mode = 'live';
        takeAll(message.entries);
        bindOnce();
        break;
      }
      case 'batch':
        if (status.mode === 'live') takeAll([message.entry]);
        break;
      case 'metrics':
        send({ type: 'metrics', id: message.id, snapshot: dns.metrics.snapshot() });
        break;
      default:
        break;
    }
  };
}

if (!process.send) {
  console.error('palisade: the DNS worker is started by `palisade dns` (PALISADE_DNS_WORKERS), not on its own');
  process.exit(2);
}
process.once('message', (message: ToWorker) => {
  if (message.type !== 'init') return;
  run(message).catch((error: unknown) => {
    console.error('palisade dns worker: cannot start:', error);
    process.exit(1);
  });
});

// A DNS worker of `palisade dns` (PALISADE_DNS_WORKERS > 1), a child process of the name server:
// answers queries on the port the primary claimed (SO_REUSEPORT), from an index it reads from the
// primary's local state and keeps current with the batches the primary forwards (it binds once
// it has caught up with the primary: never behind the others). It pulls
// nothing from the API and listens on no HTTP port. It ends when the primary tells it (SIGTERM)
// or goes away (the IPC channel closes).
import { deserialize } from 'node:v8';
import { applyBatch } from '../../dns/zone/apply.ts';
import { loadConfig } from '../../config.ts';
import { createLogger } from '../../log.ts';
import { newDnsServer, openGeo } from '../dns-parts.ts';
import type { FromWorker, ToWorker, WorkerInit, BatchEntry } from './messages.ts';
import { StoredState, type BatchBody } from './stored-state.ts';

const send = (message: FromWorker) => process.send?.(message);
const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

async function run(init: WorkerInit): Promise<void> {
  const config = loadConfig();
  const log = createLogger(config.logLevel).child({ worker: init.worker });
  const geo = openGeo(config, log, true);
  const dns = newDnsServer(config, log, geo, { cookieSecret: Buffer.from(init.cookieSecret), rateLimit: init.rateLimit, tcp: init.tcp, reusePort: 'join' }, false);
  const stored = new StoredState(init.stateDir);
  let applied = 0;
  dns.metrics.revisionApplied = () => applied;
  // loading → waiting (for the catch-up) → live; batches are taken only when live (the catch-up
  // after each load brings what arrived meanwhile).
  let mode: 'loading' | 'waiting' | 'live' = 'loading';
  let again = false;
  let port = 0;
  let bound = false;
  let portGiven: (port: number) => void = () => undefined;
  const portKnown = new Promise<number>((resolve) => (portGiven = resolve));
  if (init.port) portGiven(init.port);

  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    const bound = setTimeout(() => process.exit(0), 5000);
    bound.unref();
    try {
      await dns.close();
      await stored.close();
      geo?.close();
    } finally {
      process.exit(0);
    }
  };
  process.on('SIGTERM', () => void stop());
  // The primary decides when to stop (Ctrl-C reaches the whole process group).
  process.on('SIGINT', () => undefined);
  process.on('disconnect', () => void stop());
  if (!process.connected) return stop();

  const reload = async (why: string): Promise<void> => {
    if (mode === 'loading') {
      again = true;
      return;
    }
    mode = 'loading';
    const begun = Date.now();
    log.info({ revision: applied, why }, 'dns worker: reading the local state again');
    do {
      again = false;
      applied = await stored.load(dns.index, turn);
    } while (again);
    mode = 'waiting';
    send({ type: 'loaded', revision: applied, port, ms: Date.now() - begun, zones: dns.index.size });
  };

  /** False when the entry does not follow what this index holds (a gap). */
  const take = (entry: BatchEntry): boolean => {
    if (entry.revision <= applied) return true;
    if (entry.since !== applied) return false;
    const body = deserialize(entry.body) as BatchBody;
    applyBatch(dns.index, body.batch, stored.source(body.read));
    applied = entry.revision;
    return true;
  };
  const takeAll = (entries: BatchEntry[]): void => {
    try {
      for (const entry of entries) {
        if (!take(entry)) {
          void reload(`batch ${entry.since}→${entry.revision} does not follow revision ${applied}`);
          return;
        }
      }
    } catch (error) {
      log.error({ err: error, revision: applied }, 'dns worker: a batch failed to apply; reading the local state again');
      void reload('a batch failed');
      return;
    }
    send({ type: 'applied', revision: applied });
  };

  // Listening from the start: a reload asked for while the first load runs is done after it.
  process.on('message', (message: ToWorker) => {
    switch (message.type) {
      case 'port':
        portGiven(message.port);
        break;
      case 'reload':
        void reload('the primary loaded a snapshot');
        break;
      case 'catchup':
        if (mode !== 'waiting') break;
        mode = 'live';
        takeAll(message.entries);
        // The first time: bound only now, so that a new worker never answers older data than
        // the others (the batches after the stored revision are applied).
        if (!bound && mode === 'live') {
          bound = true;
          dns.listen(port).then(
            () => send({ type: 'applied', revision: applied }),
            (error: unknown) => {
              log.error({ err: error, port }, 'dns worker: cannot bind the port');
              process.exit(1);
            },
          );
        }
        break;
      case 'batch':
        if (mode === 'live') takeAll([message.entry]);
        break;
      case 'metrics':
        send({ type: 'metrics', id: message.id, snapshot: dns.metrics.snapshot() });
        break;
      default:
        break;
    }
  });

  const started = Date.now();
  applied = stored.loadNow(dns.index);
  const loadedMs = Date.now() - started;
  port = await portKnown;
  mode = 'waiting';
  if (again) void reload('the primary loaded a snapshot');
  else send({ type: 'loaded', revision: applied, port, ms: loadedMs, zones: dns.index.size });

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

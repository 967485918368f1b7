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

async function run(init: WorkerInit): Promise<void> {
  const config = loadConfig();
  const log = createLogger(config.logLevel).child({ worker: init.worker });
  const geo = openGeo(config, log, true);
  const dns = newDnsServer(config, log, geo, { cookieSecret: Buffer.from(init.cookieSecret), rateLimit: init.rateLimit, tcp: init.tcp, reusePort: 'join' }, false);
  const stored = new StoredState(init.stateDir);
  let applied = 0;
  dns.metrics.revisionApplied = () => applied;
  // waiting (pinned, for the catch-up after the pin) → live. A re-pin of a live worker keeps it
  // live: batches go on applying to the base it has until the catch-up swaps the new one in.
  let mode: 'waiting' | 'live' = 'waiting';
  let port = 0;
  let bound = false;
  let portGiven: (port: number) => void = () => undefined;
  const portKnown = new Promise<number>((resolve) => (portGiven = resolve));
  if (init.port) portGiven(init.port);
  let repinTimer: NodeJS.Timeout | undefined;

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

  /** Pins the stored state aside and tells the primary its revision (the catch-up makes it the base). */
  const pin = (why: string, live: boolean): void => {
    const begun = Date.now();
    const revision = stored.pin();
    if (!live) mode = 'waiting';
    if (why) log.info({ revision: applied, pinned: revision, why }, 'dns worker: pinning the local state again');
    send({ type: 'loaded', revision, port, ms: Date.now() - begun, zones: stored.zones });
  };
  /** The primary loaded a snapshot, or the batches after the pin are no longer kept: pin again (not at once if it did not move). */
  const reload = (why: string): void => {
    mode = 'waiting';
    if (repinTimer) return;
    // Said in answer to a pin of ours: the state has not moved on enough yet, so not again at once.
    const wait = stored.pinned ? 250 : 0;
    stored.drop();
    repinTimer = setTimeout(() => {
      repinTimer = undefined;
      // Before the port is known the first pin is yet to come (below).
      if (port) pin(why, false);
    }, wait);
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
          reload(`batch ${entry.since}→${entry.revision} does not follow revision ${applied}`);
          return;
        }
      }
    } catch (error) {
      log.error({ err: error, revision: applied }, 'dns worker: a batch failed to apply; pinning the local state again');
      reload('a batch failed');
      return;
    }
    send({ type: 'applied', revision: applied });
    if (stored.due(dns.index)) pin('re-pin: the zones changed since the base are held whole', true);
  };

  // Listening from the start: a reload asked for while the first load runs is done after it.
  process.on('message', (message: ToWorker) => {
    switch (message.type) {
      case 'port':
        portGiven(message.port);
        break;
      case 'reload':
        // A re-pin of a live worker that the primary cannot catch up (the stored state lags, e.g.
        // a full disk): it stays live on the base it has, and tries again later.
        if (message.pinned !== undefined && mode === 'live' && stored.pinned) stored.postpone();
        else reload('the primary loaded a snapshot, or no longer keeps the batches after the pin');
        break;
      case 'catchup':
        if (!stored.pinned || repinTimer) break;
        // The pin becomes the base with the batches after it, in this one synchronous step.
        applied = stored.use(dns.index);
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

  port = await portKnown;
  if (!repinTimer) pin('', false);
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

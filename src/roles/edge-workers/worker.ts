// One worker of the edge role (`palisade edge --edge-worker`, started by the primary): an edge
// server fed by its primary instead of a feed — the whole state when it starts, then every change
// in order — serving the connections the primary hands it (or, balanced by the kernel, accepting
// on the shared ports itself). What the node shares goes through the primary: backend verdicts,
// bans, each domain's bandwidth, the cache's fill locks; every half second the worker sends its
// counters and request measures (the primary's /metrics and uptime reports are the node's).
import { Socket } from 'node:net';
import type { Config } from '../../config.ts';
import { edgeWorkerIndex } from '../../config/edge.ts';
import type { EdgeServer } from '../../edge/edge-server.ts';
import { EdgeState } from '../../edge/edge-state.ts';
import { createLogger } from '../../log.ts';
import { openGeo } from '../dns-parts.ts';
import { CACHE_DISK_BYTES, newEdgeServer } from '../edge-parts.ts';
import { closeOnSignal } from '../shutdown.ts';
import { StartupError } from '../startup-error.ts';
import { isMessage, type FromWorker, type ToWorker } from './messages.ts';
import { DEFAULT_CONNECTION_LIMITS } from '../../edge/protect/connection-limits.ts';
import { DEFAULT_BODY_BUFFER } from '../../edge/protect/body-buffer-budget.ts';

const STATS_MS = 500;
/** Within the primary's bound for its workers (it kills them past it). */
export const WORKER_SHUTDOWN_MS = 7000;

/** The worker's side of the node-wide fill locks. */
class LockClient {
  private nextId = 1;
  private readonly waiting = new Map<number, (granted: boolean) => void>();

  constructor(private readonly send: (message: FromWorker) => void) {}

  acquire(hash: string, wait: boolean, timeoutMs: number): Promise<boolean> {
    const id = this.nextId++;
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.waiting.delete(id);
        resolve(false);
      }, timeoutMs);
      this.waiting.set(id, (granted) => {
        clearTimeout(timer);
        resolve(granted);
      });
      this.send({ t: 'lock', id, hash, wait });
    });
  }

  answer(id: number, hash: string, granted: boolean): void {
    const waiter = this.waiting.get(id);
    this.waiting.delete(id);
    if (waiter) waiter(granted);
    // Granted after this worker stopped waiting (the primary was slow): let it go at once.
    else if (granted) this.release(hash);
  }

  release(hash: string): void {
    this.send({ t: 'unlock', hash });
  }
}

export async function runEdgeWorker(config: Config): Promise<void> {
  if (!process.send) throw new StartupError('`palisade edge --edge-worker` is started by `palisade edge` (PALISADE_EDGE_WORKERS), not on its own');
  const index = edgeWorkerIndex();
  const log = createLogger(config.logLevel).child({ worker: index });
  const send = (message: FromWorker): void => {
    if (process.connected) process.send!(message, undefined, undefined, () => undefined);
  };
  const state = new EdgeState(config.edge.node);
  const geo = openGeo(config, log);
  const locks = new LockClient(send);
  /** Workers sending for each domain, as the primary last said. */
  const senders = new Map<string, number>();
  let workers = 1;
  let edge: EdgeServer | undefined;
  /** Balanced by the kernel: serving once listening on the shared ports. */
  let listening: Promise<unknown> = Promise.resolve();
  /** A verdict from the primary is taken, not passed back. */
  let told = false;

  const start = (init: Extract<ToWorker, { t: 'init' }>): void => {
    workers = init.workers;
    const perWorker = Math.max(16, Math.ceil(config.edge.maxConnections / workers));
    edge = newEdgeServer(config, state, log.child({ component: 'edge' }), geo, {
      challenge: { difficulty: config.edge.challenge.difficulty, cookieMinutes: config.edge.challenge.cookieMinutes, secret: init.secret },
      // The node's bounds, divided: each worker holds its part of the connections, of the memory cache and of the body buffer.
      connections: { ...DEFAULT_CONNECTION_LIMITS, max: perWorker, perClient: config.edge.maxConnectionsPerClient, reserve: Math.floor(perWorker / 16) },
      // A client network's connections all reach one worker (client balance): its share stays whole.
      bodyBuffer: { ...DEFAULT_BODY_BUFFER, nodeBytes: Math.max(config.edge.bodyBufferPerClientBytes, Math.floor(config.edge.bodyBufferBytes / workers)), perClientBytes: config.edge.bodyBufferPerClientBytes },
      cache: {
        memoryBytes: Math.max(1_048_576, Math.floor(config.edge.cacheMemoryBytes / workers)),
        diskBytes: CACHE_DISK_BYTES,
        dir: config.edge.cacheDir,
        shared: { acquire: (hash, wait, timeoutMs) => locks.acquire(hash, wait, timeoutMs), release: (hash) => locks.release(hash), revisionOf: (domain) => state.routes.get(domain)?.revision },
      },
      activeChecks: false,
      bandwidthShare: { part: (domain) => 1 / (senders.get(domain) ?? workers), sending: (domain, sending) => send({ t: 'bandwidth', domain, sending }) },
    });
    const server = edge;
    server.setTicketKeys(init.ticketKeys);
    server.health.observer = {
      checked: () => undefined,
      switched: (backend, up) => {
        if (!told) send({ t: 'health', backend, up });
      },
    };
    for (const backend of init.down) force(backend, false);
    server.clientLimits.onBan = (client, until) => send({ t: 'ban', client, until });
    for (const [client, until] of init.bans) server.clientLimits.ban(client, until);
    if (init.listen) {
      listening = server.listen(init.listen.host, init.listen.http, init.listen.https, { reusePort: true }).catch((error: Error) => {
        log.error({ err: error.message }, 'edge worker: cannot listen');
        process.exit(1);
      });
    } else server.serveHandedOver(init.httpsPort);
  };

  const force = (backend: string, up: boolean): void => {
    told = true;
    try {
      edge?.health.force(backend, up);
    } finally {
      told = false;
    }
  };

  process.on('message', (message: unknown, handle: unknown) => {
    if (!isMessage<ToWorker>(message)) return;
    switch (message.t) {
      case 'init':
        if (!edge) start(message);
        return;
      case 'replace':
        state.replace(message.items);
        return;
      case 'apply':
        state.apply(message.batch);
        return;
      case 'revision': {
        const revision = message.revision;
        void listening.then(() => send({ t: 'applied', revision }));
        return;
      }
      case 'connection':
        if (!(handle instanceof Socket)) return;
        if (edge) edge.accept(handle, message.scheme);
        else handle.destroy();
        return;
      case 'health':
        force(message.backend, message.up);
        return;
      case 'ban':
        edge?.clientLimits.ban(message.client, message.until);
        return;
      case 'bandwidth':
        senders.set(message.domain, message.senders);
        edge?.bandwidth.reshare(message.domain);
        return;
      case 'lock':
        locks.answer(message.id, message.hash, message.granted);
        return;
    }
  });

  const statsMessage = (): FromWorker | undefined => edge && { t: 'stats', metrics: edge.metricsSnapshot(), requests: edge.uptime.takeRequests() };
  const stats = (): void => {
    const message = statsMessage();
    if (message) send(message);
  };
  const timer = setInterval(stats, STATS_MS);
  timer.unref();
  send({ t: 'hello' });

  closeOnSignal(
    log,
    async () => {
      clearInterval(timer);
      await edge?.close();
      geo?.close();
      // What was counted since the last half second is not lost with the worker (sent before it exits).
      const last = statsMessage();
      if (last && process.connected) await new Promise<void>((resolve) => process.send!(last, undefined, undefined, () => resolve()));
    },
    { boundMs: WORKER_SHUTDOWN_MS },
  );
}

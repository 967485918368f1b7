// One worker of the edge role (`palisade edge --edge-worker`, started by the primary): an edge
// server fed by its primary instead of a feed — the whole state when it starts, then every change
// in order — serving the connections the primary hands it (or, balanced by the kernel, accepting
// on the shared ports itself). What the node shares goes through the primary: backend verdicts,
// bans, each domain's bandwidth, the cache's fill locks; every half second the worker sends its
// counters and request measures (the primary's /metrics and uptime reports are the node's).
import { Socket } from 'node:net';
import type { Logger } from 'pino';
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

/** What the worker's steps share. */
interface Worker {
  config: Config;
  log: Logger;
  send: (message: FromWorker) => void;
  state: EdgeState;
  geo: ReturnType<typeof openGeo>;
  locks: LockClient;
  /** Workers sending for each domain, as the primary last said. */
  senders: Map<string, number>;
  workers: number;
  edge: EdgeServer | undefined;
  /** Balanced by the kernel: serving once listening on the shared ports. */
  listening: Promise<unknown>;
  /** A verdict from the primary is taken, not passed back. */
  told: boolean;
}

export async function runEdgeWorker(config: Config): Promise<void> {
  if (!process.send) throw new StartupError('`palisade edge --edge-worker` is started by `palisade edge` (PALISADE_EDGE_WORKERS), not on its own');
  const log = createLogger(config.logLevel).child({ worker: edgeWorkerIndex() });
  const send = (message: FromWorker): void => {
    if (process.connected) process.send!(message, undefined, undefined, () => undefined);
  };
  const w: Worker = { config, log, send, state: new EdgeState(config.edge.node), geo: openGeo(config, log), locks: new LockClient(send), senders: new Map(), workers: 1, edge: undefined, listening: Promise.resolve(), told: false };
  process.on('message', (message: unknown, handle: unknown) => {
    if (isMessage<ToWorker>(message)) onPrimaryMessage(w, message, handle);
  });
  const timer = setInterval(() => {
    const message = statsMessage(w);
    if (message) send(message);
  }, STATS_MS);
  timer.unref();
  send({ t: 'hello' });

  closeOnSignal(
    log,
    async () => {
      clearInterval(timer);
      await w.edge?.close();
      w.geo?.close();
      // What was counted since the last half second is not lost with the worker (sent before it exits).
      const last = statsMessage(w);
      if (last && process.connected) await new Promise<void>((resolve) => process.send!(last, undefined, undefined, () => resolve()));
    },
    { boundMs: WORKER_SHUTDOWN_MS },
  );
}

/** The worker's figures and the request measures since the last (undefined before it serves). */
function statsMessage(w: Worker): FromWorker | undefined {
  return w.edge && { t: 'stats', metrics: w.edge.metricsSnapshot(), requests: w.edge.uptime.takeRequests() };
}

/** What the primary says: the start, the state and its changes, connections, the node's shares. */
function onPrimaryMessage(w: Worker, message: ToWorker, handle: unknown): void {
  switch (message.t) {
    case 'init':
      if (!w.edge) startServer(w, message);
      return;
    case 'replace':
      w.state.replace(message.items);
      return;
    case 'apply':
      w.state.apply(message.batch);
      return;
    case 'revision': {
      const revision = message.revision;
      void w.listening.then(() => w.send({ t: 'applied', revision }));
      return;
    }
    case 'connection':
      if (!(handle instanceof Socket)) return;
      if (w.edge) w.edge.accept(handle, message.scheme);
      else handle.destroy();
      return;
    case 'health':
      force(w, message.backend, message.up);
      return;
    case 'ban':
      w.edge?.clientLimits.ban(message.client, message.until);
      return;
    case 'bandwidth':
      w.senders.set(message.domain, message.senders);
      w.edge?.bandwidth.reshare(message.domain);
      return;
    case 'lock':
      w.locks.answer(message.id, message.hash, message.granted);
      return;
  }
}

/** A backend verdict the primary passed on (not sent back to it). */
function force(w: Worker, backend: string, up: boolean): void {
  w.told = true;
  try {
    w.edge?.health.force(backend, up);
  } finally {
    w.told = false;
  }
}

/** The edge server, its share of the node's bounds, and its links to the node's shares through the primary. */
function startServer(w: Worker, init: Extract<ToWorker, { t: 'init' }>): void {
  const { config, state, locks, senders, send } = w;
  const workers = (w.workers = init.workers);
  const perWorker = Math.max(16, Math.ceil(config.edge.maxConnections / workers));
  const server = newEdgeServer(config, state, w.log.child({ component: 'edge' }), w.geo, {
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
    bandwidthShare: { part: (domain) => 1 / (senders.get(domain) ?? w.workers), sending: (domain, sending) => send({ t: 'bandwidth', domain, sending }) },
  });
  w.edge = server;
  server.setTicketKeys(init.ticketKeys);
  server.health.observer = {
    checked: () => undefined,
    switched: (backend, up) => {
      if (!w.told) send({ t: 'health', backend, up });
    },
  };
  for (const backend of init.down) force(w, backend, false);
  server.clientLimits.onBan = (client, until) => send({ t: 'ban', client, until });
  for (const [client, until] of init.bans) server.clientLimits.ban(client, until);
  if (init.listen) {
    w.listening = server.listen(init.listen.host, init.listen.http, init.listen.https, { reusePort: true }).catch((error: Error) => {
      w.log.error({ err: error.message }, 'edge worker: cannot listen');
      process.exit(1);
    });
  } else server.serveHandedOver(init.httpsPort);
}

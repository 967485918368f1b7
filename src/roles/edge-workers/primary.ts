// The edge role with workers (PALISADE_EDGE_WORKERS > 1): this process is the node's one feed
// consumer, notify listener (/healthz, /metrics for the whole node) and uptime reporter, and
// supervises N worker processes (worker.ts) that serve the traffic.
//
//   state       the feed applies to this process's EdgeState; each change goes on to every worker
//               in order (a worker that starts gets the whole state first); each worker says
//               which revision it applied (/healthz shows them and how long they took)
//   connections balanced by client (default): this process accepts on the HTTP and HTTPS ports
//               and hands each connection to the worker its client network hashes to
//               (dispatch.ts), so per-client limits hold exactly as in one process; by kernel:
//               every worker listens on the ports itself (SO_REUSEPORT)
//   shared      the challenge key (one per node: PALISADE_EDGE_CHALLENGE_SECRET, or made here),
//               TLS session ticket keys,
//               backend verdicts (the active checks run here once for the node; a worker's own
//               verdict from its traffic goes to all), bans, each domain's bandwidth (divided
//               between the workers sending for it), the cache directory and its fill locks
//               (node-shares.ts), kept tidy by the janitor here
//   restarts    a worker that stops is started again with backoff; its clients go to the next
//               worker meanwhile; SIGTERM stops all within the bound
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import type { MetricsSnapshot } from '../../common/metrics/family.ts';
import type { Config } from '../../config.ts';
import { BackendHealth } from '../../edge/backend-health.ts';
import { CacheJanitor } from '../../edge/cache/cache-janitor.ts';
import { EdgeState, type EdgeBatch } from '../../edge/edge-state.ts';
import { RemoteEdgeFeed } from '../../edge/feed/edge-feeds.ts';
import { DEFAULT_CONNECTION_LIMITS } from '../../edge/protect/connection-limits.ts';
import { IpRanges } from '../../edge/protect/ip-ranges.ts';
import { UptimeRecorder } from '../../edge/uptime-recorder.ts';
import { UptimeReporter } from '../../edge/uptime-reporter.ts';
import { createLogger } from '../../log.ts';
import type { Logger } from 'pino';
import { NotifyListener } from '../../sync/notify-listener.ts';
import { CACHE_DISK_BYTES } from '../edge-parts.ts';
import { feedHealth } from '../feed-health.ts';
import { closeOnSignal } from '../shutdown.ts';
import { StartupError } from '../startup-error.ts';
import { ConnectionHandover } from './connection-handover.ts';
import { primaryMetrics } from './primary-metrics.ts';
import { ConnectionDispatch } from './dispatch.ts';
import type { EdgeItems, FromWorker, Scheme, ToWorker } from './messages.ts';
import { Bans, BandwidthSenders, FillLocks, type LockReply } from './node-shares.ts';
import { WorkerPool, type WorkerSlot } from './worker-pool.ts';
import { WORKER_SHUTDOWN_MS } from './worker.ts';

/** How long the workers get to stop before they are killed (the role's whole bound is 10 s). */
const WORKERS_STOP_MS = WORKER_SHUTDOWN_MS + 1000;

/** The node's EdgeState: every batch applied here goes on to the workers. */
class RelayedEdgeState extends EdgeState {
  relay: ((batch: EdgeBatch) => void) | undefined;

  override apply(batch: EdgeBatch): void {
    super.apply(batch);
    this.relay?.(batch);
  }

  /** Everything, as replace() takes it (a starting worker's first state). */
  items(): EdgeItems {
    return {
      domains: [...this.routes.names()].map((name) => this.routes.get(name)!),
      certificates: [...this.certificates.values()],
      challenges: [...this.challenges.values()],
      ipLists: [...this.ipLists.values()],
      node: this.node,
    };
  }
}

export interface PostReport {
  (report: import('../../uptime/report.ts').UptimeReport): Promise<void>;
}

/** What the primary's steps share: the node's parts, made by nodeParts, and the pool once made. */
export interface Primary {
  config: Config;
  log: Logger;
  count: number;
  byKernel: boolean;
  /** One key for the node: a clearance one worker set passes in every other. */
  secret: Buffer;
  /** And one set of TLS ticket keys: a session resumes in whichever worker the connection meets. */
  ticketKeys: Buffer;
  state: RelayedEdgeState;
  feed: RemoteEdgeFeed;
  janitor: CacheJanitor;
  /** The node's backend verdicts: active checks here, once for all workers. */
  health: BackendHealth;
  recorder: UptimeRecorder;
  locks: FillLocks;
  senders: BandwidthSenders;
  bans: Bans;
  /** Each worker's last figures, by worker index. */
  stats: Map<number, MetricsSnapshot>;
  /** When each recent revision went out to the workers (for how long they took). */
  sentAt: Map<number, number>;
  ports: { http: number; https: number };
  pool: WorkerPool;
  /** The worker a verdict came from (not told it again). */
  verdictFrom: WorkerSlot | undefined;
  /** Set once the ports are open: the connections a stopped worker never got go to another; those waiting for a worker to serve go when one does. */
  handOverQueued: (slot: WorkerSlot) => void;
  handOverParked: () => void;
}

// The role's composition root: each step below makes one group of parts (each its own module: the
// feed, backend health, the pool, the node's shares, the connection hand-over, the metrics) and
// wires their callbacks to one another.
export async function runEdgePrimary(config: Config, postReport: PostReport): Promise<void> {
  const p = nodeParts(config);
  p.pool = newPool(p);
  relayChanges(p);
  p.feed.start();
  p.health.start(() => p.state.routes.backends(), config.edge.checkIntervalMs);
  p.janitor.start();
  // The ports first (a port taken is a start-up error before any worker runs); by kernel, held
  // here only until the workers listen on them too.
  const listeners = await openPorts(p);
  await p.pool.start().catch((error: Error) => {
    throw new StartupError(error.message);
  });
  if (p.byKernel) for (const server of listeners.splice(0)) server.close();
  const reporter = new UptimeReporter(p.recorder, postReport, config.edge.reportMs, p.log.child({ component: 'uptime' }));
  reporter.start();
  const { listener, syncPort } = await listenForFeed(p, reporter);
  const { edge, sync } = config;
  const shown = edge.host.includes(':') ? `[${edge.host}]` : edge.host;
  p.log.info(
    { node: edge.node, http: `http://${shown}:${p.ports.http}`, https: `https://${shown}:${p.ports.https}`, notify: `http://${sync.host}:${syncPort}/notify`, api: sync.url, revision: p.feed.applied, domains: p.state.routes.size, workers: p.count, balance: edge.workerBalance },
    'palisade edge serving',
  );

  closeOnSignal(p.log, async () => {
    // No new connections; the workers finish theirs (bounded), then the rest stops.
    for (const server of listeners) server.close();
    reporter.stop();
    await p.pool.stop(WORKERS_STOP_MS);
    await listener.close();
    p.health.stop();
    await p.janitor.stop();
    await p.feed.stop();
  });
}

/** The node's state, feed, cache janitor, backend health and shares (the pool comes next). */
function nodeParts(config: Config): Primary {
  const { sync, edge } = config;
  const log = createLogger(config.logLevel);
  const state = new RelayedEdgeState(edge.node);
  const feed = new RemoteEdgeFeed(state, { url: sync.url!, token: sync.token!, secret: sync.secret!, pollMs: sync.pollMs, dataDir: join(config.dataDir, 'edge-state'), log: log.child({ component: 'sync' }) });
  const janitor = new CacheJanitor(edge.cacheDir, CACHE_DISK_BYTES, log.child({ component: 'cache' }));
  janitor.prepare();
  const health = new BackendHealth(log.child({ component: 'edge' }), undefined, config.allowPrivateBackends);
  const recorder = new UptimeRecorder(state.routes, health);
  const p: Primary = {
    config,
    log,
    count: edge.workers,
    byKernel: edge.workerBalance === 'kernel',
    secret: edge.challenge.secret ?? randomBytes(32),
    ticketKeys: randomBytes(48),
    state,
    feed,
    janitor,
    health,
    recorder,
    locks: new FillLocks(),
    senders: new BandwidthSenders(),
    bans: new Bans(),
    stats: new Map(),
    sentAt: new Map(),
    ports: { http: 0, https: 0 },
    pool: undefined as unknown as WorkerPool,
    verdictFrom: undefined,
    handOverQueued: () => undefined,
    handOverParked: () => undefined,
  };
  health.observer = {
    checked: (backend, ok, ms) => recorder.checked(backend, ok, ms),
    switched: (backend, up) => {
      recorder.switched();
      p.pool.broadcast({ t: 'health', backend, up }, p.verdictFrom);
    },
  };
  return p;
}

/** The worker processes: what they say goes to onWorkerMessage; one that stops leaves its shares. */
function newPool(p: Primary): WorkerPool {
  const pool: WorkerPool = new WorkerPool({
    count: p.count,
    log: p.log,
    env: (index) => ({ ...process.env, PALISADE_EDGE_WORKER: String(index) }),
    onMessage: (slot, message) => onWorkerMessage(p, slot, message),
    onExit: (slot) => {
      p.handOverQueued(slot);
      answerLocks(p, p.locks.workerGone(slot.index));
      for (const told of p.senders.workerGone(slot.index)) for (const index of told.workers) pool.send(pool.slots[index]!, { t: 'bandwidth', domain: told.domain, senders: told.senders });
    },
  });
  return pool;
}

/** Changes go on in order; the revision they make follows once the feed has set it (the same tick). */
function relayChanges(p: Primary): void {
  let revisionDue = false;
  p.state.relay = (batch) => {
    p.pool.broadcast({ t: 'apply', batch });
    if (revisionDue) return;
    revisionDue = true;
    process.nextTick(() => {
      revisionDue = false;
      p.sentAt.set(p.feed.applied, Date.now());
      if (p.sentAt.size > 64) p.sentAt.delete(p.sentAt.keys().next().value!);
      p.pool.broadcast({ t: 'revision', revision: p.feed.applied });
    });
  };
}

/** The HTTP and HTTPS ports: by client, connections handed over to the worker of their network; by kernel, held until the workers listen. */
async function openPorts(p: Primary): Promise<Server[]> {
  const { edge } = p.config;
  const trusted = IpRanges.compile(edge.trustedProxies);
  const dispatch = new ConnectionDispatch(p.count, trusted, DEFAULT_CONNECTION_LIMITS.prefixV4, DEFAULT_CONNECTION_LIMITS.prefixV6);
  const handover = new ConnectionHandover(p.pool, dispatch);
  p.handOverQueued = (slot) => handover.handOverQueued(slot);
  p.handOverParked = () => handover.handOverParked();
  const listeners: Server[] = [];
  const listen = (scheme: Scheme, port: number): Promise<number> =>
    new Promise((resolve, reject) => {
      const server = p.byKernel ? createServer((socket) => socket.destroy()) : createServer({ pauseOnConnect: true }, (socket) => handover.accept(socket, scheme));
      listeners.push(server);
      server.once('error', (error: NodeJS.ErrnoException) => reject(new StartupError(`edge: cannot listen on ${edge.host}:${port} for ${scheme.toUpperCase()} (${error.code ?? error.message}); free the port or set PALISADE_EDGE_HOST/PALISADE_EDGE_HTTP_PORT/PALISADE_EDGE_HTTPS_PORT`)));
      server.listen({ port, host: edge.host, reusePort: p.byKernel }, () => resolve((server.address() as { port: number }).port));
    });
  p.ports = { http: await listen('http', edge.httpPort), https: await listen('https', edge.httpsPort) };
  return listeners;
}

/** The notify listener: pushes from the API, /healthz and /metrics for the whole node. */
async function listenForFeed(p: Primary, reporter: UptimeReporter): Promise<{ listener: NotifyListener; syncPort: number }> {
  const { sync, edge } = p.config;
  const { pool, feed, state } = p;
  const workersHealth = () => pool.slots.map((s) => ({ worker: s.index, pid: s.child?.pid, serving: s.ready, revision: s.revision, apply_ms: s.applyMs, restarts: s.restarts }));
  const healthOf = () => {
    const h = feedHealth(feed, sync.maxLagMs, { node: edge.node, node_status: state.node?.status ?? null, domains: state.routes.size, certificates: state.certificates.size, workers: workersHealth() });
    return pool.readyCount === 0 ? { ...h, ok: false, status: 'degraded', reason: 'no worker is serving' } : h;
  };
  const metrics = (): MetricsSnapshot =>
    primaryMetrics({ pool, workerSnapshots: p.stats.values(), cacheDiskBytes: p.janitor.bytes, applied: feed.applied, lag: Math.max(0, feed.current - feed.applied), reports: reporter, pushes: listener });
  const listener: NotifyListener = new NotifyListener({
    secret: sync.secret!,
    applied: () => feed.applied,
    onNotify: () => void feed.catchUp(),
    health: healthOf,
    metrics,
    log: p.log.child({ component: 'sync' }),
  });
  const syncPort = await listener.listen(sync.port, sync.host).catch((error: NodeJS.ErrnoException) => {
    throw new StartupError(`sync: cannot listen on ${sync.host}:${sync.port} (${error.code ?? error.message}); set PALISADE_SYNC_HOST/PALISADE_SYNC_PORT`);
  });
  return { listener, syncPort };
}

function answerLocks(p: Primary, replies: LockReply[]): void {
  for (const r of replies) p.pool.send(p.pool.slots[r.worker]!, { t: 'lock', id: r.id, hash: r.hash, granted: r.granted });
}

/** A worker that says hello gets its settings, the whole state, then the revision it reflects. */
function introduce(p: Primary, slot: WorkerSlot): void {
  const { edge } = p.config;
  const init: ToWorker = { t: 'init', index: slot.index, workers: p.count, secret: p.secret, ticketKeys: p.ticketKeys, httpsPort: p.ports.https, down: p.health.downList(), bans: p.bans.current() };
  if (p.byKernel) init.listen = { host: edge.host, http: p.ports.http, https: p.ports.https };
  p.pool.send(slot, init);
  p.pool.send(slot, { t: 'replace', items: p.state.items() });
  slot.introduced = true;
  p.pool.send(slot, { t: 'revision', revision: p.feed.applied });
}

/** What a worker says: its hello, revisions applied, verdicts, bans, bandwidth, fill locks, figures. */
function onWorkerMessage(p: Primary, slot: WorkerSlot, message: FromWorker): void {
  const { pool } = p;
  switch (message.t) {
    case 'hello':
      introduce(p, slot);
      return;
    case 'applied': {
      const at = p.sentAt.get(message.revision);
      slot.applyMs = at === undefined ? undefined : Date.now() - at;
      p.handOverParked();
      return;
    }
    case 'health':
      p.verdictFrom = slot;
      try {
        p.health.force(message.backend, message.up);
      } finally {
        p.verdictFrom = undefined;
      }
      return;
    case 'ban':
      p.bans.add(message.client, message.until);
      pool.broadcast({ t: 'ban', client: message.client, until: message.until }, slot);
      return;
    case 'bandwidth': {
      const told = p.senders.set(slot.index, message.domain, message.sending);
      for (const index of told?.workers ?? []) pool.send(pool.slots[index]!, { t: 'bandwidth', domain: message.domain, senders: told!.senders });
      return;
    }
    case 'lock':
      answerLocks(p, p.locks.lock(slot.index, message.id, message.hash, message.wait));
      return;
    case 'unlock':
      answerLocks(p, p.locks.unlock(slot.index, message.hash));
      return;
    case 'stats':
      p.stats.set(slot.index, message.metrics);
      p.recorder.addRequests(message.requests);
      return;
  }
}

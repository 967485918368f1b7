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

// The role's composition root, long on purpose: it only makes the parts above (each its own module:
// the feed, backend health, the pool, the node's shares, the connection hand-over, the metrics)
// and wires their callbacks to one another, which reads best in one place.
export async function runEdgePrimary(config: Config, postReport: PostReport): Promise<void> {
  const { sync, edge } = config;
  const log = createLogger(config.logLevel);
  const count = edge.workers;
  const byKernel = edge.workerBalance === 'kernel';
  // One key for the node: a clearance one worker set passes in every other.
  const secret = edge.challenge.secret ?? randomBytes(32);
  // And one set of TLS ticket keys: a session resumes in whichever worker the connection meets.
  const ticketKeys = randomBytes(48);
  const state = new RelayedEdgeState(edge.node);
  const feed = new RemoteEdgeFeed(state, { url: sync.url!, token: sync.token!, secret: sync.secret!, pollMs: sync.pollMs, dataDir: join(config.dataDir, 'edge-state'), log: log.child({ component: 'sync' }) });
  const janitor = new CacheJanitor(edge.cacheDir, CACHE_DISK_BYTES, log.child({ component: 'cache' }));
  janitor.prepare();

  // The node's backend verdicts: active checks here, once for all workers.
  const health = new BackendHealth(log.child({ component: 'edge' }), undefined, config.allowPrivateBackends);
  const recorder = new UptimeRecorder(state.routes, health);
  /** The worker a verdict came from (not told it again). */
  let verdictFrom: WorkerSlot | undefined;
  health.observer = {
    checked: (backend, ok, ms) => recorder.checked(backend, ok, ms),
    switched: (backend, up) => {
      recorder.switched();
      pool.broadcast({ t: 'health', backend, up }, verdictFrom);
    },
  };

  const locks = new FillLocks();
  const senders = new BandwidthSenders();
  const bans = new Bans();
  const stats = new Map<number, MetricsSnapshot>();
  /** When each recent revision went out to the workers (for how long they took). */
  const sentAt = new Map<number, number>();
  let ports = { http: 0, https: 0 };
  /** Set once the ports are open: the connections a stopped worker never got go to another; those waiting for a worker to serve go when one does. */
  let handOverQueued: (slot: WorkerSlot) => void = () => undefined;
  let handOverParked: () => void = () => undefined;

  const answerLocks = (replies: LockReply[]): void => {
    for (const r of replies) pool.send(pool.slots[r.worker]!, { t: 'lock', id: r.id, hash: r.hash, granted: r.granted });
  };
  const introduce = (slot: WorkerSlot): void => {
    const init: ToWorker = { t: 'init', index: slot.index, workers: count, secret, ticketKeys, httpsPort: ports.https, down: health.downList(), bans: bans.current() };
    if (byKernel) init.listen = { host: edge.host, http: ports.http, https: ports.https };
    pool.send(slot, init);
    pool.send(slot, { t: 'replace', items: state.items() });
    slot.introduced = true;
    pool.send(slot, { t: 'revision', revision: feed.applied });
  };
  const onMessage = (slot: WorkerSlot, message: FromWorker): void => {
    switch (message.t) {
      case 'hello':
        introduce(slot);
        return;
      case 'applied': {
        const at = sentAt.get(message.revision);
        slot.applyMs = at === undefined ? undefined : Date.now() - at;
        handOverParked();
        return;
      }
      case 'health':
        verdictFrom = slot;
        try {
          health.force(message.backend, message.up);
        } finally {
          verdictFrom = undefined;
        }
        return;
      case 'ban':
        bans.add(message.client, message.until);
        pool.broadcast({ t: 'ban', client: message.client, until: message.until }, slot);
        return;
      case 'bandwidth': {
        const told = senders.set(slot.index, message.domain, message.sending);
        for (const index of told?.workers ?? []) pool.send(pool.slots[index]!, { t: 'bandwidth', domain: message.domain, senders: told!.senders });
        return;
      }
      case 'lock':
        answerLocks(locks.lock(slot.index, message.id, message.hash, message.wait));
        return;
      case 'unlock':
        answerLocks(locks.unlock(slot.index, message.hash));
        return;
      case 'stats':
        stats.set(slot.index, message.metrics);
        recorder.addRequests(message.requests);
        return;
    }
  };
  const pool: WorkerPool = new WorkerPool({
    count,
    log,
    env: (index) => ({ ...process.env, PALISADE_EDGE_WORKER: String(index) }),
    onMessage,
    onExit: (slot) => {
      handOverQueued(slot);
      answerLocks(locks.workerGone(slot.index));
      for (const told of senders.workerGone(slot.index)) for (const index of told.workers) pool.send(pool.slots[index]!, { t: 'bandwidth', domain: told.domain, senders: told.senders });
    },
  });

  // Changes go on in order; the revision they make follows once the feed has set it (the same tick).
  let revisionDue = false;
  state.relay = (batch) => {
    pool.broadcast({ t: 'apply', batch });
    if (revisionDue) return;
    revisionDue = true;
    process.nextTick(() => {
      revisionDue = false;
      sentAt.set(feed.applied, Date.now());
      if (sentAt.size > 64) sentAt.delete(sentAt.keys().next().value!);
      pool.broadcast({ t: 'revision', revision: feed.applied });
    });
  };

  feed.start();
  health.start(() => state.routes.backends(), edge.checkIntervalMs);
  janitor.start();

  // The ports first (a port taken is a start-up error before any worker runs); by kernel, held
  // here only until the workers listen on them too.
  const trusted = IpRanges.compile(edge.trustedProxies);
  const dispatch = new ConnectionDispatch(count, trusted, DEFAULT_CONNECTION_LIMITS.prefixV4, DEFAULT_CONNECTION_LIMITS.prefixV6);
  const handover = new ConnectionHandover(pool, dispatch);
  handOverQueued = (slot) => handover.handOverQueued(slot);
  handOverParked = () => handover.handOverParked();
  const listeners: Server[] = [];
  const listen = (scheme: Scheme, port: number): Promise<number> =>
    new Promise((resolve, reject) => {
      const server = byKernel ? createServer((socket) => socket.destroy()) : createServer({ pauseOnConnect: true }, (socket) => handover.accept(socket, scheme));
      listeners.push(server);
      server.once('error', (error: NodeJS.ErrnoException) => reject(new StartupError(`edge: cannot listen on ${edge.host}:${port} for ${scheme.toUpperCase()} (${error.code ?? error.message}); free the port or set PALISADE_EDGE_HOST/PALISADE_EDGE_HTTP_PORT/PALISADE_EDGE_HTTPS_PORT`)));
      server.listen({ port, host: edge.host, reusePort: byKernel }, () => resolve((server.address() as { port: number }).port));
    });
  ports = { http: await listen('http', edge.httpPort), https: await listen('https', edge.httpsPort) };

  await pool.start().catch((error: Error) => {
    throw new StartupError(error.message);
  });
  if (byKernel) for (const server of listeners.splice(0)) server.close();

  const reporter = new UptimeReporter(recorder, postReport, edge.reportMs, log.child({ component: 'uptime' }));
  reporter.start();
  const workersHealth = () => pool.slots.map((s) => ({ worker: s.index, pid: s.child?.pid, serving: s.ready, revision: s.revision, apply_ms: s.applyMs, restarts: s.restarts }));
  const healthOf = () => {
    const h = feedHealth(feed, sync.maxLagMs, { node: edge.node, node_status: state.node?.status ?? null, domains: state.routes.size, certificates: state.certificates.size, workers: workersHealth() });
    return pool.readyCount === 0 ? { ...h, ok: false, status: 'degraded', reason: 'no worker is serving' } : h;
  };
  const metrics = (): MetricsSnapshot =>
    primaryMetrics({ pool, workerSnapshots: stats.values(), cacheDiskBytes: janitor.bytes, applied: feed.applied, lag: Math.max(0, feed.current - feed.applied), reports: reporter, pushes: listener });
  const listener: NotifyListener = new NotifyListener({
    secret: sync.secret!,
    applied: () => feed.applied,
    onNotify: () => void feed.catchUp(),
    health: healthOf,
    metrics,
    log: log.child({ component: 'sync' }),
  });
  const syncPort = await listener.listen(sync.port, sync.host).catch((error: NodeJS.ErrnoException) => {
    throw new StartupError(`sync: cannot listen on ${sync.host}:${sync.port} (${error.code ?? error.message}); set PALISADE_SYNC_HOST/PALISADE_SYNC_PORT`);
  });
  const shown = edge.host.includes(':') ? `[${edge.host}]` : edge.host;
  log.info(
    { node: edge.node, http: `http://${shown}:${ports.http}`, https: `https://${shown}:${ports.https}`, notify: `http://${sync.host}:${syncPort}/notify`, api: sync.url, revision: feed.applied, domains: state.routes.size, workers: count, balance: edge.workerBalance },
    'palisade edge serving',
  );

  closeOnSignal(log, async () => {
    // No new connections; the workers finish theirs (bounded), then the rest stops.
    for (const server of listeners) server.close();
    reporter.stop();
    await pool.stop(WORKERS_STOP_MS);
    await listener.close();
    health.stop();
    await janitor.stop();
    await feed.stop();
  });
}

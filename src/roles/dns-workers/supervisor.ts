// The primary's side of the DNS workers (PALISADE_DNS_WORKERS > 1). The primary is worker 0: it
// runs the one feed consumer of the host (RemoteFeed, local state, the notify/health/metrics
// listener) and answers queries too; workers 1 … N-1 are child processes that only answer.
//
// A worker reads (or, PALISADE_DNS_WORKER_ZONES=stored, pins) the local state (LMDB) itself, says
// which revision it holds, and gets the batches applied since (kept here, bounded), then every
// batch as the primary applies it, in order, serialized once for all. A snapshot loaded by the
// primary makes each worker read or pin the state again (it answers from what it has meanwhile). A worker that exits is started again
// with growing delays; the others keep answering (the kernel spreads the port's traffic over
// the sockets still bound).
import { fork, type ChildProcess } from 'node:child_process';
import { dirname, extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { serialize } from 'node:v8';
import type { Logger } from 'pino';
import type { MetricsSnapshot } from '../../common/metrics/family.ts';
import type { DnsWorkerZones } from '../../config/dns.ts';
import type { RateLimitOptions } from '../../dns/rate-limit/rate-limit.ts';
import type { TcpLimits } from '../../dns/server/tcp-limits.ts';
import type { AppliedEvent } from '../../sync/remote-feed.ts';
import type { BatchEntry, FromWorker, ToWorker } from './messages.ts';
import type { BatchBody } from './worker-zones.ts';
import { crashesAfter, restartDelay } from '../supervisor/restart-backoff.ts';

/** Batches kept for workers that (re)load: a worker's stored revision is at most a batch or two behind. */
const RING_BYTES = 64 * 1_048_576;
const RING_ENTRIES = 1024;
const STOP_BOUND_MS = 5_000;
const METRICS_TIMEOUT_MS = 1_000;

export interface DnsWorkersOptions {
  /** Workers in all, the primary included. */
  count: number;
  cookieSecret: Buffer;
  /** Each worker's share (see settings.ts). */
  rateLimit: RateLimitOptions;
  tcp: TcpLimits;
  stateDir: string;
  /** How the workers hold the zones (PALISADE_DNS_WORKER_ZONES). */
  zones: DnsWorkerZones;
  /** The revision the primary's index holds now. */
  applied: () => number;
  log: Logger;
}

interface Worker {
  id: number;
  child?: ChildProcess;
  /** Catch-up sent: batches go to it as they are applied. */
  live: boolean;
  revision: number;
  /** When it last held the primary's revision (or started). */
  currentAt: number;
  startedAt: number;
  restarts: number;
  /** Consecutive exits soon after start. */
  failures: number;
  /** From the primary applying the last batch to this worker saying it applied it (IPC both ways included). */
  lastApplyMs?: number;
  timer?: NodeJS.Timeout;
  exited?: Promise<void>;
}

export interface WorkerHealth {
  worker: number;
  pid: number | null;
  revision: number;
  live: boolean;
  restarts: number;
  last_apply_ms?: number;
}

function workerModule(): { file: string; execArgv: string[] } {
  const self = fileURLToPath(import.meta.url);
  const ext = extname(self);
  // From the TypeScript sources (bin/palisade.js registers tsx in-process): the child loads tsx too.
  return { file: join(dirname(self), `worker${ext}`), execArgv: ext === '.ts' ? ['--import', import.meta.resolve('tsx')] : [] };
}

export class DnsWorkers {
  private readonly workers: Worker[] = [];
  private ring: BatchEntry[] = [];
  private ringBytes = 0;
  /** The ring holds every batch after this revision. */
  private ringFrom: number;
  private latest: number;
  /** When the primary applied `latest` (performance.now()). */
  private latestAt = 0;
  private stopping = false;
  private metricsId = 0;
  private readonly metricsWaiting = new Map<number, (snapshot: MetricsSnapshot) => void>();
  private readonly module = workerModule();
  private port: number | undefined;

  constructor(private readonly options: DnsWorkersOptions) {
    this.latest = options.applied();
    this.ringFrom = this.latest;
    for (let id = 1; id < options.count; id++) this.workers.push({ id, live: false, revision: 0, currentAt: Date.now(), startedAt: 0, restarts: 0, failures: 0 });
  }

  /**
   * Starts the workers: they read the local state while the primary reads it too (a core each),
   * and bind once `serve` gives them the port.
   */
  start(): void {
    for (const worker of this.workers) this.spawn(worker);
  }

  /** The primary's index holds the local state now (RemoteFeed.start). */
  stateLoaded(): void {
    this.latest = this.ringFrom = this.options.applied();
  }

  /** The primary has claimed the port: workers join it. */
  serve(port: number): void {
    this.port = port;
    for (const worker of this.workers) this.send(worker, { type: 'port', port });
  }

  /** RemoteFeed's onApplied: forwards what the primary's index took. */
  readonly onApplied = (event: AppliedEvent): void => {
    // Those current until now were current until now.
    const now = Date.now();
    for (const worker of this.workers) if (worker.live && worker.revision >= this.latest) worker.currentAt = now;
    if (event.kind === 'reload') {
      this.ring = [];
      this.ringBytes = 0;
      this.ringFrom = this.latest = event.revision;
      for (const worker of this.workers) {
        worker.live = false;
        this.send(worker, { type: 'reload' });
      }
      return;
    }
    const body: BatchBody = { batch: event.batch, read: event.read };
    const entry: BatchEntry = { since: event.since, revision: event.revision, body: serialize(body) };
    this.latest = event.revision;
    this.latestAt = performance.now();
    this.ring.push(entry);
    this.ringBytes += entry.body.byteLength;
    while (this.ring.length > 1 && (this.ringBytes > RING_BYTES || this.ring.length > RING_ENTRIES)) {
      const dropped = this.ring.shift()!;
      this.ringBytes -= dropped.body.byteLength;
      this.ringFrom = dropped.revision;
    }
    for (const worker of this.workers) if (worker.live) this.send(worker, { type: 'batch', entry });
  };

  private send(worker: Worker, message: ToWorker): void {
    const child = worker.child;
    if (!child?.connected) return;
    child.send(message, (error) => {
      // The worker is gone (its exit restarts it).
      if (error) worker.live = false;
    });
  }

  private spawn(worker: Worker): void {
    worker.timer = undefined;
    if (this.stopping) return;
    const { log } = this.options;
    const child = fork(this.module.file, [], {
      execArgv: this.module.execArgv,
      serialization: 'advanced',
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    worker.child = child;
    worker.live = false;
    worker.startedAt = Date.now();
    worker.currentAt = Date.now();
    worker.exited = new Promise((resolve) => child.once('exit', () => resolve()));
    child.on('message', (message: FromWorker) => this.heard(worker, message));
    child.on('error', (error) => log.error({ err: error, worker: worker.id }, 'dns workers: worker process error'));
    child.once('exit', (code, signal) => this.exited(worker, child, code, signal));
    this.send(worker, {
      type: 'init',
      worker: worker.id,
      port: this.port,
      cookieSecret: this.options.cookieSecret,
      rateLimit: this.options.rateLimit,
      tcp: this.options.tcp,
      stateDir: this.options.stateDir,
      zones: this.options.zones,
    });
  }

  private heard(worker: Worker, message: FromWorker): void {
    switch (message.type) {
      case 'loaded': {
        const entries = this.catchUp(message.revision);
        if (!entries) {
          // Older than the batches kept (or than a snapshot loaded since): read or pin the state again.
          this.send(worker, { type: 'reload', pinned: message.revision });
          return;
        }
        worker.live = true;
        worker.revision = message.revision;
        this.send(worker, { type: 'catchup', entries });
        this.options.log.info({ worker: worker.id, pid: worker.child?.pid, revision: message.revision, caughtUp: entries.length, zones: message.zones, ms: message.ms }, 'dns workers: worker caught up (answering)');
        break;
      }
      case 'applied':
        if (message.revision > worker.revision && message.revision === this.latest && this.latestAt > 0) worker.lastApplyMs = Math.round((performance.now() - this.latestAt) * 100) / 100;
        worker.revision = message.revision;
        if (message.revision >= this.latest) worker.currentAt = Date.now();
        break;
      case 'metrics':
        this.metricsWaiting.get(message.id)?.(message.snapshot);
        break;
      default:
        break;
    }
  }

  /** The kept batches after `revision`, or undefined when they do not reach back to it. */
  private catchUp(revision: number): BatchEntry[] | undefined {
    if (revision === this.latest) return [];
    if (revision < this.ringFrom || revision > this.latest) return undefined;
    const entries = this.ring.filter((entry) => entry.revision > revision);
    return entries[0]?.since === revision ? entries : undefined;
  }

  private exited(worker: Worker, child: ChildProcess, code: number | null, signal: NodeJS.Signals | null): void {
    if (worker.child !== child) return;
    worker.child = undefined;
    worker.live = false;
    if (this.stopping) return;
    worker.failures = crashesAfter(worker.failures, Date.now() - worker.startedAt);
    const delay = restartDelay(worker.failures);
    worker.restarts++;
    this.options.log.warn({ worker: worker.id, pid: child.pid, code, signal, restartInMs: delay }, 'dns workers: a worker exited; starting it again (the others keep answering)');
    worker.timer = setTimeout(() => this.spawn(worker), delay);
  }

  /** Per worker (the primary first): pid, revision, whether it takes batches. */
  health(): WorkerHealth[] {
    return [
      { worker: 0, pid: process.pid, revision: this.options.applied(), live: true, restarts: 0 },
      ...this.workers.map((w) => ({ worker: w.id, pid: w.child?.pid ?? null, revision: w.revision, live: w.live, restarts: w.restarts, last_apply_ms: w.lastApplyMs })),
    ];
  }

  /** Why the workers are not all serving the primary's revision for longer than `boundMs`, if they are not. */
  lagging(boundMs: number): string | undefined {
    const now = Date.now();
    const late = this.workers.filter((w) => !(w.live && w.revision >= this.latest) && now - w.currentAt > boundMs);
    if (late.length === 0) return undefined;
    return `DNS worker${late.length > 1 ? 's' : ''} ${late.map((w) => w.id).join(', ')} not at revision ${this.latest} for over ${Math.round(boundMs / 1000)} s`;
  }

  /** Every live worker's DNS figures (those that answer within a second). */
  async metrics(): Promise<MetricsSnapshot[]> {
    const asked = this.workers.filter((w) => w.child?.connected);
    const texts = await Promise.all(
      asked.map(
        (worker) =>
          new Promise<MetricsSnapshot | undefined>((resolve) => {
            const id = ++this.metricsId;
            const timer = setTimeout(() => {
              this.metricsWaiting.delete(id);
              resolve(undefined);
            }, METRICS_TIMEOUT_MS);
            this.metricsWaiting.set(id, (snapshot) => {
              clearTimeout(timer);
              this.metricsWaiting.delete(id);
              resolve(snapshot);
            });
            this.send(worker, { type: 'metrics', id });
          }),
      ),
    );
    return texts.filter((t): t is MetricsSnapshot => t !== undefined);
  }

  get restarts(): number {
    return this.workers.reduce((sum, w) => sum + w.restarts, 0);
  }

  /** Stops every worker: SIGTERM, then SIGKILL past the bound. */
  async stop(): Promise<void> {
    this.stopping = true;
    for (const worker of this.workers) if (worker.timer) clearTimeout(worker.timer);
    const running = this.workers.filter((w) => w.child);
    for (const worker of running) worker.child!.kill('SIGTERM');
    const killer = setTimeout(() => {
      for (const worker of running) worker.child?.kill('SIGKILL');
    }, STOP_BOUND_MS);
    await Promise.all(running.map((w) => w.exited));
    clearTimeout(killer);
  }
}

// The edge role's worker processes, as the primary sees them: N alike `palisade edge --edge-worker`
// processes, each started again with backoff (../supervisor/restart-backoff.ts) when it stops on
// its own, and all stopped within a bound. A worker is ready once it has said which revision it
// serves; one that stops before it ever was fails the whole start (a configuration error that a
// restart would only repeat). Messages use the advanced serialization (Maps, Buffers).
import { fork, type ChildProcess } from 'node:child_process';
import type { Socket } from 'node:net';
import type { Logger } from 'pino';
import { crashesAfter, restartDelay } from '../supervisor/restart-backoff.ts';
import { isMessage, type FromWorker, type ToWorker } from './messages.ts';

export interface WorkerSlot {
  index: number;
  child?: ChildProcess;
  /** Has been sent the whole state (at its hello): changes go to it from then on. */
  introduced: boolean;
  /** Serving: applied the state it was given at its start. */
  ready: boolean;
  everReady: boolean;
  /** The revision it last said it applied, and how long after the primary sent it. */
  revision: number;
  applyMs: number | undefined;
  crashes: number;
  startedAt: number;
  restarts: number;
  restartTimer?: NodeJS.Timeout;
}

export interface WorkerPoolOptions {
  count: number;
  log: Logger;
  /** Environment of worker `index` (each start). */
  env: (index: number) => NodeJS.ProcessEnv;
  /** A worker's message (hello, applied, … — `applied` has been recorded on the slot already). */
  onMessage: (slot: WorkerSlot, message: FromWorker) => void;
  /** A worker stopped (whatever it held at the primary is to be let go). */
  onExit: (slot: WorkerSlot) => void;
  script?: string;
  execArgv?: string[];
}

export class WorkerPool {
  readonly slots: WorkerSlot[];
  private stopping = false;
  private failStart: ((error: Error) => void) | undefined;
  private readyWaiting = 0;
  private resolveStart: (() => void) | undefined;

  constructor(private readonly options: WorkerPoolOptions) {
    this.slots = Array.from({ length: options.count }, (_, index) => ({ index, introduced: false, ready: false, everReady: false, revision: 0, applyMs: undefined, crashes: 0, startedAt: 0, restarts: 0 }));
  }

  /** Starts every worker; resolves when all are ready, rejects when one stops before it ever was. */
  start(): Promise<void> {
    return new Promise((resolve, reject) => {
      this.readyWaiting = this.slots.length;
      this.resolveStart = resolve;
      this.failStart = reject;
      for (const slot of this.slots) this.spawn(slot);
    });
  }

  get readyCount(): number {
    return this.slots.reduce((n, s) => n + (s.ready ? 1 : 0), 0);
  }

  get restarts(): number {
    return this.slots.reduce((n, s) => n + s.restarts, 0);
  }

  /**
   * `handle`: a socket passed along, this process's copy kept open (`keepOpen`) until `sent` is
   * called — the handle is on its way, or could not go (the worker is gone).
   */
  send(slot: WorkerSlot, message: ToWorker, handle?: Socket, sent?: () => void): void {
    const child = slot.child;
    if (!child?.connected) return void sent?.();
    child.send(message, handle, handle ? { keepOpen: true } : undefined, () => sent?.());
  }

  /** To every worker that has had the whole state (but `except`). */
  broadcast(message: ToWorker, except?: WorkerSlot): void {
    for (const slot of this.slots) if (slot !== except && slot.introduced) this.send(slot, message);
  }

  /** Stops every worker (SIGTERM, SIGKILL past the bound); resolves when all have exited. */
  async stop(boundMs: number): Promise<void> {
    this.stopping = true;
    const running: Promise<void>[] = [];
    for (const slot of this.slots) {
      clearTimeout(slot.restartTimer);
      const child = slot.child;
      if (!child || child.exitCode !== null || child.signalCode !== null) continue;
      running.push(new Promise((resolve) => child.once('exit', () => resolve())));
      child.kill('SIGTERM');
    }
    const bound = setTimeout(() => {
      for (const slot of this.slots) if (slot.child && slot.child.exitCode === null && slot.child.signalCode === null) slot.child.kill('SIGKILL');
    }, boundMs);
    await Promise.all(running);
    clearTimeout(bound);
  }

  private spawn(slot: WorkerSlot): void {
    const child = fork(this.options.script ?? process.argv[1]!, ['edge', '--edge-worker'], {
      execArgv: this.options.execArgv ?? process.execArgv,
      env: this.options.env(slot.index),
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      serialization: 'advanced',
    });
    slot.child = child;
    slot.introduced = false;
    slot.ready = false;
    slot.revision = 0;
    slot.startedAt = Date.now();
    child.on('message', (message: unknown) => {
      if (!isMessage<FromWorker>(message)) return;
      if (message.t === 'applied') {
        slot.revision = message.revision;
        if (!slot.ready) this.becameReady(slot);
      }
      this.options.onMessage(slot, message);
    });
    // An IPC write to a worker that just died fails here, not as an uncaught error.
    child.on('error', (error) => this.options.log.warn({ worker: slot.index, err: error.message }, 'edge: worker channel error'));
    child.once('exit', (code, signal) => this.exited(slot, child, code, signal));
  }

  private becameReady(slot: WorkerSlot): void {
    slot.ready = true;
    if (slot.everReady) {
      this.options.log.info({ worker: slot.index, pid: slot.child?.pid, restarts: slot.restarts }, 'edge: worker serving again');
      return;
    }
    slot.everReady = true;
    if (--this.readyWaiting === 0) {
      this.failStart = undefined;
      this.resolveStart?.();
    }
  }

  private exited(slot: WorkerSlot, child: ChildProcess, code: number | null, signal: NodeJS.Signals | null): void {
    if (slot.child !== child) return;
    slot.introduced = false;
    slot.ready = false;
    this.options.onExit(slot);
    if (this.stopping) return;
    if (!slot.everReady) {
      // The worker said why (its own one-line error on stderr); the whole start fails.
      this.stopping = true;
      void this.stop(1000);
      this.failStart?.(new Error(`edge worker ${slot.index} stopped while starting (exit ${code ?? signal})`));
      return;
    }
    slot.crashes = crashesAfter(slot.crashes, Date.now() - slot.startedAt);
    const delay = restartDelay(slot.crashes);
    this.options.log.error({ worker: slot.index, pid: child.pid, code, signal, restartInMs: delay }, 'edge: a worker stopped unexpectedly; starting it again');
    slot.restartTimer = setTimeout(() => {
      slot.restarts++;
      this.spawn(slot);
    }, delay);
  }
}

// Whether each backend is up, from active checks (a TCP connect every few seconds to the backends
// the routing table names) and from passive errors (a request that could not connect), with
// hysteresis as HAProxy does it: down after 3 failures in a row, up again after 2 successes, so
// one lost packet does not flip traffic to the failover and back. Backends shared by several
// domains share one state.
import { connect } from 'node:net';
import type { Logger } from 'pino';
import { backendRefusal, formatBackend, parseBackend, type Backend } from '../model/backend.ts';

export const FAILS_TO_DOWN = 3;
export const PASSES_TO_UP = 2;

interface State {
  up: boolean;
  fails: number;
  passes: number;
}

/** Hears each active check (backend as text, passed, connect time ms) and each up/down switch. */
export interface HealthObserver {
  checked(backend: string, ok: boolean, ms: number): void;
  switched(backend: string, up: boolean): void;
}

export class BackendHealth {
  private readonly states = new Map<string, State>();
  private timer: NodeJS.Timeout | undefined;
  observer: HealthObserver | undefined;

  constructor(
    private readonly log: Logger,
    private readonly checkTimeoutMs = 2000,
    /** PALISADE_ALLOW_PRIVATE_BACKENDS: without it, no check connects to a non-public address (a port scan of our own networks by its verdicts). */
    private readonly allowPrivate = false,
  ) {}

  private state(key: string): State {
    let state = this.states.get(key);
    if (!state) this.states.set(key, (state = { up: true, fails: 0, passes: 0 }));
    return state;
  }

  isDown(backend: Backend): boolean {
    return this.states.get(formatBackend(backend))?.up === false;
  }

  /** Where a domain's traffic goes now: the failover while the backend is down and it is not, else the backend. */
  serving(backend: Backend, failover: Backend | undefined): Backend {
    return failover && this.isDown(backend) && !this.isDown(failover) ? failover : backend;
  }

  /** By the backend's text as a domain names it. */
  isDownText(text: string): boolean {
    const backend = parseBackend(text);
    return backend !== undefined && this.isDown(backend);
  }

  failed(backend: Backend): void {
    const key = formatBackend(backend);
    const state = this.state(key);
    state.passes = 0;
    state.fails++;
    if (state.up && state.fails >= FAILS_TO_DOWN) {
      state.up = false;
      this.log.warn({ backend: key, fails: state.fails }, 'edge: backend down');
      this.observer?.switched(key, false);
    }
  }

  passed(backend: Backend): void {
    const key = formatBackend(backend);
    const state = this.state(key);
    state.fails = 0;
    state.passes++;
    if (!state.up && state.passes >= PASSES_TO_UP) {
      state.up = true;
      this.log.info({ backend: key }, 'edge: backend up again');
      this.observer?.switched(key, true);
    }
  }

  /** The backends down now, by their text (what a process joining the node's view is told). */
  downList(): string[] {
    return [...this.states].filter(([, s]) => !s.up).map(([key]) => key);
  }

  /**
   * Another process's verdict on a backend (the edge role's workers and their primary share one
   * view): taken as it is, no hysteresis of its own; heard by the observer when it switches.
   */
  force(key: string, up: boolean): void {
    const state = this.state(key);
    state.fails = up ? 0 : FAILS_TO_DOWN;
    state.passes = up ? PASSES_TO_UP : 0;
    if (state.up === up) return;
    state.up = up;
    this.log.info({ backend: key, shared: true }, up ? 'edge: backend up again' : 'edge: backend down');
    this.observer?.switched(key, up);
  }

  /** One TCP connect to each backend `backends()` names, every `intervalMs`. */
  start(backends: () => Iterable<string>, intervalMs: number): void {
    const round = () => {
      for (const text of new Set(backends())) {
        const backend = parseBackend(text);
        if (backend && !backendRefusal(backend, this.allowPrivate)) this.check(backend);
      }
    };
    this.timer = setInterval(round, intervalMs);
    this.timer.unref();
    round();
  }

  private check(backend: Backend): void {
    const started = performance.now();
    const socket = connect({ host: backend.address, port: backend.port, family: backend.family, timeout: this.checkTimeoutMs });
    const finish = (ok: boolean) => {
      socket.destroy();
      this.observer?.checked(formatBackend(backend), ok, performance.now() - started);
      if (ok) this.passed(backend);
      else this.failed(backend);
    };
    socket.once('connect', () => finish(true));
    socket.once('timeout', () => finish(false));
    socket.once('error', () => finish(false));
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
  }
}

// Runs the parts of a role as child processes of this one (each a `palisade <part> --in-serve`
// process, named on its command line), starts a part again with backoff when it stops on its own,
// routes requests and events between parts, and stops them all within a bound. A part that fails
// before it was ever ready fails the whole start: that is a configuration error (a port taken, a
// bad key), which restarting would only repeat.
import { fork, type ChildProcess } from 'node:child_process';
import type { Logger } from 'pino';
import { isPartMessage, type PartMessage, type PartName, type ReadyMessage, type RequestMessage } from './messages.ts';
import { crashesAfter, restartDelay } from './restart-backoff.ts';

export interface PartSpec {
  name: PartName;
  /** The command-line arguments after the script (e.g. `edge --in-serve`). */
  args: string[];
  /** Environment for a start, computed each time (a restart reuses the ports first bound). */
  env: () => NodeJS.ProcessEnv;
  /**
   * Node options for this part only, before this process's own (which therefore win: an operator's
   * `node --max-semi-space-size=… palisade serve` applies to every part).
   */
  nodeOptions?: string[];
}

interface Part {
  spec: PartSpec;
  child?: ChildProcess;
  ready?: ReadyMessage;
  everReady: boolean;
  crashes: number;
  startedAt: number;
  restarts: number;
  restartTimer?: NodeJS.Timeout;
}

type SupervisorHandler = (body: unknown) => unknown;

export class Supervisor {
  private readonly parts = new Map<PartName, Part>();
  private readonly handlers = new Map<string, SupervisorHandler>();
  /** Requests forwarded to a part, by the id the supervisor gave them. */
  private readonly routes = new Map<number, { from: Part; id: number; to: PartName }>();
  private nextRoute = 1;
  private stopping = false;
  private failStart: ((error: Error) => void) | undefined;
  private readonly readyWaiters = new Map<PartName, (() => void)[]>();
  /** Called when a part is ready (again). */
  onReady: (name: PartName, ready: ReadyMessage, restarted: boolean) => void = () => undefined;

  constructor(
    specs: PartSpec[],
    private readonly log: Logger,
    /** The script that started this process and its Node options: parts run the same code. */
    private readonly script: string = process.argv[1]!,
    private readonly execArgv: string[] = process.execArgv,
  ) {
    for (const spec of specs) this.parts.set(spec.name, { spec, everReady: false, crashes: 0, startedAt: 0, restarts: 0 });
  }

  /** Answers requests addressed to the supervisor itself. */
  handle(method: string, handler: SupervisorHandler): void {
    this.handlers.set(method, handler);
  }

  /** Starts every part; resolves when all are ready, rejects when one fails before it ever was. */
  start(): Promise<Map<PartName, ReadyMessage>> {
    return new Promise((resolve, reject) => {
      this.failStart = reject;
      let waiting = this.parts.size;
      for (const part of this.parts.values()) {
        this.whenReady(part.spec.name).then(() => {
          if (--waiting === 0) {
            this.failStart = undefined;
            resolve(new Map([...this.parts].map(([name, p]) => [name, p.ready!])));
          }
        }, reject);
        this.spawn(part);
      }
    });
  }

  /** Resolves once the part has been ready at least once. */
  whenReady(name: PartName): Promise<void> {
    const part = this.parts.get(name);
    if (part?.everReady) return Promise.resolve();
    return new Promise((resolve) => {
      const list = this.readyWaiters.get(name) ?? [];
      list.push(resolve);
      this.readyWaiters.set(name, list);
    });
  }

  readyOf(name: PartName): ReadyMessage | undefined {
    return this.parts.get(name)?.ready;
  }

  /** Whether each part is running now, and how often it was started again. */
  status(): { name: PartName; up: boolean; restarts: number; pid?: number }[] {
    return [...this.parts.values()].map((p) => ({ name: p.spec.name, up: p.ready !== undefined && p.child?.exitCode === null, restarts: p.restarts, pid: p.child?.pid }));
  }

  /** Sends an event to every part but the one it came from. */
  broadcast(name: string, body: unknown, except?: PartName): void {
    for (const part of this.parts.values()) if (part.spec.name !== except) this.sendTo(part, { kind: 'event', name, body });
  }

  /** Asks a part directly (the supervisor's own requests, e.g. for metrics). */
  ask<T>(name: PartName, method: string, body: unknown, timeoutMs: number): Promise<T> {
    const part = this.parts.get(name);
    if (!part?.child?.connected || !part.ready) return Promise.reject(new Error(`${name} is not running`));
    const id = this.nextRoute++;
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.routes.delete(id);
        this.localAnswers.delete(id);
        reject(new Error(`${name} did not answer ${method} within ${timeoutMs} ms`));
      }, timeoutMs);
      timer.unref();
      this.localAnswers.set(id, {
        resolve: (value) => (clearTimeout(timer), resolve(value as T)),
        reject: (error) => (clearTimeout(timer), reject(error)),
      });
      this.routes.set(id, { from: SELF, id, to: name });
      this.sendTo(part, { kind: 'request', id, to: name, method, body });
    });
  }
  private readonly localAnswers = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void }>();

  /** Stops every part (SIGTERM, then SIGKILL past the bound) and resolves when all have exited. */
  async stop(boundMs: number): Promise<void> {
    this.stopping = true;
    const running: Promise<void>[] = [];
    for (const part of this.parts.values()) {
      clearTimeout(part.restartTimer);
      const child = part.child;
      if (!child || child.exitCode !== null || child.signalCode !== null) continue;
      running.push(new Promise((resolve) => child.once('exit', () => resolve())));
      child.kill('SIGTERM');
    }
    const bound = setTimeout(() => {
      for (const part of this.parts.values()) if (part.child && part.child.exitCode === null && part.child.signalCode === null) part.child.kill('SIGKILL');
    }, boundMs);
    await Promise.all(running);
    clearTimeout(bound);
  }

  private spawn(part: Part): void {
    const child = fork(this.script, part.spec.args, { execArgv: [...(part.spec.nodeOptions ?? []), ...this.execArgv], env: part.spec.env(), stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    part.child = child;
    part.ready = undefined;
    part.startedAt = Date.now();
    child.on('message', (message: unknown) => {
      if (isPartMessage(message)) this.receive(part, message);
    });
    // An IPC write to a part that just died fails here, not as an uncaught error.
    child.on('error', (error) => this.log.warn({ part: part.spec.name, err: error.message }, 'supervisor: part channel error'));
    child.once('exit', (code, signal) => this.exited(part, child, code, signal));
  }

  private exited(part: Part, child: ChildProcess, code: number | null, signal: NodeJS.Signals | null): void {
    if (part.child !== child) return;
    part.ready = undefined;
    for (const [id, route] of this.routes) {
      if (route.to !== part.spec.name) continue;
      this.routes.delete(id);
      this.answer(route.from, { kind: 'response', id: route.id, ok: false, error: `${part.spec.name} stopped` });
    }
    if (this.stopping) return;
    if (!part.everReady) {
      // The part said why (its own one-line error on stderr); the whole start fails.
      this.failStart?.(new Error(`the ${part.spec.name} part stopped while starting (exit ${code ?? signal})`));
      return;
    }
    part.crashes = crashesAfter(part.crashes, Date.now() - part.startedAt);
    const delay = restartDelay(part.crashes);
    this.log.error({ part: part.spec.name, pid: child.pid, code, signal, restartInMs: delay }, 'supervisor: a part stopped unexpectedly; starting it again');
    part.restartTimer = setTimeout(() => {
      part.restarts++;
      this.spawn(part);
    }, delay);
  }

  private receive(part: Part, message: PartMessage): void {
    switch (message.kind) {
      case 'ready': {
        const restarted = part.everReady;
        part.ready = message;
        part.everReady = true;
        for (const resolve of this.readyWaiters.get(part.spec.name) ?? []) resolve();
        this.readyWaiters.delete(part.spec.name);
        if (restarted) this.log.info({ part: part.spec.name, pid: part.child?.pid, restarts: part.restarts }, 'supervisor: part serving again');
        this.onReady(part.spec.name, message, restarted);
        return;
      }
      case 'event':
        this.broadcast(message.name, message.body, part.spec.name);
        return;
      case 'request':
        this.route(part, message);
        return;
      case 'response': {
        const route = this.routes.get(message.id);
        if (!route) return;
        this.routes.delete(message.id);
        this.answer(route.from, { ...message, id: route.id });
        return;
      }
    }
  }

  private route(from: Part, request: RequestMessage): void {
    if (request.to === 'supervisor') {
      void this.answerLocally(from, request);
      return;
    }
    const target = this.parts.get(request.to);
    if (!target?.child?.connected || !target.ready) {
      this.answer(from, { kind: 'response', id: request.id, ok: false, error: `${request.to} is not running` });
      return;
    }
    const id = this.nextRoute++;
    this.routes.set(id, { from, id: request.id, to: request.to });
    this.sendTo(target, { ...request, id });
  }

  private async answerLocally(from: Part, request: RequestMessage): Promise<void> {
    const handler = this.handlers.get(request.method);
    try {
      if (!handler) throw new Error(`the supervisor has no ${request.method}`);
      this.answer(from, { kind: 'response', id: request.id, ok: true, result: await handler(request.body) });
    } catch (error) {
      this.answer(from, { kind: 'response', id: request.id, ok: false, error: (error as Error).message });
    }
  }

  private answer(to: Part, response: PartMessage & { kind: 'response' }): void {
    if (to === SELF) {
      const local = this.localAnswers.get(response.id);
      this.localAnswers.delete(response.id);
      if (response.ok) local?.resolve(response.result);
      else local?.reject(new Error(response.error ?? 'failed'));
      return;
    }
    this.sendTo(to, response);
  }

  private sendTo(part: Part, message: PartMessage): void {
    if (part.child?.connected) part.child.send(message, undefined, undefined, () => undefined);
  }
}

/** Stands for the supervisor as the asker of its own requests. */
const SELF: Part = { spec: { name: 'api', args: [], env: () => ({}) }, everReady: true, crashes: 0, startedAt: 0, restarts: 0 };

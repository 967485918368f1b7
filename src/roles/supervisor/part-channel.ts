// A supervised part's side of the IPC channel: say it is ready, pass events on, ask another part
// (through the supervisor) and answer what others ask. Outside a supervisor (the role was not
// started with --in-serve, or has no IPC channel) it is inert: `supervised` is false and requests
// fail at once — a role started by some other Node parent with IPC must not wait for a supervisor.
import { isPartMessage, type PartMessage, type Target } from './messages.ts';

type Handler = (body: unknown) => unknown;

export class PartChannel {
  private nextId = 1;
  private readonly waiting = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void; timer: NodeJS.Timeout }>();
  private readonly handlers = new Map<string, Handler>();
  private readonly listeners = new Map<string, Set<(body: unknown) => void>>();

  constructor(
    private readonly enabled: boolean,
    private readonly proc: NodeJS.Process = process,
  ) {
    if (!this.supervised) return;
    proc.on('message', (message: unknown) => {
      if (isPartMessage(message)) this.receive(message);
    });
    // The channel keeps the part alive while it waits on its supervisor (the API part waits for
    // the others' ports before it listens); it ends on 'disconnect' (see shutdown.ts).
  }

  get supervised(): boolean {
    return this.enabled && typeof this.proc.send === 'function' && this.proc.connected;
  }

  ready(ports: Record<string, number>, info?: Record<string, unknown>): void {
    this.send({ kind: 'ready', ports, info });
  }

  emit(name: string, body?: unknown): void {
    this.send({ kind: 'event', name, body });
  }

  on(name: string, listener: (body: unknown) => void): void {
    let set = this.listeners.get(name);
    if (!set) this.listeners.set(name, (set = new Set()));
    set.add(listener);
  }

  /** Answers requests for `method` with what `handler` returns (or throws). */
  handle(method: string, handler: Handler): void {
    this.handlers.set(method, handler);
  }

  request<T>(to: Target, method: string, body: unknown, timeoutMs: number): Promise<T> {
    if (!this.supervised) return Promise.reject(new Error('not running under a supervisor'));
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiting.delete(id);
        reject(new Error(`${to} did not answer ${method} within ${timeoutMs} ms`));
      }, timeoutMs);
      timer.unref();
      this.waiting.set(id, { resolve: resolve as (value: unknown) => void, reject, timer });
      this.send({ kind: 'request', id, to, method, body });
    });
  }

  private send(message: PartMessage): void {
    // A supervisor gone (the channel closed) is noticed through 'disconnect'; nothing to send to.
    if (this.supervised) this.proc.send!(message, undefined, undefined, () => undefined);
  }

  private receive(message: PartMessage): void {
    switch (message.kind) {
      case 'event':
        for (const listener of this.listeners.get(message.name) ?? []) listener(message.body);
        return;
      case 'response': {
        const pending = this.waiting.get(message.id);
        if (!pending) return;
        this.waiting.delete(message.id);
        clearTimeout(pending.timer);
        if (message.ok) pending.resolve(message.result);
        else pending.reject(new Error(message.error ?? 'failed'));
        return;
      }
      case 'request':
        void this.answer(message.id, message.method, message.body);
        return;
      default:
        return;
    }
  }

  private async answer(id: number, method: string, body: unknown): Promise<void> {
    const handler = this.handlers.get(method);
    try {
      if (!handler) throw new Error(`no handler for ${method}`);
      this.send({ kind: 'response', id, ok: true, result: await handler(body) });
    } catch (error) {
      this.send({ kind: 'response', id, ok: false, error: (error as Error).message });
    }
  }
}

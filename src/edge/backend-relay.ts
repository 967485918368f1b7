// One request's exchange with its backend, as undici's dispatcher sees it (its handler interface):
// the response's head passed to the client as it arrives, its body written on with backpressure
// both ways (a client that reads slowly pauses the backend connection), and the end or the failure
// reported once. A handler of our own rather than undici's `stream()`: that one wraps each request
// in an async resource, a promise, an abort-signal listener and three lifecycle listeners on the
// response, which on a proxied request cost more than the relaying itself (docs/perf/per-core-cost.md).
import type { Writable } from 'node:stream';
import type { Dispatcher } from 'undici';
import { endThen } from './protect/bandwidth.ts';

/** A body tap: a copy of what the client receives (the cache filling). */
export interface BodyTap {
  chunk(data: Buffer): void;
  /** `complete` false: the response was cut short. */
  end(complete: boolean): void;
}

/** The response's start as the relay hands it on: the status and the headers as received (lower-case names). */
export interface RelayStart {
  /** Writes the head to the client; returns where the body goes and the tap, if any. Throwing refuses the response. */
  (statusCode: number, headers: Record<string, string | string[] | undefined>): { target: Writable; tap?: BodyTap };
}

/** How the exchange ended: `error` undefined once the body was handed on whole. */
export type RelayDone = (error: Error | undefined, started: boolean) => void;

export class BackendRelay implements Dispatcher.DispatchHandler {
  private controller: Dispatcher.DispatchController | undefined;
  /** Why the exchange was stopped before it began (a client gone while the request waited for a connection). */
  private reason: Error | undefined;
  /** Takes the request out of undici's queue while it waits for a connection (see `queued`). */
  private cancel: ((reason: Error) => void) | undefined;
  private target: Writable | undefined;
  private tap: BodyTap | undefined;
  private settled = false;
  /** Body bytes passed on to the client. */
  bytes = 0;
  private readonly resume = (): void => this.controller?.resume();
  private readonly targetFailed = (error: Error): void => this.abort(error);

  constructor(
    private readonly start: RelayStart,
    private readonly done: RelayDone,
  ) {}

  /** Stops the exchange: the backend request is aborted, the relay reports the error. */
  abort(error: Error): void {
    if (this.settled) return;
    if (this.controller) return this.controller.abort(error);
    this.reason = error;
    // Still waiting for a connection: out of the queue now, not aborted when a connection frees
    // (which would end that healthy keep-alive connection, and keep the place meanwhile).
    this.cancel?.(error);
  }

  /**
   * undici's hook for a request waiting for a connection (the option its own signal-taking
   * methods pass): it hands over the way to take the request out of the queue.
   */
  readonly queued = (cancel: (reason: Error) => void): void => {
    if (this.reason) cancel(this.reason);
    else this.cancel = cancel;
  };

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    this.cancel = undefined;
    if (this.reason) controller.abort(this.reason);
  }

  onResponseStart(_controller: Dispatcher.DispatchController, statusCode: number, headers: Record<string, string | string[] | undefined>): void {
    // An interim answer (100 Continue, 103): Node's server sends its own when the body is read.
    if (statusCode < 200) return;
    const { target, tap } = this.start(statusCode, headers);
    this.target = target;
    this.tap = tap;
    // A stream between us and the client (the bandwidth limit) fails when the client goes away,
    // also after the exchange is over (a write it still held): its error is ours to act on, never
    // an unhandled one (which would end the process), so the listener stays.
    target.on('error', this.targetFailed);
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    const target = this.target;
    if (!target) return;
    this.bytes += chunk.length;
    this.tap?.chunk(chunk);
    if (target.write(chunk)) return;
    // Gone (a write to a destroyed response fails quietly): no 'drain' will come, so no pause.
    if (target.destroyed) return this.abort(new Error('the client went away'));
    // The client reads slower than the backend sends: the backend's connection waits.
    controller.pause();
    target.once('drain', this.resume);
  }

  onResponseEnd(): void {
    const target = this.target;
    if (!target) return this.finish(undefined);
    // Taken first: a tap that throws is not ended twice (undici reports the throw as an error).
    const tap = this.tap;
    this.tap = undefined;
    tap?.end(true);
    if (target.writableNeedDrain) target.off('drain', this.resume);
    // Reported once the client has the whole body (or has gone): the caller's bookkeeping of
    // what is in flight follows the response, not only the backend's part of it.
    endThen(target, (error) => this.finish(error ?? undefined));
  }

  onResponseError(_controller: Dispatcher.DispatchController | null, error: Error): void {
    const tap = this.tap;
    this.tap = undefined;
    tap?.end(false);
    this.finish(error);
  }

  private finish(error: Error | undefined): void {
    if (this.settled) return;
    this.settled = true;
    this.target?.off('drain', this.resume);
    this.done(error, this.target !== undefined);
  }
}

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
    if (this.controller) this.controller.abort(error);
    else this.reason = error;
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
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
    // The client reads slower than the backend sends: the backend's connection waits.
    controller.pause();
    target.once('drain', this.resume);
  }

  onResponseEnd(): void {
    const target = this.target;
    if (!target) return this.finish(undefined);
    this.tap?.end(true);
    this.tap = undefined;
    if (target.writableNeedDrain) target.off('drain', this.resume);
    // Reported once the client has the whole body (or has gone): the caller's bookkeeping of
    // what is in flight follows the response, not only the backend's part of it.
    endThen(target, (error) => this.finish(error ?? undefined));
  }

  onResponseError(_controller: Dispatcher.DispatchController | null, error: Error): void {
    this.tap?.end(false);
    this.tap = undefined;
    this.finish(error);
  }

  private finish(error: Error | undefined): void {
    if (this.settled) return;
    this.settled = true;
    this.target?.off('drain', this.resume);
    this.done(error, this.target !== undefined);
  }
}

// One HTTP/2 stream as the request and the response the stages know (IncomingMessage,
// ServerResponse): the small part of them the chain uses, straight over Node's ServerHttp2Stream.
// Node's compatibility objects (Http2ServerRequest/Response) would do this too, but each request
// then pays for two more streams, a proxy socket and their event relays: about 18 CPU-µs of a
// cache hit's (docs/edge.md). What a stage may rely on, and where it comes from:
// - the request's body is the stream's readable side (`data`, `end`, `close`, pause/resume,
//   unshift, async iteration), its bytes counted on their way in (the body pace, per stream);
// - `socket` (request and response) is the stream: destroying it ends this request, not the
//   connection the other streams share; the connection is the context's `connection`;
// - `complete`, `finish` and `close` mean what they did with the compatibility objects: a stream
//   closed (reset, or the connection gone) is complete, and the response's `finish` and `close`
//   come together, once the stream has closed (the front emits them: one `close` listener on it).
// No trailers, no pushes, no informational answers but 100-continue (the front's).
import { EventEmitter } from 'node:events';
import type { IncomingHttpHeaders, OutgoingHttpHeaders } from 'node:http';
import type { ServerHttp2Stream } from 'node:http2';

type Listener = Parameters<ServerHttp2Stream['on']>[1];

/** A request read as HTTP/1.1's: the headers are the front's view (h2-request.ts), the body the stream's. */
export class H2Request {
  /** This stream's body bytes handed to the request so far: its own pace, not the connection's (body-pace.ts). */
  bodyBytesRead = 0;
  readonly httpVersion = '2.0';

  constructor(
    readonly stream: ServerHttp2Stream,
    readonly headers: IncomingHttpHeaders,
    readonly rawHeaders: string[],
    readonly method: string | undefined,
    readonly url: string | undefined,
  ) {}

  /** Counts the body's bytes as Node hands them to the stream (only a stream with a body is counted). */
  countBody(): void {
    const stream = this.stream;
    const push = stream.push;
    stream.push = (chunk: unknown, encoding?: BufferEncoding): boolean => {
      if (chunk !== null && typeof chunk === 'object' && 'length' in chunk) this.bodyBytesRead += (chunk as Buffer).length;
      return push.call(stream, chunk, encoding);
    };
  }

  get socket(): ServerHttp2Stream {
    return this.stream;
  }

  /** The body has ended, or will never go on (the stream closed): as Node's compatibility request says. */
  get complete(): boolean {
    const stream = this.stream;
    return stream.readableEnded || stream.closed || stream.destroyed;
  }

  get readableEnded(): boolean {
    return this.stream.readableEnded;
  }

  get aborted(): boolean {
    return this.stream.aborted;
  }

  on(event: string, listener: Listener): this {
    this.stream.on(event, listener);
    return this;
  }

  once(event: string, listener: Listener): this {
    this.stream.once(event, listener);
    return this;
  }

  off(event: string, listener: Listener): this {
    this.stream.off(event, listener);
    return this;
  }

  removeListener(event: string, listener: Listener): this {
    return this.off(event, listener);
  }

  pause(): this {
    this.stream.pause();
    return this;
  }

  resume(): this {
    this.stream.resume();
    return this;
  }

  read(size?: number): unknown {
    return this.stream.read(size);
  }

  unshift(chunk: Buffer): void {
    this.stream.unshift(chunk);
  }

  [Symbol.asyncIterator](): AsyncIterator<unknown> {
    return this.stream[Symbol.asyncIterator]();
  }
}

/** An error as Node's own: a code the callers can tell apart. */
function h2Error(code: string, message: string): Error {
  return Object.assign(new Error(message), { code });
}

/**
 * A response written as HTTP/1.1's: writeHead (or setHeader, then the first write) becomes one
 * `respond()`, the body the stream's writes. Its own events: `drain` (relayed only while a write
 * waits for it), `finish` and `close` (emitted by `closed()`), and any a pipe adds.
 */
export class H2Response extends EventEmitter {
  statusCode = 200;
  /** Headers set before the head is written. */
  private pending: OutgoingHttpHeaders | undefined;
  /** The head as written: `getHeader` reads it (the log line's content-length). */
  private sent: Head | undefined;
  private ending = false;
  private over = false;
  private waitingDrain = false;
  /** The stream's 'drain' relayed as the response's (made when a write first waits: most responses never do). */
  private drained: (() => void) | undefined;

  constructor(
    readonly stream: ServerHttp2Stream,
    readonly req: H2Request,
  ) {
    super();
  }

  get headersSent(): boolean {
    return this.stream.headersSent;
  }

  get destroyed(): boolean {
    return this.stream.destroyed;
  }

  get writableFinished(): boolean {
    return this.stream.writableFinished;
  }

  get writableEnded(): boolean {
    return this.ending;
  }

  get finished(): boolean {
    return this.ending;
  }

  get writableNeedDrain(): boolean {
    return this.stream.writableNeedDrain;
  }

  /** The stream (undefined once closed, as HTTP/1.1's response drops its socket). */
  get socket(): ServerHttp2Stream | undefined {
    return this.over ? undefined : this.stream;
  }

  setHeader(name: string, value: number | string | string[]): this {
    if (this.stream.headersSent) throw h2Error('ERR_HTTP2_HEADERS_SENT', 'Response has already been initiated.');
    (this.pending ??= {})[name.toLowerCase()] = value;
    return this;
  }

  getHeader(name: string): number | string | string[] | undefined {
    const lower = name.toLowerCase();
    return this.sent ? valueIn(this.sent, lower) : this.pending?.[lower];
  }

  hasHeader(name: string): boolean {
    return this.getHeader(name) !== undefined;
  }

  removeHeader(name: string): void {
    if (this.stream.headersSent) throw h2Error('ERR_HTTP2_HEADERS_SENT', 'Response has already been initiated.');
    if (this.pending) delete this.pending[name.toLowerCase()];
  }

  writeHead(status: number, headers?: OutgoingHttpHeaders | readonly string[]): this;
  writeHead(status: number, message: string, headers?: OutgoingHttpHeaders | readonly string[]): this;
  writeHead(status: number, second?: string | OutgoingHttpHeaders | readonly string[], third?: OutgoingHttpHeaders | readonly string[]): this {
    const stream = this.stream;
    if (this.over || stream.destroyed || stream.closed) return this;
    if (stream.headersSent) throw h2Error('ERR_HTTP2_HEADERS_SENT', 'Response has already been initiated.');
    const given = typeof second === 'string' ? third : second;
    this.statusCode = status;
    this.respond(given, false);
    return this;
  }

  write(chunk: Buffer | string, encoding?: BufferEncoding | ((error?: Error | null) => void), callback?: (error?: Error | null) => void): boolean {
    const stream = this.stream;
    if (this.ending || this.over) {
      const error = h2Error(this.ending ? 'ERR_STREAM_WRITE_AFTER_END' : 'ERR_HTTP2_INVALID_STREAM', 'write after end');
      const done = typeof encoding === 'function' ? encoding : callback;
      if (done) process.nextTick(done, error);
      this.destroy(error);
      return false;
    }
    if (stream.destroyed) return false;
    if (!stream.headersSent) this.respond(undefined, false);
    // A HEAD request's stream ended with its head: its body is not sent (as HTTP/1.1 drops it).
    if (stream.writableEnded) return true;
    const ok = typeof encoding === 'function' ? stream.write(chunk, encoding) : stream.write(chunk, encoding ?? 'utf8', callback);
    if (!ok && !this.waitingDrain) {
      this.waitingDrain = true;
      stream.once(
        'drain',
        (this.drained ??= () => {
          this.waitingDrain = false;
          this.emit('drain');
        }),
      );
    }
    return ok;
  }

  end(chunk?: Buffer | string | (() => void), encoding?: BufferEncoding | (() => void), callback?: () => void): this {
    let body: Buffer | string | undefined;
    let done: (() => void) | undefined;
    if (typeof chunk === 'function') done = chunk;
    else {
      body = chunk ?? undefined;
      done = typeof encoding === 'function' ? encoding : callback;
    }
    const stream = this.stream;
    if (this.ending || this.over) {
      if (done) process.nextTick(done);
      return this;
    }
    this.ending = true;
    // Called once the body is out, as a writable's end(cb) is (a stream ended by its head already may have said so).
    if (done) {
      if (stream.writableFinished) process.nextTick(done);
      else if (stream.writableEnded) this.once('finish', done);
      else stream.once('finish', done);
    }
    if (stream.destroyed || stream.closed) return this;
    // A head with nothing after it ends the stream itself (HEADERS with END_STREAM, no DATA frame);
    // so does Node's respond() for HEAD, 204 and 304, whose body is then not sent.
    if (!stream.headersSent) this.respond(undefined, body === undefined);
    if (stream.writableEnded) return this;
    if (body === undefined) stream.end();
    else stream.end(body);
    return this;
  }

  destroy(error?: Error): this {
    this.stream.destroy(error);
    return this;
  }

  /** The stream has closed (the front's one listener): the response's `finish`, then its `close`. */
  closed(): void {
    if (this.over) return;
    this.over = true;
    this.emit('finish');
    this.emit('close');
  }

  /**
   * The head as one `respond()`: `:status`, what was set (overridden by `headers`), then `headers`,
   * as raw pairs (Node copies an object's into one of its own; a list it reads as it is, and it
   * lower-cases and checks each name itself). `connection`, which h2 forbids, is dropped.
   */
  private respond(headers: OutgoingHttpHeaders | readonly string[] | undefined, endStream: boolean): void {
    const head: Head = [':status', this.statusCode];
    let given = headers;
    if (this.pending) {
      const merged: OutgoingHttpHeaders = { ...this.pending };
      if (Array.isArray(given)) for (let i = 0; i + 1 < given.length; i += 2) merged[(given[i] as string).toLowerCase()] = given[i + 1] as string;
      else if (given) for (const name in given) merged[name.toLowerCase()] = (given as OutgoingHttpHeaders)[name];
      given = merged;
    }
    if (Array.isArray(given)) {
      for (let i = 0; i + 1 < given.length; i += 2) add(head, given[i] as string, given[i + 1] as string);
    } else if (given) {
      for (const name in given) add(head, name, (given as OutgoingHttpHeaders)[name]);
    }
    this.sent = head;
    this.stream.respond(head as unknown as OutgoingHttpHeaders, { endStream });
  }
}

/** A head as raw pairs: `[name, value, name, value, …]`. */
type Head = (string | number | string[])[];

/**
 * One header into a head. A stage asking for the connection's end (`connection: close`) names a
 * header h2 forbids: dropped here rather than refused (Node's compatibility layer warned, once).
 */
function add(head: Head, name: string, value: OutgoingHttpHeaders[string]): void {
  if (name.length === 10 && name.toLowerCase() === 'connection') return;
  if (value === undefined || value === null) throw h2Error('ERR_HTTP2_INVALID_HEADER_VALUE', `Invalid value "${String(value)}" for header "${name}"`);
  head.push(name, value as string | number | string[]);
}

/** A header's value in a head of raw pairs (names compared as HTTP compares them, without case). */
function valueIn(head: Head, lower: string): number | string | string[] | undefined {
  for (let i = 2; i + 1 < head.length; i += 2) if ((head[i] as string).toLowerCase() === lower) return head[i + 1];
  return undefined;
}

// A raw HTTP/2 client for attack tests: frames written by hand over a TLS socket that negotiated
// ALPN h2, so a test can send what no well-behaved client library would (resets by the thousand,
// endless CONTINUATION frames, malformed header blocks), and see each frame the server answers.
// Header blocks use HPACK literals without indexing and without Huffman coding (RFC 7541 §6.2.2):
// always valid, never compressed, and the server's dynamic table is never touched — but for
// `hpackBomb`, which fills it on purpose.
import { once } from 'node:events';
import { connect, type TLSSocket } from 'node:tls';

export const FRAME = { DATA: 0x0, HEADERS: 0x1, PRIORITY: 0x2, RST_STREAM: 0x3, SETTINGS: 0x4, PING: 0x6, GOAWAY: 0x7, WINDOW_UPDATE: 0x8, CONTINUATION: 0x9 } as const;
export const FLAG = { END_STREAM: 0x1, ACK: 0x1, END_HEADERS: 0x4, PRIORITY: 0x20 } as const;
export const PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1');

export function frame(type: number, flags: number, stream: number, payload: Buffer = Buffer.alloc(0)): Buffer {
  const head = Buffer.alloc(9);
  head.writeUIntBE(payload.length, 0, 3);
  head[3] = type;
  head[4] = flags;
  head.writeUInt32BE(stream & 0x7fffffff, 5);
  return Buffer.concat([head, payload]);
}

/** An HPACK integer with an N-bit prefix (RFC 7541 §5.1); `high` is the first byte's bits above the prefix. */
function hpackInt(value: number, prefix: number, high = 0): number[] {
  const max = (1 << prefix) - 1;
  if (value < max) return [high | value];
  const out = [high | max];
  let rest = value - max;
  while (rest >= 128) {
    out.push((rest & 127) | 128);
    rest >>= 7;
  }
  out.push(rest);
  return out;
}

const hpackString = (text: string): Buffer => {
  const bytes = Buffer.from(text, 'latin1');
  return Buffer.concat([Buffer.from(hpackInt(bytes.length, 7)), bytes]);
};

/** A header block of literal fields, as given (names are not lower-cased: a test may want them wrong). */
export function headerBlock(fields: Array<[string, string]>): Buffer {
  return Buffer.concat(fields.flatMap(([name, value]) => [Buffer.from([0]), hpackString(name), hpackString(value)]));
}

/**
 * An HPACK bomb (RFC 7541 §7.3): a header block that adds one large field to the decoder's dynamic
 * table (a literal with incremental indexing, §6.2.1), then names it again `repeats` times with
 * one byte each (an indexed field, §6.1: the newest entry is index 62). A few KB on the wire that
 * decode to `repeats` × the field's size.
 */
export function hpackBomb(fields: Array<[string, string]>, name: string, value: string, repeats: number): Buffer {
  const insert = Buffer.concat([Buffer.from([0x40]), hpackString(name), hpackString(value)]);
  return Buffer.concat([headerBlock(fields), insert, Buffer.alloc(repeats, 0x80 | 62)]);
}

export const settings = (entries: Array<[number, number]> = []): Buffer => {
  const payload = Buffer.alloc(entries.length * 6);
  entries.forEach(([id, value], i) => {
    payload.writeUInt16BE(id, i * 6);
    payload.writeUInt32BE(value, i * 6 + 2);
  });
  return frame(FRAME.SETTINGS, 0, 0, payload);
};
export const headers = (stream: number, block: Buffer, flags: number): Buffer => frame(FRAME.HEADERS, flags, stream, block);
export const continuation = (stream: number, block: Buffer, endHeaders: boolean): Buffer => frame(FRAME.CONTINUATION, endHeaders ? FLAG.END_HEADERS : 0, stream, block);
export const data = (stream: number, payload: Buffer, endStream: boolean): Buffer => frame(FRAME.DATA, endStream ? FLAG.END_STREAM : 0, stream, payload);
/** A PRIORITY frame (RFC 9113 §6.3): `stream` depends on `dependsOn` (itself: a stream error). */
export const priority = (stream: number, dependsOn: number, weight = 15, exclusive = false): Buffer => {
  const payload = Buffer.alloc(5);
  payload.writeUInt32BE(((exclusive ? 0x80000000 : 0) | dependsOn) >>> 0);
  payload[4] = weight;
  return frame(FRAME.PRIORITY, 0, stream, payload);
};
/** HEADERS with the PRIORITY flag: the 5-byte dependency before the block. */
export const headersWithPriority = (stream: number, dependsOn: number, block: Buffer, flags: number): Buffer =>
  frame(FRAME.HEADERS, flags | FLAG.PRIORITY, stream, Buffer.concat([priority(stream, dependsOn).subarray(9), block]));
export const rstStream = (stream: number, code = 0x8): Buffer => {
  const payload = Buffer.alloc(4);
  payload.writeUInt32BE(code);
  return frame(FRAME.RST_STREAM, 0, stream, payload);
};
export const ping = (n: number): Buffer => {
  const payload = Buffer.alloc(8);
  payload.writeUInt32BE(n >>> 0, 4);
  return frame(FRAME.PING, 0, 0, payload);
};
export const windowUpdate = (stream: number, increment: number): Buffer => {
  const payload = Buffer.alloc(4);
  payload.writeUInt32BE(increment);
  return frame(FRAME.WINDOW_UPDATE, 0, stream, payload);
};

/** A request's pseudo-headers, then `extra`. */
export const requestFields = (authority: string, path: string, method = 'GET', extra: Array<[string, string]> = []): Array<[string, string]> => [
  [':method', method],
  [':scheme', 'https'],
  [':authority', authority],
  [':path', path],
  ...extra,
];

export interface ReceivedFrame {
  type: number;
  flags: number;
  stream: number;
  payload: Buffer;
}

/** One raw h2 connection: what it received, frame by frame, and when it ended. */
export class RawH2 {
  readonly frames: ReceivedFrame[] = [];
  closedAt: number | undefined;
  readonly openedAt = performance.now();
  private pending: Buffer = Buffer.alloc(0);

  private constructor(readonly socket: TLSSocket) {
    socket.on('data', (chunk: Buffer) => this.read(chunk));
    socket.on('error', () => undefined);
    socket.on('close', () => (this.closedAt ??= performance.now()));
  }

  /** Connects with ALPN h2 and sends the preface and an empty SETTINGS frame. */
  static async open(port: number, servername: string, localAddress?: string): Promise<RawH2> {
    // (localAddress is passed on to net.connect; the TLS typings leave it out.)
    const socket = connect({ host: '127.0.0.1', port, servername, ALPNProtocols: ['h2'], rejectUnauthorized: false, localAddress } as import('node:tls').ConnectionOptions);
    await once(socket, 'secureConnect');
    if (socket.alpnProtocol !== 'h2') throw new Error(`the server chose ${String(socket.alpnProtocol)}, not h2`);
    socket.write(Buffer.concat([PREFACE, settings()]));
    return new RawH2(socket);
  }

  get closed(): boolean {
    return this.closedAt !== undefined;
  }

  /** Writes unless the connection is gone; false once it is. */
  send(bytes: Buffer): boolean {
    if (this.socket.destroyed || this.closed) return false;
    this.socket.write(bytes);
    return true;
  }

  /** The GOAWAY's error code, if one came. */
  get goaway(): number | undefined {
    const f = this.frames.find((x) => x.type === FRAME.GOAWAY);
    return f ? f.payload.readUInt32BE(4) : undefined;
  }

  /** Frames of `type` on `stream`. */
  on(stream: number, type: number): ReceivedFrame[] {
    return this.frames.filter((f) => f.stream === stream && f.type === type);
  }

  /** Bytes of DATA received on `stream`. */
  dataBytes(stream: number): number {
    return this.on(stream, FRAME.DATA).reduce((n, f) => n + f.payload.length, 0);
  }

  /** Resolves when the server has ended the connection (GOAWAY or close), or after `ms`. */
  async ended(ms: number): Promise<boolean> {
    const started = performance.now();
    while (!this.closed && this.goaway === undefined && performance.now() - started < ms) await new Promise((r) => setTimeout(r, 10));
    return this.closed || this.goaway !== undefined;
  }

  close(): void {
    this.socket.destroy();
  }

  private read(chunk: Buffer): void {
    this.pending = this.pending.length ? Buffer.concat([this.pending, chunk]) : chunk;
    while (this.pending.length >= 9) {
      const length = this.pending.readUIntBE(0, 3);
      if (this.pending.length < 9 + length) break;
      // The payload is copied: the test keeps a few frames, not the whole stream's buffers.
      this.frames.push({ type: this.pending[3]!, flags: this.pending[4]!, stream: this.pending.readUInt32BE(5) & 0x7fffffff, payload: Buffer.from(this.pending.subarray(9, 9 + length)) });
      this.pending = this.pending.subarray(9 + length);
      if (this.frames.length > 50_000) this.frames.splice(0, 10_000);
    }
  }
}

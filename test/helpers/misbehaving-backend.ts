// A real backend on loopback (raw TCP, so that it can break HTTP in every way a broken or hostile
// server does) that misbehaves as each request's path tells it: `/m/<kind>/<size>/<id>.bin`.
// The request's own choice keeps a fuzz run replayable from its seed. Bodies it sends repeat
// `<path>|` (the query left out), so a client can tell a body meant for another request from its own.
import { createServer, type Server, type Socket } from 'node:net';

export const MISBEHAVIOURS = [
  // Well-behaved answers (keep-alive), against which the others are mixed.
  'ok',
  'chunked',
  'error-status',
  'informational',
  // Ends the body by closing (HTTP/1.0, no length), as many small servers do.
  'close-no-length',
  // Resets (RST) in the middle of the head, in the middle of the body.
  'reset-in-head',
  'reset-in-body',
  // Half-closes (FIN): instead of answering, in the middle of the body, right after a keep-alive answer.
  'fin-instead',
  'fin-in-body',
  'ok-then-fin',
  // Trickles the head, trickles the body (each within the edge's silence bound).
  'trickle-head',
  'trickle-body',
  // Lies about the length: more bytes than announced, fewer and then silence.
  'longer-than-length',
  'shorter-then-silent',
  // Chunked bodies: closed in the middle of a chunk, a chunk size that is not hex.
  'fin-in-chunk',
  'bad-chunk-size',
  // Answers before the request body has arrived (keeping the connection, closing it).
  'early',
  'early-close',
  // Never answers (the edge's response timeout ends it).
  'silent',
  // Framing lies: two different lengths, the same length twice, a length and chunked.
  'conflicting-lengths',
  'repeated-length',
  'length-and-chunked',
  // 101 to a request that asked for no upgrade.
  'switching-unasked',
  // Heads too large: one 64 KiB header, 3000 headers.
  'huge-header',
  'many-headers',
  // Not HTTP, an invalid status line, an invalid header name, a 204 with a body.
  'garbage',
  'bad-status',
  'bad-header',
  'no-content-with-body',
] as const;

export type Misbehaviour = (typeof MISBEHAVIOURS)[number];

export interface MisbehavingBackend {
  port: number;
  /** Connections open now (from the edge). */
  openConnections(): number;
  /** Paths of every request head it read, in order. */
  seen: string[];
  stop(): Promise<void>;
}

interface Request {
  path: string;
  kind: Misbehaviour | undefined;
  size: number;
  /** Bytes of body still to read (length), or -1 for chunked. */
  left: number;
  answered: boolean;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** `size` bytes of `<path>|` repeated. */
export function bodyFor(path: string, size: number): Buffer {
  const unit = Buffer.from(`${path}|`);
  const out = Buffer.alloc(size);
  for (let at = 0; at < size; at += unit.length) unit.copy(out, at, 0, Math.min(unit.length, size - at));
  return out;
}

/** Parses `/m/<kind>/<size>/<id>.bin`. */
function parsePath(path: string): { kind: Misbehaviour | undefined; size: number } {
  const match = /^\/m\/([a-z-]+)\/(\d+)\//.exec(path);
  const kind = match && (MISBEHAVIOURS as readonly string[]).includes(match[1]!) ? (match[1] as Misbehaviour) : undefined;
  return { kind, size: match ? Number(match[2]) : 0 };
}

async function write(socket: Socket, data: Buffer | string): Promise<void> {
  if (socket.destroyed) return;
  if (!socket.write(data)) {
    await new Promise<void>((resolve) => {
      socket.once('drain', resolve);
      socket.once('close', resolve);
    });
  }
}

async function writeBody(socket: Socket, body: Buffer): Promise<void> {
  for (let at = 0; at < body.length && !socket.destroyed; at += 65_536) await write(socket, body.subarray(at, at + 65_536));
}

const OK_HEAD = (length: number, extra = '') => `HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nContent-Length: ${length}\r\nCache-Control: max-age=60\r\n${extra}\r\n`;

/** Answers one request; resolves with whether the connection goes on to the next request. */
async function answer(socket: Socket, req: Request): Promise<boolean> {
  const body = bodyFor(req.path, req.size);
  switch (req.kind) {
    case undefined:
    case 'ok':
      await write(socket, OK_HEAD(body.length));
      await writeBody(socket, body);
      return true;
    case 'chunked': {
      await write(socket, 'HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nTransfer-Encoding: chunked\r\nCache-Control: max-age=60\r\n\r\n');
      for (let at = 0; at < body.length; at += 4096) {
        const part = body.subarray(at, at + 4096);
        await write(socket, Buffer.concat([Buffer.from(`${part.length.toString(16)}\r\n`), part, Buffer.from('\r\n')]));
      }
      await write(socket, '0\r\n\r\n');
      return true;
    }
    case 'error-status':
      await write(socket, `HTTP/1.1 503 Service Unavailable\r\nContent-Length: ${body.length}\r\n\r\n`);
      await writeBody(socket, body);
      return true;
    case 'informational':
      await write(socket, 'HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </style.css>; rel=preload\r\n\r\n');
      await sleep(5);
      await write(socket, OK_HEAD(body.length));
      await writeBody(socket, body);
      return true;
    case 'close-no-length':
      await write(socket, 'HTTP/1.0 200 OK\r\nConnection: close\r\nContent-Type: application/octet-stream\r\n\r\n');
      await writeBody(socket, body);
      socket.end();
      return false;
    case 'reset-in-head':
      await write(socket, 'HTTP/1.1 200 OK\r\nContent-Ty');
      await sleep(2);
      socket.resetAndDestroy();
      return false;
    case 'reset-in-body':
      await write(socket, OK_HEAD(body.length));
      await writeBody(socket, body.subarray(0, body.length >> 2));
      await sleep(2);
      socket.resetAndDestroy();
      return false;
    case 'fin-instead':
      socket.end();
      return false;
    case 'fin-in-body':
      await write(socket, OK_HEAD(body.length));
      await writeBody(socket, body.subarray(0, body.length >> 2));
      socket.end();
      return false;
    case 'ok-then-fin':
      await write(socket, OK_HEAD(body.length));
      await writeBody(socket, body);
      socket.end();
      return false;
    case 'trickle-head': {
      const head = OK_HEAD(body.length);
      for (let at = 0; at < head.length && !socket.destroyed; at += 8) {
        await write(socket, head.slice(at, at + 8));
        await sleep(10);
      }
      await writeBody(socket, body);
      return true;
    }
    case 'trickle-body': {
      const small = body.subarray(0, Math.min(body.length, 200));
      await write(socket, OK_HEAD(small.length));
      for (let at = 0; at < small.length && !socket.destroyed; at += 10) {
        await write(socket, small.subarray(at, at + 10));
        await sleep(15);
      }
      return true;
    }
    case 'longer-than-length':
      await write(socket, OK_HEAD(body.length));
      await writeBody(socket, Buffer.concat([body, Buffer.from('these bytes belong to no response')]));
      return true;
    case 'shorter-then-silent':
      await write(socket, OK_HEAD(body.length + 1000));
      await writeBody(socket, body);
      return new Promise(() => undefined);
    case 'fin-in-chunk':
      await write(socket, 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n400\r\n');
      await write(socket, body.subarray(0, 100));
      socket.end();
      return false;
    case 'bad-chunk-size':
      await write(socket, 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nhello\r\n0\r\n\r\n');
      return true;
    case 'early':
    case 'early-close':
      // Answered when the head arrived.
      return req.kind === 'early';
    case 'silent':
      return new Promise(() => undefined);
    case 'conflicting-lengths':
      await write(socket, `HTTP/1.1 200 OK\r\nContent-Length: 10\r\nContent-Length: 12\r\n\r\n${'x'.repeat(12)}`);
      return true;
    case 'repeated-length':
      await write(socket, 'HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 5\r\n\r\nhello');
      return true;
    case 'length-and-chunked':
      await write(socket, 'HTTP/1.1 200 OK\r\nContent-Length: 100\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n');
      return true;
    case 'switching-unasked':
      await write(socket, 'HTTP/1.1 101 Switching Protocols\r\nUpgrade: something\r\nConnection: Upgrade\r\n\r\nafter the switch');
      await sleep(50);
      socket.end();
      return false;
    case 'huge-header':
      await write(socket, OK_HEAD(body.length, `X-Huge: ${'h'.repeat(65_536)}\r\n`));
      await writeBody(socket, body);
      return true;
    case 'many-headers': {
      let extra = '';
      for (let i = 0; i < 3000; i++) extra += `X-Many-${i}: ${i}\r\n`;
      await write(socket, OK_HEAD(body.length, extra));
      await writeBody(socket, body);
      return true;
    }
    case 'garbage':
      await write(socket, 'SSH-2.0-OpenSSH_9.6\r\n\r\n\0\0\0garbage');
      socket.end();
      return false;
    case 'bad-status':
      await write(socket, 'HTTP/1.1 2OO OK\r\nContent-Length: 2\r\n\r\nok');
      return true;
    case 'bad-header':
      await write(socket, 'HTTP/1.1 200 OK\r\nBad Header: x\r\nContent-Length: 2\r\n\r\nok');
      return true;
    case 'no-content-with-body':
      await write(socket, 'HTTP/1.1 204 No Content\r\nContent-Length: 10\r\n\r\n0123456789');
      return true;
  }
}

/** Answers what `early` and `early-close` answer, as soon as the head has arrived. */
async function answerEarly(socket: Socket, req: Request): Promise<void> {
  const body = bodyFor(req.path, Math.min(req.size, 1000));
  await write(socket, OK_HEAD(body.length, req.kind === 'early-close' ? 'Connection: close\r\n' : ''));
  await write(socket, body);
  if (req.kind === 'early-close') socket.end();
}

export async function startMisbehavingBackend(): Promise<MisbehavingBackend> {
  const sockets = new Set<Socket>();
  const seen: string[] = [];
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    let buffer: Buffer = Buffer.alloc(0);
    let current: Request | undefined;
    let busy = false;
    const pump = (): void => {
      while (!busy && !socket.destroyed) {
        if (!current) {
          const end = buffer.indexOf('\r\n\r\n');
          if (end === -1) {
            if (buffer.length > 1_048_576) socket.destroy();
            return;
          }
          const head = buffer.subarray(0, end).toString('latin1');
          buffer = buffer.subarray(end + 4);
          const [requestLine, ...lines] = head.split('\r\n');
          const target = requestLine!.split(' ')[1] ?? '/';
          seen.push(target);
          // The body names the path, not the query (a cache key may leave the query out).
          const path = target.split('?')[0]!;
          const headers = new Map(lines.map((line) => [line.slice(0, line.indexOf(':')).trim().toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]));
          const chunked = /chunked/i.test(headers.get('transfer-encoding') ?? '');
          const left = chunked ? -1 : Number(headers.get('content-length') ?? 0) || 0;
          current = { path, ...parsePath(path), left, answered: false };
          if (current.kind === 'early' || current.kind === 'early-close') {
            current.answered = true;
            void answerEarly(socket, current);
            if (current.kind === 'early-close') return;
          }
        }
        // The request body: read and dropped.
        if (current.left === -1) {
          // The last chunk: "0" at the start of a line, then the empty line.
          let end = -1;
          for (let from = 0; end === -1; ) {
            const at = buffer.indexOf('0\r\n\r\n', from);
            if (at === -1) break;
            if (at === 0 || buffer[at - 1] === 0x0a) end = at;
            from = at + 1;
          }
          if (end === -1) return;
          buffer = buffer.subarray(end + 5);
          current.left = 0;
        } else if (current.left > 0) {
          const take = Math.min(current.left, buffer.length);
          current.left -= take;
          buffer = buffer.subarray(take);
          if (current.left > 0) return;
        }
        const req = current;
        current = undefined;
        if (req.answered) continue;
        busy = true;
        void answer(socket, req).then((more) => {
          busy = false;
          if (more) pump();
        });
      }
    };
    socket.on('data', (data: Buffer) => {
      buffer = buffer.length === 0 ? data : Buffer.concat([buffer, data]);
      pump();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as { port: number }).port,
    openConnections: () => sockets.size,
    seen,
    stop: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const socket of sockets) socket.destroy();
      }),
  };
}

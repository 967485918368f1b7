// An open-loop HTTP/1.1 load generator: requests leave on a fixed schedule (RATE a second) whether
// or not earlier ones were answered, and each latency counts from the moment its request was due
// (a request waiting for a free connection waits on the clock: no coordinated omission). Keep-alive
// connections, at most CONNECTIONS; each request names one of 10,000 clients in X-Forwarded-For.
// Bounded: SECONDS of sending, then at most 2 s for the last answers; the unanswered are lost.
// Prints one JSON line: sent, answered, non-2xx, lost, and latency percentiles (ms).
//   node --import tsx bench/edge/open-loop.ts URL HOST RATE SECONDS [CONNECTIONS]
import { connect, type Socket } from 'node:net';
import { percentile } from '../stats.ts';

const [url, host, rateText, secondsText, connectionsText] = process.argv.slice(2);
if (!url || !host || !rateText || !secondsText) throw new Error('usage: open-loop.ts URL HOST RATE SECONDS [CONNECTIONS]');
const target = new URL(url);
const RATE = Number(rateText);
const SECONDS = Number(secondsText);
const MAX_CONNECTIONS = Number(connectionsText ?? 256);
const total = Math.round(RATE * SECONDS);

const requestFor = (i: number) =>
  Buffer.from(`GET ${target.pathname}${target.search} HTTP/1.1\r\nHost: ${host}\r\nUser-Agent: open-loop\r\nX-Forwarded-For: 10.${(i >> 8) % 256}.${i % 256}.1\r\n\r\n`);
const requests = Array.from({ length: 10_000 }, (_, i) => requestFor(i));

interface Connection {
  socket: Socket;
  /** When the request in flight was due (performance.now()), or undefined when idle. */
  due: number | undefined;
  buffer: Buffer;
}

const latencies: number[] = [];
let sent = 0;
let answered = 0;
let non2xx = 0;
let errors = 0;
const idle: Connection[] = [];
const connections = new Set<Connection>();
/** Due times of requests waiting for a connection. */
const waiting: number[] = [];

/** One whole response at the front of the buffer: its length and status, or undefined if incomplete. */
function parse(buffer: Buffer): { length: number; status: number } | undefined {
  const end = buffer.indexOf('\r\n\r\n');
  if (end < 0) return undefined;
  const head = buffer.toString('latin1', 0, end);
  const status = Number(head.slice(9, 12));
  const length = /\r\ncontent-length:\s*(\d+)/i.exec(head);
  if (length) {
    const whole = end + 4 + Number(length[1]);
    return buffer.length >= whole ? { length: whole, status } : undefined;
  }
  if (/\r\ntransfer-encoding:\s*chunked/i.test(head)) {
    const last = buffer.indexOf('\r\n0\r\n\r\n', end);
    return last < 0 ? undefined : { length: last + 7, status };
  }
  return { length: end + 4, status };
}

function open(): Connection {
  const c: Connection = { socket: connect(Number(target.port), target.hostname), due: undefined, buffer: Buffer.alloc(0) };
  c.socket.setNoDelay(true);
  connections.add(c);
  c.socket.on('data', (d: Buffer) => {
    c.buffer = c.buffer.length ? Buffer.concat([c.buffer, d]) : d;
    const response = parse(c.buffer);
    if (!response || c.due === undefined) return;
    c.buffer = c.buffer.subarray(response.length);
    latencies.push(performance.now() - c.due);
    answered++;
    if (response.status < 200 || response.status >= 400) non2xx++;
    c.due = undefined;
    next(c);
  });
  c.socket.on('error', () => errors++);
  c.socket.on('close', () => {
    connections.delete(c);
    const at = idle.indexOf(c);
    if (at >= 0) idle.splice(at, 1);
  });
  return c;
}

/** A free connection takes the oldest waiting request, or rests. */
function next(c: Connection): void {
  const due = waiting.shift();
  if (due === undefined) idle.push(c);
  else send(c, due);
}

function send(c: Connection, due: number): void {
  c.due = due;
  c.socket.write(requests[sent % requests.length]!);
  sent++;
}

const started = performance.now();
let scheduled = 0;
const timer = setInterval(() => {
  const now = performance.now();
  // Every request due by now leaves (or waits on the clock for a connection).
  while (scheduled < total && started + (scheduled * 1000) / RATE <= now) {
    const due = started + (scheduled * 1000) / RATE;
    scheduled++;
    const c = idle.pop() ?? (connections.size < MAX_CONNECTIONS ? open() : undefined);
    if (c) send(c, due);
    else waiting.push(due);
  }
  if (scheduled >= total) {
    clearInterval(timer);
    setTimeout(finish, 2000);
  }
}, 1);

function finish(): void {
  latencies.sort((a, b) => a - b);
  const result = {
    rate: RATE,
    seconds: SECONDS,
    scheduled: total,
    sent,
    answered,
    non2xx,
    socketErrors: errors,
    lost: total - answered,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    p999: percentile(latencies, 99.9),
    max: latencies.at(-1) ?? NaN,
    connections: MAX_CONNECTIONS,
  };
  console.log(JSON.stringify(result));
  for (const c of connections) c.socket.destroy();
  process.exit(0);
}

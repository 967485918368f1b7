// The access log line written directly is, byte for byte but the time, the line pino writes for
// the same fields through the same logger (operators and tests parse it); a logger that does more
// than write JSON lines gets its lines from pino itself.
import { pino, type Logger } from 'pino';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../src/log.ts';
import { ACCESS_MESSAGE, AccessLog, type AccessFields } from '../../src/edge/access-log.ts';

/** A real pino logger (the process's options) writing into an array of lines. */
function capture(bindings: Record<string, unknown>, options: pino.LoggerOptions = {}): { log: Logger; lines: string[] } {
  const lines: string[] = [];
  const sink = { write: (line: string) => void lines.push(line) };
  const log = pino({ level: 'info', redact: { paths: ['req.headers["x-auth-key"]', 'headers["x-auth-key"]'], censor: '[redacted]' }, ...options }, sink).child(bindings);
  return { log, lines };
}

const BASE: AccessFields = {
  domain: 'example.com',
  host: 'www.example.com',
  method: 'GET',
  path: '/file.css',
  scheme: 'https',
  protocol: 'h2',
  status: 200,
  bytes: 1024,
  cache: 'HIT',
  blocked: undefined,
  ref: undefined,
  upstreamMs: undefined,
  via: undefined,
  ms: 0.12,
  client: '203.0.113.7',
  complete: true,
  upgrade: undefined,
};

const CASES: Array<[string, AccessFields]> = [
  ['a cache hit', BASE],
  ['a proxied miss', { ...BASE, cache: 'MISS', upstreamMs: 3.25, via: 'ok', bytes: 0 }],
  ['a refusal', { ...BASE, cache: undefined, status: 403, blocked: 'waf', ref: '0123456789abcdef', via: 'rule 942100 (sqli) in query "id"' }],
  ['no domain, no method, an invalid target', { ...BASE, domain: undefined, method: undefined, host: undefined, cache: undefined, status: 400, via: 'malformed Host' }],
  ['an upgrade that ended early', { ...BASE, upgrade: true, complete: false, status: 101 }],
  ['quotes, backslashes, control characters and Latin-1 in what the client sent', { ...BASE, host: 'a"b\\c\u0001\u007f\u00e9\u00ff', path: '/"\\\t\n\r\u0000/%22', method: 'G"ET' }],
  ['a long value', { ...BASE, path: `/${'a"'.repeat(300)}` }],
  ['numbers that are not finite', { ...BASE, ms: Number.NaN, upstreamMs: Number.POSITIVE_INFINITY, bytes: Number.NaN }],
  ['negative and large numbers', { ...BASE, ms: -0.01, bytes: 2 ** 53 - 1, status: 599 }],
];

/** The line with its time replaced (the two are written a moment apart). */
const untimed = (line: string) => line.replace(/,"time":\d+/, ',"time":0');

describe('the access log line', () => {
  for (const [name, fields] of CASES) {
    it(`is pino's line for ${name}`, () => {
      const direct = capture({ part: 'edge', component: 'edge' });
      const access = new AccessLog(direct.log);
      access.write(fields);
      access.flush();
      const viaPino = capture({ part: 'edge', component: 'edge' });
      viaPino.log.info(fields, ACCESS_MESSAGE);
      expect(direct.lines).toHaveLength(1);
      expect(untimed(direct.lines[0]!)).toBe(untimed(viaPino.lines[0]!));
      const parsed = JSON.parse(direct.lines[0]!) as Record<string, unknown>;
      expect(parsed.msg).toBe(ACCESS_MESSAGE);
      expect(parsed.level).toBe(30);
    });
  }

  it("carries the process logger's bindings, also ones set later", () => {
    const lines: string[] = [];
    const root = createLogger('info');
    // The process logger writes to stdout; the same logger's pieces over another stream.
    const log = pino({ level: 'info' }, { write: (line: string) => void lines.push(line) }).child({ worker: 3 });
    const access = new AccessLog(log);
    access.write(BASE);
    log.setBindings({ worker: 4 });
    access.write(BASE);
    access.flush();
    const written = lines.join('').split('\n').filter(Boolean);
    expect(written.map((l) => (JSON.parse(l) as { worker: number }).worker)).toEqual([3, 4]);
    expect(typeof (JSON.parse(written[0]!) as { pid: unknown }).pid).toBe('number');
    expect(new AccessLog(root.child({ part: 'edge' }))).toBeInstanceOf(AccessLog);
  });

  it('writes nothing above info, and follows a level changed later', () => {
    const { log, lines } = capture({});
    const access = new AccessLog(log);
    log.level = 'warn';
    access.write(BASE);
    expect(lines).toEqual([]);
    log.level = 'debug';
    access.write(BASE);
    access.flush();
    expect(lines).toHaveLength(1);
  });

  it('hands the lines of one turn of the event loop to the stream at once, in order, and none twice', async () => {
    const { log, lines } = capture({});
    const access = new AccessLog(log);
    for (let i = 0; i < 3; i++) access.write({ ...BASE, status: 200 + i });
    expect(lines).toEqual([]);
    await new Promise((resolve) => setImmediate(resolve));
    expect(lines).toHaveLength(1);
    const written = lines[0]!.split('\n').filter(Boolean).map((l) => (JSON.parse(l) as { status: number }).status);
    expect(written).toEqual([200, 201, 202]);
    access.write({ ...BASE, status: 299 });
    access.flush();
    access.flush();
    await new Promise((resolve) => setImmediate(resolve));
    expect(lines.slice(1).map((l) => (JSON.parse(l) as { status: number }).status)).toEqual([299]);
  });

  it("goes through pino when the logger shapes lines itself (a mixin, a log formatter, another message key)", () => {
    const options: pino.LoggerOptions[] = [
      { mixin: () => ({ extra: 1 }) },
      { formatters: { log: (o) => ({ ...o, shaped: true }) } },
      { messageKey: 'message' },
      { nestedKey: 'payload' },
      { msgPrefix: '[edge] ' },
    ];
    for (const option of options) {
      const direct = capture({ part: 'edge' }, option);
      // Through pino: written at once, nothing waits for a flush.
      new AccessLog(direct.log).write(BASE);
      const viaPino = capture({ part: 'edge' }, option);
      viaPino.log.info(BASE, ACCESS_MESSAGE);
      expect(untimed(direct.lines[0]!)).toBe(untimed(viaPino.lines[0]!));
    }
  });
});

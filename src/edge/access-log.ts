// The access log line, one per request: the same JSON line the process's pino logger writes (its
// level, time and bindings first, then these fields in this order, then the message), built here
// as one string. pino walks a merging object key by key (an own-property check, a stringifier
// lookup and an escaping loop per key and per value): about 2 µs of a cache hit's ~30. Operators
// and tests parse these lines: the fields, their order and their JSON do not change.
import { pino, type Logger } from 'pino';

/** The fields of one line, in the order they are written; undefined ones are left out. */
export interface AccessFields {
  domain: string | undefined;
  host: string | undefined;
  method: string | undefined;
  path: string;
  scheme: string;
  /** The protocol the client spoke: `http/1.1` or `h2`. */
  protocol: string;
  status: number;
  bytes: number;
  cache: string | undefined;
  blocked: string | undefined;
  ref: string | undefined;
  upstreamMs: number | undefined;
  via: string | undefined;
  ms: number;
  client: string;
  complete: boolean;
  upgrade: true | undefined;
}

export const ACCESS_MESSAGE = 'edge request';

const INFO = 30;

/** What JSON escapes in a string (Node's header and URL text is Latin-1: no lone surrogates). */
const ESCAPED = /["\\\u0000-\u001f]/;
/** A string as JSON, as pino writes it: most need no escaping and are quoted as they are. */
const str = (value: string): string => (ESCAPED.test(value) ? JSON.stringify(value) : `"${value}"`);
/** A number as pino writes it: a non-finite one is null. */
const num = (value: number): string => (Number.isFinite(value) ? String(value) : 'null');

/** The fields as pino writes a merging object's properties: `,"key":value` each, undefined ones left out. */
export function accessFieldsJson(f: AccessFields): string {
  let line = '';
  if (f.domain !== undefined) line += `,"domain":${str(f.domain)}`;
  if (f.host !== undefined) line += `,"host":${str(f.host)}`;
  if (f.method !== undefined) line += `,"method":${str(f.method)}`;
  line += `,"path":${str(f.path)},"scheme":${str(f.scheme)},"protocol":${str(f.protocol)},"status":${num(f.status)},"bytes":${num(f.bytes)}`;
  if (f.cache !== undefined) line += `,"cache":${str(f.cache)}`;
  if (f.blocked !== undefined) line += `,"blocked":${str(f.blocked)}`;
  if (f.ref !== undefined) line += `,"ref":${str(f.ref)}`;
  if (f.upstreamMs !== undefined) line += `,"upstreamMs":${num(f.upstreamMs)}`;
  if (f.via !== undefined) line += `,"via":${str(f.via)}`;
  line += `,"ms":${num(f.ms)},"client":${str(f.client)},"complete":${f.complete ? 'true' : 'false'}`;
  if (f.upgrade) line += ',"upgrade":true';
  return line;
}

/** What of a pino logger the line is built from; undefined when the logger does more than write JSON lines. */
interface Plain {
  /** `{"level":30`. */
  level: string;
  time: () => string;
  /** The bindings (pid, hostname, the child's own), each `,"key":value` (read per line: setBindings changes them). */
  bindings: () => string;
  /** `}` and the line's end. */
  end: string;
  stream: { write(line: string): unknown };
}

type Internals = Record<symbol, unknown>;

/**
 * The logger's own pieces, when writing the line directly gives what pino would: no mixin, no
 * log formatter, no write hook, a default message key and a stream that wants only the text.
 */
function plain(log: Logger): Plain | undefined {
  const s = pino.symbols;
  const l = log as unknown as Internals;
  const formatters = l[s.formattersSym] as { log?: unknown } | undefined;
  const hooks = l[s.hooksSym] as { streamWrite?: unknown } | undefined;
  const stream = l[s.streamSym] as Internals & { write(line: string): unknown };
  const levels = l[s.lsCacheSym] as Record<number, string> | undefined;
  if (l[s.mixinSym] || formatters?.log || hooks?.streamWrite || l[s.messageKeySym] !== 'msg' || l[s.nestedKeySym] || l[(s as unknown as Record<string, symbol>).msgPrefixSym!]) return undefined;
  if (!stream || typeof stream.write !== 'function' || stream[s.needsMetadataGsym] === true || typeof levels?.[INFO] !== 'string') return undefined;
  return { level: levels[INFO], time: l[s.timeSym] as () => string, bindings: () => l[s.chindingsSym] as string, end: l[s.endSym] as string, stream };
}

/**
 * Writes access log lines through `log` (at info), directly when the logger is a plain one, else
 * by `log.info`. Direct lines are handed to the stream once per turn of the event loop, joined:
 * pino's stream (sonic-boom) measures the byte length of the text it holds on every write while
 * one is in flight (as it is under load), which per line grew to ~8 % of a cache hit's CPU time.
 * An access line may so follow another log line written in the same turn; access lines keep their order.
 */
export class AccessLog {
  private readonly direct: Plain | undefined;
  private readonly message = `,"msg":${JSON.stringify(ACCESS_MESSAGE)}`;
  /** Lines written this turn of the event loop, not yet handed to the stream. */
  private pending = '';
  private scheduled = false;

  constructor(private readonly log: Logger) {
    this.direct = plain(log);
  }

  write(fields: AccessFields): void {
    const log = this.log;
    // The level may change while the process runs.
    if (log.levelVal > INFO) return;
    const direct = this.direct;
    if (!direct) return void log.info(fields, ACCESS_MESSAGE);
    this.pending += `${direct.level}${direct.time()}${direct.bindings()}${accessFieldsJson(fields)}${this.message}${direct.end}`;
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(this.flush);
  }

  /** Hands the lines waiting to the stream now (also when the edge closes). */
  readonly flush = (): void => {
    this.scheduled = false;
    const lines = this.pending;
    if (lines === '' || !this.direct) return;
    this.pending = '';
    this.direct.stream.write(lines);
  };
}

// baseprotection's verdict on one request, given the domain's settings, in the two phases the chain
// runs it in: the head (protocol checks, and the rules when no body is announced), then the body
// read for inspection (body-inspection.ts) and the rules (inspect.ts). The WAF's stages (stages.ts)
// act on the verdict: refuse, log, or pass on (with the body read, if it was read whole).
import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import { announcesBody, inspectionHold, readForInspection } from './body-inspection.ts';
import { bodyTail } from './body-tail.ts';
import { firstFinding, inspect, protocolFinding, refusalFinding, type Finding } from './inspect.ts';
import { wafSettings, type WafDomainFields } from './settings.ts';
import { serverExecutableHeader } from './uploads.ts';
import { SERVER_FILE_RULE, type BodyRefusal } from './body-parse.ts';

export interface RequestVerdict {
  /** What the request matched; in log-only mode it is to be logged, not refused. */
  finding?: Finding;
  logOnly?: boolean;
  /** The body, read whole, for the proxy to send. */
  body?: Buffer;
  /** The client ended its body early. */
  cut?: boolean;
  /** A body read in part: the rest is to be watched on its way to the backend. */
  tail?: BodyWatch;
}

/** The rest of a body, watched as the proxy sends it; `finding` is set once it matched. */
export interface BodyWatch {
  /** The next bytes; true: stop sending (refused). */
  chunk(bytes: Buffer): boolean;
  /** The end; true: refused (its last bytes are not sent). */
  end(): boolean;
  finding?: Finding;
}

/**
 * The verdict on the head: protocol checks, then, for a request without a body (the common case),
 * the rules — at once, no promise, so that a cache hit behind baseprotection is answered in the
 * same turn. Undefined: a body is announced, and the verdict is inspectBody's.
 */
export function inspectHead(method: string, url: string, headers: IncomingHttpHeaders, rawHeaderCount: number, domainState?: object): RequestVerdict | undefined {
  // A domain state carries the WAF fields (model/domain.ts); older ones may lack them.
  const domain = domainState as WafDomainFields | undefined;
  const settings = wafSettings(domain);
  const logOnly = settings.mode === 'log';
  const protocol = protocolFinding(method, url, headers, rawHeaderCount);
  if (protocol) return { finding: protocol, logOnly };
  if (!announcesBody(headers)) return { finding: inspect(method, url, headers, undefined, domain), logOnly };
  return undefined;
}

/** The verdict on a request whose head passed (inspectHead said undefined): its body read, then the rules. */
export function inspectBody(req: IncomingMessage, method: string, url: string, headers: IncomingHttpHeaders, domainState?: object): Promise<RequestVerdict> {
  const domain = domainState as WafDomainFields | undefined;
  const settings = wafSettings(domain);
  return inspectWithBody(req, method, url, headers, domain, settings, settings.mode === 'log');
}

/** The body bytes the verdict on this request may hold in memory (see inspectionHold), before any is read. */
export function bodyHold(headers: IncomingHttpHeaders, domainState?: object): number {
  const settings = wafSettings(domainState as WafDomainFields | undefined);
  // Log only hands back a body past the limit rather than refusing it (as inspectWithBody reads it).
  return inspectionHold(headers, settings.mode === 'log' ? { ...settings, overflow: 'prefix' } : settings);
}

async function inspectWithBody(req: IncomingMessage, method: string, url: string, headers: IncomingHttpHeaders, domain: WafDomainFields | undefined, settings: ReturnType<typeof wafSettings>, logOnly: boolean): Promise<RequestVerdict> {
  // Log only never refuses, so a body past the limit is handed back, never cut off.
  const read = await readForInspection(req, logOnly ? { ...settings, overflow: 'prefix' } : settings);
  if (read.kind === 'cut') return { cut: true };
  if (read.kind === 'refused') return { finding: read.finding, logOnly };
  const body = read.kind === 'read' ? read.body : undefined;
  // The rules first, so that an attack is named by its own rule; then what the body's structure refuses.
  const path = url.split('?', 1)[0]!;
  const refusals: BodyRefusal[] = read.kind === 'none' ? [] : [...read.refusals];
  const fileHeader = serverExecutableHeader(headers);
  if (fileHeader) refusals.push({ status: 403, rule: SERVER_FILE_RULE, where: `header ${fileHeader} (a file the server would run)` });
  const finding = inspect(method, url, headers, read.kind === 'none' ? undefined : read.inputs, domain) ?? refusalFinding(refusals, path, settings);
  if (finding || read.kind !== 'prefix') return { finding, logOnly, body };
  return { logOnly, tail: watchTail(read.bytes, read.inspected, String(headers['content-type'] ?? ''), path, settings, logOnly) };
}

/** A watch over the rest of a body past the limit; in log-only mode it records and never stops. */
function watchTail(prefix: Buffer, inspected: number, contentType: string, path: string, settings: ReturnType<typeof wafSettings>, logOnly: boolean): BodyWatch | undefined {
  const watch: BodyWatch = { chunk: () => false, end: () => false };
  const tail = bodyTail(prefix, inspected, contentType, (read) => {
    watch.finding ??= firstFinding(read.inputs, path, settings) ?? refusalFinding(read.refusals, path, settings);
    return watch.finding !== undefined && !logOnly;
  });
  if (!tail) return undefined;
  // The proxy reads the body from its first byte again: the bytes handed back were read already.
  let skip = prefix.length;
  // Once refused (or, logging only, once found) the rest is not read.
  watch.chunk = (bytes) => {
    if (watch.finding) return !logOnly;
    if (skip >= bytes.length) {
      skip -= bytes.length;
      return false;
    }
    const rest = skip > 0 ? bytes.subarray(skip) : bytes;
    skip = 0;
    return tail.chunk(rest);
  };
  watch.end = () => (watch.finding ? !logOnly : tail.end());
  return watch;
}

// Reading a request body for inspection, with bounded memory: any length, chunked or not, up to
// the domain's limit (waf_body_limit); a compressed body (Content-Encoding gzip, deflate, br) is
// inspected decompressed, its output bounded by a ratio to its input (a small bomb cannot fill
// memory); the bytes forwarded are the ones received. Past the limit, the domain's policy:
//   refuse  413 (rule 920160);
//   prefix  the first `limit` bytes are inspected, then handed back to the request stream
//           (Readable.unshift) so the proxy sends them and the rest as they come, the rest
//           watched on its way (body-tail.ts: every multipart part, a text body's last part);
//   auto    (default) prefix for uploads (multipart, and types that are binary by nature), refuse
//           for everything else (forms, JSON, XML, text — nobody needs megabytes of those).
// A compressed body past the limit is refused whatever the policy: its rest could only be
// watched by decompressing it on the way, and uploads are not sent compressed.
import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import { brotliDecompressSync, constants, gunzipSync, inflateRawSync, inflateSync } from 'node:zlib';
import { readBody, type BodyRefusal } from './body-parse.ts';
import type { Finding } from './inspect.ts';
import type { Input } from './inputs.ts';
import type { WafSettings } from './settings.ts';

/** A compressed body may expand this many times over (text compresses ~5–20×; bombs, 1000×). */
export const MAX_RATIO = 100;
/** …and never past this many bytes whatever the input. */
const MAX_EXPANDED = 64 * 1024 * 1024;

export type BodyVerdict =
  /** No body. */
  | { kind: 'none' }
  /** Read whole: forward `body`; `inputs` are what the rules read, `refusals` what it is refused for after them. */
  | { kind: 'read'; body: Buffer; inputs: Input[]; refusals: BodyRefusal[] }
  /**
   * Read in part: the first `inspected` of `bytes` were inspected; all of `bytes` were handed back
   * to the request stream (the proxy reads it as if untouched).
   */
  | { kind: 'prefix'; inputs: Input[]; refusals: BodyRefusal[]; bytes: Buffer; inspected: number }
  /** Refused before the rules: a protocol finding. */
  | { kind: 'refused'; finding: Finding }
  /** The client ended the body early. */
  | { kind: 'cut' };

const UPLOAD_TYPES = /^(?:multipart\/|image\/|video\/|audio\/|font\/|application\/(?:octet-stream|zip|gzip|x-gzip|x-tar|x-7z-compressed|x-rar-compressed|pdf|vnd\.|java-archive|x-bzip2|wasm))/;

/** Past the limit, for this request: refuse, or inspect the prefix and pass the rest. */
export function overflowPolicy(settings: Pick<WafSettings, 'overflow'>, contentType: string): 'refuse' | 'prefix' {
  if (settings.overflow !== 'auto') return settings.overflow;
  return UPLOAD_TYPES.test(contentType.toLowerCase()) ? 'prefix' : 'refuse';
}

/** A size in KiB as the page says it ("1,024 KiB"). */
const kib = (bytes: number) => `${Math.round(bytes / 1024).toLocaleString('en-US')} KiB`;

const finding = (status: number, rule: number, where: string): { kind: 'refused'; finding: Finding } => ({ kind: 'refused', finding: { status, rule, class: 'protocol', where } });

/**
 * The body as the backend will decode it, for inspection: Content-Encoding undone, last applied
 * first. `partial`: a prefix (decompress what there is). Undefined with a finding when it cannot be.
 */
export function decodeContent(raw: Buffer, encoding: string | undefined, partial: boolean): { bytes: Buffer } | { kind: 'refused'; finding: Finding } {
  if (!encoding) return { bytes: raw };
  const codings = encoding
    .toLowerCase()
    .split(',')
    .map((c) => c.trim())
    .filter((c) => c !== '' && c !== 'identity')
    .reverse();
  let bytes = raw;
  for (const coding of codings) {
    const maxOutputLength = Math.min(MAX_EXPANDED, Math.max(64 * 1024, raw.length * MAX_RATIO));
    const flush = partial ? { finishFlush: constants.Z_SYNC_FLUSH } : {};
    try {
      if (coding === 'gzip' || coding === 'x-gzip') bytes = gunzipSync(bytes, { maxOutputLength, ...flush });
      else if (coding === 'deflate') bytes = bytes[0] !== undefined && (bytes[0] & 0x0f) === 8 ? inflateSync(bytes, { maxOutputLength, ...flush }) : inflateRawSync(bytes, { maxOutputLength, ...flush });
      else if (coding === 'br') bytes = brotliDecompressSync(bytes, { maxOutputLength, ...(partial ? { finishFlush: constants.BROTLI_OPERATION_FLUSH } : {}) });
      else return finding(415, 920180, `Content-Encoding ${coding.slice(0, 20)} (not inspectable)`);
    } catch (error) {
      if (error instanceof RangeError || (error as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE') return finding(413, 920170, `Content-Encoding ${coding}: expands more than ${MAX_RATIO}×`);
      return finding(400, 920190, `Content-Encoding ${coding}: not valid`);
    }
  }
  return { bytes };
}

/** Whether the request's headers announce a body (a length above 0, or chunks). */
export function announcesBody(headers: IncomingHttpHeaders): boolean {
  const declared = headers['content-length'];
  return (declared !== undefined && Number(declared) !== 0) || headers['transfer-encoding'] !== undefined;
}

/**
 * The most body bytes readForInspection holds in memory for this request, known from its headers
 * before anything is read: none without a body or when its announced length alone refuses it; its
 * announced length within the limit; else the limit (a body without a length, or one handed back
 * past the limit). What edge-server.ts reserves from the node's body buffer budget.
 */
export function inspectionHold(headers: IncomingHttpHeaders, settings: Pick<WafSettings, 'bodyLimit' | 'overflow'>): number {
  if (!announcesBody(headers)) return 0;
  const declared = headers['content-length'];
  const limit = settings.bodyLimit;
  if (declared === undefined) return limit;
  const length = Number(declared);
  if (length <= limit) return length;
  const compressed = (headers['content-encoding'] ?? 'identity').trim().toLowerCase() !== 'identity';
  return overflowPolicy(settings, String(headers['content-type'] ?? '')) === 'refuse' || compressed ? 0 : limit;
}

/** Reads (and parses) the request's body for inspection, by the domain's settings. */
export async function readForInspection(req: IncomingMessage, settings: Pick<WafSettings, 'bodyLimit' | 'overflow'>): Promise<BodyVerdict> {
  if (!announcesBody(req.headers)) return { kind: 'none' };
  const declared = req.headers['content-length'];
  const length = declared === undefined ? undefined : Number(declared);
  const contentType = String(req.headers['content-type'] ?? '');
  const policy = overflowPolicy(settings, contentType);
  const limit = settings.bodyLimit;
  if (length !== undefined && length > limit && policy === 'refuse') return finding(413, 920160, `the body is too large: this site inspects at most ${kib(limit)} of a body and refuses larger ones`);
  const compressed = (req.headers['content-encoding'] ?? 'identity').trim().toLowerCase() !== 'identity';
  if (length !== undefined && length > limit && compressed) return finding(413, 920160, `the compressed body is too large: this site inspects at most ${kib(limit)} of a body`);
  const read = await readUpTo(req, limit);
  if (read === undefined) return { kind: 'cut' };
  if (read.more && (policy === 'refuse' || compressed)) {
    req.resume();
    return finding(413, 920160, `the body is too large: this site inspects at most ${kib(limit)} of a body and refuses larger ones`);
  }
  const decoded = decodeContent(read.more ? read.bytes.subarray(0, limit) : read.bytes, req.headers['content-encoding'], read.more);
  if ('kind' in decoded) {
    if (read.more) req.resume();
    return decoded;
  }
  const { inputs, refusals } = readBody(decoded.bytes, contentType);
  if (!read.more) return { kind: 'read', body: read.bytes, inputs, refusals };
  // Handed back: the proxy reads the request stream from its first byte again.
  req.unshift(read.bytes);
  return { kind: 'prefix', inputs, refusals, bytes: read.bytes, inspected: limit };
}

/**
 * The body's first bytes: all of it when it ends within `limit` (more: false), or at least
 * `limit` + 1 bytes with the stream paused (more: true). Undefined when the client ends it early.
 */
function readUpTo(req: IncomingMessage, limit: number): Promise<{ bytes: Buffer; more: boolean } | undefined> {
  return new Promise((resolve) => {
    // The socket too: after a 408 the connection closes without the request stream ever ending.
    const socket = req.socket;
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    const finish = (value: { bytes: Buffer; more: boolean } | undefined) => {
      if (done) return;
      done = true;
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onClose);
      req.off('close', onClose);
      socket.off('close', onClose);
      resolve(value);
    };
    const onData = (chunk: Buffer) => {
      chunks.push(chunk);
      size += chunk.length;
      if (size > limit) {
        req.pause();
        finish({ bytes: Buffer.concat(chunks, size), more: true });
      }
    };
    const onEnd = () => {
      const declared = req.headers['content-length'];
      finish(declared !== undefined && Number(declared) !== size ? undefined : { bytes: Buffer.concat(chunks, size), more: false });
    };
    const onClose = () => finish(req.complete ? { bytes: Buffer.concat(chunks, size), more: false } : undefined);
    req.on('data', onData);
    req.once('end', onEnd);
    req.once('error', onClose);
    req.once('close', onClose);
    socket.once('close', onClose);
  });
}

// Documents every client gets the same (/openapi.json, the /docs page and its assets): made once,
// compressed once (brotli and gzip, off the event loop), each representation with its strong ETag,
// and answered from memory — 304 to If-None-Match, the smallest encoding Accept-Encoding allows.
// A document's first request runs its route as usual and what it answers is kept; every later
// request for that path is answered before the route runs, so none costs more than copying bytes.
import { createHash } from 'node:crypto';
import { promisify } from 'node:util';
import { brotliCompress, constants, gzip } from 'node:zlib';
import type { FastifyReply, FastifyRequest } from 'fastify';

const brotli = promisify(brotliCompress);
const gzipAsync = promisify(gzip);

type Encoding = 'br' | 'gzip' | 'identity';

interface Representation {
  body: Buffer;
  etag: string;
}

export interface PublicDocument {
  type: string;
  variants: Record<Encoding, Representation>;
}

export async function makeDocument(body: Buffer, type: string): Promise<PublicDocument> {
  const tag = createHash('sha256').update(body).digest('base64url').slice(0, 27);
  const identity = { body, etag: `"${tag}"` };
  const [br, gz] = await Promise.all([
    // Quality 9: within a few per cent of 11 on these files, at a fraction of the time.
    brotli(body, { params: { [constants.BROTLI_PARAM_QUALITY]: 9, [constants.BROTLI_PARAM_SIZE_HINT]: body.length } }),
    gzipAsync(body, { level: 9 }),
  ]);
  return { type, variants: { identity, gzip: { body: gz, etag: `"${tag}-gz"` }, br: { body: br, etag: `"${tag}-br"` } } };
}

/** The encoding to answer with: br, then gzip, by their q-values (RFC 9110 §12.5.3); identity otherwise. */
export function chooseEncoding(header: string | undefined): Encoding {
  if (!header) return 'identity';
  const q = new Map<string, number>();
  for (const part of header.split(',')) {
    const [name, ...params] = part.trim().toLowerCase().split(';');
    if (!name) continue;
    const qParam = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    const value = qParam ? Number(qParam.slice(2)) : 1;
    q.set(name, Number.isFinite(value) ? value : 0);
  }
  const of = (name: string) => q.get(name) ?? q.get('*') ?? 0;
  const br = of('br');
  const gz = Math.max(of('gzip'), q.get('x-gzip') ?? 0);
  if (br > 0 && br >= gz) return 'br';
  if (gz > 0) return 'gzip';
  return 'identity';
}

/** If-None-Match names this tag (weak comparison, RFC 9110 §13.1.2), or is "*". */
export function noneMatch(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  if (header.trim() === '*') return true;
  return header.split(',').some((t) => t.trim().replace(/^W\//, '') === etag);
}

/**
 * Sets the answer's status and headers for the document and gives the body to send: the chosen
 * representation, or null for 304. For an onSend hook to return; `sendDocument` sends it.
 */
export function prepareDocument(request: FastifyRequest, reply: FastifyReply, doc: PublicDocument): Buffer | null {
  const variant = doc.variants[chooseEncoding(request.headers['accept-encoding'])];
  void reply.header('etag', variant.etag);
  void reply.header('vary', 'Accept-Encoding');
  // Stored, but asked about again each time (a 304 is cheap): a new release changes the documents.
  void reply.header('cache-control', 'no-cache');
  if (noneMatch(request.headers['if-none-match'], variant.etag)) {
    void reply.code(304);
    return null;
  }
  void reply.type(doc.type);
  if (variant !== doc.variants.identity) void reply.header('content-encoding', variant === doc.variants.br ? 'br' : 'gzip');
  void reply.code(200);
  return variant.body;
}

export function sendDocument(request: FastifyRequest, reply: FastifyReply, doc: PublicDocument): FastifyReply {
  const body = prepareDocument(request, reply, doc);
  return body ? reply.send(body) : reply.send();
}

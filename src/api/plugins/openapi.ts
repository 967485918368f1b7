// OpenAPI 3.1 generated from the route schemas, served at /openapi.json, with a browsable
// page at /docs. These documents are the same for every client and large (the specification is a
// quarter of a megabyte, the page's script 1.7 MB): each is made and compressed once and answered
// from memory with an ETag (see ../public-documents.ts).
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { makeDocument, prepareDocument, sendDocument, type PublicDocument } from '../public-documents.ts';

/** Paths kept: the documents and the page's assets are a few dozen; odd spellings of them are not kept past this. */
const MAX_DOCUMENTS = 64;

async function bytesOf(payload: unknown): Promise<Buffer | undefined> {
  if (typeof payload === 'string') return Buffer.from(payload);
  if (Buffer.isBuffer(payload)) return payload;
  if (payload && typeof (payload as AsyncIterable<unknown>)[Symbol.asyncIterator] === 'function') {
    const chunks: Buffer[] = [];
    for await (const chunk of payload as AsyncIterable<Buffer | string>) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk));
    return Buffer.concat(chunks);
  }
  return undefined;
}

/** Keeps what each document path answered the first time and answers later requests with it. */
function documentCache(docs: FastifyInstance): void {
  const kept = new Map<string, Promise<PublicDocument | undefined>>();
  const fromCache = new WeakSet<FastifyRequest>();
  // Only GET and HEAD without a query: the page's HTML depends on the URL as written, and a query
  // must not choose what every later client is given.
  const pathOf = (request: FastifyRequest) => ((request.method === 'GET' || request.method === 'HEAD') && !request.url.includes('?') ? request.url : undefined);
  const answer = (request: FastifyRequest, reply: FastifyReply, doc: PublicDocument) => {
    fromCache.add(request);
    return sendDocument(request, reply, doc);
  };

  docs.addHook('onRequest', async (request, reply) => {
    const path = pathOf(request);
    const doc = path === undefined ? undefined : await kept.get(path)?.catch(() => undefined);
    if (doc) return answer(request, reply, doc);
  });

  docs.addHook('onSend', async (request, reply, payload) => {
    if (fromCache.has(request) || request.method !== 'GET' || reply.statusCode !== 200) return payload;
    const path = pathOf(request);
    if (path === undefined || (!kept.has(path) && kept.size >= MAX_DOCUMENTS)) return payload;
    let doc = kept.get(path);
    if (!doc) {
      const type = String(reply.getHeader('content-type') ?? 'application/octet-stream');
      doc = bytesOf(payload).then((body) => body && makeDocument(body, type));
      kept.set(path, doc);
      // Not kept if it could not be made: the next request tries again.
      doc.then((made) => made ?? kept.delete(path), () => kept.delete(path)).catch(() => undefined);
    }
    const made = await doc;
    if (!made) return payload;
    // The route's own validators and length do not describe what is sent now.
    for (const header of ['content-length', 'last-modified', 'accept-ranges', 'etag']) reply.removeHeader(header);
    return prepareDocument(request, reply, made);
  });
}

export const openapiPlugin = fp(
  async (app: FastifyInstance) => {
    await app.register(swagger, {
      openapi: {
        openapi: '3.1.0',
        info: {
          title: 'Palisade control-plane API',
          version: '1.0.0',
          description:
            'Domains, DNS records, name-server activation, IP lists and edge nodes. Every request except /healthz, /readyz, /openapi.json and /docs needs an `X-Auth-Key` header. Errors are RFC 9457 problem+json documents. Lists are paged with `limit` and `cursor`; a `Link: <…>; rel="next"` header gives the next page.',
          license: { name: 'Proprietary', identifier: 'LicenseRef-Proprietary' },
        },
        servers: [{ url: '/', description: 'This API (the host serving this document)' }],
        components: {
          securitySchemes: {
            apiKey: { type: 'apiKey', in: 'header', name: 'X-Auth-Key' },
            consumerToken: { type: 'http', scheme: 'bearer', description: 'A change-feed consumer token from `palisade admin consumer add` (a name server, or with --node an edge)' },
          },
        },
        security: [{ apiKey: [] }],
      },
    });
    // In a scope of their own, so the cache's hooks see these routes only.
    await app.register(async (docs) => {
      documentCache(docs);
      await docs.register(swaggerUi, { routePrefix: '/docs', uiConfig: { docExpansion: 'list' } });
      docs.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
    });
  },
  { name: 'palisade-openapi' },
);

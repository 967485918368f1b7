// Serves the customer console at /console/: the files `scripts/build.mjs` bundled into
// dist/console-app/ (an index.html naming content-hashed script and style files). They hold no
// customer data — the page asks the public API for everything, with the key the customer typed —
// so they are the same for every client: read and compressed once (on the first request, not at
// start-up), answered from memory with an ETag.
// Every answer carries a strict Content-Security-Policy (scripts and styles from this origin only,
// no inline script, no other origin reached), X-Frame-Options: DENY and no referrer.
import { readdir, readFile } from 'node:fs/promises';
import { extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { problem, sendProblem } from '../problem.ts';
import { makeDocument, prepareDocument, type PublicDocument } from '../public-documents.ts';

/** From dist/console/ and from src/console/ alike (sources run through tsx read the same build). */
export const CONSOLE_BUILD_DIR = fileURLToPath(new URL('../../../dist/console-app/', import.meta.url));

export const CONSOLE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
};

/** The files of one build, by name (index.html and its hashed assets). */
type Files = Map<string, PublicDocument>;

async function loadBuild(dir: string): Promise<Files> {
  const files: Files = new Map();
  for (const name of await readdir(dir)) {
    const type = TYPES[extname(name)];
    if (type) files.set(name, await makeDocument(await readFile(join(dir, name)), type));
  }
  if (!files.has('index.html')) throw new Error(`no index.html in ${dir}`);
  return files;
}

function secure(reply: FastifyReply): void {
  void reply.header('content-security-policy', CONSOLE_CSP);
  void reply.header('x-frame-options', 'DENY');
  void reply.header('x-content-type-options', 'nosniff');
  void reply.header('referrer-policy', 'no-referrer');
  void reply.header('cross-origin-opener-policy', 'same-origin');
}

export async function consoleRoutes(app: FastifyInstance, options: { dir?: string } = {}): Promise<void> {
  const dir = options.dir ?? CONSOLE_BUILD_DIR;
  let build: Promise<Files> | undefined;
  const files = () => {
    // A build that could not be read is tried again on the next request (a later `npm run build`).
    build ??= loadBuild(dir).catch((error: unknown) => {
      build = undefined;
      throw error;
    });
    return build;
  };
  const schema = { hide: true, querystring: Type.Object({}, { additionalProperties: false }) };

  const serve = async (name: string, reply: FastifyReply, request: FastifyRequest) => {
    secure(reply);
    let loaded: Files;
    try {
      loaded = await files();
    } catch {
      return sendProblem(reply, problem('UNAVAILABLE', 'the console is not built on this server (npm run build builds it)'));
    }
    const doc = loaded.get(name);
    if (!doc) return sendProblem(reply, problem('NOT_FOUND', `no console file ${name}`));
    const body = prepareDocument(request, reply, doc);
    // The page itself is asked for again every time and never kept in a back/forward cache (a
    // signed-out tab must not come back showing data); the assets' names change with their content.
    if (name === 'index.html') void reply.header('cache-control', 'no-store');
    else if (name === 'icon.svg') void reply.header('cache-control', 'public, max-age=86400');
    else void reply.header('cache-control', 'public, max-age=31536000, immutable');
    return body ? reply.send(body) : reply.send();
  };

  // /console (no slash) is sent to /console/ so the page's relative asset paths resolve under it.
  app.get('/console', { schema }, async (request, reply) => {
    if (!request.url.split('?')[0]!.endsWith('/')) return reply.redirect('/console/', 308);
    return serve('index.html', reply, request);
  });
  app.get('/console/assets/:file', { schema: { ...schema, params: Type.Object({ file: Type.String({ pattern: '^[A-Za-z0-9._-]{1,100}$' }) }) } }, async (request, reply) =>
    // The page is /console/ only: under assets/ it would be a second URL for it.
    serve((request.params as { file: string }).file === 'index.html' ? '' : (request.params as { file: string }).file, reply, request),
  );
}

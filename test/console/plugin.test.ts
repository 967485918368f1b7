// The console's file server on its own: a missing build is a 503 problem (not a crash, and tried
// again once built); names that are not the build's files are refused; every answer carries the
// security headers; 304 on the ETag. (Query strings are refused by the API's strict validator: see
// console.test.ts.)
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { consoleRoutes, CONSOLE_CSP } from '../../src/api/plugins/console.ts';
import { removeTempDirs, tempDir } from '../helpers/temp.ts';

let app: FastifyInstance;
let dir: string;

beforeAll(async () => {
  dir = join(tempDir(), 'console-app');
  app = Fastify({ routerOptions: { ignoreTrailingSlash: true } });
  await app.register(consoleRoutes, { dir });
  await app.ready();
});

afterAll(async () => {
  await app.close();
  removeTempDirs();
});

describe('console files', () => {
  it('a server without the build answers 503 with the security headers, and serves the build once it is there', async () => {
    const missing = await app.inject({ method: 'GET', url: '/console/' });
    expect(missing.statusCode).toBe(503);
    expect(missing.headers['content-type']).toContain('application/problem+json');
    expect(missing.json().detail).toContain('npm run build');
    expect(missing.headers['content-security-policy']).toBe(CONSOLE_CSP);
    expect(missing.headers['x-frame-options']).toBe('DENY');

    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'index.html'), '<!doctype html><title>t</title><script type="module" src="assets/app-ABC.js"></script>');
    writeFileSync(join(dir, 'app-ABC.js'), 'console.log(1)');
    writeFileSync(join(dir, 'notes.txt'), 'not a console file');
    const page = await app.inject({ method: 'GET', url: '/console/' });
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toContain('text/html');
    expect(page.headers['cache-control']).toBe('no-store');
    const again = await app.inject({ method: 'GET', url: '/console/', headers: { 'if-none-match': String(page.headers.etag) } });
    expect(again.statusCode).toBe(304);
    const asset = await app.inject({ method: 'GET', url: '/console/assets/app-ABC.js' });
    expect(asset.statusCode).toBe(200);
    expect(asset.headers['cache-control']).toContain('immutable');
  });

  it('refuses names outside the build: other files, index.html under assets, paths that climb', async () => {
    for (const url of ['/console/assets/notes.txt', '/console/assets/index.html', '/console/assets/nothing.js']) expect((await app.inject({ method: 'GET', url })).statusCode, url).toBe(404);
    // Only the build's files, read when it was loaded, can be answered: never a file by the name asked.
    for (const url of ['/console/assets/..%2F..%2Fpackage.json', '/console/assets/%2e%2e%2fnotes.txt', '/console/assets/%2e%2e', '/console/assets/.']) {
      const res = await app.inject({ method: 'GET', url });
      expect(res.statusCode, url).toBeLessThan(500);
      expect(res.body, url).not.toContain('"name"');
      expect(res.body, url).not.toContain('not a console file');
    }
  });
});

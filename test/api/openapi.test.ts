import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApi, type TestApi } from '../helpers/api-server.ts';
import { ENDPOINTS } from './endpoints.ts';

let api: TestApi;
beforeAll(async () => {
  api = await startApi();
});
afterAll(() => api.close());

const template = (path: string) =>
  path
    .replace(/\/$/, '')
    .replace(/\/domains\/[^/]+/, '/domains/{domain}')
    .replace(/dnsrecords\/\d+/, 'dnsrecords/{id}')
    .replace(/iplist\/\d+\/[^/]+$/, 'iplist/{listid}/{ip}')
    .replace(/iplist\/\d+$/, 'iplist/{listid}');

describe('OpenAPI', () => {
  it('/openapi.json is OpenAPI 3.1 and documents every endpoint with its errors', async () => {
    const res = await api.request('GET', '/openapi.json');
    expect(res.status).toBe(200);
    const doc = res.body;
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.components.securitySchemes.apiKey).toEqual({ type: 'apiKey', in: 'header', name: 'X-Auth-Key' });
    for (const { method, path } of ENDPOINTS) {
      const p = template(path).replace('/domains/{domain}', path === '/domains/' ? '/domains' : '/domains/{domain}');
      const op = doc.paths[p]?.[method.toLowerCase()];
      expect(op, `${method} ${p}`).toBeDefined();
      expect(Object.keys(op.responses)).toEqual(expect.arrayContaining(['400', '401']));
      expect(op.summary).toBeTruthy();
    }
  });

  it('serves a browsable docs page', async () => {
    const res = await fetch(`${api.url}/docs/`);
    expect(res.status).toBe(200);
    expect(await res.text()).toContain('<html');
  });
});

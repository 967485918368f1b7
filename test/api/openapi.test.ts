import { createConfig, lintFromString } from '@redocly/openapi-core';
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
    .replace(/iplist\/\d+$/, 'iplist/{listid}')
    .replace(/\/tasks\/tk_\w+$/, '/tasks/{id}')
    .replace(/\/me\/webhooks\/wh_\w+/, '/me/webhooks/{id}');

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

  it("passes Redocly's recommended rules with no error or warning", async () => {
    const doc = await (await fetch(`${api.url}/openapi.json`)).text();
    const config = await createConfig({ extends: ['recommended'] });
    const problems = await lintFromString({ source: doc, absoluteRef: 'openapi.json', config });
    expect(problems.map((p) => `${p.severity} ${p.ruleId}: ${p.message} at ${p.location[0]?.pointer ?? ''}`)).toEqual([]);
  });

  it('declares errors as problem+json, the Link header on lists, a format per record type, and an operationId everywhere', async () => {
    const doc = (await api.request('GET', '/openapi.json')).body;
    const list = doc.paths['/domains'].get;
    expect(list.responses['400'].content['application/problem+json'].schema.properties.code).toBeDefined();
    expect(list.responses['200'].headers.link).toBeDefined();
    expect(list.operationId).toBe('getDomains');
    expect(doc.paths['/domains/{domain}/dnsrecords/{id}'].get.operationId).toBe('getDomainsByDomainDnsrecordsById');
    const value = doc.paths['/domains/{domain}/dnsrecords'].post.requestBody.content['application/json'].schema.properties.value;
    for (const type of ['A:', 'AAAA:', 'MX:', 'TXT:', 'SOA:', 'SRV:']) expect(value.description).toContain(type);
    // An example of each resource, as its responses show it.
    for (const path of ['/domains/{domain}', '/domains/{domain}/dnsrecords/{id}', '/security/iplist/{listid}', '/me']) {
      expect(doc.paths[path].get.responses['200'].content['application/json'].example, path).toBeDefined();
    }
  });

  it('serves a browsable docs page', async () => {
    const res = await fetch(`${api.url}/docs/`);
    expect(res.status).toBe(200);
    expect(await res.text()).toContain('<html');
  });
});

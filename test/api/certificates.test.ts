// The certificate endpoints and the service's own DNS-01 records, on the real API with its store
// (no CA here: the worker's end-to-end tests are in test/certs/).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SecretBox } from '../../src/certs/secret-box.ts';
import { certificateFromPem } from '../../src/model/certificate.ts';
import { TEST_SECRET_KEY } from '../helpers/config.ts';
import { makeCertificate } from '../helpers/certs.ts';
import { startApi, type TestApi } from '../helpers/api-server.ts';
import { readZip } from '../helpers/zip.ts';
import { readFileSync } from 'node:fs';

let api: TestApi;
let a: { key: string; user: { id: number } };
let b: { key: string; user: { id: number } };

beforeAll(async () => {
  // A CA that is never reached here (no worker runs in these tests): requests are taken.
  api = await startApi({ PALISADE_ACME_DIRECTORY: 'https://127.0.0.1:9/dir' });
  a = await api.user();
  b = await api.user();
});
afterAll(async () => api.close());

describe('certificate tasks and export', () => {
  it('ssl on makes one queued task per domain, following mask changes while it waits; ssl off ends it', async () => {
    expect((await api.request('POST', '/domains', { key: a.key, body: { domain: 'tasks.example', backend: '198.51.100.1', ssl: true } })).status).toBe(201);
    const listed = await api.request('GET', '/tasks/', { key: a.key });
    expect(listed.status).toBe(200);
    expect(listed.body).toEqual([expect.objectContaining({ type: 'certificate', domain: 'tasks.example', state: 'queued', reason: 'new', names: ['tasks.example', 'www.tasks.example'], attempts: 0, orders: 0 })]);
    const id = listed.body[0].id as string;
    expect((await api.request('GET', `/tasks/${id}`, { key: a.key })).body).toMatchObject({ id, domain: 'tasks.example' });
    await api.request('PATCH', '/domains/tasks.example', { key: a.key, body: { mask: '*' } });
    const again = await api.request('GET', '/tasks/', { key: a.key });
    expect(again.body).toEqual([expect.objectContaining({ id, names: ['*.tasks.example', 'tasks.example'] })]);
    // Another customer: nothing listed, the id unknown, the domain's certificate endpoints 404.
    expect((await api.request('GET', '/tasks/?state=all', { key: b.key })).body).toEqual([]);
    expect((await api.request('GET', `/tasks/${id}`, { key: b.key })).status).toBe(404);
    expect((await api.request('POST', '/domains/tasks.example/certificate', { key: b.key })).status).toBe(404);
    expect((await api.request('GET', '/domains/tasks.example/certexport', { key: b.key })).status).toBe(404);
    // No certificate yet: 409 with the task.
    const none = await api.request('GET', '/domains/tasks.example/certexport', { key: a.key });
    expect(none.status).toBe(409);
    expect(none.contentType).toContain('application/problem+json');
    expect(none.body).toMatchObject({ status: 409, code: 'CONFLICT', task: { id, state: 'queued' } });
    await api.request('PATCH', '/domains/tasks.example', { key: a.key, body: { ssl: false } });
    expect((await api.request('GET', '/tasks/', { key: a.key })).body).toEqual([]);
    expect((await api.request('GET', `/tasks/${id}`, { key: a.key })).body).toMatchObject({ state: 'failed', error: 'cancelled: ssl was turned off' });
    const off = await api.request('POST', '/domains/tasks.example/certificate', { key: a.key });
    expect(off.status).toBe(409);
    expect(off.body.detail).toContain('ssl is off');
    // A removed domain takes its tasks with it.
    await api.request('DELETE', '/domains/tasks.example', { key: a.key });
    expect((await api.request('GET', '/tasks/?state=all', { key: a.key })).body).toEqual([]);
    expect((await api.request('GET', `/tasks/${id}`, { key: a.key })).status).toBe(404);
  });

  it('an explicit request queues a task (202 with its location)', async () => {
    await api.request('POST', '/domains', { key: a.key, body: { domain: 'ask.example', backend: '198.51.100.1', ssl: false } });
    await api.request('PATCH', '/domains/ask.example', { key: a.key, body: { ssl: true } });
    const asked = await api.request('POST', '/domains/ask.example/certificate', { key: a.key });
    expect(asked.status).toBe(202);
    expect(asked.headers.get('location')).toBe(`/tasks/${asked.body.id}`);
    // The same active task, not a second one.
    expect((await api.request('GET', '/tasks/', { key: a.key })).body.filter((t: { domain: string }) => t.domain === 'ask.example')).toHaveLength(1);
  });

  it('asking again and again, or turning ssl off and on, never brings attempts closer than the gap (one minute here)', async () => {
    await api.request('POST', '/domains', { key: a.key, body: { domain: 'spam.example', backend: '198.51.100.1', ssl: true } });
    // As the worker leaves a task after an attempt that failed.
    const task = (await api.app.tasks.forDomain(a.user.id, 'spam.example'))!;
    const last = new Date().toISOString();
    await api.app.tasks.save({ ...task, attempts: 1, lastAttempt: last, nextAttempt: new Date(Date.now() + 3600_000).toISOString(), error: 'failed' });
    const gapEnd = Date.parse(last) + 60_000;
    for (let i = 0; i < 5; i++) {
      const asked = await api.request('POST', '/domains/spam.example/certificate', { key: a.key });
      expect(asked.status).toBe(202);
      expect(Date.parse(asked.body.next_attempt)).toBe(gapEnd);
      expect(asked.body.last_attempt).toBe(last);
    }
    await api.request('PATCH', '/domains/spam.example', { key: a.key, body: { ssl: false } });
    await api.request('PATCH', '/domains/spam.example', { key: a.key, body: { ssl: true } });
    const fresh = (await api.request('GET', '/tasks/', { key: a.key })).body.find((t: { domain: string }) => t.domain === 'spam.example');
    expect(fresh.id).not.toBe(task.id);
    expect(Date.parse(fresh.next_attempt)).toBe(gapEnd);
  });

  it('exports a stored certificate with its key opened; the store keeps the key sealed', async () => {
    await api.request('POST', '/domains', { key: a.key, body: { domain: 'zip.example', backend: '198.51.100.1' } });
    const made = makeCertificate(['zip.example', 'www.zip.example']);
    const input = certificateFromPem('zip.example', readFileSync(made.certPath, 'utf8'), readFileSync(made.keyPath, 'utf8'));
    const box = new SecretBox(Buffer.from(TEST_SECRET_KEY.PALISADE_SECRET_KEY, 'hex'));
    await api.store.putCertificate({ ...input, key: box.seal(input.key) });
    const res = await fetch(`${api.url}/domains/zip.example/certexport`, { headers: { 'x-auth-key': a.key } });
    expect(res.status).toBe(200);
    const files = Object.fromEntries(readZip(Buffer.from(await res.arrayBuffer())).map((e) => [e.name, e.data.toString()]));
    expect(files['privkey.pem']).toBe(input.key);
    expect(files['cert.pem']).toBe(input.cert);
    expect(files['chain.pem']).toBe('');
    expect((await api.store.getCertificate('zip.example'))!.key.startsWith('pk1:')).toBe(true);
  });
});

describe("the service's DNS-01 records", () => {
  it('are served but never listed to, read, changed or removed by the customer; a CNAME cannot join them', async () => {
    await api.request('POST', '/domains', { key: a.key, body: { domain: 'txt.example', backend: '198.51.100.1' } });
    const own = await api.request('POST', '/domains/txt.example/dnsrecords', { key: a.key, body: { name: 'www', type: 'A', value: '192.0.2.1' } });
    const { delta } = await api.store.changeRecords('txt.example', a.user.id, (_view, ctx) => ({
      put: [{ id: ctx.nextRecordId(), name: '_acme-challenge', type: 6, value: '"abc"', ttl: 30, priority: null, target: [], acme: true }],
      del: [],
    }));
    const id = delta.put[0]!.id;
    const list = await api.request('GET', '/domains/txt.example/dnsrecords', { key: a.key });
    expect(list.body.map((r: { id: number }) => r.id)).toEqual([own.body.id]);
    expect((await api.request('GET', '/domains/txt.example/dnsrecords?name=_acme-challenge', { key: a.key })).body).toEqual([]);
    expect((await api.request('GET', `/domains/txt.example/dnsrecords/${id}`, { key: a.key })).status).toBe(404);
    expect((await api.request('PATCH', `/domains/txt.example/dnsrecords/${id}`, { key: a.key, body: { ttl: 60 } })).status).toBe(404);
    expect((await api.request('DELETE', `/domains/txt.example/dnsrecords/${id}`, { key: a.key })).status).toBe(404);
    expect(await api.store.getRecord('txt.example', id)).toMatchObject({ acme: true, ttl: 30 });
    const cname = await api.request('POST', '/domains/txt.example/dnsrecords', { key: a.key, body: { name: '_acme-challenge', type: 'CNAME', value: 'elsewhere.example.net' } });
    expect(cname.status).toBe(422);
  });
});

// `backend`/`failover` with a port through the API, private backends only where the operator
// allows them, and DNS-only answers that give the backend's address without its port.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { answer } from '../../src/dns/engine/answer.ts';
import { QTYPE } from '../../src/dns/wire/constants.ts';
import { startApi, type TestApi } from '../helpers/api-server.ts';
import { addressOf, indexWith } from '../helpers/dns-fixture.ts';

let strict: TestApi;
let lenient: TestApi;
beforeAll(async () => {
  strict = await startApi();
  lenient = await startApi({ PALISADE_ALLOW_PRIVATE_BACKENDS: 'true' });
});
afterAll(async () => {
  await strict.close();
  await lenient.close();
});

describe('backend with a port', () => {
  it('is stored canonically and served by DNS (protection off) as the address alone', async () => {
    const { key } = await strict.user();
    const res = await strict.request('POST', '/domains', { key, body: { domain: 'port.example', backend: '198.51.100.7:8080', failover: '[2001:DB8::7]:8443', enabled: false } });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ backend: '198.51.100.7:8080', failover: '[2001:db8::7]:8443' });
    const zone = { ...(await strict.store.getZone('port.example'))!, domain: { ...(await strict.store.getZone('port.example'))!.domain, ns_active: true } };
    const result = answer(indexWith([zone]), { qname: 'port.example', qtype: QTYPE.A }, {});
    expect(result.answer[0]!.rdata.map(addressOf)).toEqual(['198.51.100.7']);
  });

  it('refuses loopback and private backends unless PALISADE_ALLOW_PRIVATE_BACKENDS=true', async () => {
    const a = await strict.user();
    const refused = await strict.request('POST', '/domains', { key: a.key, body: { domain: 'local.example', backend: '127.0.0.1:3000' } });
    expect(refused.status).toBe(400);
    expect(refused.body.errors[0]).toMatchObject({ field: 'backend' });
    expect((await strict.request('POST', '/domains', { key: a.key, body: { domain: 'lan.example', backend: '192.168.1.10' } })).status).toBe(400);
    const b = await lenient.user();
    const allowed = await lenient.request('POST', '/domains', { key: b.key, body: { domain: 'local.example', backend: '127.0.0.1:3000' } });
    expect(allowed.status).toBe(201);
    expect(allowed.body.backend).toBe('127.0.0.1:3000');
  });
});

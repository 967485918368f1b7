// The serve role end to end: API writes reach the DNS server in the same process within milliseconds,
// and a query never sees half of a change.
import { createSocket, type Socket } from 'node:dgram';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dig } from '../helpers/dig.ts';
import { decode, dns2Query } from '../helpers/dns2-packets.ts';
import { runAdminCli, startServe, type RunningServer } from '../helpers/spawn-palisade.ts';
import { removeTempDirs, tempDir } from '../helpers/temp.ts';
import { until } from '../helpers/until.ts';

let server: RunningServer;
let key: string;
let env: Record<string, string>;
let udp: Socket;
const waiting = new Map<number, (msg: Buffer) => void>();
let nextId = 1;

function api(method: string, path: string, body?: unknown) {
  return fetch(`${server.url}${path}`, {
    method,
    headers: { 'x-auth-key': key, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}

/** One raw UDP query (cheaper than spawning dig when polling every millisecond). */
function ask(name: string, type = 1): Promise<any> {
  const id = nextId++ & 0xffff;
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no answer for ${name}`)), 1000);
    waiting.set(id, (msg) => {
      clearTimeout(timer);
      resolve(decode(msg));
    });
    udp.send(dns2Query(name, type, { id }), server.dnsPort, '127.0.0.1');
  });
}

beforeAll(async () => {
  env = { PALISADE_DATA_DIR: tempDir() };
  const created = await runAdminCli(env, ['user', 'create', '--name', 'dns', '--email', 'dns@example.org']);
  key = JSON.parse(created.stdout).key.api_key;
  server = await startServe(env);
  udp = createSocket('udp4');
  udp.on('message', (msg) => waiting.get(msg.readUInt16BE(0))?.(msg));
  expect((await api('POST', '/domains', { domain: 'live.example', backend: '198.51.100.1' })).status).toBe(201);
});

afterAll(async () => {
  udp.close();
  server.child.kill('SIGTERM');
  await server.exited;
  removeTempDirs();
});

describe('serve role: API → DNS', () => {
  it('serves a domain only while its name servers are active', async () => {
    expect((await ask('live.example', 6)).header.rcode).toBe(5);
    expect((await api('GET', '/domains/live.example/activatens')).status).toBe(200);
    const r = await dig(server.dnsPort, 'live.example', 'SOA');
    expect(r.status).toBe('NOERROR');
    expect(r.answer[0]!.data).toMatch(/^ns1\.palisade\.example\.net\. hostmaster\.palisade\.example\.net\. \d+ 7200 1800 1209600 300$/);
    expect((await api('GET', '/domains/live.example/deactivatens')).status).toBe(200);
    await until('live.example refused', async () => (await dig(server.dnsPort, 'live.example', 'SOA')).status === 'REFUSED');
    expect((await api('GET', '/domains/live.example/activatens')).status).toBe(200);
  });

  // Each write is passed on to the name server at once: measured p99 9–19 ms. Without that, the
  // name server finds it on its next read of the store, once a second: delays spread over 0–1 s,
  // median ~500 ms. The median of 20 writes is checked, under 150 ms: half the writes would have
  // to be held 150 ms by the machine's load to fail it, and with the once-a-second read half of
  // them would have to land in its first 15% (one chance in ~4,000).
  const MEDIAN_BOUND_MS = 150;
  const median = (values: number[]) => [...values].sort((x, y) => x - y)[Math.floor(values.length / 2)]!;

  it(`answers a new record within milliseconds of the API's 2xx (median under ${MEDIAN_BOUND_MS} ms), and stops answering a deleted one as soon`, async () => {
    const delays: number[] = [];
    for (let i = 0; i < 20; i++) {
      const res = await api('POST', '/domains/live.example/dnsrecords', { name: `new${i}`, type: 1, value: `192.0.2.${i + 1}` });
      expect(res.status).toBe(201);
      const acknowledged = performance.now();
      let answer;
      do answer = await ask(`new${i}.live.example`);
      while (answer.answers.length === 0 && performance.now() - acknowledged < 5000);
      delays.push(performance.now() - acknowledged);
      expect(answer.answers[0].address).toBe(`192.0.2.${i + 1}`);
    }
    expect(median(delays), delays.map((d) => d.toFixed(0)).join(', ')).toBeLessThan(MEDIAN_BOUND_MS);

    const records = (await (await api('GET', '/domains/live.example/dnsrecords')).json()) as Array<{ id: number; name: string }>;
    const gone: number[] = [];
    for (const record of records.filter((r) => /^new\d+$/.test(r.name))) {
      expect((await api('DELETE', `/domains/live.example/dnsrecords/${record.id}`)).status).toBe(204);
      const deleted = performance.now();
      let answer;
      do answer = await ask(`${record.name}.live.example`);
      while (answer.header.rcode !== 3 && performance.now() - deleted < 5000);
      expect(answer.header.rcode).toBe(3);
      gone.push(performance.now() - deleted);
    }
    expect(gone).toHaveLength(20);
    expect(median(gone), gone.map((d) => d.toFixed(0)).join(', ')).toBeLessThan(MEDIAN_BOUND_MS);
  });

  it('no query sees half of a change', async () => {
    const res = await api('POST', '/domains/live.example/dnsrecords', { name: 'flip', type: 1, value: '203.0.113.1' });
    const { id } = (await res.json()) as { id: number };
    // The name server is its own process: the record reaches it within milliseconds of the 2xx
    // (the test above bounds that); this one is about what a query sees while it changes.
    for (let i = 0; i < 100 && (await ask('flip.live.example')).answers.length === 0; i++) await new Promise((r) => setTimeout(r, 10));
    let stop = false;
    const seen = new Set<string>();
    const hammer = (async () => {
      while (!stop) {
        const a = await ask('flip.live.example');
        seen.add(a.answers.map((r: { address: string }) => r.address).join(','));
      }
    })();
    for (let i = 0; i < 30; i++) {
      expect((await api('PATCH', `/domains/live.example/dnsrecords/${id}`, { value: i % 2 === 0 ? '203.0.113.2' : '203.0.113.1' })).status).toBe(200);
    }
    stop = true;
    await hammer;
    expect([...seen].sort()).toEqual(['203.0.113.1', '203.0.113.2']);
  });

  it('protected names follow edge nodes registered by the operator CLI (another process)', async () => {
    expect((await api('POST', '/domains', { domain: 'shield.example', backend: '198.51.100.1' })).status).toBe(201);
    expect((await api('GET', '/domains/shield.example/activatens')).status).toBe(200);
    const apex = async () => ((await ask('shield.example')).answers as Array<{ address: string }>).map((a) => a.address).sort();
    // Another process's change reaches the name server through the store's change feed.
    const apexIs = async (want: string[]) => {
      let got: string[] = [];
      await until(`the apex to be ${want.join(',')}`, async () => JSON.stringify((got = await apex())) === JSON.stringify(want)).catch(() => undefined);
      return got;
    };
    const added = await runAdminCli(env, ['node', 'add', '--name', 'edge9', '--ipv4', '192.0.2.99', '--location', 'NL']);
    expect(added.code, added.stderr).toBe(0);
    expect(await apexIs(['192.0.2.99'])).toEqual(['192.0.2.99']);
    const id = JSON.parse(added.stdout).id as number;
    expect((await runAdminCli(env, ['node', 'update', String(id), '--status', 'maintenance'])).code).toBe(0);
    expect(await apexIs([])).toEqual([]);
  });

  it('exports DNS counters at /metrics', async () => {
    const text = await (await fetch(`${server.url}/metrics`)).text();
    expect(text).toMatch(/palisade_dns_queries_total\{transport="udp",rcode="NOERROR",qtype="A"\} \d+/);
    expect(text).toMatch(/palisade_dns_zones_served 2/);
    expect(text).toMatch(/palisade_dns_revision_applied [1-9]\d*/);
    expect(text).toMatch(/palisade_dns_deferred_rebuilds 0/);
    expect(text).toMatch(/palisade_dns_answer_duration_seconds_count \d+/);
    expect(text).toMatch(/palisade_api_requests_total\{method="POST",status="201"\} \d+/);
  });
});

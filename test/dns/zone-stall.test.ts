// No customer's zone can freeze the process for another: the worst zones the default limits
// allow (1,000 TXT records of 4,000 bytes at one name, 1,000 records × every geo target, the
// longest names, cuts under a long mask) are stored beside a running `palisade serve` and changed
// through its API, while another tenant's DNS queries and API reads are timed.
//
// Bound: no wait of 2 s or more. The quadratic zone build this guards against froze the process
// for the whole build: 14 s for the 4,000-byte TXT zone at only 100 records, 73 s at 300, longer
// than the test's time-out at the 1,000 written here. A fixed build waits ~100 ms at worst
// (bench:zone-stall prints the figures); 250 ms was the bound once, and a loaded 2-core machine
// reached 268 ms from scheduling alone. 2 s is far from both.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EmbeddedStore } from '../../src/store/lmdb/index.ts';
import { startProbe } from '../../bench/zone-stall/probe.ts';
import { changeThroughApi, seedTenants, writeWorstZones } from '../../bench/zone-stall/run-writes.ts';
import { worstZones } from '../../bench/zone-stall/worst-zones.ts';
import { dig } from '../helpers/dig.ts';
import { until } from '../helpers/until.ts';
import { startServe, stopProcess, type RunningServer } from '../helpers/spawn-palisade.ts';
import { removeTempDirs, tempDir } from '../helpers/temp.ts';

const STALL_BOUND_MS = 2000;
const apexOf = (label: string) => `${label}.stall.example`;
let server: RunningServer;
let store: EmbeddedStore;

beforeAll(async () => {
  const dataDir = tempDir();
  server = await startServe({ PALISADE_DATA_DIR: dataDir });
  store = new EmbeddedStore({ path: dataDir });
});
afterAll(async () => {
  await store?.close();
  if (server) await stopProcess(server);
  removeTempDirs();
});

describe('worst zones vs another tenant', () => {
  it(`another tenant's DNS answers and API reads never wait ${STALL_BOUND_MS} ms`, async () => {
    const { ownerId, ownerKey, otherKey } = await seedTenants(store, 1000);
    const served = async (name: string, type = 'SOA') => (await dig(server.dnsPort, name, type).catch(() => undefined))?.answer.length;
    const read = async () => (await fetch(`${server.url}/domains/other.example`, { headers: { 'x-auth-key': otherKey } })).status === 200;
    // The server's feed picks up commits of other processes within a second or two.
    await until('the other tenant served and its key known', async () => (await served('other.example')) && (await read()), 30_000, 100);
    const zones = worstZones(1000, apexOf);
    // A query unanswered for 5 s counts as lost: waits up to then are measured as waits.
    const probe = startProbe({ dnsPort: server.dnsPort, qname: 'other.example', apiUrl: server.url, apiPath: '/domains/other.example', apiKey: otherKey, lostAfterMs: 5000 });
    await writeWorstZones(store, ownerId, zones, apexOf);
    // Timed until every zone is built from the store's commits, then from the API's changes.
    for (const { label } of zones) await until(`${apexOf(label)} served`, () => served(apexOf(label)), 30_000, 100);
    await changeThroughApi(server.url, ownerKey, zones, apexOf);
    for (const { label } of zones) await until(`the API's record in ${apexOf(label)} served`, () => served(`extra.${apexOf(label)}`, 'TXT'), 30_000, 100);
    const seen = await probe.stop();
    // The probe ran: a query every 5 ms while the zones were built (the waits above end when the
    // builds have), ~200-600 answers here; a loaded machine's timers fire less often, so 50.
    expect(seen.dnsCount).toBeGreaterThan(50);
    expect(seen.lost).toBe(0);
    const figures = `DNS longest ${seen.dnsMaxMs.toFixed(0)} ms of ${seen.dnsCount}, API longest ${seen.apiMaxMs.toFixed(0)} ms of ${seen.apiCount}`;
    expect(seen.dnsMaxMs, figures).toBeLessThan(STALL_BOUND_MS);
    expect(seen.apiMaxMs, figures).toBeLessThan(STALL_BOUND_MS);
    // The big zones are served; over TCP the 4 MB TXT set is answered with TC=1 (no message can hold it).
    const deep = zones.find((z) => z.label === 'longest-names')!;
    const long = await dig(server.dnsPort, `${deep.bigName}.${apexOf('longest-names')}`, 'A');
    expect(long.status).toBe('NOERROR');
    expect(long.answer).toHaveLength(1);
    const huge = await dig(server.dnsPort, `big.${apexOf('txt-4000b-one-name')}`, 'TXT', ['+tcp', '+ignore']);
    expect(huge.flags).toContain('tc');
  }, 60_000);
});

// The cost of pending claims (issue 26): an account filing many claims that it never proves gets
// them looked at a bounded number per pass, each less and less often (1, 2, 4 … × the base, up to
// the maximum). Real store, real resolver (a dns2 server counting the questions it is asked).
import dns2 from 'dns2';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DOMAIN_DEFAULTS } from '../../src/model/domain.ts';
import { Ownership } from '../../src/ownership/ownership.ts';
import { claimInstructions } from '../../src/ownership/instructions.ts';
import { accountPair, delegatesToPair, delegationProves, pairForClaim, poolPairs, poolWarning } from '../../src/ownership/pairs.ts';
import { createLogger } from '../../src/log.ts';
import { EmbeddedStore } from '../../src/store/lmdb/index.ts';
import { testConfig } from '../helpers/config.ts';
import { removeTempDirs, tempDir } from '../helpers/temp.ts';

const { Packet } = dns2;
let resolver: ReturnType<typeof dns2.createServer>;
let port = 0;
let questions = 0;

beforeAll(async () => {
  resolver = dns2.createServer({
    udp: true,
    handle: (request, send) => {
      questions++;
      const response = Packet.createResponseFromRequest(request);
      response.header.rcode = 3;
      void send(response);
    },
  });
  port = (await resolver.listen({ udp: { port: 0, address: '127.0.0.1' } })).udp!.port;
});

afterAll(async () => {
  await resolver?.close();
  removeTempDirs();
});

describe('pending claims looked at on a backoff, a bounded number per pass', () => {
  it('30 claims, 10 a pass: each pass looks at 10 at most, and each claim waits twice as long as before', async () => {
    const dir = tempDir();
    const config = testConfig(dir, {
      PALISADE_OWNERSHIP_PROOF: 'required',
      PALISADE_DELEGATION_RESOLVER: `127.0.0.1:${port}`,
      PALISADE_OWNERSHIP_RECHECK_SECONDS: '60',
      PALISADE_OWNERSHIP_RECHECK_MAX_SECONDS: '600',
      PALISADE_OWNERSHIP_CHECKS_PER_PASS: '10',
    });
    const store = new EmbeddedStore({ path: dir });
    const ownership = new Ownership(store, config, createLogger('silent'));
    const user = await store.createUser({ name: 'squatter', email: 's@example.org' });
    for (let i = 0; i < 30; i++) {
      const name = `squat${String(i).padStart(2, '0')}.example`;
      const claim = await ownership.newClaim(user, name);
      expect(claim.verified).toBe(false);
      const head = await store.createZone((ctx) => ({ domain: { ...DOMAIN_DEFAULTS, backend: '203.0.113.1', domain: name, ownerId: user.id, ns_active: true, claim, created: ctx.now, updated: ctx.now, revision: 0 }, records: [] }));
      await ownership.created(head);
    }
    const nextChecks = async () => Promise.all(Array.from({ length: 30 }, async (_, i) => Date.parse((await ownership.verification((await store.getZoneHead(`squat${String(i).padStart(2, '0')}.example`))!.domain)).next_check!)));
    const start = Date.now();
    // Nothing is due yet: a pass costs nothing.
    expect(await ownership.checkDue(start)).toBe(0);
    expect(questions).toBe(0);
    // Once all are due, a pass looks at 10 (two questions each), whatever else is due.
    const later = start + 70_000;
    expect(await ownership.checkDue(later)).toBe(10);
    expect(questions).toBe(20);
    expect(await ownership.checkDue(later)).toBe(10);
    expect(await ownership.checkDue(later)).toBe(10);
    expect(await ownership.checkDue(later)).toBe(0);
    expect(questions).toBe(60);
    // Each was looked at once: the next look waits about two bases (±10 %).
    for (const due of await nextChecks()) expect(due - Date.now()).toBeGreaterThan(100_000);
    // Looked at again and again, the wait doubles up to the maximum.
    for (let round = 0; round < 6; round++) {
      // Past every claim's next look: three passes look at each once (the longest-waiting first).
      const far = Date.now() + 700_000;
      for (let pass = 0; pass < 3; pass++) expect(await ownership.checkDue(far)).toBe(10);
    }
    for (const due of await nextChecks()) {
      expect(due - Date.now()).toBeGreaterThan(500_000);
      expect(due - Date.now()).toBeLessThan(700_000);
    }
    for (let i = 0; i < 30; i++) expect((await ownership.verification((await store.getZoneHead(`squat${String(i).padStart(2, '0')}.example`))!.domain)).state).toBe('pending');
    await store.close();
  });
});

describe('name-server pairs', () => {
  const pool = ['ns1.x', 'ns2.x', 'ns3.x', 'ns4.x'];
  it('pairs keep their order when the pool grows; accounts spread over them', () => {
    expect(poolPairs(pool.slice(0, 3))).toEqual(poolPairs(pool).slice(0, 3));
    expect(new Set([1, 2, 3, 4, 5, 6].map((id) => accountPair(id, pool).join()))).toHaveProperty('size', 6);
    expect(accountPair(7, pool)).toEqual(accountPair(1, pool));
  });
  it('a name delegated to a pair for another account gets another pair, disjoint when one is left; none when all were used', () => {
    expect(pairForClaim(['ns1.x', 'ns2.x'], pool, [])).toEqual(['ns1.x', 'ns2.x']);
    expect(pairForClaim(['ns1.x', 'ns2.x'], pool, [['ns2.x', 'ns1.x']])).toEqual(['ns3.x', 'ns4.x']);
    expect(pairForClaim(['ns1.x', 'ns2.x'], pool.slice(0, 3), [['ns1.x', 'ns2.x']])).toEqual(['ns1.x', 'ns3.x']);
    expect(pairForClaim(['ns1.x', 'ns2.x'], ['ns1.x', 'ns2.x'], [['ns1.x', 'ns2.x']])).toBeUndefined();
  });
  it('a delegation proves the pair it names alone (beside the customer\'s own servers), never another pair of ours', () => {
    const ours = pool;
    expect(delegatesToPair(['NS1.x.', 'ns2.x'], ['ns1.x', 'ns2.x'], ours)).toBe(true);
    expect(delegatesToPair(['ns1.x', 'ns.customer.example'], ['ns1.x', 'ns2.x'], ours)).toBe(true);
    expect(delegatesToPair(['ns1.x', 'ns3.x'], ['ns1.x', 'ns2.x'], ours)).toBe(false);
    expect(delegatesToPair(['ns.customer.example'], ['ns1.x', 'ns2.x'], ours)).toBe(false);
    expect(delegatesToPair([], ['ns1.x', 'ns2.x'], ours)).toBe(false);
  });
  it('a delegation that would do for another account\'s claim of the name proves neither (the same pair, or the one name two pairs share named alone)', () => {
    const ours = pool;
    expect(delegationProves(['ns1.x', 'ns2.x'], ['ns1.x', 'ns2.x'], [], ours)).toBe(true);
    expect(delegationProves(['ns1.x', 'ns2.x'], ['ns1.x', 'ns2.x'], [['ns2.x', 'ns1.x']], ours)).toBe(false);
    expect(delegationProves(['ns1.x', 'ns2.x'], ['ns1.x', 'ns2.x'], [['ns1.x', 'ns3.x']], ours)).toBe(true);
    expect(delegationProves(['ns1.x'], ['ns1.x', 'ns2.x'], [['ns1.x', 'ns3.x']], ours)).toBe(false);
    expect(delegationProves(['ns1.x', 'ns2.x'], ['ns1.x', 'ns2.x'], [['ns3.x', 'ns4.x']], ours)).toBe(true);
  });
  it('a pool of one pair is warned of (proof required only), and says how to configure more', () => {
    expect(poolWarning(['ns1.x', 'ns2.x'], true)).toMatch(/one name-server pair.*PALISADE_NAMESERVER_POOL/);
    expect(poolWarning(['ns1.x', 'ns2.x'], false)).toBeUndefined();
    expect(poolWarning(pool.slice(0, 3), true)).toBeUndefined();
  });
  it('the instructions say what proves a claim, and what to do when only the token can', () => {
    const facts = { name: 'a.example', tokenAt: '_palisade-verify.a.example', nameservers: ['ns1.x', 'ns2.x'], token: 'palisade-verify=00', shared: false, onePairPool: false };
    const both = claimInstructions({ ...facts, accepts: ['delegation', 'txt'] });
    expect(both).toMatch(/delegate it at your registrar to ns1\.x and ns2\.x, or publish a TXT record at _palisade-verify\.a\.example holding "palisade-verify=00"/);
    expect(both).not.toMatch(/another account/);
    expect(claimInstructions({ ...facts, accepts: ['delegation', 'txt'], onePairPool: true })).toMatch(/another account claim a\.example too, a delegation would prove neither/);
    const shared = claimInstructions({ ...facts, accepts: ['txt'], shared: true });
    expect(shared).toMatch(/^Another account has claimed a\.example too/);
    expect(shared).toMatch(/Only the token proves it: publish a TXT record/);
    expect(shared).toMatch(/delegate it back to a DNS host where you can publish the record/);
    expect(claimInstructions({ ...facts, accepts: ['txt'] })).toMatch(/^a\.example was delegated before to each pair/);
  });
});

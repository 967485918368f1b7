// The change feed under one account's flood of settings changes (issue 25 §1), with real
// processes: `palisade serve` (API, its own DNS, the edge) and two `palisade dns` name servers fed
// by its change feed. An attacker holds big zones (1,000 TXT records × 4,000 bytes each, within
// the default limits) and changes their settings (tags; or tags, mask and activation in turn) at
// a steady rate from one or more API keys; a victim, another account, adds a record every 200 ms.
// Measured: from each victim write's 2xx until each DNS server answers it (real UDP queries), how
// long after the attack every consumer has applied the API's revision, and when every DNS server
// serves the attacker's zones as it left them. Shared by test/sync/feed-fairness.test.ts and
// bench/feed-fairness.ts.
import { createSocket } from 'node:dgram';
import { openStore } from '../../src/store/index.ts';
import { runAdmin } from '../../src/cli/admin.ts';
import { DOMAIN_DEFAULTS } from '../../src/model/domain.ts';
import { buildRecord, type RecordState } from '../../src/model/record.ts';
import type { FieldError } from '../../src/errors.ts';
import { TYPE } from '../../src/model/record-types.ts';
import { decode, dns2Query } from './dns2-packets.ts';
import { freePort } from './redis-server.ts';
import { startNameServer, startServe, stopProcess, type RunningNameServer, type RunningServer } from './spawn-palisade.ts';
import { removeTempDirs, tempDir } from './temp.ts';

export interface AttackOptions {
  /** How long the attack lasts. */
  attackMs: number;
  /**
   * What the attacker changes: `tags` (what name servers do not use); `mixed`: tags, the mask
   * and activation on and off in turn (settings name servers rebuild zones for).
   */
  edit?: 'tags' | 'mixed';
  /** API keys of the attacking account, each sending `ratePerKey` PATCHes per second. */
  keys: number;
  ratePerKey: number;
  /** The attacker's zones (edited in turn). */
  zones: number;
  recordsPerZone?: number;
  txtBytes?: number;
  /** Victim writes measured before the attack (the figure without it). */
  baselineWrites?: number;
  victimEveryMs?: number;
  /** A victim write not answered after this long counts as missing. */
  giveUpMs?: number;
  log?: (line: string) => void;
}

export interface Delays {
  samples: number;
  p50: number;
  p99: number;
  max: number;
  /** Writes not answered within giveUpMs. */
  missing: number;
}

export interface AttackFigures {
  baseline: Record<string, Delays>;
  attack: Record<string, Delays>;
  /** The attack's victim writes slower than 100 ms somewhere: ms since the attack began, and the delays. */
  slow: Array<{ at: number; delays: Record<string, number> }>;
  /** Per consumer: ms from the attack's last answer until it had applied the API's revision then. */
  catchUpMs: Record<string, number>;
  /** Per DNS server: ms from the attack's last answer until it served the attacker's zones as they were left. */
  attackerSettledMs: Record<string, number>;
  edits: { sent: number; failed: number; perSecond: number };
}

const SERVERS = ['serve', 'ns1', 'ns2'] as const;

/** A queries over one shared UDP socket: the rcode and how many answers (rcode -1 after 500 ms). */
function prober() {
  const udp = createSocket('udp4');
  const waiting = new Map<number, (b: Buffer) => void>();
  udp.on('message', (msg) => waiting.get(msg.readUInt16BE(0))?.(msg));
  let nextId = 1;
  const query = (port: number, name: string) =>
    new Promise<{ rcode: number; answers: number }>((resolve) => {
      const id = (nextId = (nextId % 0xfffe) + 1);
      const timer = setTimeout(() => {
        waiting.delete(id);
        resolve({ rcode: -1, answers: 0 });
      }, 500);
      waiting.set(id, (msg) => {
        clearTimeout(timer);
        waiting.delete(id);
        const packet = decode(msg) as { header: { rcode: number }; answers: unknown[] };
        resolve({ rcode: packet.header.rcode, answers: packet.answers.length });
      });
      udp.send(dns2Query(name, 1, { id }), port, '127.0.0.1');
    });
  const answers = async (port: number, name: string) => (await query(port, name)).answers;
  return { query, answers, close: () => udp.close() };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, Math.max(0, ms)));

function summary(delays: number[], missing: number): Delays {
  const sorted = [...delays].sort((a, b) => a - b);
  const at = (p: number) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? NaN;
  return { samples: delays.length, p50: Math.round(at(0.5) * 10) / 10, p99: Math.round(at(0.99) * 10) / 10, max: Math.round((sorted[sorted.length - 1] ?? NaN) * 10) / 10, missing };
}

export function formatDelays(label: string, figures: Record<string, Delays>): string {
  return `${label}: ${Object.entries(figures)
    .map(([server, d]) => `${server} p50 ${d.p50} ms p99 ${d.p99} ms max ${d.max} ms (${d.samples} writes${d.missing ? `, ${d.missing} missing` : ''})`)
    .join('; ')}`;
}

export async function runFeedAttack(options: AttackOptions): Promise<AttackFigures> {
  const log = options.log ?? (() => undefined);
  const recordsPerZone = options.recordsPerZone ?? 1000;
  const txtBytes = options.txtBytes ?? 4000;
  const victimEveryMs = options.victimEveryMs ?? 200;
  const giveUpMs = options.giveUpMs ?? 30_000;
  const dataDir = tempDir('palisade-fair-');
  const env = { PALISADE_DATA_DIR: dataDir, PALISADE_API_PORT: String(await freePort()) };

  // Accounts, keys, consumers and the attacker's zones, straight on the store with the admin
  // commands' own code (seeding 2 × 4 MB through the API would take most of the run).
  const store = openStore({ dataDir });
  const admin = async (...argv: string[]) => {
    let result: unknown;
    await runAdmin(store, argv, (v) => (result = v));
    return result as Record<string, any>;
  };
  const attacker = await admin('user', 'create', '--name', 'attacker', '--email', 'attacker@example.org');
  const attackerKeys: string[] = [attacker.key.api_key];
  for (let i = 1; i < options.keys; i++) attackerKeys.push((await admin('key', 'create', '--user', String(attacker.user.id))).api_key);
  const victim = await admin('user', 'create', '--name', 'victim', '--email', 'victim@example.org');
  const victimKey: string = victim.key.api_key;
  const nsEnvs: Array<Record<string, string>> = [];
  for (const name of ['ns1', 'ns2']) {
    const port = await freePort();
    const consumer = await admin('consumer', 'add', '--name', name, '--url', `http://127.0.0.1:${port}/notify`);
    nsEnvs.push({ PALISADE_DATA_DIR: tempDir('palisade-fair-ns-'), PALISADE_SYNC_TOKEN: consumer.token, PALISADE_SYNC_SECRET: consumer.secret, PALISADE_SYNC_PORT: String(port), PALISADE_SYNC_POLL_MS: '1000' });
  }
  const attackZones = Array.from({ length: options.zones }, (_, i) => `attack${i}.example`);
  for (const name of attackZones) {
    await store.createZone((ctx) => {
      const errors: FieldError[] = [];
      const records: RecordState[] = [];
      for (let j = 0; j < recordsPerZone; j++) {
        const value = `${j}-`.padEnd(txtBytes, 'abcdefghijklmnopqrstuvwxyz0123456789');
        records.push(buildRecord({ name: `t${j}`, type: TYPE.TXT, value }, ctx.nextRecordId(), name, errors));
      }
      if (errors.length > 0) throw new Error(JSON.stringify(errors));
      return {
        domain: { ...DOMAIN_DEFAULTS, domain: name, backend: '198.51.100.1', enabled: false, ownerId: attacker.user.id, ns_active: true, created: ctx.now, updated: ctx.now, revision: 0 },
        records,
      };
    });
  }
  await store.close();

  const { query, answers, close: closeUdp } = prober();
  let serve: RunningServer | undefined;
  const ns: RunningNameServer[] = [];
  try {
    serve = await startServe(env, 60_000, 'serve');
    const api = serve.url;
    for (const e of nsEnvs) ns.push(await startNameServer({ ...e, PALISADE_SYNC_URL: api }, 60_000));
    const dnsPorts = { serve: serve.dnsPort, ns1: ns[0]!.dnsPort, ns2: ns[1]!.dnsPort };
    const call = (key: string, method: string, path: string, body?: unknown) =>
      fetch(`${api}${path}`, { method, headers: { 'x-auth-key': key, ...(body === undefined ? {} : { 'content-type': 'application/json' }) }, body: body === undefined ? undefined : JSON.stringify(body) });
    const check = async (res: Response, what: string) => {
      if (!res.ok) throw new Error(`${what} answered ${res.status}: ${await res.text()}`);
      return (await res.json()) as Record<string, any>;
    };
    await check(await call(victimKey, 'POST', '/domains', { domain: 'victim.example', backend: '198.51.100.1', enabled: false }), 'victim domain');
    await check(await call(victimKey, 'GET', '/domains/victim.example/activatens'), 'victim activatens');
    // Every server holds the big zones before anything is measured.
    for (const server of SERVERS) {
      for (const zone of attackZones) {
        const started = Date.now();
        while ((await answersTxt(dnsPorts[server], `t0.${zone}`)) === 0) {
          if (Date.now() - started > 60_000) throw new Error(`${server} does not serve ${zone}`);
          await sleep(100);
        }
      }
    }
    log(`set up: ${options.zones} zones × ${recordsPerZone} TXT × ${txtBytes} bytes served by serve, ns1 and ns2`);

    let revision = 0;
    let victimCount = 0;
    /** One victim write: its delay on each server (Infinity: missing). */
    const victimWrite = async (): Promise<Record<string, number>> => {
      const name = `v${victimCount++}`;
      const res = await call(victimKey, 'POST', '/domains/victim.example/dnsrecords', { name, type: 1, value: '192.0.2.7' });
      const acknowledged = performance.now();
      if (res.status !== 201) throw new Error(`victim write answered ${res.status}`);
      await res.body?.cancel();
      const head = await check(await call(victimKey, 'GET', '/domains/victim.example'), 'victim read');
      revision = Math.max(revision, head.revision as number);
      const delays: Record<string, number> = {};
      await Promise.all(
        SERVERS.map(async (server) => {
          for (;;) {
            if ((await answers(dnsPorts[server], `${name}.victim.example`)) > 0) return void (delays[server] = performance.now() - acknowledged);
            if (performance.now() - acknowledged > giveUpMs) return void (delays[server] = Infinity);
            await sleep(2);
          }
        }),
      );
      return delays;
    };
    const slow: AttackFigures['slow'] = [];
    const victimRun = async (until: () => boolean, count = Infinity) => {
      const pending: Array<Promise<Record<string, number>>> = [];
      const started = performance.now();
      for (let i = 0; i < count && !until(); i++) {
        await sleep(started + i * victimEveryMs - performance.now());
        const at = Math.round(performance.now() - started);
        pending.push(
          victimWrite().then((delays) => {
            if (Object.values(delays).some((d) => d > 100)) slow.push({ at, delays: Object.fromEntries(Object.entries(delays).map(([k, v]) => [k, Math.round(v)])) });
            return delays;
          }),
        );
      }
      const results = await Promise.all(pending);
      return Object.fromEntries(
        SERVERS.map((server) => {
          const all = results.map((r) => r[server]!);
          return [server, summary(all.filter(Number.isFinite), all.filter((d) => !Number.isFinite(d)).length)];
        }),
      ) as Record<string, Delays>;
    };

    const baseline = await victimRun(() => false, options.baselineWrites ?? 10);
    log(formatDelays('before the attack', baseline));
    slow.length = 0;

    // The attack: PATCHes at a steady rate per key (open loop, at most 256 in flight), tags changed every time.
    let attacking = true;
    let sent = 0;
    let failed = 0;
    let lastAnswer = 0;
    const attack = async (key: string, k: number) => {
      const period = 1000 / options.ratePerKey;
      const total = Math.round((options.attackMs / 1000) * options.ratePerKey);
      const inFlight = new Set<Promise<void>>();
      const started = performance.now();
      for (let i = 0; i < total; i++) {
        await sleep(started + i * period - performance.now());
        while (inFlight.size >= 256) await Promise.race(inFlight);
        const zone = attackZones[(i + k) % attackZones.length]!;
        const turn = Math.floor(i / attackZones.length);
        const what = options.edit === 'mixed' ? turn % 4 : 0;
        const sentReq =
          what === 1
            ? call(key, 'PATCH', `/domains/${zone}`, { mask: turn % 8 === 1 ? 'www' : 'shop' })
            : what === 2
              ? call(key, 'POST', `/domains/${zone}/${turn % 8 === 2 ? 'deactivatens' : 'activatens'}`)
              : call(key, 'PATCH', `/domains/${zone}`, { tags: [`k${k}-${i}`] });
        const request = sentReq.then(
          async (res) => {
            sent++;
            if (res.status !== 200) failed++;
            else revision = Math.max(revision, ((await res.json()) as { revision: number }).revision);
            lastAnswer = performance.now();
          },
          () => void (sent++, failed++),
        );
        const tracked = request.finally(() => inFlight.delete(tracked));
        inFlight.add(tracked);
      }
      await Promise.all(inFlight);
    };
    const attackStarted = performance.now();
    const attackers = Promise.all(attackerKeys.map((key, k) => attack(key, k))).finally(() => (attacking = false));
    const during = await victimRun(() => !attacking);
    await attackers;
    const attackEnded = lastAnswer;
    const target = revision;
    log(formatDelays(`during the attack (${sent} PATCHes in ${Math.round((attackEnded - attackStarted) / 100) / 10} s, ${failed} failed)`, during));

    // Catching up: each consumer's applied revision against the API's at the attack's end.
    const applied = {
      serve: async () => Number(/^palisade_dns_revision_applied (\d+)/m.exec(await (await fetch(`${api}/metrics`)).text())?.[1] ?? 0),
      ns1: async () => ((await (await fetch(ns[0]!.notifyUrl.replace('/notify', '/healthz'))).json()) as { revision: number }).revision,
      ns2: async () => ((await (await fetch(ns[1]!.notifyUrl.replace('/notify', '/healthz'))).json()) as { revision: number }).revision,
    };
    const catchUpMs: Record<string, number> = {};
    await Promise.all(
      SERVERS.map(async (server) => {
        for (;;) {
          if ((await applied[server]()) >= target) return void (catchUpMs[server] = Math.max(0, Math.round(performance.now() - attackEnded)));
          if (performance.now() - attackEnded > 300_000) return void (catchUpMs[server] = Infinity);
          await sleep(10);
        }
      }),
    );
    log(`caught up after the attack: ${SERVERS.map((s) => `${s} ${catchUpMs[s]} ms`).join(', ')}`);

    // The attacker's zones as left: served with the last mask, or not at all (its rebuilds may
    // have been deferred: the latest settings still land).
    const left = await Promise.all(
      attackZones.map(async (zone) => ({ zone, ...((await check(await call(attackerKeys[0]!, 'GET', `/domains/${zone}`), 'attacker read')) as { mask: string; ns_active: boolean }) })),
    );
    const attackerSettledMs: Record<string, number> = {};
    await Promise.all(
      SERVERS.map(async (server) => {
        for (;;) {
          let settled = true;
          for (const { zone, mask, ns_active } of left) {
            const other = mask === 'www' ? 'shop' : 'www';
            const [protectedName, plain] = await Promise.all([query(dnsPorts[server], `${mask}.${zone}`), query(dnsPorts[server], `${other}.${zone}`)]);
            settled &&= ns_active ? protectedName.answers === 1 && plain.rcode === 3 : protectedName.rcode === 5;
          }
          if (settled) return void (attackerSettledMs[server] = Math.max(0, Math.round(performance.now() - attackEnded)));
          if (performance.now() - attackEnded > 120_000) return void (attackerSettledMs[server] = Infinity);
          await sleep(20);
        }
      }),
    );
    log(`the attacker's zones served as left: ${SERVERS.map((s) => `${s} ${attackerSettledMs[s]} ms`).join(', ')} after the attack`);
    return { baseline, attack: during, slow, catchUpMs, attackerSettledMs, edits: { sent, failed, perSecond: Math.round((sent / ((attackEnded - attackStarted) / 1000)) * 10) / 10 } };
  } finally {
    closeUdp();
    for (const server of ns) await stopProcess(server);
    if (serve) await stopProcess(serve);
    removeTempDirs();
  }
}

/** TXT answers for a name (to check a big zone is served), over a one-off socket. */
function answersTxt(port: number, name: string): Promise<number> {
  return new Promise((resolve) => {
    const udp = createSocket('udp4');
    const timer = setTimeout(() => {
      udp.close();
      resolve(0);
    }, 1000);
    udp.on('message', (msg) => {
      clearTimeout(timer);
      udp.close();
      try {
        const packet = decode(msg) as { answers: unknown[]; header: { tc: number } };
        resolve(packet.answers.length + (packet.header.tc ? 1 : 0));
      } catch {
        resolve(1);
      }
    });
    udp.send(dns2Query(name, 16, { id: 7 }), port, '127.0.0.1');
  });
}

// Refusals of zone transfers and TSIG failures carry an OPT record whenever the request had one
// (RFC 6891 §7), as a real NSD's do: the same requests (mdig prints a refused AXFR or IXFR whole;
// dig a signed query's BADSIG or BADKEY answer) go to both, and both answer with the same status
// and with an OPT exactly when asked with one.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dig, type DigResult } from '../helpers/dig.ts';
import { mdig } from '../helpers/mdig.ts';
import { minimalZone, startNsdPrimary, type NsdPrimary } from '../helpers/nsd-primary.ts';
import { runAdminCli, startServe, stopStarted, type RunningServer } from '../helpers/spawn-palisade.ts';
import { removeTempDirs, tempDir } from '../helpers/temp.ts';

const secret = randomBytes(32).toString('base64');
const otherSecret = randomBytes(32).toString('base64');
const ZONE = 'refusals.example';
let server: RunningServer;
let nsd: NsdPrimary;

beforeAll(async () => {
  const env = { PALISADE_DATA_DIR: tempDir() };
  const key = JSON.parse((await runAdminCli(env, ['user', 'create', '--name', 'r', '--email', 'r@example.org'])).stdout).key.api_key as string;
  // The one secondary is elsewhere: transfers from 127.0.0.1 are refused, as NSD's are (provide-xfr to 127.0.0.2 only).
  const added = await runAdminCli(env, ['secondary', 'add', '--name', 'far', '--address', '127.0.0.2', '--tsig-key', `xfr-key:${secret}`, '--port', '5399']);
  expect(added.code, added.stderr).toBe(0);
  server = await startServe(env);
  const api = (method: string, path: string, body?: unknown) =>
    fetch(`${server.url}${path}`, { method, headers: { 'x-auth-key': key, ...(body === undefined ? {} : { 'content-type': 'application/json' }) }, body: body === undefined ? undefined : JSON.stringify(body) });
  expect((await api('POST', '/domains', { domain: ZONE, backend: '198.51.100.1' })).status).toBe(201);
  expect((await api('POST', `/domains/${ZONE}/activatens`)).status).toBe(200);
  nsd = await startNsdPrimary({ zones: { [ZONE]: minimalZone(ZONE) }, key: { name: 'xfr-key', secret }, xfrFrom: '127.0.0.2' });
}, 120_000);

afterAll(async () => {
  await nsd?.stop();
  await stopStarted('SIGTERM');
  removeTempDirs();
});

/** What must match: the status, and whether an OPT came back (with our common payload size). */
const shape = (r: DigResult) => ({ status: r.status, opt: r.edns ? { version: r.edns.version, udp: r.edns.udp } : undefined });

async function both(ask: (port: number) => Promise<DigResult>): Promise<[DigResult, DigResult]> {
  return [await ask(server.dnsPort), await ask(nsd.port)];
}

describe('transfer refusals and TSIG failures, next to NSD', () => {
  it('a refused AXFR or IXFR (TCP, UDP, unsigned) carries an OPT when the request did', async () => {
    // Over UDP NSD says NOTIMP where we say REFUSED (as for any transfer over UDP): there only the OPT is compared.
    const cases: Array<[string, string, boolean]> = [
      ['AXFR', '+tcp', true],
      ['IXFR', '+tcp', true],
      ['AXFR', '+notcp', false],
    ];
    for (const [type, transport, sameStatus] of cases) {
      for (const edns of ['+edns=0', '+noedns']) {
        const [ours, theirs] = await both((port) => mdig(port, ZONE, type, [transport, edns]));
        const what = `${type} ${transport} ${edns}`;
        expect(ours.status, `${what}\n${ours.raw}`).toBe('REFUSED');
        expect(Boolean(theirs.edns), `NSD ${what}\n${theirs.raw}`).toBe(edns === '+edns=0');
        if (sameStatus) expect(shape(ours), `${what}\n${ours.raw}`).toEqual(shape(theirs));
        else expect(shape(ours).opt, `${what}\n${ours.raw}`).toEqual(shape(theirs).opt);
      }
    }
  }, 60_000);

  it('BADSIG and BADKEY answers carry an OPT when the request did', async () => {
    for (const [what, tsig, error] of [
      ['a wrong secret', `hmac-sha256:xfr-key:${otherSecret}`, 'BADSIG'],
      ['an unknown key', `hmac-sha256:nobody-key:${secret}`, 'BADKEY'],
    ] as const) {
      for (const edns of ['+edns=0', '+noedns']) {
        const [ours, theirs] = await both((port) => dig(port, ZONE, 'SOA', [edns, '-y', tsig]));
        expect(theirs.raw, `NSD: ${what} ${edns}`).toContain(error);
        expect(ours.raw, `${what} ${edns}`).toContain(error);
        expect(shape(ours), `${what} ${edns}\n${ours.raw}`).toEqual(shape(theirs));
      }
      const [ours] = await both((port) => dig(port, ZONE, 'SOA', ['+edns=0', '-y', tsig]));
      expect(shape(ours)).toEqual({ status: 'NOTAUTH', opt: { version: 0, udp: 1232 } });
    }
  }, 60_000);
});

// A random-name flood with DO=1 against one signed zone (each name needs a fresh NSEC signature)
// must not starve another zone's signed answers: a real `palisade serve` (one DNS process),
// dnsperf flooding from one client network, a victim asking the other zone from another, both
// bounded in time. Signing work is bounded per zone and per client network; past the bound a
// question that needs a new signature is answered TC=1 (an unverified UDP client) or SERVFAIL.
// FLOOD_UNBOUNDED=1 runs the same with the bounds off (to see the difference), FLOOD_QPS the rate.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dig } from '../helpers/dig.ts';
import { flood, FLOODED, randomNamesFile, seedFloodZones, victim, victimNames, VICTIM } from '../helpers/dns-flood.ts';
import { startServe, stopProcess, type RunningServer } from '../helpers/spawn-palisade.ts';
import { removeTempDirs, tempDir } from '../helpers/temp.ts';
import { until } from '../helpers/until.ts';

let server: RunningServer;

beforeAll(async () => {
  const dataDir = tempDir();
  await seedFloodZones(dataDir);
  server = await startServe({ PALISADE_DATA_DIR: dataDir, PALISADE_DNS_WORKERS: '1', PALISADE_DNS_RRL_RATE: '100', ...(process.env.FLOOD_UNBOUNDED ? { PALISADE_DNS_SIGN_ZONE_RATE: '0', PALISADE_DNS_SIGN_CLIENT_RATE: '0' } : {}) });
  await until('zones served', async () => (await dig(server.dnsPort, `www.${VICTIM}`, 'A').catch(() => undefined))?.answer.length === 1);
}, 120_000);

afterAll(async () => {
  if (server) await stopProcess(server);
  removeTempDirs();
});

describe('a DO=1 random-name flood against one signed zone', () => {
  it('another zone\'s signed answers are still answered during it', async () => {
    const names = victimNames();
    for (const name of names.slice(0, 4)) expect((await dig(server.dnsPort, name, 'A', ['+dnssec'])).answer.some((a) => a.type === 'RRSIG')).toBe(true);
    const file = randomNamesFile(FLOODED, 150_000);
    const seconds = 6;
    const running = flood({ port: server.dnsPort, from: '127.0.0.1', file, qps: Number(process.env.FLOOD_QPS ?? 8000), seconds });
    const seen = await victim({ port: server.dnsPort, from: '127.0.2.1', names, intervalMs: 20, durationMs: (seconds - 1) * 1000, timeoutMs: 2000 });
    const flooded = await running.done;
    const metrics = await (await fetch(`${server.url}/metrics`)).text();
    const signed = /palisade_dns_signatures_made_total (\d+)/.exec(metrics)?.[1];
    const refused = [...metrics.matchAll(/^palisade_dns_signatures_refused_(zone|client)_total (\d+)/gm)].map((m) => `${m[1]} ${m[2]}`).join(', ');
    const answeredAll = [...metrics.matchAll(/^palisade_dns_queries_total\{[^}]*\} (\d+)/gm)].reduce((sum, m) => sum + Number(m[1]), 0);
    console.log(
      `victim: ${seen.answered}/${seen.sent} answered (${seen.servfail} SERVFAIL), p50 ${seen.p50.toFixed(1)} ms, p99 ${seen.p99.toFixed(1)} ms, longest silence ${seen.longestSilence.toFixed(0)} ms; ` +
        `flood: ${flooded.sent} sent, ${flooded.completed} answered; server answered ${answeredAll} in all; signatures made ${signed}; refused: ${refused || 'none'}`,
    );
    expect(flooded.sent, flooded.output).toBeGreaterThan(10_000);
    expect(seen.answered / seen.sent).toBeGreaterThanOrEqual(0.9);
    expect(seen.servfail).toBe(0);
    // Half the victim's answers waited no longer than this; unbounded, 650–1,100 ms were measured
    // at this rate on a loaded 2-core machine (bounded 1–15 ms, 225 ms with other test files at once).
    expect(seen.p50).toBeLessThan(500);
    // The flood's signatures stay within its client network's budget (500 a second, a second's
    // worth at first), the victim's few besides; unbounded, one per flooding question (~40,000).
    expect(Number(signed)).toBeLessThan(500 * (seconds + 3) + 500);
  }, 60_000);
});

// What a DO=1 random-name flood against one signed zone does to another signed zone's answers:
// a real `palisade serve` (one DNS process, RRL on at its default), a victim asking the other
// zone 50 times a second from its own /24 (existing names, and every fifth a name that does not
// exist), measured alone, then during a dnsperf flood from another /24 with the signing bounds
// off, then on (the defaults). Prints the victim's answered share, p50 and p99, and the
// signatures made, per case. Every run is bounded (BENCH_SECONDS of flood, 8,000 qps by default).
//   node --import tsx bench/dns/dnssec-flood.ts     (npm run bench:dns-dnssec-flood)
import { dig } from '../../test/helpers/dig.ts';
import { flood, FLOODED, randomNamesFile, seedFloodZones, victim, victimNames, VICTIM } from '../../test/helpers/dns-flood.ts';
import { startServe, stopProcess } from '../../test/helpers/spawn-palisade.ts';
import { removeTempDirs, tempDir } from '../../test/helpers/temp.ts';
import { until } from '../../test/helpers/until.ts';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 8);
const QPS = Number(process.env.BENCH_FLOOD_QPS ?? 8000);

async function run(label: string, withFlood: boolean, bounded: boolean): Promise<void> {
  const dataDir = tempDir();
  await seedFloodZones(dataDir);
  const off: Record<string, string> = bounded ? {} : { PALISADE_DNS_SIGN_ZONE_RATE: '0', PALISADE_DNS_SIGN_CLIENT_RATE: '0' };
  const server = await startServe({ PALISADE_DATA_DIR: dataDir, PALISADE_DNS_WORKERS: '1', PALISADE_DNS_RRL_RATE: '100', ...off });
  try {
    await until('zones served', async () => (await dig(server.dnsPort, `www.${VICTIM}`, 'A').catch(() => undefined))?.answer.length === 1, 30_000, 200);
    const names = victimNames();
    for (const name of names.slice(0, 4)) await dig(server.dnsPort, name, 'A', ['+dnssec']);
    const running = withFlood ? flood({ port: server.dnsPort, from: '127.0.0.1', file: randomNamesFile(FLOODED, 200_000), qps: QPS, seconds: SECONDS }) : undefined;
    const seen = await victim({ port: server.dnsPort, from: '127.0.2.1', names, intervalMs: 20, durationMs: (SECONDS - 1) * 1000, timeoutMs: 2000 });
    const flooded = await running?.done;
    const metrics = await (await fetch(`${server.url}/metrics`)).text();
    const signed = /palisade_dns_signatures_made_total (\d+)/.exec(metrics)?.[1];
    console.log(
      `${label.padEnd(26)} victim ${seen.answered}/${seen.sent} answered, p50 ${seen.p50.toFixed(1)} ms, p99 ${seen.p99.toFixed(1)} ms; ` +
        `signatures made ${signed}${flooded ? `; flood ${flooded.sent} sent` : ''}`,
    );
  } finally {
    await stopProcess(server);
  }
}

console.log(`DO=1 random-name flood, ${QPS} qps for ${SECONDS} s, one DNS process`);
await run('no flood', false, true);
await run('flood, signing unbounded', true, false);
await run('flood, signing bounded', true, true);
removeTempDirs();

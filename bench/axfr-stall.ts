// The event loop during big zone transfers: 20 concurrent AXFRs of a 20,000-record zone (dig, each
// its own process at the lowest priority, TSIG-signed) while a UDP probe asks another zone every
// 5 ms, in this process's DNS server. Printed per run: the worst stall (main-thread CPU between
// two turns of a 1 ms timer), turns past 50 ms of it, the longest GC pause, the event-loop delay
// by the wall clock (perf_hooks.monitorEventLoopDelay, max and p99), the probe's longest wait,
// transfers completed, and how many ran at once.
//   npm run bench:axfr-stall
//   BENCH_RECORDS=100000 BENCH_TRANSFERS=10 npm run bench:axfr-stall
// Runs twice: with the default bound of transfers per secondary (2), and with all 20 at once.
import { DEFAULT_TRANSFERS_PER_SECONDARY } from '../src/dns/transfer/slots.ts';
import { runAxfrStall } from './axfr-stall/run.ts';

const records = Number(process.env.BENCH_RECORDS ?? 20_000);
const transfers = Number(process.env.BENCH_TRANSFERS ?? 20);
const fmt = (n: number) => n.toFixed(1).padStart(7);

console.log(`${transfers} concurrent AXFRs of a ${records.toLocaleString('en')}-record zone, UDP probe every 5 ms`);
console.log('per secondary | stall CPU ms | turns >50 ms | GC max ms | loop max ms | loop p99 ms | probe max ms | probes | lost | completed | ran at once | s');
for (const perSecondary of [DEFAULT_TRANSFERS_PER_SECONDARY, transfers]) {
  const f = await runAxfrStall({ records, transfers, perSecondary });
  console.log(
    [
      String(perSecondary).padStart(13),
      fmt(f.stallCpuMs).padStart(12),
      String(f.stallsOver50).padStart(12),
      fmt(f.gcMaxMs).padStart(9),
      fmt(f.loopMaxMs).padStart(11),
      fmt(f.loopP99Ms).padStart(11),
      fmt(f.probeMaxMs).padStart(12),
      String(f.probes).padStart(6),
      String(f.lost).padStart(4),
      `${f.completed}/${transfers}`.padStart(9),
      String(f.peakRunning).padStart(11),
      (f.elapsedMs / 1000).toFixed(1),
    ].join(' | '),
  );
}

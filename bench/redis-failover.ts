// Redis failover, on loopback: one primary, two replicas, three redis-sentinel processes, two
// `palisade api` processes finding the primary through the Sentinels. Per mode
// (PALISADE_REDIS_MIN_REPLICAS=0, then 1): a write storm (parallel POST /domains, each a new
// name) during which the primary is killed (SIGKILL), FAILOVERS times — after each the killed
// server comes back empty as a replica, and the Sentinels settle before the next. Prints per
// failover the 503 window (kill → first write acknowledged after it), the answers, and the
// acknowledged writes lost (each one read back through the API); per mode the 503 window's
// p50/p99 and the commit latency (POST /domains answered 201, outside the windows).
// Run: npm run bench:redis-failover   (BENCH_FAILOVERS=5 BENCH_WRITERS=8)
import { spawnSync } from 'node:child_process';
import { failoverStorm, lostWrites, percentile } from '../test/helpers/failover-storm.ts';
import { startSentinelDeployment } from '../test/helpers/redis-sentinel.ts';
import { runAdminCli, START_TIMEOUT_MS, startServe, stopProcess } from '../test/helpers/spawn-palisade.ts';
import { removeTempDirs } from '../test/helpers/temp.ts';

const FAILOVERS = Number(process.env.BENCH_FAILOVERS ?? 5);
const WRITERS = Number(process.env.BENCH_WRITERS ?? 8);

const ms = (v: number) => `${v.toFixed(0)} ms`;

async function mode(minReplicas: number): Promise<void> {
  const deployment = await startSentinelDeployment(2);
  const env = {
    PALISADE_REDIS_SENTINELS: deployment.sentinels,
    PALISADE_REDIS_MASTER_NAME: deployment.masterName,
    PALISADE_REDIS_MIN_REPLICAS: String(minReplicas),
    PALISADE_DATA_DIR: '/nonexistent-unused',
  };
  const apis = [];
  try {
    const created = await runAdminCli(env, ['user', 'create', '--name', 'bench', '--email', 'bench@example.org', '--max-domains', '1000000']);
    if (created.code !== 0) throw new Error(created.stderr);
    const key = JSON.parse(created.stdout).key.api_key as string;
    apis.push(await startServe(env, START_TIMEOUT_MS, 'api'), await startServe(env, START_TIMEOUT_MS, 'api'));
    const urls = apis.map((a) => a.url);
    const windows: number[] = [];
    const latencies: number[] = [];
    let acknowledged = 0;
    let lostTotal = 0;
    for (let round = 1; round <= FAILOVERS; round++) {
      const result = await failoverStorm({ apis: urls, key, deployment, prefix: `m${minReplicas}r${round}`, writers: WRITERS, beforeKillMs: 2000, afterResumeMs: 2000, resumeTimeoutMs: 30_000 });
      const lost = await lostWrites(urls, key, result.acknowledged);
      const window = result.resumedAt === undefined ? NaN : result.resumedAt - result.killedAt;
      windows.push(window);
      latencies.push(...result.latencies);
      acknowledged += result.acknowledged.length;
      lostTotal += lost.length;
      console.log(
        `  failover ${round}: ${result.from} → ${result.to}, 503 window ${Number.isNaN(window) ? 'writes did not resume' : ms(window)}; ` +
          `${result.acknowledged.length} acknowledged, ${lost.length} lost; answers ${JSON.stringify(Object.fromEntries(result.statuses))}; 503s ${JSON.stringify(Object.fromEntries(result.unavailable))}`,
      );
      // The killed server comes back, empty, as a replica of the new primary; the next failover
      // waits until the Sentinels see both replicas linked.
      await deployment.restart(result.from, result.to);
      await deployment.settled(30_000);
    }
    console.log(
      `MIN_REPLICAS=${minReplicas}: ${FAILOVERS} failovers, 503 window p50 ${ms(percentile(windows, 50))}, p99 ${ms(percentile(windows, 99))} (max ${ms(Math.max(...windows))}); ` +
        `commit latency p50 ${percentile(latencies, 50).toFixed(1)} ms, p99 ${percentile(latencies, 99).toFixed(1)} ms (n=${latencies.length}); ` +
        `${acknowledged} writes acknowledged, ${lostTotal} lost`,
    );
  } finally {
    for (const api of apis) await stopProcess(api, 'SIGTERM');
    await deployment.stop();
  }
}

try {
  // The API processes run the compiled build.
  spawnSync(process.execPath, ['scripts/build.mjs', '--if-stale'], { stdio: 'inherit' });
  console.log(`redis failover bench: ${FAILOVERS} failovers per mode, ${WRITERS} parallel writers through 2 API processes`);
  for (const minReplicas of [0, 1]) await mode(minReplicas);
} finally {
  removeTempDirs();
}

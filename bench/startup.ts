// Start-up costs as an operator meets them: the CLI (`palisade --help`, `palisade admin --help`)
// from the compiled output beside the same from the TypeScript sources (what ran before the build
// step), and the time from `npm start` to the "palisade serving" line (three processes under the
// supervisor) on a fresh data directory; and first of all `npm ci` on a fresh clone of this
// checkout's HEAD (the npm cache warm, as on a second install), with the build it runs (`prepare`)
// timed apart. Bounded: a few runs each, loopback ports.
//   npm run bench:startup      (BENCH_STARTUP_RUNS, default 10; BENCH_STARTUP_NPM_CI=0 skips npm ci)
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const RUNS = Number(process.env.BENCH_STARTUP_RUNS ?? 10);

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

function timeCommand(args: string[], runs: number): number {
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const started = performance.now();
    const result = spawnSync(process.execPath, args, { cwd: root, stdio: 'ignore', env: { ...process.env, PALISADE_DATA_DIR: scratch } });
    times.push(performance.now() - started);
    if (result.status !== 0 && result.status !== 2) throw new Error(`${args.join(' ')} exited ${result.status}`);
  }
  return median(times);
}

async function npmStartToServing(): Promise<number> {
  const data = mkdtempSync(join(scratch, 'data-'));
  const started = performance.now();
  const child = spawn('npm', ['start'], {
    cwd: root,
    env: { ...process.env, PALISADE_DATA_DIR: data, PALISADE_API_HOST: '127.0.0.1', PALISADE_API_PORT: '0', PALISADE_DNS_HOST: '127.0.0.1', PALISADE_DNS_PORT: '0', PALISADE_EDGE_HOST: '127.0.0.1', PALISADE_EDGE_HTTP_PORT: '0', PALISADE_EDGE_HTTPS_PORT: '0' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  try {
    for (let i = 0; i < 600 && !out.includes('palisade serving'); i++) await new Promise((r) => setTimeout(r, 5));
    if (!out.includes('palisade serving')) throw new Error(`npm start did not serve within 3 s:\n${out}`);
    return performance.now() - started;
  } finally {
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
  }
}

/** `npm ci` in a fresh clone: the whole install, then the build alone again (what `prepare` runs). */
function npmCiOnFreshClone(): { install: number; build: number } {
  const clone = join(scratch, 'clone');
  const cloned = spawnSync('git', ['clone', '--quiet', '--local', root, clone], { stdio: 'inherit' });
  if (cloned.status !== 0) throw new Error('git clone of this checkout failed');
  const started = performance.now();
  const install = spawnSync('npm', ['ci', '--no-audit', '--no-fund', '--prefer-offline'], { cwd: clone, stdio: 'ignore' });
  const installMs = performance.now() - started;
  if (install.status !== 0) throw new Error(`npm ci in a fresh clone exited ${install.status}`);
  const buildStarted = performance.now();
  spawnSync(process.execPath, ['scripts/build.mjs'], { cwd: clone, stdio: 'ignore' });
  return { install: installMs, build: performance.now() - buildStarted };
}

const scratch = mkdtempSync(join(tmpdir(), 'palisade-bench-startup-'));
try {
  if (process.env.BENCH_STARTUP_NPM_CI !== '0') {
    const { install, build } = npmCiOnFreshClone();
    console.log(`npm ci on a fresh clone (warm npm cache): ${(install / 1000).toFixed(1)} s, of which the build (prepare: tsc, data files, console bundle) about ${(build / 1000).toFixed(1)} s`);
  }
  spawnSync(process.execPath, ['scripts/build.mjs', '--if-stale'], { cwd: root, stdio: 'inherit' });
  const built = timeCommand(['bin/palisade.js', '--help'], RUNS);
  const fromSource = timeCommand(['--import', 'tsx', 'src/main.ts', '--help'], Math.max(3, RUNS / 2));
  const adminBuilt = timeCommand(['bin/palisade.js', 'admin', '--help'], RUNS);
  const adminSource = timeCommand(['--import', 'tsx', 'src/main.ts', 'admin', '--help'], Math.max(3, RUNS / 2));
  console.log(`palisade --help          compiled ${built.toFixed(0)} ms   from TypeScript sources ${fromSource.toFixed(0)} ms   (median)`);
  console.log(`palisade admin --help    compiled ${adminBuilt.toFixed(0)} ms   from TypeScript sources ${adminSource.toFixed(0)} ms   (median)`);
  const serving: number[] = [];
  for (let i = 0; i < 3; i++) serving.push(await npmStartToServing());
  console.log(`npm start → "palisade serving" (api, dns and edge processes ready): ${serving.map((ms) => ms.toFixed(0)).join(', ')} ms`);
} finally {
  rmSync(scratch, { recursive: true, force: true });
}

// The Dockerfile's contract, checked without Docker (which these machines cannot run): two
// stages, a slim Node 24 runtime without development dependencies or sources, a non-root user,
// a HEALTHCHECK on /healthz, `palisade serve` as what runs. And what the runtime stage copies —
// bin/, dist/ and the production dependencies — is installed the same way into a fresh folder
// and started: it serves, and the HEALTHCHECK's own command says healthy.
import { execFile, spawn } from 'node:child_process';
import { cpSync, existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { removeTempDirs, tempDir } from '../helpers/temp.ts';
import { stopProcess } from '../helpers/spawn-palisade.ts';

const root = fileURLToPath(new URL('../..', import.meta.url));
const dockerfile = readFileSync(join(root, 'Dockerfile'), 'utf8');
const run = promisify(execFile);

interface Stage {
  from: string;
  lines: string[];
}

/** The Dockerfile's instructions (continuation lines joined, comments dropped) by stage. */
function stages(): Stage[] {
  const joined = dockerfile.replace(/\\\n/g, ' ').split('\n').map((l) => l.trim()).filter((l) => l && !l.startsWith('#'));
  const out: Stage[] = [];
  for (const line of joined) {
    if (/^FROM\s/i.test(line)) out.push({ from: line, lines: [] });
    else out.at(-1)?.lines.push(line);
  }
  return out;
}

const instruction = (stage: Stage, name: string) => stage.lines.filter((l) => l.toUpperCase().startsWith(`${name} `));

afterAll(() => removeTempDirs());

describe('Dockerfile', () => {
  const all = stages();
  const runtime = all.at(-1)!;

  it('builds in one stage and runs a slim Node 24 image in another', () => {
    expect(all.length).toBeGreaterThanOrEqual(2);
    expect(runtime.from).toMatch(/^FROM node:24[-.\w]*-slim\b/);
    expect(all[0]!.lines.join('\n')).toMatch(/npm ci\b/);
  });

  it('the build stage copies every file the build script imports, and the context leaves node_modules out', () => {
    const build = readFileSync(join(root, 'scripts', 'build.mjs'), 'utf8');
    const copied = instruction(all[0]!, 'COPY').join('\n');
    for (const [, path] of build.matchAll(/^import '\.\.\/([^']+)';/gm)) expect(copied, `the build stage must COPY ${path}`).toContain(path);
    const ignored = readFileSync(join(root, '.dockerignore'), 'utf8').split('\n').map((l) => l.trim());
    for (const path of ['node_modules/', 'dist/', '.git/']) expect(ignored).toContain(path);
  });

  it('runtime: production dependencies only, the compiled output copied from the build, no sources or compiler', () => {
    const runs = instruction(runtime, 'RUN').join('\n');
    expect(runs).toMatch(/npm ci[^\n]*--omit=dev/);
    const copies = instruction(runtime, 'COPY');
    expect(copies.some((c) => /--from=build\s+\S*dist\b/.test(c))).toBe(true);
    expect(copies.some((c) => /\bsrc\b/.test(c))).toBe(false);
    expect(runs).not.toMatch(/\btsc\b|typescript|tsx/);
  });

  it('runtime: a non-root user, a HEALTHCHECK on /healthz, `palisade serve` as the command', () => {
    const users = instruction(runtime, 'USER');
    expect(users.at(-1)).toMatch(/^USER\s+(?!root\b|0\b)\w+/);
    const health = instruction(runtime, 'HEALTHCHECK');
    expect(health).toHaveLength(1);
    expect(health[0]).toMatch(/\/healthz/);
    expect(instruction(runtime, 'ENTRYPOINT')[0]).toMatch(/"node",\s*"bin\/palisade\.js"/);
    expect(instruction(runtime, 'CMD')[0]).toMatch(/\["serve"\]/);
    expect(instruction(runtime, 'VOLUME')[0]).toMatch(/\/data/);
  });

  it('what the runtime stage copies starts on production dependencies alone and passes its own HEALTHCHECK', async () => {
    const app = tempDir();
    for (const file of ['package.json', 'package-lock.json']) cpSync(join(root, file), join(app, file));
    cpSync(join(root, 'bin'), join(app, 'bin'), { recursive: true });
    expect(existsSync(join(root, 'dist', 'main.js')), 'dist/ is built before the tests (test/global-build.ts)').toBe(true);
    cpSync(join(root, 'dist'), join(app, 'dist'), { recursive: true });
    // The packages are in the local npm cache (the checkout's own `npm ci` put them there).
    const install = await run('npm', ['ci', '--omit=dev', '--ignore-scripts', '--offline', '--no-audit', '--no-fund'], { cwd: app, timeout: 170_000 }).catch((error: Error & { stderr?: string }) => {
      throw new Error(`npm ci --omit=dev --offline failed (is the npm cache filled by an earlier npm ci?): ${error.stderr ?? error.message}`);
    });
    expect(install).toBeDefined();
    const installed = readdirSync(join(app, 'node_modules'));
    for (const dev of ['typescript', 'tsx', 'vitest', 'eslint']) expect(installed).not.toContain(dev);
    expect(readdirSync(join(app, 'dist'), { recursive: true }).filter((f) => String(f).endsWith('.ts'))).toEqual([]);

    const env = { ...process.env, NODE_ENV: 'production', PALISADE_DATA_DIR: tempDir(), PALISADE_API_HOST: '127.0.0.1', PALISADE_API_PORT: '0', PALISADE_DNS_HOST: '127.0.0.1', PALISADE_DNS_PORT: '0', PALISADE_EDGE_HOST: '127.0.0.1', PALISADE_EDGE_HTTP_PORT: '0', PALISADE_EDGE_HTTPS_PORT: '0' };
    const child = spawn(process.execPath, ['bin/palisade.js', 'serve'], { cwd: app, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const exited = new Promise((resolve) => child.once('exit', resolve));
    try {
      let port: string | undefined;
      for (let i = 0; i < 400 && !port && child.exitCode === null; i++) {
        port = /"api":"http:\/\/127\.0\.0\.1:(\d+)".*"palisade serving"/.exec(out)?.[1];
        await new Promise((r) => setTimeout(r, 50));
      }
      expect(port, out).toBeDefined();
      // The HEALTHCHECK's command exactly as written, run where the image would run it.
      const command = JSON.parse(/HEALTHCHECK[\s\S]*?CMD\s+(\[.*\])/.exec(dockerfile.replace(/\\\n/g, ' '))![1]!) as string[];
      expect(command[0]).toBe('node');
      const check = await run(process.execPath, command.slice(1), { cwd: app, env: { ...env, PALISADE_API_PORT: port! }, timeout: 10_000 }).then(
        () => 0,
        (error: { code?: number }) => error.code ?? 1,
      );
      expect(check).toBe(0);
    } finally {
      await stopProcess({ child, exited });
    }
  }, 240_000);
});

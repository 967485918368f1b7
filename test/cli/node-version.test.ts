// On a Node.js older than package.json's minimum, every way of starting says so in one line before
// anything else: `bin/palisade.js` (any command) and the build that `npm start` runs first. Run
// with a real older Node, as the machines carry one (Node 20), not with a faked version string.
import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { nodeVersionIsEnough } from '../../bin/node-version.js';
import { BIN } from '../helpers/spawn-palisade.ts';

const BUILD = new URL('../../scripts/build.mjs', import.meta.url).pathname;

/** An installed `node` older than the minimum, found on PATH or in the usual system places. */
function olderNode(): string {
  const candidates = new Set<string>(['/usr/bin/node', '/usr/local/bin/node']);
  for (const dir of (process.env.PATH ?? '').split(':')) if (dir) candidates.add(`${dir}/node`);
  for (const path of candidates) {
    try {
      const version = execFileSync(path, ['-p', 'process.versions.node'], { encoding: 'utf8' }).trim();
      if (!nodeVersionIsEnough(version)) return path;
    } catch {
      // not there or not runnable
    }
  }
  throw new Error('this test needs a Node.js older than 22.19 installed beside the one running the suite (Debian: apt-get install nodejs, which is Node 18/20)');
}

describe('the Node.js version check', () => {
  it('knows the minimum of package.json', () => {
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { engines: { node: string } };
    expect(pkg.engines.node).toBe('>=22.19');
    expect(nodeVersionIsEnough('22.19.0')).toBe(true);
    expect(nodeVersionIsEnough('22.18.9')).toBe(false);
    expect(nodeVersionIsEnough('24.0.0')).toBe(true);
    expect(nodeVersionIsEnough('20.20.2')).toBe(false);
    expect(nodeVersionIsEnough(process.versions.node)).toBe(true);
  });

  it('an older Node gets one line naming both versions, from the CLI and from the build `npm start` runs', () => {
    const node = olderNode();
    for (const args of [[BIN, 'serve'], [BIN, 'admin', '--help'], [BUILD, '--if-stale']]) {
      const r = spawnSync(node, args, { encoding: 'utf8', timeout: 20_000, env: { ...process.env, PALISADE_DATA_DIR: '/nonexistent' } });
      expect(r.status).toBe(1);
      const lines = r.stderr.trim().split('\n');
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(/^palisade: needs Node\.js 22\.19 or newer \(24 recommended\); this is Node\.js v\d+\.\d+\.\d+/);
      expect(r.stdout).toBe('');
    }
  });

  it('npm refuses to install on an older Node instead of warning (engine-strict)', () => {
    expect(readFileSync(new URL('../../.npmrc', import.meta.url), 'utf8')).toMatch(/^engine-strict=true$/m);
  });
});

#!/usr/bin/env node
// Compiles src/ to dist/ (what `palisade` runs) and copies the files the code reads beside itself
// (the countries table, the bundled GeoIP database). Plain JavaScript so it runs before anything is
// built and without tsx.
//
//   node scripts/build.mjs              build (npm ci runs it as `prepare`; `npm run build`)
//   node scripts/build.mjs --if-stale   build only when a file under src/ is newer than the last build
//                                       (`npm start` runs it, so an edited checkout never runs old code)
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const src = join(root, 'src');
const dist = join(root, 'dist');
/** Written last: its time says when a complete build finished. */
const STAMP = join(dist, '.built');

/** Every file under a folder (a few hundred: stat-ing them all takes milliseconds). */
function* filesUnder(dir) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* filesUnder(path);
    else yield path;
  }
}

function isStale() {
  if (!existsSync(STAMP)) return true;
  const built = statSync(STAMP).mtimeMs;
  const inputs = [...filesUnder(src), join(root, 'tsconfig.json'), join(root, 'tsconfig.build.json'), join(root, 'package.json')];
  return inputs.some((path) => statSync(path).mtimeMs > built);
}

function build() {
  let tsc;
  try {
    tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  } catch {
    console.error('palisade build: typescript is not installed (run `npm ci`, which installs the development dependencies)');
    process.exit(1);
  }
  // A clean output: a source file removed must not leave its old compiled self behind.
  rmSync(dist, { recursive: true, force: true });
  const result = spawnSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.build.json')], { stdio: 'inherit' });
  if (result.status !== 0) {
    console.error('palisade build: the TypeScript compiler failed (see above)');
    process.exit(1);
  }
  // Everything in src/ that is not TypeScript nor a folder's README is read at run time.
  for (const path of filesUnder(src)) {
    if (path.endsWith('.ts') || path.endsWith('README.md')) continue;
    const target = join(dist, relative(src, path));
    mkdirSync(dirname(target), { recursive: true });
    cpSync(path, target);
  }
  writeFileSync(STAMP, `${new Date().toISOString()}\n`);
}

if (process.argv.includes('--if-stale') && !isStale()) process.exit(0);
const started = performance.now();
build();
console.error(`palisade build: dist/ written in ${((performance.now() - started) / 1000).toFixed(1)} s`);

#!/usr/bin/env node
// Compiles src/ to dist/ (what `palisade` runs), copies the files the code reads beside itself
// (the countries table, the bundled GeoIP database) and bundles the customer console's browser code
// (src/console/app/) into dist/console-app/ with esbuild. Plain JavaScript so it runs before
// anything is built and without tsx.
//
//   node scripts/build.mjs              build (npm ci runs it as `prepare`; `npm run build`)
//   node scripts/build.mjs --if-stale   build only when a file under src/ is newer than the last build
//                                       (`npm start` runs it, so an edited checkout never runs old code)
// `npm start` runs this first: an older Node is told so here, in one line, not by a compiler error.
import '../bin/node-version.js';
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const src = join(root, 'src');
const dist = join(root, 'dist');
/** Written last: its time says when a complete build finished. */
const STAMP = join(dist, '.built');
/** The console's browser code: bundled by esbuild, never compiled by tsc nor copied as it is. */
const consoleApp = join(src, 'console', 'app');

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

/**
 * The console: one script and one style sheet, minified, named by their content's hash (so a
 * browser may keep them for good), and index.html naming them. No source maps: what ships is
 * what runs.
 */
async function bundleConsole() {
  let esbuild;
  try {
    esbuild = await import('esbuild');
  } catch {
    console.error('palisade build: esbuild is not installed (run `npm ci`, which installs the development dependencies)');
    process.exit(1);
  }
  const out = join(dist, 'console-app');
  const result = await esbuild.build({
    entryPoints: { app: join(consoleApp, 'main.tsx') },
    bundle: true,
    minify: true,
    format: 'esm',
    target: 'es2022',
    jsx: 'automatic',
    jsxImportSource: 'preact',
    outdir: out,
    entryNames: '[name]-[hash]',
    metafile: true,
    legalComments: 'none',
    logLevel: 'warning',
    tsconfig: join(consoleApp, 'tsconfig.json'),
  });
  const outputs = Object.keys(result.metafile.outputs).map((path) => relative(out, join(root, path)));
  const script = outputs.find((name) => name.endsWith('.js'));
  const style = outputs.find((name) => name.endsWith('.css'));
  if (!script || !style) throw new Error(`the console bundle lacks a script or a style sheet: ${outputs.join(', ')}`);
  const page = readFileSync(join(consoleApp, 'index.html'), 'utf8').replace('{{script}}', `assets/${script}`).replace('{{style}}', `assets/${style}`);
  writeFileSync(join(out, 'index.html'), page);
  cpSync(join(consoleApp, 'icon.svg'), join(out, 'icon.svg'));
}

async function build() {
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
    if (path.endsWith('.ts') || path.endsWith('README.md') || path.startsWith(consoleApp)) continue;
    const target = join(dist, relative(src, path));
    mkdirSync(dirname(target), { recursive: true });
    cpSync(path, target);
  }
  await bundleConsole();
  writeFileSync(STAMP, `${new Date().toISOString()}\n`);
}

if (process.argv.includes('--if-stale') && !isStale()) process.exit(0);
const started = performance.now();
await build();
console.error(`palisade build: dist/ written in ${((performance.now() - started) / 1000).toFixed(1)} s`);

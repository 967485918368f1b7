#!/usr/bin/env node
// Runs the compiled JavaScript in dist/ (`npm ci` builds it; `npm start` rebuilds it when src/ has
// changed). Development and tests may run the TypeScript sources instead with `node --import tsx
// src/main.ts`.
// First, before anything that may need a newer Node: one line naming the Node needed.
import './node-version.js';
import { existsSync } from 'node:fs';

const main = new URL('../dist/main.js', import.meta.url);
if (!existsSync(main)) {
  console.error('palisade: not built yet: run `npm run build` (or `npm ci`, which builds)');
  process.exit(1);
}
await import(main.href);

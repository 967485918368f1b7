#!/usr/bin/env node
// Runs the TypeScript sources directly (tsx), so the checkout is the installation.
import { register } from 'tsx/esm/api';

register();
await import('../src/main.ts');

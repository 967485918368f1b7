// Opens the store the configuration names. Only the embedded adapter exists so far; the Redis
// adapter will be chosen here when REDIS_URL is set.
import { mkdirSync } from 'node:fs';
import { EmbeddedStore } from './embedded.ts';
import type { Store } from './types.ts';

export interface StoreConfig {
  dataDir: string;
  changeRetention?: number;
}

export function openStore(config: StoreConfig): Store {
  mkdirSync(config.dataDir, { recursive: true });
  return new EmbeddedStore({ path: config.dataDir, changeRetention: config.changeRetention });
}

export type { Store, Zone, Change, Page, PageRequest } from './types.ts';

// Opens the store the configuration names: Redis when a URL is given (several API processes
// share it), else the embedded LMDB store in the data directory.
import { mkdirSync } from 'node:fs';
import { EmbeddedStore } from './lmdb/index.ts';
import { RedisStore } from './redis/index.ts';
import type { Store } from './types.ts';

export interface StoreConfig {
  dataDir: string;
  changeRetention?: number;
  redisUrl?: string;
  redisPrefix?: string;
}

export function openStore(config: StoreConfig): Store {
  if (config.redisUrl) return new RedisStore({ url: config.redisUrl, prefix: config.redisPrefix, changeRetention: config.changeRetention });
  mkdirSync(config.dataDir, { recursive: true });
  return new EmbeddedStore({ path: config.dataDir, changeRetention: config.changeRetention });
}

export type { Store, Zone, Change, Page, PageRequest } from './types.ts';

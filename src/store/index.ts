// Opens the store the configuration names: Redis when a URL is given (several API processes
// share it), else the embedded LMDB store in the data directory.
import { mkdirSync } from 'node:fs';
import { EmbeddedStore } from './lmdb/index.ts';
import { RedisStore } from './redis/index.ts';
import type { RedisConnection } from './redis/connection.ts';
import type { Store } from './types.ts';

export interface StoreConfig {
  dataDir: string;
  changeRetention?: number;
  /** One Redis server by URL (tests, tools); `redis` says more (Sentinels, auth, replicas). */
  redisUrl?: string;
  redisPrefix?: string;
  redis?: RedisConnection;
}

export function openStore(config: StoreConfig): Store {
  const redis = config.redis ?? (config.redisUrl ? { url: config.redisUrl } : undefined);
  if (redis) return new RedisStore({ ...redis, prefix: config.redisPrefix, changeRetention: config.changeRetention });
  mkdirSync(config.dataDir, { recursive: true });
  return new EmbeddedStore({ path: config.dataDir, changeRetention: config.changeRetention });
}

export type { Store, Zone, Change, Page, PageRequest } from './types.ts';

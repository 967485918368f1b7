// Where state lives: the embedded store's directory, or Redis (one server, or Sentinels that find
// the primary again after a failover; docs/redis.md).
import { resolve } from 'node:path';
import { parseSentinels, type RedisConnection } from '../store/redis/connection.ts';
import { bool, int, optionalText, readTable, text, type Values } from './kinds.ts';
import type { Config } from './types.ts';

export const STORE_SETTINGS = {
  PALISADE_DATA_DIR: text('data', { help: 'embedded store directory', shown: '`./data`' }),
  REDIS_URL: optionalText({ help: 'use Redis (`redis://host:6379/0`, `rediss://…`) instead of the embedded store; see `docs/redis.md`', shown: 'unset' }),
  PALISADE_REDIS_PREFIX: text('{palisade}:', { help: 'key prefix in Redis' }),
  PALISADE_REDIS_SENTINELS: optionalText({
    help: '`host:port,…` of Redis Sentinels: use the primary they name, found again after a failover (instead of `REDIS_URL`); see `docs/redis.md`',
    shown: 'unset',
  }),
  PALISADE_REDIS_MASTER_NAME: optionalText({ help: 'with `PALISADE_REDIS_SENTINELS` (required then): the primary\'s name as the Sentinels know it' }),
  PALISADE_REDIS_USERNAME: optionalText({ help: 'user name on the Redis data servers (ACL)' }),
  PALISADE_REDIS_PASSWORD: optionalText({ help: 'password on the Redis data servers' }),
  PALISADE_REDIS_SENTINEL_USERNAME: optionalText({ help: 'user name on the Sentinels' }),
  PALISADE_REDIS_SENTINEL_PASSWORD: optionalText({ help: 'password on the Sentinels' }),
  PALISADE_REDIS_MIN_REPLICAS: int(0, 0, 16, {
    help: 'a commit is answered only once this many replicas hold it (`WAIT`, at most `PALISADE_REDIS_WAIT_MS`), else 503: an acknowledged write then survives a failover',
  }),
  PALISADE_REDIS_WAIT_MS: int(1000, 10, 4000, { help: 'how long a commit waits for `PALISADE_REDIS_MIN_REPLICAS` replicas' }),
  PALISADE_CHANGE_RETENTION: int(100_000, 100, 100_000_000, { help: 'change-feed entries kept for name servers catching up' }),
};

/** Read only with PALISADE_REDIS_SENTINELS (REDIS_URL says TLS by its scheme). */
export const SENTINEL_TLS_SETTINGS = {
  PALISADE_REDIS_TLS: bool(false, { help: 'with Sentinels: TLS to the data servers they name' }),
  PALISADE_REDIS_SENTINEL_TLS: bool(false, { help: 'with Sentinels: TLS to the Sentinels' }),
};

type StoreValues = Values<typeof STORE_SETTINGS>;

/** The store's part of the configuration. */
export function storeConfig(env: Record<string, string | undefined>, problems: string[]): Pick<Config, 'dataDir' | 'redisUrl' | 'redisPrefix' | 'redis' | 'changeRetention'> {
  const v = readTable(STORE_SETTINGS, env, problems);
  const redisUrl = v.REDIS_URL === undefined || v.REDIS_URL === '' ? undefined : v.REDIS_URL;
  if (redisUrl && !/^rediss?:\/\//.test(redisUrl)) problems.push(`REDIS_URL=${redisUrl}: must start with redis:// or rediss://`);
  return {
    dataDir: resolve(v.PALISADE_DATA_DIR),
    redisUrl,
    redisPrefix: v.PALISADE_REDIS_PREFIX,
    redis: redisConnection(env, v, redisUrl, problems),
    changeRetention: v.PALISADE_CHANGE_RETENTION,
  };
}

/** REDIS_URL (one server) or the Sentinels and the primary's name; WAIT's replicas and bound for both. */
function redisConnection(env: Record<string, string | undefined>, v: StoreValues, url: string | undefined, problems: string[]): RedisConnection | undefined {
  const sentinelText = v.PALISADE_REDIS_SENTINELS;
  const minReplicas = v.PALISADE_REDIS_MIN_REPLICAS;
  const waitTimeoutMs = v.PALISADE_REDIS_WAIT_MS;
  const auth = {
    ...(v.PALISADE_REDIS_USERNAME && { username: v.PALISADE_REDIS_USERNAME }),
    ...(v.PALISADE_REDIS_PASSWORD && { password: v.PALISADE_REDIS_PASSWORD }),
  };
  if (!sentinelText) {
    if (v.PALISADE_REDIS_MASTER_NAME) problems.push('PALISADE_REDIS_MASTER_NAME is set without PALISADE_REDIS_SENTINELS');
    return url === undefined ? undefined : { url, ...auth, minReplicas, waitTimeoutMs };
  }
  if (url !== undefined) problems.push('REDIS_URL and PALISADE_REDIS_SENTINELS are both set: name one server, or the Sentinels that find the primary');
  const { sentinels, problems: wrong } = parseSentinels(sentinelText);
  for (const problem of wrong) problems.push(`PALISADE_REDIS_SENTINELS: ${problem}`);
  const masterName = v.PALISADE_REDIS_MASTER_NAME;
  const tls = readTable(SENTINEL_TLS_SETTINGS, env, problems);
  if (!masterName) problems.push('PALISADE_REDIS_MASTER_NAME: the primary\'s name as the Sentinels know it is required with PALISADE_REDIS_SENTINELS');
  return {
    sentinels,
    masterName,
    ...auth,
    ...(v.PALISADE_REDIS_SENTINEL_USERNAME && { sentinelUsername: v.PALISADE_REDIS_SENTINEL_USERNAME }),
    ...(v.PALISADE_REDIS_SENTINEL_PASSWORD && { sentinelPassword: v.PALISADE_REDIS_SENTINEL_PASSWORD }),
    tls: tls.PALISADE_REDIS_TLS,
    sentinelTls: tls.PALISADE_REDIS_SENTINEL_TLS,
    minReplicas,
    waitTimeoutMs,
  };
}

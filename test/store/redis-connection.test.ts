// Where the Redis store connects, as the configuration reads it: one server by URL, or the
// Sentinels and the primary's name; a wrong entry is refused with its variable named, never
// guessed around.
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.ts';
import { clientOptions, parseSentinels } from '../../src/store/redis/connection.ts';

const problemsOf = (env: Record<string, string>) => {
  try {
    loadConfig(env);
    return [];
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as ConfigError).problems;
  }
};

describe('Redis connection settings', () => {
  it('reads Sentinels, the primary\'s name, credentials, TLS and the replicas to wait for', () => {
    const config = loadConfig({
      PALISADE_REDIS_SENTINELS: '10.0.0.1:26379, sentinel-b.example:26380,[2001:db8::5]:26381',
      PALISADE_REDIS_MASTER_NAME: 'palisade',
      PALISADE_REDIS_PASSWORD: 'data-secret',
      PALISADE_REDIS_SENTINEL_PASSWORD: 'sentinel-secret',
      PALISADE_REDIS_TLS: 'true',
      PALISADE_REDIS_MIN_REPLICAS: '1',
      PALISADE_REDIS_WAIT_MS: '250',
    });
    expect(config.redis).toEqual({
      sentinels: [
        { host: '10.0.0.1', port: 26379 },
        { host: 'sentinel-b.example', port: 26380 },
        { host: '2001:db8::5', port: 26381 },
      ],
      masterName: 'palisade',
      password: 'data-secret',
      sentinelPassword: 'sentinel-secret',
      tls: true,
      sentinelTls: false,
      minReplicas: 1,
      waitTimeoutMs: 250,
    });
    const { url, options } = clientOptions(config.redis!);
    expect(url).toBeUndefined();
    expect(options).toMatchObject({ name: 'palisade', role: 'master', password: 'data-secret', sentinelPassword: 'sentinel-secret', enableTLSForSentinelMode: true, enableOfflineQueue: false });
  });

  it('REDIS_URL alone keeps working; no Redis setting is the embedded store', () => {
    expect(loadConfig({ REDIS_URL: 'redis://127.0.0.1:6379/0' }).redis).toEqual({ url: 'redis://127.0.0.1:6379/0', minReplicas: 0, waitTimeoutMs: 1000 });
    expect(clientOptions({ url: 'rediss://r.example:6380' }).url).toBe('rediss://r.example:6380');
    expect(loadConfig({}).redis).toBeUndefined();
  });

  it('refuses what it cannot use, naming the variable', () => {
    expect(problemsOf({ PALISADE_REDIS_SENTINELS: '10.0.0.1:26379' }).join('\n')).toMatch(/^PALISADE_REDIS_MASTER_NAME: /m);
    expect(problemsOf({ PALISADE_REDIS_SENTINELS: '10.0.0.1:26379', PALISADE_REDIS_MASTER_NAME: 'm', REDIS_URL: 'redis://x:1' }).join('\n')).toMatch(/both set/);
    expect(problemsOf({ PALISADE_REDIS_MASTER_NAME: 'm' }).join('\n')).toMatch(/without PALISADE_REDIS_SENTINELS/);
    expect(problemsOf({ PALISADE_REDIS_SENTINELS: '10.0.0.1:26379', PALISADE_REDIS_MASTER_NAME: 'm', PALISADE_REDIS_MIN_REPLICAS: '-1' }).join('\n')).toMatch(/^PALISADE_REDIS_MIN_REPLICAS/m);
    for (const bad of ['10.0.0.1', '10.0.0.1:0', '10.0.0.1:70000', 'host:port', ':26379', '2001:db8::5:26379', ' , ']) {
      expect(parseSentinels(bad).problems.length, bad).toBeGreaterThan(0);
      expect(parseSentinels(bad).sentinels, bad).toEqual([]);
    }
  });
});

// Where the Redis store connects: one server by URL (REDIS_URL), or the primary the Sentinels
// name (PALISADE_REDIS_SENTINELS + PALISADE_REDIS_MASTER_NAME), found again by ioredis itself
// after a failover. Pure: options in, ioredis options out.
import type { RedisOptions } from 'ioredis';

export interface SentinelAddress {
  host: string;
  port: number;
}

export interface RedisConnection {
  /** redis:// or rediss:// URL of one server (without Sentinels). */
  url?: string;
  /** Sentinels to ask where the primary is; set, `url` is not used. */
  sentinels?: SentinelAddress[];
  /** The primary's name as the Sentinels know it (`sentinel monitor NAME …`). */
  masterName?: string;
  /** ACL user and password of the data servers (primary and replicas). */
  username?: string;
  password?: string;
  /** ACL user and password of the Sentinels (when they require one). */
  sentinelUsername?: string;
  sentinelPassword?: string;
  /** TLS to the data servers (with Sentinels; a rediss:// URL says so by itself). */
  tls?: boolean;
  /** TLS to the Sentinels. */
  sentinelTls?: boolean;
  /**
   * Replicas that must hold a commit before it is answered (WAIT): 0 answers once the primary
   * has it. Past `waitTimeoutMs` without them, the commit is answered 503 NOT_DURABLE.
   */
  minReplicas?: number;
  waitTimeoutMs?: number;
}

/** "host:port,host:port" → addresses; problems are returned, not thrown (the configuration reports them all). */
export function parseSentinels(text: string): { sentinels: SentinelAddress[]; problems: string[] } {
  const sentinels: SentinelAddress[] = [];
  const problems: string[] = [];
  for (const entry of text.split(',').map((e) => e.trim()).filter(Boolean)) {
    // host:port, or [v6]:port.
    const match = /^(?:\[([0-9a-fA-F:.]+)\]|([^:\s[\]]+)):(\d{1,5})$/.exec(entry);
    const port = match ? Number(match[3]) : NaN;
    if (!match || port < 1 || port > 65_535) problems.push(`${entry}: must be host:port (a port from 1 to 65535)`);
    else sentinels.push({ host: match[1] ?? match[2]!, port });
  }
  if (sentinels.length === 0 && problems.length === 0) problems.push('names no Sentinel');
  return { sentinels, problems };
}

/**
 * The client's options. Commands are never queued while the connection is down (they fail at
 * once: the API answers 503), and a server that stops answering is given up on after 5 s.
 */
export function clientOptions(connection: RedisConnection): { url?: string; options: RedisOptions } {
  const common: RedisOptions = {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    connectTimeout: 1000,
    // Long enough for the largest atomic commit the limits allow (a 100,000-entry IP list is
    // one script; under load it took over a second). A commit whose answer is lost is settled
    // afterwards by its commit mark (see core.ts), never guessed.
    commandTimeout: 5000,
    retryStrategy: (times) => Math.min(times * 100, 1000),
    lazyConnect: false,
    // A server that turned replica under us (a failover it took part in) refuses writes with
    // READONLY: reconnect, which asks the Sentinels for the primary again.
    reconnectOnError: (error) => (error.message.startsWith('READONLY') ? 2 : false),
    ...(connection.username !== undefined && { username: connection.username }),
    ...(connection.password !== undefined && { password: connection.password }),
  };
  if (!connection.sentinels?.length) return { url: connection.url, options: common };
  return {
    options: {
      ...common,
      sentinels: connection.sentinels,
      name: connection.masterName ?? 'palisade',
      role: 'master',
      ...(connection.sentinelUsername !== undefined && { sentinelUsername: connection.sentinelUsername }),
      ...(connection.sentinelPassword !== undefined && { sentinelPassword: connection.sentinelPassword }),
      ...(connection.tls && { tls: {}, enableTLSForSentinelMode: true }),
      ...(connection.sentinelTls && { sentinelTLS: {} }),
      // Ask the Sentinels again quickly while none knows a primary (a failover in progress).
      sentinelRetryStrategy: (times) => Math.min(100 + times * 100, 1000),
      sentinelCommandTimeout: 1000,
      // No failover detector: the killed primary's connection fails by itself, and the detector's
      // disconnect racing a reconnect left the client ended for good (never reconnecting).
    },
  };
}

// Uptime measures in Redis: a hash per (domain, resolution, period start), one field per node
// holding its measure as JSON, expiring at the period's retention (PEXPIREAT), so storage stays
// bounded with no sweeper. A script adds a chunk of rows to their minute, hour and day in one
// atomic step (each merge reads and writes one field); chunks keep Redis's other clients waiting
// briefly at most.
import type { Redis } from 'ioredis';
import { expiresAt, periodStart, RESOLUTIONS, RETENTION_MS, PERIOD_MS, type Resolution } from '../../uptime/periods.ts';
import type { Measure } from '../../uptime/measure.ts';
import type { UptimePoint, UptimeRow } from '../types.ts';

/** ARGV per row: node, measure JSON, then (key, expire-at ms) for the minute, hour and day. */
export const UPTIME_SCRIPT = `
local function merge(into, add)
  into.c = (into.c or 0) + add.c
  into.u = (into.u or 0) + add.u
  into.r = (into.r or 0) + add.r
  into.o = (into.o or 0) + add.o
  for _, h in ipairs({'ch', 'rh'}) do
    if type(into[h]) ~= 'table' then into[h] = {} end
    for k, n in pairs(add[h]) do into[h][k] = (into[h][k] or 0) + n end
  end
  return into
end
local i = 1
while i <= #ARGV do
  local node = ARGV[i]
  for r = 0, 2 do
    local key = ARGV[i + 2 + r * 2]
    local current = redis.call('HGET', key, node)
    local value = merge(current and cjson.decode(current) or {}, cjson.decode(ARGV[i + 1]))
    redis.call('HSET', key, node, cjson.encode(value))
    redis.call('PEXPIREAT', key, ARGV[i + 3 + r * 2])
  end
  i = i + 8
end
return 1
`;

declare module 'ioredis' {
  interface RedisCommander {
    palisadeUptime(...args: string[]): Promise<number>;
  }
}

const CHUNK = 250;

export class RedisUptime {
  constructor(
    private readonly redis: Redis,
    private readonly key: (domain: string, resolution: Resolution, period: number) => string,
  ) {}

  async add(rows: readonly UptimeRow[]): Promise<void> {
    for (let i = 0; i < rows.length; i += CHUNK) {
      const args: string[] = [];
      for (const row of rows.slice(i, i + CHUNK)) {
        args.push(String(row.node), JSON.stringify(row.measure));
        for (const resolution of RESOLUTIONS) {
          const start = periodStart(resolution, row.minute);
          args.push(this.key(row.domain, resolution, start), String(expiresAt(resolution, start)));
        }
      }
      await this.redis.palisadeUptime(...args);
    }
  }

  async read(domain: string, resolution: Resolution, from: number, to: number): Promise<UptimePoint[]> {
    const first = periodStart(resolution, Math.max(from, Date.now() - RETENTION_MS[resolution]));
    const periods: number[] = [];
    for (let p = first; p <= to; p += PERIOD_MS[resolution]) periods.push(p);
    if (periods.length === 0) return [];
    const pipeline = this.redis.pipeline();
    for (const p of periods) pipeline.hgetall(this.key(domain, resolution, p));
    const results = (await pipeline.exec()) ?? [];
    const points: UptimePoint[] = [];
    results.forEach(([error, hash], i) => {
      if (error) throw error;
      for (const [node, text] of Object.entries(hash as Record<string, string>)) points.push({ period: periods[i]!, node: Number(node), measure: normalise(JSON.parse(text) as Measure) });
    });
    return points;
  }

  /** Every key the retention could still hold for the domain (a bounded list: no scan). */
  async delete(domain: string): Promise<void> {
    const now = Date.now();
    const keys: string[] = [];
    for (const resolution of RESOLUTIONS) {
      for (let p = periodStart(resolution, now - RETENTION_MS[resolution]); p <= now + PERIOD_MS[resolution]; p += PERIOD_MS[resolution]) keys.push(this.key(domain, resolution, p));
    }
    for (let i = 0; i < keys.length; i += 500) await this.redis.del(...keys.slice(i, i + 500));
  }
}

/** cjson writes an empty table as {} but a histogram holding only keys "1","2"… may come back an array. */
function normalise(measure: Measure): Measure {
  const histogram = (h: unknown): Record<string, number> => {
    if (Array.isArray(h)) return Object.fromEntries(h.flatMap((n, i) => (typeof n === 'number' && n > 0 ? [[String(i + 1), n]] : [])));
    return (h as Record<string, number>) ?? {};
  };
  return { c: measure.c, u: measure.u, r: measure.r, o: measure.o, ch: histogram(measure.ch), rh: histogram(measure.rh) };
}

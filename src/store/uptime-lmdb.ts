// Uptime measures in the embedded store: a database of its own keyed [domain, resolution, period
// start] holding each node's measure. A row is added to its minute, hour and day in one write
// transaction per chunk of rows (a report of 10,000 domains is many short transactions, with
// the event loop free between them, not one long one). A period's first write drops that
// domain's periods past their retention at that resolution (a range of a few keys), so storage
// stays bounded without a sweeper.
import type { Database } from 'lmdb';
import { emptyMeasure, mergeInto, type Measure } from '../uptime/measure.ts';
import { periodStart, RESOLUTIONS, RETENTION_MS, type Resolution } from '../uptime/periods.ts';
import type { UptimePoint, UptimeRow } from './types.ts';

type Key = [string, Resolution, number];
type Value = Record<string, Measure>;

const CHUNK = 250;
const ignore = () => undefined;
const yieldToIo = () => new Promise<void>((resolve) => setImmediate(resolve));

export class LmdbUptime {
  constructor(
    private readonly db: Database<Value, Key>,
    private readonly writeError: (error: unknown) => Promise<unknown>,
  ) {}

  async add(rows: readonly UptimeRow[]): Promise<void> {
    for (let i = 0; i < rows.length; i += CHUNK) {
      if (i > 0) await yieldToIo();
      const chunk = rows.slice(i, i + CHUNK);
      await this.db
        .transaction(() => {
          const now = Date.now();
          for (const row of chunk) {
            for (const resolution of RESOLUTIONS) {
              const key: Key = [row.domain, resolution, periodStart(resolution, row.minute)];
              const current = this.db.get(key);
              const value: Value = current ?? {};
              const node = String(row.node);
              value[node] = mergeInto(value[node] ?? emptyMeasure(), row.measure);
              this.db.put(key, value).catch(ignore);
              if (!current) this.prune(row.domain, resolution, now);
            }
          }
        })
        .catch(async (error: unknown) => {
          throw await this.writeError(error);
        });
    }
  }

  private prune(domain: string, resolution: Resolution, now: number): void {
    for (const { key } of this.db.getRange({ start: [domain, resolution, 0], end: [domain, resolution, now - RETENTION_MS[resolution]] })) this.db.remove(key).catch(ignore);
  }

  read(domain: string, resolution: Resolution, from: number, to: number): UptimePoint[] {
    const cutoff = Date.now() - RETENTION_MS[resolution];
    const points: UptimePoint[] = [];
    for (const { key, value } of this.db.getRange({ start: [domain, resolution, Math.max(from, cutoff)], end: [domain, resolution, to + 1] })) {
      for (const [node, measure] of Object.entries(value)) points.push({ period: key[2], node: Number(node), measure });
    }
    return points;
  }

  async delete(domain: string): Promise<void> {
    await this.db
      .transaction(() => {
        for (const { key } of this.db.getRange({ start: [domain, 'day', 0], end: [domain, '\uffff' as Resolution, 0] })) this.db.remove(key).catch(ignore);
      })
      .catch(async (error: unknown) => {
        throw await this.writeError(error);
      });
  }
}

// Uptime measures in the embedded store: a database of its own keyed [domain, resolution, period
// start, node] holding that node's measure (one key per node: adding one node's row reads and
// writes its own measure only, whatever the number of nodes). A row is added to its minute, hour
// and day in one write transaction per chunk of rows (a report of 10,000 domains is many short
// transactions, with the event loop free between them, not one long one). A domain's first
// write of a new period drops its periods past their retention at that resolution (a range of a
// few keys), so storage stays bounded without a sweeper.
import type { Database } from 'lmdb';
import { addToDense, fromDense } from '../../uptime/measure.ts';
import { periodStart, RESOLUTIONS, RETENTION_MS, type Resolution } from '../../uptime/periods.ts';
import type { UptimePoint, UptimeRow } from '../types.ts';

type Key = [string, Resolution, number, number];
/** The measure as dense counts (see ../uptime/measure.ts). */
type Value = number[];

const CHUNK = 250;
const ignore = () => undefined;
const yieldToIo = () => new Promise<void>((resolve) => setImmediate(resolve));

export class LmdbUptime {
  /** DOMAIN|RESOLUTION → the period whose first write pruned it (a prune per domain and period, not per node). */
  private readonly pruned = new Map<string, number>();

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
              const period = periodStart(resolution, row.minute);
              const key: Key = [row.domain, resolution, period, row.node];
              const current = this.db.get(key);
              this.db.put(key, addToDense(current, row.measure)).catch(ignore);
              if (!current) this.prune(row.domain, resolution, period, now);
            }
          }
        })
        .catch(async (error: unknown) => {
          throw await this.writeError(error);
        });
    }
  }

  private prune(domain: string, resolution: Resolution, period: number, now: number): void {
    const memo = `${domain}|${resolution}`;
    if (this.pruned.get(memo) === period) return;
    // Bounded memory: forgetting only costs a prune that finds nothing.
    if (this.pruned.size > 1_000_000) this.pruned.clear();
    this.pruned.set(memo, period);
    for (const { key } of this.db.getRange({ start: [domain, resolution, 0], end: [domain, resolution, now - RETENTION_MS[resolution]] })) this.db.remove(key).catch(ignore);
  }

  read(domain: string, resolution: Resolution, from: number, to: number): UptimePoint[] {
    const cutoff = Date.now() - RETENTION_MS[resolution];
    const points: UptimePoint[] = [];
    for (const { key, value } of this.db.getRange({ start: [domain, resolution, Math.max(from, cutoff)], end: [domain, resolution, to + 1] })) points.push({ period: key[2], node: key[3], measure: fromDense(value) });
    return points;
  }

  async delete(domain: string): Promise<void> {
    await this.db
      .transaction(() => {
        for (const { key } of this.db.getRange({ start: [domain, 'day', 0, 0], end: [domain, '\uffff' as Resolution, 0, 0] })) this.db.remove(key).catch(ignore);
      })
      .catch(async (error: unknown) => {
        throw await this.writeError(error);
      });
  }
}

// Uptime measures as the edges report them, kept per minute, hour and day.
import type { Measure } from '../../uptime/measure.ts';
import type { Resolution } from '../../uptime/periods.ts';

/** One node's measure of one domain's backend over one minute (or a part of it: measures add up). */
export interface UptimeRow {
  domain: string;
  node: number;
  /** Start of the minute, ms since the epoch. */
  minute: number;
  measure: Measure;
}

/** A stored period's measure of one node. */
export interface UptimePoint {
  /** Start of the period, ms. */
  period: number;
  node: number;
  measure: Measure;
}

/** Uptime measures. */
export interface UptimeStore {
  /**
   * Adds measures to their minute, hour and day (see ../uptime/periods.ts for how long each is
   * kept). Cost grows with the rows, never with what is stored.
   */
  addUptime(rows: readonly UptimeRow[]): Promise<void>;
  /** A domain's stored periods at one resolution from `from` to `to` (ms), each node apart. */
  readUptime(domain: string, resolution: Resolution, from: number, to: number): Promise<UptimePoint[]>;
  /** Drops a domain's measures (its deletion: a later owner of the name must not see them). */
  deleteUptime(domain: string): Promise<void>;
}

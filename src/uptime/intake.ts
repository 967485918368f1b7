// Takes an edge's report: its measures into the store (minute, hour, day), its verdicts to the
// health tracker — only those that differ from what this process last stored, so that a report
// of 10,000 unchanged domains costs one batched write of measures and nothing more.
import type { Logger } from 'pino';
import type { Store, UptimeRow } from '../store/types.ts';
import type { HealthTracker } from './health-tracker.ts';
import { RETENTION_MS } from '../model/uptime-periods.ts';
import { isMeasure } from '../model/uptime-measure.ts';
import type { UptimeReport } from './report.ts';
import { byLabel, family, single, type MetricsSnapshot } from '../common/metrics/family.ts';

const REPORTS = family({ name: 'palisade_uptime_reports_total', type: 'counter', help: 'Edge reports taken.' });
const MEASURES = family({ name: 'palisade_uptime_measures_total', type: 'counter', help: 'Measures (a domain, a node, a minute) stored, and ignored (outside the retention or the clock).', labels: ['outcome'] });
const DUPLICATE_REPORTS = family({ name: 'palisade_uptime_duplicate_reports_total', type: 'counter', help: 'Reports sent again after they were taken (counted once).' });
const VERDICTS = family({ name: 'palisade_uptime_verdicts_total', type: 'counter', help: "Changed verdicts of a node on a domain's backend." });

/**
 * A node's clock may be this far ahead; measures older than the hour retention are dropped (an
 * edge back after an hour away still adds its measures to their hours and days).
 */
const FUTURE_MS = 2 * 60_000;
/** Verdicts in flight per report: the store batches concurrent writes (LMDB: one commit; Redis: pipelined round trips). */
const VERDICT_CONCURRENCY = 32;
/** Report ids remembered per node (an edge keeps at most 30 reports to send again). */
const REMEMBERED = 64;

export class UptimeIntake {
  readonly counts = { reports: 0, measures: 0, ignored: 0, verdicts: 0, duplicates: 0 };

  constructor(
    private readonly store: Store,
    private readonly tracker: HealthTracker,
    private readonly log: Logger,
  ) {}

  async accept(node: number, report: UptimeReport): Promise<{ measures: number; ignored: number; verdicts: number; duplicate: boolean }> {
    await this.tracker.heard(node);
    if (report.id !== undefined && (await this.seenBefore(node, report.id))) {
      this.counts.duplicates++;
      return { measures: 0, ignored: 0, verdicts: 0, duplicate: true };
    }
    const now = Date.now();
    const rows: UptimeRow[] = [];
    let ignored = 0;
    const changed: Array<{ domain: string; state: UptimeReport['rows'][number]['state'] }> = [];
    for (const row of report.rows) {
      for (const { minute, ...measure } of row.measures) {
        // The schema bounds shapes; this also holds counts to their sense (passed ≤ made) and bucket indexes to the bounds.
        if (minute < now - RETENTION_MS.hour || minute > now + FUTURE_MS || !isMeasure(measure)) ignored++;
        else rows.push({ domain: row.domain, node, minute, measure });
      }
      if (!this.tracker.isKnown(row.domain, node, row.state)) changed.push(row);
    }
    await this.store.addUptime(rows);
    // Verdicts a few at a time: each is a read-decide-write of one domain's document.
    let next = 0;
    const worker = async () => {
      while (next < changed.length) {
        const { domain, state } = changed[next++]!;
        await this.tracker.verdict(domain, node, state).catch((error: unknown) => this.log.warn({ err: (error as Error).message, domain, node }, 'uptime: a verdict was not recorded; the next report brings it again'));
      }
    };
    await Promise.all(Array.from({ length: Math.min(VERDICT_CONCURRENCY, changed.length) }, worker));
    this.counts.reports++;
    this.counts.measures += rows.length;
    this.counts.ignored += ignored;
    this.counts.verdicts += changed.length;
    return { measures: rows.length, ignored, verdicts: changed.length, duplicate: false };
  }

  /**
   * Whether the node's report was taken already (its answer lost, the edge sending it again):
   * the node's last REMEMBERED report ids, checked and added in one atomic step.
   */
  private async seenBefore(node: number, id: string): Promise<boolean> {
    const { before } = await this.store.updateDoc<{ ids: string[] }>('health', `reports|${node}`, (doc) =>
      doc?.ids.includes(id) ? undefined : { ids: [...(doc?.ids ?? []).slice(-(REMEMBERED - 1)), id] },
    );
    return before?.ids.includes(id) ?? false;
  }

  metrics(): MetricsSnapshot {
    const c = this.counts;
    return [
      single(REPORTS, c.reports),
      byLabel(MEASURES, [
        ['stored', c.measures],
        ['ignored', c.ignored],
      ]),
      single(DUPLICATE_REPORTS, c.duplicates),
      single(VERDICTS, c.verdicts),
    ];
  }
}

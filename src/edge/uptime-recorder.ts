// What an edge measures of its domains' backends, minute by minute, until it is reported: each
// active check (per backend, shared by the domains naming it) and each proxied request (per
// domain). A report takes everything gathered since the last one (a minute may be reported in
// parts: the API adds them up) with each watched domain's state as this edge sees it now.
// Memory: one small measure per backend and per domain with traffic, per minute not yet reported.
// The edge role's workers measure requests and hand them to their primary (takeRequests →
// addRequests), which makes the checks and the reports.
import { randomUUID } from 'node:crypto';
import type { BackendHealth, HealthObserver } from './backend-health.ts';
import type { RoutingTable } from './routing.ts';
import type { UpstreamOutcome } from './edge-metrics.ts';
import { addSample, emptyMeasure, mergeInto, type Measure } from '../model/uptime-measure.ts';
import { periodStart } from '../model/uptime-periods.ts';
import type { DomainHealth, UptimeReport } from '../uptime/report.ts';

export type Minutes = Map<number, Measure>;

export class UptimeRecorder implements HealthObserver {
  private checks = new Map<string, Minutes>();
  private requests = new Map<string, Minutes>();
  /** Called when a backend goes down or comes back: the state should be reported at once. */
  onSwitch: (() => void) | undefined;

  constructor(
    private readonly routes: RoutingTable,
    private readonly health: BackendHealth,
  ) {}

  checked(backend: string, ok: boolean, ms: number): void {
    const measure = slot(this.checks, backend);
    measure.c++;
    if (ok) {
      measure.u++;
      addSample(measure.ch, ms);
    }
  }

  switched(): void {
    this.onSwitch?.();
  }

  requested(domain: string, outcome: UpstreamOutcome, ms: number | undefined): void {
    const measure = slot(this.requests, domain);
    measure.r++;
    if (outcome === 'ok') measure.o++;
    if (ms !== undefined) addSample(measure.rh, ms);
  }

  /** The request measures gathered so far, taken away (a worker's, for its primary). */
  takeRequests(): Map<string, Minutes> {
    const taken = this.requests;
    this.requests = new Map();
    return taken;
  }

  /** Request measures gathered by another process (a worker), added to what the next report takes. */
  addRequests(requests: Map<string, Minutes>): void {
    for (const [domain, minutes] of requests) {
      let into = this.requests.get(domain);
      if (!into) this.requests.set(domain, (into = new Map()));
      for (const [minute, measure] of minutes) into.set(minute, mergeInto(into.get(minute) ?? emptyMeasure(), measure));
    }
  }

  /** How the domain's backend is, seen from here. */
  stateOf(backend: string, failover: string | null): DomainHealth {
    if (!this.health.isDownText(backend)) return 'up';
    return failover !== null && !this.health.isDownText(failover) ? 'failover' : 'down';
  }

  /** Everything gathered since the last call, for every watched domain, and the current states. */
  drain(): UptimeReport {
    const checks = this.checks;
    const requests = this.requests;
    this.checks = new Map();
    this.requests = new Map();
    const rows: UptimeReport['rows'] = [];
    for (const domain of this.routes.watched()) {
      const minutes = new Map<number, Measure>();
      for (const source of [checks.get(domain.backend), requests.get(domain.domain)]) {
        for (const [minute, measure] of source ?? []) {
          const into = minutes.get(minute);
          minutes.set(minute, mergeInto(into ?? emptyMeasure(), measure));
        }
      }
      rows.push({ domain: domain.domain, state: this.stateOf(domain.backend, domain.failover), measures: [...minutes].map(([minute, measure]) => ({ minute, ...measure })) });
    }
    // The id stays with the report when it is sent again: the API counts it once.
    return { id: randomUUID(), rows };
  }
}

function slot(map: Map<string, Minutes>, key: string): Measure {
  const minute = periodStart('minute', Date.now());
  let minutes = map.get(key);
  if (!minutes) map.set(key, (minutes = new Map()));
  let measure = minutes.get(minute);
  if (!measure) minutes.set(minute, (measure = emptyMeasure()));
  return measure;
}

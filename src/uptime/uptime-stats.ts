// GET /domains/{domain}/uptime from the stored periods: per resolution a row per period (newest
// last; periods without measures are there with null figures, so charts keep their time axis),
// each with the nodes' figures added up and apart, and a summary of the whole window. Pure.
import { emptyMeasure, mergeInto, quantile, type Measure } from '../model/uptime-measure.ts';
import { PERIOD_MS, periodStart, RESOLUTIONS, SHOWN, type Resolution } from '../model/uptime-periods.ts';
import type { UptimePoint } from '../store/types.ts';
import type { HealthDoc } from './health-rules.ts';

export interface Figures {
  /** Share of active checks that passed, in % (of answered requests when no check was made); null without measures. */
  availability: number | null;
  checks: number;
  checks_failed: number;
  requests: number;
  requests_failed: number;
  /** Time to the backend's response headers, proxied requests, ms. */
  response_ms: { p50: number | null; p95: number | null; p99: number | null };
  /** Time to connect, active checks, ms. */
  connect_ms: { p50: number | null; p95: number | null; p99: number | null };
}

export function figuresOf(m: Measure): Figures {
  const availability = m.c > 0 ? (100 * m.u) / m.c : m.r > 0 ? (100 * m.o) / m.r : null;
  return {
    availability: availability === null ? null : Math.round(availability * 1000) / 1000,
    checks: m.c,
    checks_failed: m.c - m.u,
    requests: m.r,
    requests_failed: m.r - m.o,
    response_ms: { p50: quantile(m.rh, 0.5), p95: quantile(m.rh, 0.95), p99: quantile(m.rh, 0.99) },
    connect_ms: { p50: quantile(m.ch, 0.5), p95: quantile(m.ch, 0.95), p99: quantile(m.ch, 0.99) },
  };
}

export interface PeriodRow extends Figures {
  start: string;
  nodes: Record<string, Figures>;
}

export interface Window {
  resolution: Resolution;
  from: string;
  summary: Figures & { nodes: Record<string, Figures> };
  periods: PeriodRow[];
}

/** The first period shown at a resolution (`SHOWN` periods, the current one last), not before `notBefore`. */
export function windowStart(resolution: Resolution, now: number, notBefore: number): number {
  return Math.max(periodStart(resolution, now) - (SHOWN[resolution] - 1) * PERIOD_MS[resolution], periodStart(resolution, notBefore));
}

export function windowOf(resolution: Resolution, points: readonly UptimePoint[], from: number, now: number): Window {
  const byPeriod = new Map<number, UptimePoint[]>();
  for (const point of points) {
    if (point.period < from) continue;
    const list = byPeriod.get(point.period);
    if (list) list.push(point);
    else byPeriod.set(point.period, [point]);
  }
  const total = emptyMeasure();
  const perNode = new Map<number, Measure>();
  const periods: PeriodRow[] = [];
  for (let start = from; start <= now; start += PERIOD_MS[resolution]) {
    const here = byPeriod.get(start) ?? [];
    const sum = emptyMeasure();
    const nodes: Record<string, Figures> = {};
    for (const { node, measure } of here) {
      mergeInto(sum, measure);
      nodes[node] = figuresOf(measure);
      mergeInto(perNode.get(node) ?? perNode.set(node, emptyMeasure()).get(node)!, measure);
    }
    mergeInto(total, sum);
    periods.push({ start: new Date(start).toISOString(), ...figuresOf(sum), nodes });
  }
  const nodes: Record<string, Figures> = {};
  for (const [node, measure] of perNode) nodes[node] = figuresOf(measure);
  return { resolution, from: new Date(from).toISOString(), summary: { ...figuresOf(total), nodes }, periods };
}

export interface UptimeJson {
  domain: string;
  /** up, down, failover, or unknown before any edge reported. */
  state: 'up' | 'down' | 'failover' | 'unknown';
  since: string | null;
  flapping: boolean;
  nodes: Record<string, { state: string; since: string }>;
  minute: Window;
  hour: Window;
  day: Window;
}

export function uptimeJson(domain: string, health: HealthDoc | undefined, windows: Record<Resolution, Window>): UptimeJson {
  const nodes: UptimeJson['nodes'] = {};
  for (const [node, v] of Object.entries(health?.nodes ?? {})) nodes[node] = { state: v.state, since: new Date(v.since).toISOString() };
  return {
    domain,
    state: health?.state ?? 'unknown',
    since: health ? new Date(health.since).toISOString() : null,
    flapping: health?.flapping ?? false,
    nodes,
    ...(Object.fromEntries(RESOLUTIONS.map((r) => [r, windows[r]])) as Record<Resolution, Window>),
  };
}

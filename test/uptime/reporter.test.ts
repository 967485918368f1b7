// The edge's reporter with the API away: what it gathered is kept (bounded) and sent in order once
// the API answers again, each report with the id it had, so the API counts a resent report once.
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { BackendHealth } from '../../src/edge/backend-health.ts';
import { RoutingTable } from '../../src/edge/routing.ts';
import { UptimeRecorder } from '../../src/edge/uptime-recorder.ts';
import { UptimeReporter } from '../../src/edge/uptime-reporter.ts';
import type { UptimeReport } from '../../src/uptime/report.ts';

describe('uptime reports while the API is away', () => {
  it('keeps them, at most 30, and sends them in order with their ids once it answers', async () => {
    const log = pino({ level: 'silent' });
    const recorder = new UptimeRecorder(new RoutingTable(), new BackendHealth(log));
    const attempts: string[] = [];
    const taken: UptimeReport[] = [];
    let apiUp = false;
    const reporter = new UptimeReporter(
      recorder,
      async (report) => {
        attempts.push(report.id!);
        if (!apiUp) throw new Error('ECONNREFUSED');
        taken.push(report);
      },
      3_600_000,
      log,
    );
    // A short absence: nothing lost, the first report resent with the id it had, then the rest in order.
    for (let i = 0; i < 5; i++) await reporter.flush();
    expect(new Set(attempts)).toEqual(new Set([attempts[0]]));
    apiUp = true;
    await reporter.flush();
    expect(taken).toHaveLength(6);
    expect(taken[0]!.id).toBe(attempts[0]);
    expect(new Set(taken.map((r) => r.id)).size).toBe(6);
    // A long one: at most 30 kept, the oldest dropped and counted.
    apiUp = false;
    for (let i = 0; i < 40; i++) await reporter.flush();
    apiUp = true;
    await reporter.flush();
    expect(taken).toHaveLength(36);
    expect(reporter.sent).toBe(36);
    expect(reporter.dropped).toBe(11);
  });
});

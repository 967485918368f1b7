// The Store contract, uptime measures: run against every adapter by index.ts.
import { expect, it } from 'vitest';
import { type OpenStore } from './helpers.ts';

export function uptimeContract(open: OpenStore): void {
  it('keeps uptime measures per minute, hour and day, node by node, adding parts of a period up', async () => {
    const { store } = await open();
    const now = Date.now();
    const minute = now - (now % 60_000);
    const m = (c: number, u: number, ch: Record<string, number> = {}) => ({ c, u, r: 2, o: 1, ch, rh: { 5: 2 } });
    await store.addUptime([
      { domain: 'up.example', node: 1, minute, measure: m(10, 9, { 3: 9 }) },
      { domain: 'up.example', node: 1, minute, measure: m(2, 2, { 3: 1, 4: 1 }) },
      { domain: 'up.example', node: 2, minute, measure: m(5, 0) },
      { domain: 'up.example', node: 1, minute: minute - 60_000, measure: m(12, 12) },
      { domain: 'other.example', node: 1, minute, measure: m(1, 1) },
    ]);
    const minutes = await store.readUptime('up.example', 'minute', minute - 3_600_000, now);
    const at = (period: number, node: number) => minutes.find((p) => p.period === period && p.node === node)?.measure;
    expect(at(minute, 1)).toEqual({ c: 12, u: 11, r: 4, o: 2, ch: { 3: 10, 4: 1 }, rh: { 5: 4 } });
    expect(at(minute, 2)).toEqual({ c: 5, u: 0, r: 2, o: 1, ch: {}, rh: { 5: 2 } });
    expect(at(minute - 60_000, 1)).toMatchObject({ c: 12, u: 12 });
    expect(minutes).toHaveLength(3);
    const day = await store.readUptime('up.example', 'day', now - 86_400_000 * 30, now);
    const today = day.filter((p) => p.node === 1);
    expect(today.reduce((n, p) => n + p.measure.c, 0)).toBe(24);
    expect((await store.readUptime('up.example', 'hour', now - 86_400_000, now)).reduce((n, p) => n + p.measure.c, 0)).toBe(29);
    // A domain's removal takes its measures; another domain's stay.
    await store.deleteUptime('up.example');
    for (const resolution of ['minute', 'hour', 'day'] as const) expect(await store.readUptime('up.example', resolution, 0, now)).toEqual([]);
    expect(await store.readUptime('other.example', 'minute', minute, now)).toHaveLength(1);
  });

  it('keeps uptime measures no longer than their retention', async () => {
    const { store } = await open();
    const now = Date.now();
    const minute = now - (now % 60_000);
    const m = { c: 1, u: 1, r: 0, o: 0, ch: {}, rh: {} };
    // Three hours back is past the minute retention (65 minutes): not read, and dropped at the next new minute.
    await store.addUptime([{ domain: 'old.example', node: 1, minute: minute - 3 * 3_600_000, measure: m }]);
    await store.addUptime([{ domain: 'old.example', node: 1, minute, measure: m }]);
    const minutes = await store.readUptime('old.example', 'minute', 0, now);
    expect(minutes.map((p) => p.period)).toEqual([minute]);
  });
}

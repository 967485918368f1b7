// The Store contract, change-feed consumers: run against every adapter by index.ts.
import { expect, it } from 'vitest';
import { type OpenStore } from './helpers.ts';

export function consumersContract(open: OpenStore): void {
  it('registers change-feed consumers, found by token hash only', async () => {
    const { store } = await open();
    const before = await store.currentRevision();
    const c = await store.createConsumer({ name: 'ns1', url: 'http://127.0.0.1:9/notify', tokenHash: '12'.repeat(32), secret: 's3cret' });
    expect(await store.currentRevision()).toBe(before + 1);
    expect((await store.findConsumerByTokenHash('12'.repeat(32)))?.name).toBe('ns1');
    expect(await store.findConsumerByTokenHash('34'.repeat(32))).toBeUndefined();
    expect((await store.listConsumers()).map((x) => x.id)).toEqual([c.id]);
    expect(await store.deleteConsumer(c.id)).toBe(true);
    expect(await store.deleteConsumer(c.id)).toBe(false);
    expect(await store.findConsumerByTokenHash('12'.repeat(32))).toBeUndefined();
    await store.close();
  });
}

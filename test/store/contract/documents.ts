// The Store contract, internal documents and leases: run against every adapter by index.ts.
import { expect, it } from 'vitest';
import { type OpenStore } from './helpers.ts';

export function documentsContract(open: OpenStore): void {
  it('internal documents: durable, listed in id order by prefix, no revision spent; a lease has one holder at a time', async () => {
    const { store, reopen } = await open();
    const before = await store.currentRevision();
    for (const id of ['2/b.example', '1/a.example', '10/c.example', '1/z.example', '1/m.example']) await store.putDoc('task', id, { id, n: 1 });
    await store.putDoc('task', '1/a.example', { id: '1/a.example', n: 2 });
    expect(await store.getDoc('task', '1/a.example')).toEqual({ id: '1/a.example', n: 2 });
    expect(await store.getDoc('task', '3/none.example')).toBeUndefined();
    expect(await store.getDoc('acme', '1/a.example')).toBeUndefined();
    const ids: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await store.listDocs<{ id: string }>('task', { limit: 2, cursor }, '1/');
      for (const item of page.items) {
        expect(item.value.id).toBe(item.id);
        ids.push(item.id);
      }
      cursor = page.next;
    } while (cursor);
    expect(ids).toEqual(['1/a.example', '1/m.example', '1/z.example']);
    expect((await store.listDocs('task', { limit: 10 })).items.map((d) => d.id)).toEqual(['1/a.example', '1/m.example', '1/z.example', '10/c.example', '2/b.example']);
    expect(await store.deleteDoc('task', '1/m.example')).toBe(true);
    expect(await store.deleteDoc('task', '1/m.example')).toBe(false);
    expect(await store.currentRevision()).toBe(before);

    expect(await store.tryLease('certs', 'one', 60_000)).toBe(true);
    expect(await store.tryLease('certs', 'two', 60_000)).toBe(false);
    expect(await store.tryLease('certs', 'one', 60_000)).toBe(true);
    expect(await store.tryLease('certs', 'two', 60_000)).toBe(false);
    expect(await store.tryLease('other', 'two', 60_000)).toBe(true);
    // An expired lease is free for the next holder.
    expect(await store.tryLease('short', 'one', 50)).toBe(true);
    await new Promise((r) => setTimeout(r, 120));
    expect(await store.tryLease('short', 'two', 60_000)).toBe(true);
    if (reopen) {
      const again = await reopen();
      expect(await again.getDoc('task', '1/a.example')).toEqual({ id: '1/a.example', n: 2 });
    }
  });

  it('updates a document atomically: concurrent read-decide-writes lose no step, undefined leaves it alone', async () => {
    const { store } = await open();
    const before = await store.currentRevision();
    const bump = () => store.updateDoc<{ n: number }>('health', 'counter', (doc) => ({ n: (doc?.n ?? 0) + 1 }));
    await Promise.all(Array.from({ length: 40 }, bump));
    expect(await store.getDoc('health', 'counter')).toEqual({ n: 40 });
    const same = await store.updateDoc<{ n: number }>('health', 'counter', () => undefined);
    expect(same.before).toEqual({ n: 40 });
    expect(same.after).toBe(same.before);
    const made = await store.updateDoc<{ n: number }>('health', 'fresh', (doc) => (doc ? undefined : { n: 1 }));
    expect(made).toEqual({ before: undefined, after: { n: 1 } });
    // The callback gets a copy: changing it in place changes nothing stored.
    await store.updateDoc<{ n: number }>('health', 'fresh', (doc) => {
      doc!.n = 99;
      return undefined;
    });
    expect(await store.getDoc('health', 'fresh')).toEqual({ n: 1 });
    expect((await store.listDocs('health', { limit: 10 })).items.map((d) => d.id)).toEqual(['counter', 'fresh']);
    expect(await store.currentRevision()).toBe(before);
  });
}

// The Store contract, edge nodes: run against every adapter by index.ts.
import { expect, it } from 'vitest';
import { expectApiError, zoneFor, type OpenStore } from './helpers.ts';

export function nodesContract(open: OpenStore): void {
  it('nodes: create, update, and no removal while a domain names them', async () => {
    const { store } = await open();
    const node = await store.createNode({ name: 'edge1', ipv4: '192.0.2.10', ipv6: null, location: 'DE', status: 'active' });
    const u = await store.createUser({ name: 'i', email: 'i@example.org' });
    await store.createZone((ctx) => {
      const z = zoneFor('bound.example', u.id, ctx);
      return { ...z, domain: { ...z.domain, bind_node: [node.id] } };
    });
    expect((await store.updateNode(node.id, { status: 'maintenance' })).status).toBe('maintenance');
    await expectApiError(store.deleteNode(node.id), 'CONFLICT');
    await store.updateZone('bound.example', u.id, (z) => ({ ...z, domain: { ...z.domain, bind_node: [] } }));
    const list = await store.createIpList((ctx) => ({ id: ctx.id, ownerId: u.id, name: 'l', ips: [], allnodes: false, nodes: [node.id], created: ctx.now, updated: ctx.now, revision: 0 }));
    await expectApiError(store.deleteNode(node.id), 'CONFLICT');
    await store.deleteIpList(list.id, u.id);
    expect(await store.deleteNode(node.id)).toBe(true);
    expect(await store.deleteNode(node.id)).toBe(false);
    expect(await store.listNodes()).toEqual([]);
    await store.close();
  });
}

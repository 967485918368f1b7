// Operator commands: edge nodes and the change feed's consumers. Each entry is one `palisade admin`
// command (see ADMIN_USAGE in admin.ts); it reads the parsed arguments and returns what is printed.
import { randomBytes } from 'node:crypto';
import type { NodeStatus } from '../model/node.ts';
import { hashApiKey } from '../model/user.ts';
import { type AdminCommands, nodeAddress, positiveInt, refuseDuplicateNodeName, required, UsageError, validNode } from './admin-args.ts';

export const nodesCommands: AdminCommands = {
  'node add': async ({ store, values }) => {
    const node = validNode({
      id: 0,
      name: required(values.name, 'name'),
      ipv4: values.ipv4 ?? null,
      ipv6: values.ipv6 ?? null,
      location: required(values.location, 'location'),
      status: (values.status ?? 'active') as NodeStatus,
    });
    const { id: _id, ...fields } = node;
    await refuseDuplicateNodeName(store, node.name);
    return await store.createNode(fields);
  },
  'node update': async ({ store, values, arg }) => {
    const id = positiveInt(arg, 'ID');
    const current = await store.getNode(id);
    if (!current) throw new UsageError(`no node ${id}`);
    const ipv4 = nodeAddress(values.ipv4);
    const ipv6 = nodeAddress(values.ipv6);
    const node = validNode({
      ...current,
      ...(values.name !== undefined && { name: values.name }),
      ...(ipv4 !== undefined && { ipv4 }),
      ...(ipv6 !== undefined && { ipv6 }),
      ...(values.location !== undefined && { location: values.location }),
      ...(values.status !== undefined && { status: values.status as NodeStatus }),
    });
    const { id: _id, ...fields } = node;
    await refuseDuplicateNodeName(store, node.name, id);
    return await store.updateNode(id, fields);
  },
  'node remove': async ({ store, arg }) => {
    const id = positiveInt(arg, 'ID');
    if (!(await store.deleteNode(id))) throw new UsageError(`no node ${id}`);
    return { removed: id };
  },
  'node list': async ({ store }) => {
    return await store.listNodes();
  },
  'consumer add': async ({ store, values }) => {
    const url = values.url ?? null;
    if (url !== null && !/^https?:\/\/[^\s]+$/.test(url)) throw new UsageError('--url must be an http:// or https:// URL');
    const token = `nt_${randomBytes(32).toString('base64url')}`;
    const secret = randomBytes(32).toString('base64url');
    const node = values.node === undefined ? null : positiveInt(values.node, '--node');
    if (node !== null && !(await store.getNode(node))) throw new UsageError(`no node ${node}`);
    const consumer = await store.createConsumer({ name: required(values.name, 'name'), url, node, tokenHash: hashApiKey(token), secret });
    const who = node === null ? 'the name server' : `the edge of node ${node}`;
    return { id: consumer.id, name: consumer.name, url, node, token, secret, note: `shown once: ${who} needs both (Authorization: Bearer token; HMAC secret)` };
  },
  'consumer list': async ({ store }) => {
    return (await store.listConsumers()).map(({ tokenHash: _t, secret: _s, ...c }) => c);
  },
  'consumer remove': async ({ store, arg }) => {
    const id = positiveInt(arg, 'ID');
    if (!(await store.deleteConsumer(id))) throw new UsageError(`no consumer ${id}`);
    return { removed: id };
  },
};

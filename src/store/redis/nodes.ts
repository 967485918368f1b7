// Edge nodes (Redis store).
import { ApiError, notFound } from '../../errors.ts';
import type { EdgeNode } from '../../model/node.ts';
import type { NodeStore, ZoneHead } from '../types.ts';
import type { RedisCore } from './core.ts';
import type { IpListHead } from './iplists.ts';

export class RedisNodes implements NodeStore {
  constructor(private readonly core: RedisCore) {}

  async createNode(node: Omit<EdgeNode, 'id'>): Promise<EdgeNode> {
    const id = await this.core.guard(() => this.core.redis.incr(this.core.k('seq', 'node')));
    const stored: EdgeNode = { ...node, id };
    return this.core.mutate(async () => ({
      checks: [],
      ops: [
        { op: 'set', key: this.core.k('node', id), v: JSON.stringify(stored) },
        { op: 'zadd', key: this.core.k('nodes'), s: id, v: String(id) },
      ],
      change: { kind: 'node', key: String(id), op: 'put' },
      result: () => stored,
    }));
  }

  getNode(id: number): Promise<EdgeNode | undefined> {
    return this.core.guard(() => this.core.json<EdgeNode>(this.core.k('node', id)));
  }

  listNodes(): Promise<EdgeNode[]> {
    return this.core.guard(() => this.core.documents<EdgeNode>(this.core.k('nodes'), 'node'));
  }

  updateNode(id: number, patch: Partial<Omit<EdgeNode, 'id'>>): Promise<EdgeNode> {
    const key = this.core.k('node', id);
    return this.core.mutate(async () => {
      const text = await this.core.redis.get(key);
      if (text === null) throw notFound(`node ${id}`);
      const stored: EdgeNode = { ...(JSON.parse(text) as EdgeNode), ...patch, id };
      return {
        checks: [[key, text]],
        ops: [{ op: 'set', key, v: JSON.stringify(stored) }],
        change: { kind: 'node', key: String(id), op: 'put' },
        result: () => stored,
      };
    });
  }

  deleteNode(id: number): Promise<boolean> {
    const key = this.core.k('node', id);
    return this.core.mutate<boolean>(async () => {
      const text = await this.core.redis.get(key);
      if (text === null) return { unchanged: false };
      const users = await this.usedBy(id);
      if (users.length > 0) {
        throw new ApiError('CONFLICT', `node ${id} is still named by ${users.slice(0, 5).join(', ')}${users.length > 5 ? ` and ${users.length - 5} more` : ''}`);
      }
      return {
        checks: [[key, text]],
        ops: [
          { op: 'del', key },
          { op: 'zrem', key: this.core.k('nodes'), v: String(id) },
        ],
        change: { kind: 'node', key: String(id), op: 'delete' },
        result: () => true,
      };
    });
  }

  private async usedBy(nodeId: number): Promise<string[]> {
    const out: string[] = [];
    const names = await this.core.redis.zrange(this.core.k('zones'), '0', '-1');
    for (let i = 0; i < names.length; i += 500) {
      const docs = await this.core.redis.mget(names.slice(i, i + 500).map((n) => this.core.k('zone', n)));
      for (const d of docs) {
        const zone = d && (JSON.parse(d) as ZoneHead);
        if (zone && zone.domain.bind_node.includes(nodeId)) out.push(`domain ${zone.domain.domain}`);
      }
    }
    for (const list of await this.core.documents<IpListHead>(this.core.k('iplists'), 'iplist')) {
      if (!list.allnodes && list.nodes.includes(nodeId)) out.push(`IP list ${list.id}`);
    }
    return out;
  }
}

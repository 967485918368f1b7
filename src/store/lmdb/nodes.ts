// Edge nodes (embedded store).
import { ApiError, notFound } from '../../errors.ts';
import type { EdgeNode } from '../../model/node.ts';
import type { NodeStore, ZoneHead } from '../types.ts';
import { END, type LmdbCore } from './core.ts';
import type { IpListHead } from './iplists.ts';

export class LmdbNodes implements NodeStore {
  constructor(private readonly core: LmdbCore) {}

  createNode(node: Omit<EdgeNode, 'id'>): Promise<EdgeNode> {
    return this.core.commit((tx) => {
      const stored: EdgeNode = { ...node, id: tx.seq('node') };
      this.core.put(['node', stored.id], stored);
      tx.change('node', stored.id, 'put');
      return stored;
    });
  }

  async getNode(id: number): Promise<EdgeNode | undefined> {
    return this.core.get<EdgeNode>(['node', id]);
  }

  async listNodes(): Promise<EdgeNode[]> {
    return [...this.core.db.getRange({ start: ['node', 0], end: ['node', Number.MAX_SAFE_INTEGER] })].map((e) => e.value as EdgeNode);
  }

  updateNode(id: number, patch: Partial<Omit<EdgeNode, 'id'>>): Promise<EdgeNode> {
    return this.core.commit((tx) => {
      const node = this.core.get<EdgeNode>(['node', id]);
      if (!node) throw notFound(`node ${id}`);
      const stored: EdgeNode = { ...node, ...patch, id };
      this.core.put(['node', id], stored);
      tx.change('node', id, 'put');
      return stored;
    });
  }

  deleteNode(id: number): Promise<boolean> {
    return this.core.commit((tx) => {
      if (!this.core.get(['node', id])) return false;
      const users = this.usedBy(id);
      if (users.length > 0) {
        throw new ApiError('CONFLICT', `node ${id} is still named by ${users.slice(0, 5).join(', ')}${users.length > 5 ? ` and ${users.length - 5} more` : ''}`);
      }
      this.core.del(['node', id]);
      tx.change('node', id, 'delete');
      return true;
    });
  }

  /** Domains (bind_node) and IP lists (nodes) that name the node. */
  private usedBy(nodeId: number): string[] {
    const out: string[] = [];
    for (const { value } of this.core.db.getRange({ start: ['zone', ''], end: ['zone', END] })) {
      const zone = value as ZoneHead;
      if (zone.domain.bind_node.includes(nodeId)) out.push(`domain ${zone.domain.domain}`);
    }
    for (const { value } of this.core.db.getRange({ start: ['iplist', 0], end: ['iplist', Number.MAX_SAFE_INTEGER] })) {
      const list = value as IpListHead;
      if (!list.allnodes && list.nodes.includes(nodeId)) out.push(`IP list ${list.id}`);
    }
    return out;
  }
}

// Edge nodes, registered by the operator.
import type { EdgeNode } from '../../model/node.ts';

/** Edge nodes. */
export interface NodeStore {
  createNode(node: Omit<EdgeNode, 'id'>): Promise<EdgeNode>;
  getNode(id: number): Promise<EdgeNode | undefined>;
  listNodes(): Promise<EdgeNode[]>;
  updateNode(id: number, patch: Partial<Omit<EdgeNode, 'id'>>): Promise<EdgeNode>;
  /** CONFLICT while a domain or IP list still names the node. */
  deleteNode(id: number): Promise<boolean>;
}

// Change-feed consumers (name servers, edges) and how they authenticate.

/** A registered change-feed consumer (a name server, later an edge). */
export interface ConsumerState {
  id: number;
  name: string;
  /** Where commit notifications are POSTed; null = the consumer only polls. */
  url: string | null;
  /** The edge node it serves as: an edge consumer (it is fed only that node's domains); null for a name server. */
  node?: number | null;
  /** SHA-256 of its bearer token. */
  tokenHash: string;
  /** HMAC key for notifications (shared with the consumer, so kept as is). */
  secret: string;
  created: string;
}

/** Registered change-feed consumers. */
export interface ConsumerStore {
  createConsumer(input: Omit<ConsumerState, 'id' | 'created'>): Promise<ConsumerState>;
  listConsumers(): Promise<ConsumerState[]>;
  findConsumerByTokenHash(hash: string): Promise<ConsumerState | undefined>;
  deleteConsumer(id: number): Promise<boolean>;
}

// Change-feed consumers (embedded store): found by the hash of their token.
import type { ConsumerState, ConsumerStore } from '../types.ts';
import type { LmdbCore } from './core.ts';

export class LmdbConsumers implements ConsumerStore {
  constructor(private readonly core: LmdbCore) {}

  createConsumer(input: Omit<ConsumerState, 'id' | 'created'>): Promise<ConsumerState> {
    return this.core.commit((tx) => {
      const consumer: ConsumerState = { ...input, id: tx.seq('consumer'), created: tx.now };
      this.core.put(['consumer', consumer.id], consumer);
      this.core.put(['ctoken', consumer.tokenHash], consumer.id);
      tx.change('consumer', consumer.id, 'put');
      return consumer;
    });
  }

  async listConsumers(): Promise<ConsumerState[]> {
    return [...this.core.db.getRange({ start: ['consumer', 0], end: ['consumer', Number.MAX_SAFE_INTEGER] })].map((e) => e.value as ConsumerState);
  }

  async findConsumerByTokenHash(hash: string): Promise<ConsumerState | undefined> {
    const id = this.core.get<number>(['ctoken', hash]);
    return id === undefined ? undefined : this.core.get<ConsumerState>(['consumer', id]);
  }

  deleteConsumer(id: number): Promise<boolean> {
    return this.core.commit((tx) => {
      const consumer = this.core.get<ConsumerState>(['consumer', id]);
      if (!consumer) return false;
      this.core.del(['consumer', id]);
      this.core.del(['ctoken', consumer.tokenHash]);
      tx.change('consumer', id, 'delete');
      return true;
    });
  }
}

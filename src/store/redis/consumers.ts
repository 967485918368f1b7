// Change-feed consumers (Redis store): found by the hash of their token.
import type { ConsumerState, ConsumerStore } from '../types.ts';
import type { RedisCore } from './core.ts';

export class RedisConsumers implements ConsumerStore {
  constructor(private readonly core: RedisCore) {}

  async createConsumer(input: Omit<ConsumerState, 'id' | 'created'>): Promise<ConsumerState> {
    const id = await this.core.guard(() => this.core.redis.incr(this.core.k('seq', 'consumer')));
    const consumer: ConsumerState = { ...input, id, created: new Date().toISOString() };
    return this.core.mutate(async () => ({
      checks: [],
      ops: [
        { op: 'set', key: this.core.k('consumer', id), v: JSON.stringify(consumer) },
        { op: 'set', key: this.core.k('ctoken', consumer.tokenHash), v: String(id) },
        { op: 'zadd', key: this.core.k('consumers'), s: id, v: String(id) },
      ],
      change: { kind: 'consumer', key: String(id), op: 'put' },
      result: () => consumer,
    }));
  }

  listConsumers(): Promise<ConsumerState[]> {
    return this.core.guard(() => this.core.documents<ConsumerState>(this.core.k('consumers'), 'consumer'));
  }

  findConsumerByTokenHash(hash: string): Promise<ConsumerState | undefined> {
    return this.core.guard(async () => {
      const id = await this.core.redis.get(this.core.k('ctoken', hash));
      return id === null ? undefined : this.core.json<ConsumerState>(this.core.k('consumer', id));
    });
  }

  deleteConsumer(id: number): Promise<boolean> {
    const key = this.core.k('consumer', id);
    return this.core.mutate<boolean>(async () => {
      const text = await this.core.redis.get(key);
      if (text === null) return { unchanged: false };
      const consumer = JSON.parse(text) as ConsumerState;
      return {
        checks: [[key, text]],
        ops: [
          { op: 'del', key },
          { op: 'del', key: this.core.k('ctoken', consumer.tokenHash) },
          { op: 'zrem', key: this.core.k('consumers'), v: String(id) },
        ],
        change: { kind: 'consumer', key: String(id), op: 'delete' },
        result: () => true,
      };
    });
  }
}

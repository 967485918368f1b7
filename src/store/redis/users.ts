// Accounts and their API keys (Redis store).
import { ApiError, notFound } from '../../errors.ts';
import { DEFAULT_LIMITS, type ApiKeyState, type UserState } from '../../model/user.ts';
import type { UserPatch, UserStore } from '../types.ts';
import { applyUserPatch } from '../user-patch.ts';
import type { RedisCore } from './core.ts';
import type { Op } from './plan.ts';

export class RedisUsers implements UserStore {
  constructor(private readonly core: RedisCore) {}

  async createUser(input: { name: string; email: string; limits?: Partial<UserState['limits']> }): Promise<UserState> {
    const id = await this.core.guard(() => this.core.redis.incr(this.core.k('seq', 'user')));
    const user: UserState = { id, name: input.name, email: input.email, created: new Date().toISOString(), limits: { ...DEFAULT_LIMITS, ...input.limits } };
    return this.core.mutate(async () => ({
      checks: [],
      ops: [
        { op: 'set', key: this.core.k('user', id), v: JSON.stringify(user) },
        { op: 'zadd', key: this.core.k('users'), s: id, v: String(id) },
      ],
      change: { kind: 'user', key: String(id), op: 'put' },
      result: () => user,
    }));
  }

  getUser(id: number): Promise<UserState | undefined> {
    return this.core.guard(() => this.core.json<UserState>(this.core.k('user', id)));
  }

  updateUser(id: number, patch: UserPatch): Promise<UserState> {
    const key = this.core.k('user', id);
    return this.core.mutate(async () => {
      const text = await this.core.redis.get(key);
      if (text === null) throw notFound(`user ${id}`);
      const updated = applyUserPatch(JSON.parse(text) as UserState, patch);
      return {
        checks: [[key, text]],
        ops: [{ op: 'set', key, v: JSON.stringify(updated) }],
        change: { kind: 'user', key: String(id), op: 'put' },
        result: () => updated,
      };
    });
  }

  deleteUser(id: number): Promise<boolean> {
    const key = this.core.k('user', id);
    return this.core.mutate<boolean>(async () => {
      const text = await this.core.redis.get(key);
      if (text === null) return { unchanged: false };
      const [domains, lists] = await Promise.all([this.core.redis.zcard(this.core.k('udom', id)), this.core.redis.zcard(this.core.k('uipl', id))]);
      const conflict = new ApiError('CONFLICT', `user ${id} still holds ${domains} domains and ${lists} IP lists (--force removes them first)`);
      if (domains + lists > 0) throw conflict;
      const keys = await this.core.documents<ApiKeyState>(this.core.k('ukeys', id), 'apikey');
      return {
        checks: [[key, text]],
        // Refused in the script too if a domain was registered meanwhile.
        limit: { key: this.core.k('udom', id), max: 1, error: conflict },
        ops: [
          { op: 'del', key },
          { op: 'zrem', key: this.core.k('users'), v: String(id) },
          { op: 'del', key: this.core.k('ukeys', id) },
          ...keys.flatMap((k): Op[] => [
            { op: 'del', key: this.core.k('apikey', k.id) },
            { op: 'del', key: this.core.k('keyhash', k.hash) },
          ]),
        ],
        change: { kind: 'user', key: String(id), op: 'delete' },
        result: () => true,
      };
    });
  }

  listUsers(): Promise<UserState[]> {
    return this.core.guard(() => this.core.documents<UserState>(this.core.k('users'), 'user'));
  }

  async addApiKey(userId: number, hash: string, label: string): Promise<ApiKeyState> {
    if (!(await this.core.readUser(userId))) throw notFound(`user ${userId}`);
    const id = await this.core.guard(() => this.core.redis.incr(this.core.k('seq', 'apikey')));
    const key: ApiKeyState = { id, userId, hash, label, created: new Date().toISOString(), revoked: null };
    return this.core.mutate(async () => ({
      checks: [],
      ops: [
        { op: 'set', key: this.core.k('apikey', id), v: JSON.stringify(key) },
        { op: 'set', key: this.core.k('keyhash', hash), v: String(id) },
        { op: 'zadd', key: this.core.k('ukeys', userId), s: id, v: String(id) },
      ],
      change: { kind: 'user', key: String(userId), op: 'put' },
      result: () => key,
    }));
  }

  findApiKeyByHash(hash: string): Promise<ApiKeyState | undefined> {
    return this.core.guard(async () => {
      const id = await this.core.redis.get(this.core.k('keyhash', hash));
      return id === null ? undefined : this.core.json<ApiKeyState>(this.core.k('apikey', id));
    });
  }

  listApiKeys(userId: number): Promise<ApiKeyState[]> {
    return this.core.guard(() => this.core.documents<ApiKeyState>(this.core.k('ukeys', userId), 'apikey'));
  }

  revokeApiKey(keyId: number): Promise<ApiKeyState | undefined> {
    const docKey = this.core.k('apikey', keyId);
    return this.core.mutate<ApiKeyState | undefined>(async () => {
      const text = await this.core.redis.get(docKey);
      if (text === null) return { unchanged: undefined };
      const key = JSON.parse(text) as ApiKeyState;
      if (key.revoked) return { unchanged: key };
      const revoked = { ...key, revoked: new Date().toISOString() };
      return {
        checks: [[docKey, text]],
        ops: [{ op: 'set', key: docKey, v: JSON.stringify(revoked) }],
        change: { kind: 'user', key: String(key.userId), op: 'put' },
        result: () => revoked,
      };
    });
  }
}

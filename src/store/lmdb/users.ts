// Accounts and their API keys (embedded store). A user's domains and IP lists are counted from
// the owner indexes ['udom', owner, name] and ['uipl', owner, id] that zones.ts and iplists.ts keep.
import { ApiError, notFound } from '../../errors.ts';
import { DEFAULT_LIMITS, type ApiKeyState, type UserState } from '../../model/user.ts';
import type { UserPatch, UserStore } from '../types.ts';
import { applyUserPatch } from '../user-patch.ts';
import type { LmdbCore } from './core.ts';

export class LmdbUsers implements UserStore {
  constructor(private readonly core: LmdbCore) {}

  createUser(input: { name: string; email: string; limits?: Partial<UserState['limits']> }): Promise<UserState> {
    return this.core.commit((tx) => {
      const user: UserState = {
        id: tx.seq('user'),
        name: input.name,
        email: input.email,
        created: tx.now,
        limits: { ...DEFAULT_LIMITS, ...input.limits },
      };
      this.core.put(['user', user.id], user);
      tx.change('user', user.id, 'put');
      return user;
    });
  }

  async getUser(id: number): Promise<UserState | undefined> {
    return this.core.get<UserState>(['user', id]);
  }

  updateUser(id: number, patch: UserPatch): Promise<UserState> {
    return this.core.commit((tx) => {
      const user = this.core.get<UserState>(['user', id]);
      if (!user) throw notFound(`user ${id}`);
      const updated = applyUserPatch(user, patch);
      this.core.put(['user', id], updated);
      tx.change('user', id, 'put');
      return updated;
    });
  }

  deleteUser(id: number): Promise<boolean> {
    return this.core.commit((tx) => {
      if (!this.core.get<UserState>(['user', id])) return false;
      const domains = this.core.countPrefix('udom', id);
      const lists = this.core.countPrefix('uipl', id);
      if (domains + lists > 0) throw new ApiError('CONFLICT', `user ${id} still holds ${domains} domains and ${lists} IP lists (--force removes them first)`);
      for (const key of this.core.db.getKeys({ start: ['ukey', id, 0], end: ['ukey', id, Number.MAX_SAFE_INTEGER] })) {
        const apiKey = this.core.get<ApiKeyState>(['apikey', key[2] as number]);
        if (apiKey) this.core.del(['keyhash', apiKey.hash]);
        this.core.del(['apikey', key[2] as number]);
        this.core.del(key);
      }
      this.core.del(['user', id]);
      tx.change('user', id, 'delete');
      return true;
    });
  }

  async listUsers(): Promise<UserState[]> {
    return [...this.core.db.getRange({ start: ['user', 0], end: ['user', Number.MAX_SAFE_INTEGER] })].map((e) => e.value as UserState);
  }

  addApiKey(userId: number, hash: string, label: string): Promise<ApiKeyState> {
    return this.core.commit((tx) => {
      if (!this.core.get(['user', userId])) throw notFound(`user ${userId}`);
      const key: ApiKeyState = { id: tx.seq('apikey'), userId, hash, label, created: tx.now, revoked: null };
      this.core.put(['apikey', key.id], key);
      this.core.put(['keyhash', hash], key.id);
      this.core.put(['ukey', userId, key.id], 1);
      tx.change('user', userId, 'put');
      return key;
    });
  }

  async findApiKeyByHash(hash: string): Promise<ApiKeyState | undefined> {
    const id = this.core.get<number>(['keyhash', hash]);
    return id === undefined ? undefined : this.core.get<ApiKeyState>(['apikey', id]);
  }

  async listApiKeys(userId: number): Promise<ApiKeyState[]> {
    const ids = [...this.core.db.getKeys({ start: ['ukey', userId, 0], end: ['ukey', userId, Number.MAX_SAFE_INTEGER] })];
    return ids.map((k) => this.core.get<ApiKeyState>(['apikey', k[2] as number])!);
  }

  revokeApiKey(keyId: number): Promise<ApiKeyState | undefined> {
    return this.core.commit((tx) => {
      const key = this.core.get<ApiKeyState>(['apikey', keyId]);
      if (!key) return undefined;
      if (key.revoked) return key;
      const revoked = { ...key, revoked: tx.now };
      this.core.put(['apikey', keyId], revoked);
      tx.change('user', key.userId, 'put');
      return revoked;
    });
  }
}

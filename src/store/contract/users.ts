// Accounts and their API keys.
import type { ApiKeyState, Limits, UserState } from '../../model/user.ts';

export interface UserPatch {
  limits?: Partial<UserState['limits']>;
  disabled?: boolean;
  reservedZones?: boolean;
  /** The account's pair of name servers (assigned once, from the pool). */
  nameservers?: [string, string];
}

/** Accounts and API keys (keys are found by their hash only). */
export interface UserStore {
  createUser(input: { name: string; email: string; limits?: Partial<Limits> }): Promise<UserState>;
  getUser(id: number): Promise<UserState | undefined>;
  /** Changes an account's operator-set fields (limits, disabled, reserved zones, name servers); NOT_FOUND for no such user. */
  updateUser(id: number, patch: UserPatch): Promise<UserState>;
  /** Removes an account and its keys; CONFLICT while it still holds domains or IP lists. False when there is none. */
  deleteUser(id: number): Promise<boolean>;
  listUsers(): Promise<UserState[]>;
  addApiKey(userId: number, hash: string, label: string): Promise<ApiKeyState>;
  findApiKeyByHash(hash: string): Promise<ApiKeyState | undefined>;
  listApiKeys(userId: number): Promise<ApiKeyState[]>;
  /** Marks the key revoked; undefined when no such key. */
  revokeApiKey(keyId: number): Promise<ApiKeyState | undefined>;
}

// Starts the real API over HTTP on a random loopback port with its own embedded store, and
// gives tests a small fetch wrapper plus a way to make users and keys.
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/api/app.ts';
import { generateApiKey, hashApiKey, type UserState } from '../../src/model/user.ts';
import { openStore } from '../../src/store/index.ts';
import type { Store } from '../../src/store/types.ts';
import { testConfig } from './config.ts';
import { rmSync } from 'node:fs';
import { tempDir } from './temp.ts';

export interface ApiResponse<T = any> {
  status: number;
  headers: Headers;
  body: T;
  contentType: string;
}

export interface TestApi {
  url: string;
  app: FastifyInstance;
  store: Store;
  dataDir: string;
  /** A new user with its own key. */
  user(limits?: Partial<UserState['limits']>): Promise<{ user: UserState; key: string }>;
  request<T = any>(method: string, path: string, opts?: { key?: string; body?: unknown; raw?: string; headers?: Record<string, string> }): Promise<ApiResponse<T>>;
  close(): Promise<void>;
}

let users = 0;

export async function startApi(env: Record<string, string> = {}): Promise<TestApi> {
  const dataDir = tempDir();
  const config = testConfig(dataDir, env);
  const store = openStore({ dataDir, changeRetention: config.changeRetention });
  const app = await buildApp({ store, config, logger: false });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address();
  if (!address || typeof address === 'string') throw new Error('API did not bind a TCP port');
  const url = `http://127.0.0.1:${address.port}`;
  return {
    url,
    app,
    store,
    dataDir,
    async user(limits) {
      users += 1;
      const user = await store.createUser({ name: `user${users}`, email: `user${users}@example.org`, limits });
      const key = generateApiKey();
      await store.addApiKey(user.id, hashApiKey(key), 'test');
      return { user, key };
    },
    async request(method, path, opts = {}) {
      const headers: Record<string, string> = { ...opts.headers };
      if (opts.key !== undefined) headers['x-auth-key'] = opts.key;
      let body: string | undefined = opts.raw;
      if (opts.body !== undefined) {
        body = JSON.stringify(opts.body);
        headers['content-type'] ??= 'application/json';
      }
      const res = await fetch(url + path, { method, headers, body });
      const text = await res.text();
      const contentType = res.headers.get('content-type') ?? '';
      return { status: res.status, headers: res.headers, contentType, body: text && contentType.includes('json') && !contentType.includes('ndjson') ? JSON.parse(text) : text };
    },
    async close() {
      await app.close();
      await store.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}


// X-Auth-Key authentication for every route registered inside this plugin's scope. Keys are
// looked up by their SHA-256 (the store never holds a key) and the stored hash is compared again
// in constant time. Missing, unknown and revoked keys all answer the same 401.
import { timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { ApiError } from '../../errors.ts';
import { hashApiKey, type UserState } from '../../model/user.ts';
import { checksCredentials } from './rate-limit.ts';

declare module 'fastify' {
  interface FastifyRequest {
    user: UserState;
  }
}

const KEY_SHAPE = /^[\x21-\x7e]{8,256}$/;

async function authenticate(app: FastifyInstance, request: FastifyRequest): Promise<{ user: UserState; keyId: number }> {
  const header = request.headers['x-auth-key'];
  const key = Array.isArray(header) ? undefined : header;
  if (!key) throw new ApiError('UNAUTHORIZED', 'send your API key in the X-Auth-Key header');
  if (!KEY_SHAPE.test(key)) throw new ApiError('UNAUTHORIZED', 'the X-Auth-Key is not valid');
  const hash = hashApiKey(key);
  const stored = await app.store.findApiKeyByHash(hash);
  const matches = stored !== undefined && timingSafeEqual(Buffer.from(stored.hash, 'hex'), Buffer.from(hash, 'hex'));
  if (!stored || !matches || stored.revoked) throw new ApiError('UNAUTHORIZED', 'the X-Auth-Key is not valid');
  const user = await app.store.getUser(stored.userId);
  if (!user) throw new ApiError('UNAUTHORIZED', 'the X-Auth-Key is not valid');
  if (user.disabled) throw new ApiError('UNAUTHORIZED', 'the account of this X-Auth-Key is disabled; contact the operator');
  return { user, keyId: stored.id };
}

/** Adds `request.user` to every request of the enclosing scope. */
export const authPlugin = fp(
  async (app: FastifyInstance) => {
    app.decorateRequest('user', null as unknown as UserState);
    checksCredentials(app);
    app.addHook('onRequest', async (request) => {
      const { user, keyId } = await authenticate(app, request);
      const limited = app.rateLimits.chargeKey(request, keyId, user.id);
      if (limited) throw limited;
      request.user = user;
    });
  },
  { name: 'palisade-auth' },
);

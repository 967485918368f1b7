// Rate limits, per client address for requests without credentials and for failed
// authentications, per API key for authenticated requests (token buckets, see config). Every
// limited response carries the IETF RateLimit-Policy and RateLimit fields
// (draft-ietf-httpapi-ratelimit-headers); a refusal is a 429 problem with Retry-After.
// /healthz is never limited and touches nothing: load balancers probe it all day.
// Limits are per process: N API replicas behind a balancer allow up to N times as much.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import type { ApiRateLimits } from '../../config.ts';
import { ApiError } from '../../errors.ts';
import { rateLimitAddress } from '../client-address.ts';
import { TokenBuckets, type Taken } from '../token-buckets.ts';

interface Charged {
  policy: 'address' | 'key';
  buckets: TokenBuckets;
  taken: Taken;
}

declare module 'fastify' {
  interface FastifyRequest {
    rateLimited: Charged | null;
  }
  interface FastifyInstance {
    rateLimits: {
      /** After a successful authentication: one token from the key's bucket, or a 429 to throw. */
      chargeKey(request: FastifyRequest, keyId: number): ApiError | undefined;
      /** After a failed authentication: one token from the address's bucket, or a 429 to answer instead. */
      chargeFailure(request: FastifyRequest): ApiError | undefined;
    };
  }
}

const UNLIMITED = new Set(['/healthz']);

function refusal(charged: Charged): ApiError {
  const who = charged.policy === 'key' ? 'this API key' : 'your address (requests without a valid key)';
  const error = new ApiError('RATE_LIMITED', `too many requests from ${who}; retry after ${charged.taken.retryAfter} s`);
  error.retryAfter = charged.taken.retryAfter;
  return error;
}

export const rateLimitPlugin = fp(
  async (app: FastifyInstance, limits: ApiRateLimits) => {
    const byAddress = limits.address && new TokenBuckets(limits.address);
    const byKey = limits.key && new TokenBuckets(limits.key);
    app.decorateRequest('rateLimited', null);

    const charge = (request: FastifyRequest, policy: Charged['policy'], buckets: TokenBuckets | null, key: string): ApiError | undefined => {
      if (!buckets) return undefined;
      const charged: Charged = { policy, buckets, taken: buckets.take(key, performance.now()) };
      request.rateLimited = charged;
      return charged.taken.allowed ? undefined : refusal(charged);
    };

    app.decorate('rateLimits', {
      chargeKey: (request: FastifyRequest, keyId: number) => charge(request, 'key', byKey, String(keyId)),
      chargeFailure: (request: FastifyRequest) =>
        request.rateLimited?.policy === 'address' ? undefined : charge(request, 'address', byAddress, rateLimitAddress(request.ip)),
    });

    app.addHook('onRequest', async (request) => {
      if (UNLIMITED.has(request.url.split('?')[0]!)) return;
      // Requests with credentials are charged once those are checked: to the key if they hold,
      // to the address if they do not (so a flood of bad keys cannot lock out a valid key).
      if (request.headers['x-auth-key'] !== undefined || request.headers.authorization !== undefined) return;
      const refused = charge(request, 'address', byAddress, rateLimitAddress(request.ip));
      if (refused) throw refused;
    });

    app.addHook('onSend', async (request, reply) => {
      const charged = request.rateLimited;
      if (!charged) return;
      const { rate, burst } = charged.buckets.policy;
      void reply.header('ratelimit-policy', `"${charged.policy}";q=${burst};w=${Math.max(1, Math.ceil(burst / rate))}`);
      void reply.header('ratelimit', `"${charged.policy}";r=${charged.taken.remaining};t=${charged.taken.allowed ? charged.taken.reset : charged.taken.retryAfter}`);
    });
  },
  { name: 'palisade-rate-limit' },
);

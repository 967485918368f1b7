// Rate limits (token buckets, see config): per client address for every request whose
// credential is not proven valid — requests to routes that take none (documents, probes,
// /metrics without its token), requests without credentials, failed authentications and
// requests for no route; per API key and per account (all its keys together) for requests with a
// valid key. Every limited response carries the IETF RateLimit-Policy and RateLimit fields
// (draft-ietf-httpapi-ratelimit-headers) of the nearest limit; a refusal is a 429 problem with
// Retry-After.
// A credential header exempts nothing by itself: only on a route that checks credentials is the
// charge put off until the check (so a flood of bad keys from an address cannot lock out a valid
// key from it), and a credential that fails is charged to the address then.
// /healthz is never limited: load balancers probe it all day.
// Limits are per process: N API replicas behind a balancer allow up to N times as much.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import type { ApiRateLimits } from '../../config.ts';
import { ApiError } from '../../errors.ts';
import { rateLimitAddress } from '../client-address.ts';
import { TokenBuckets, type Taken } from '../token-buckets.ts';

type Policy = 'address' | 'key' | 'account';

interface Charged {
  policy: Policy;
  buckets: TokenBuckets;
  taken: Taken;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route checks a credential (an API key, a consumer or operator token) before it answers. */
    credentials?: boolean;
  }
  interface FastifyRequest {
    rateLimited: Charged | null;
  }
  interface FastifyInstance {
    rateLimits: {
      /** After a successful authentication: one token from the key's and the account's buckets, or a 429 to throw. */
      chargeKey(request: FastifyRequest, keyId: number, accountId: number): ApiError | undefined;
      /** After a failed authentication: one token from the address's bucket, or a 429 to answer instead. */
      chargeFailure(request: FastifyRequest): ApiError | undefined;
    };
  }
}

/**
 * Marks every route registered after it in `app`'s scope (and its children) as checking a
 * credential: a request that carries one is charged once the check is done (to the key and its
 * account if it holds, to the address if not). Call it where the check's hook is added.
 */
export function checksCredentials(app: FastifyInstance): void {
  app.addHook('onRoute', (route) => {
    route.config = { ...route.config, credentials: true };
  });
}

const UNLIMITED = new Set(['/healthz']);

const WHO: Record<Policy, string> = {
  address: 'your address (requests without a valid key)',
  key: 'this API key',
  account: "this API key's account (all its keys together)",
};

function refusal(charged: Charged): ApiError {
  const error = new ApiError('RATE_LIMITED', `too many requests from ${WHO[charged.policy]}; retry after ${charged.taken.retryAfter} s`);
  error.retryAfter = charged.taken.retryAfter;
  return error;
}

/** Carries a credential a route could check (an API key, a bearer token, anything in Authorization). */
const carriesCredentials = (request: FastifyRequest) => request.headers['x-auth-key'] !== undefined || request.headers.authorization !== undefined;

export const rateLimitPlugin = fp(
  async (app: FastifyInstance, limits: ApiRateLimits) => {
    const byAddress = limits.address && new TokenBuckets(limits.address);
    const byKey = limits.key && new TokenBuckets(limits.key);
    const byAccount = limits.account && new TokenBuckets(limits.account);
    app.decorateRequest('rateLimited', null);

    const take = (policy: Policy, buckets: TokenBuckets, key: string): Charged => ({ policy, buckets, taken: buckets.take(key, performance.now()) });
    const chargeAddress = (request: FastifyRequest): ApiError | undefined => {
      if (!byAddress) return undefined;
      const charged = take('address', byAddress, rateLimitAddress(request.ip));
      request.rateLimited = charged;
      return charged.taken.allowed ? undefined : refusal(charged);
    };

    app.decorate('rateLimits', {
      chargeKey: (request: FastifyRequest, keyId: number, accountId: number) => {
        const key = byKey ? take('key', byKey, String(keyId)) : undefined;
        if (key && !key.taken.allowed) {
          request.rateLimited = key;
          return refusal(key);
        }
        const account = byAccount ? take('account', byAccount, String(accountId)) : undefined;
        if (account && !account.taken.allowed) {
          // The key is not charged for a request its account's limit refused.
          if (key) byKey!.giveBack(String(keyId));
          request.rateLimited = account;
          return refusal(account);
        }
        // The fields describe the nearer of the two limits.
        request.rateLimited = key && account ? (account.taken.remaining < key.taken.remaining ? account : key) : (key ?? account ?? null);
        return undefined;
      },
      chargeFailure: (request: FastifyRequest) => (request.rateLimited?.policy === 'address' ? undefined : chargeAddress(request)),
    });

    app.addHook('onRequest', async (request) => {
      if (UNLIMITED.has(request.routeOptions.url ?? '')) return;
      // On a route that checks credentials, a request carrying one is charged once it is checked.
      if (request.routeOptions.config.credentials && carriesCredentials(request)) return;
      const refused = chargeAddress(request);
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

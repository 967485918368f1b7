// DNSSEC from the customer's side:
//   GET /domains/{domain}/dnssec   the state, the algorithm, and per key its DNSKEY and DS
// and `withSigningKeys()`, which the domain routes call inside a create's or change's atomic
// step: turning `dnssec` on makes the zone's signing key, its private key sealed with the
// operator key before it is stored (it leaves the API only for name servers: ../../sync/name-server-domain.ts).
import type { FastifyInstance } from 'fastify';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ApiError } from '../../errors.ts';
import type { DnssecAlgorithm, ZoneSigning } from '../../model/dnssec.ts';
import { makeSigningKey } from '../../model/dnssec-keys.ts';
import { rolloverPhase } from '../../model/dnssec-rollover.ts';
import { DnssecStatus, dnssecStatus, keysWanted, withUnsigning } from '../../model/dnssec-status.ts';
import type { DomainState } from '../../model/domain.ts';
import { DomainParams, errorResponses } from '../schemas.ts';
import { ownZoneHead } from '../zone-access.ts';

/**
 * Makes at most one key per algorithm for one request: a store that runs a mutation again (a
 * concurrent writer) gets the same key, not a second one.
 */
export function keyMaker(app: FastifyInstance): (algorithm: DnssecAlgorithm) => ZoneSigning {
  const made = new Map<DnssecAlgorithm, ZoneSigning>();
  return (algorithm) => {
    const box = app.secrets;
    // As for certificates: a private key is never stored in the clear.
    if (!box) throw new ApiError('CONFLICT', 'DNSSEC cannot be turned on on this service: no key to seal private keys is configured (PALISADE_SECRET_KEY is unset); ask its operator');
    let signing = made.get(algorithm);
    if (!signing) {
      const key = makeSigningKey(algorithm);
      signing = { keys: [{ ...key, private_key: box.seal(key.private_key) }] };
      made.set(algorithm, signing);
    }
    return signing;
  };
}

/**
 * `after` (the domain as a create or change leaves it, `before` as it was: undefined for a
 * create) with the signing keys its `dnssec` settings call for; 409 when they cannot be had.
 * Turned off while signing, the keys go on signing (`unsigning`) until the parent's DS is gone.
 */
export function withSigningKeys(before: DomainState | undefined, changed: DomainState, make: (algorithm: DnssecAlgorithm) => ZoneSigning): DomainState {
  const wanted = keysWanted(before, changed);
  const after = withUnsigning(before, changed);
  if (!wanted) return after;
  if ('refuse' in wanted) throw new ApiError('CONFLICT', wanted.refuse, [{ field: wanted.field ?? 'dnssec_algorithm', message: wanted.refuse }]);
  return { ...after, signing: make(wanted.make) };
}

export const dnssecRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/domains/:domain/dnssec',
    {
      schema: {
        tags: ['domains'],
        summary: "The domain's DNSSEC: state, what to do next, algorithm, and the DS to publish at the registrar",
        description:
          'Turn signing on with PATCH /domains/{domain} `{"dnssec": true}`; then publish each key\'s `ds` at the registrar (the parent zone): `state` becomes `secure` once the parent is seen holding it. Turned off, the zone stays signed (`unsigning`, publishing the CDS/CDNSKEY delete signal) until the parent\'s DS is gone. Private keys are never shown: they stay with the service and its name servers.',
        params: DomainParams,
        response: { 200: DnssecStatus, ...errorResponses(404) },
      },
    },
    async (request) => {
      const { domain } = await ownZoneHead(app, request.params.domain, request.user.id);
      const parent = app.dnssecParent;
      const waits = rolloverPhase(domain.signing) ? await parent.rolloverWaits(domain.domain, domain.ownerId) : undefined;
      return dnssecStatus(domain.domain, domain, await parent.seen(domain.domain, domain.ownerId), parent.canLook, waits);
    },
  );
};

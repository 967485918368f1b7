// One certificate from an ACME CA, through acme-client's low-level calls: order → authorizations
// → publish every challenge (and see it published) → tell the CA → wait → finalize with a new
// P-256 key → download. Validation failures come back per name in the CA's own words (the
// challenge's RFC 8555 problem document). Publishing is the caller's (challenges.ts).
import { generateKeyPairSync } from 'node:crypto';
import * as acme from 'acme-client';
import type { ChallengeKind, NameProblem } from '../model/task.ts';

/** A challenge to publish: the name it validates, and what the CA will look for. */
export interface PendingChallenge {
  name: string;
  token: string;
  /** HTTP-01: the body to answer with. DNS-01: the TXT value (acme-client gives the digest). */
  keyAuthorization: string;
}

export interface ChallengePublisher {
  readonly kind: ChallengeKind;
  /** Publishes every challenge and resolves once each can be seen where the CA will look. */
  publish(challenges: PendingChallenge[]): Promise<void>;
  /** Takes them away again (also after a failure). */
  remove(): Promise<void>;
}

/** An issuance that failed for reasons worth showing per name. */
export class IssueError extends Error {
  constructor(
    message: string,
    readonly problems: NameProblem[],
  ) {
    super(message);
  }
}

const nameOf = (authz: acme.Authorization): string => (authz.wildcard ? `*.${authz.identifier.value}` : authz.identifier.value);

export interface Issued {
  /** Leaf then chain, PEM. */
  pem: string;
  /** PKCS#8 PEM. */
  key: string;
}

/**
 * Orders and fetches a certificate for `names`. `ordered` is called once the CA has accepted the
 * order (the task counts orders, so none is placed twice unnoticed).
 */
export async function orderCertificate(client: acme.Client, names: string[], publisher: ChallengePublisher, ordered: () => Promise<void>): Promise<Issued> {
  const order = await client.createOrder({ identifiers: names.map((value) => ({ type: 'dns', value })) });
  await ordered();
  const authorizations = await client.getAuthorizations(order);
  const pending: Array<PendingChallenge & { authz: acme.Authorization; challenge: acme.Authorization['challenges'][number] }> = [];
  for (const authz of authorizations) {
    if (authz.status === 'valid') continue; // validated recently for this account
    const challenge = authz.challenges.find((c) => c.type === publisher.kind);
    if (!challenge) throw new IssueError(`the CA offers no ${publisher.kind} challenge`, [{ name: nameOf(authz), type: 'palisade:no-challenge', detail: `the CA offers no ${publisher.kind} challenge for this name` }]);
    const keyAuthorization = await client.getChallengeKeyAuthorization(challenge);
    pending.push({ name: nameOf(authz), token: (challenge as { token: string }).token, keyAuthorization, authz, challenge });
  }
  try {
    if (pending.length > 0) {
      await publisher.publish(pending);
      await Promise.all(pending.map((p) => client.completeChallenge(p.challenge)));
      const waited = await Promise.allSettled(pending.map((p) => client.waitForValidStatus(p.authz)));
      if (waited.some((w) => w.status === 'rejected')) throw await validationFailure(client, order, waited);
    }
  } finally {
    await publisher.remove();
  }
  const key = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ type: 'pkcs8', format: 'pem' }) as string;
  // The common name is optional and limited to 64 characters; the names are in subjectAltName.
  const commonName = names.find((n) => n.length <= 64);
  const [, csr] = await acme.crypto.createCsr({ ...(commonName && { commonName }), altNames: names }, key);
  const finalized = await client.finalizeOrder(order, csr);
  const pem = await client.getCertificate(finalized);
  return { pem, key };
}

/** The CA's reasons, per name, read back from the authorizations. */
async function validationFailure(client: acme.Client, order: acme.Order, waited: PromiseSettledResult<unknown>[]): Promise<IssueError> {
  const problems: NameProblem[] = [];
  try {
    for (const authz of await client.getAuthorizations(order)) {
      if (authz.status === 'valid') continue;
      const failed = authz.challenges.find((c) => (c as { error?: unknown }).error);
      const error = (failed as { error?: { type?: string; detail?: string } } | undefined)?.error;
      problems.push({ name: nameOf(authz), type: error?.type ?? 'urn:ietf:params:acme:error:unknown', detail: error?.detail ?? `authorization ${authz.status}` });
    }
  } catch {
    // The reasons could not be read back: the waits' own messages stand.
  }
  const messages = waited.flatMap((w) => (w.status === 'rejected' ? [String((w.reason as Error).message ?? w.reason)] : []));
  return new IssueError(`validation failed: ${problems.length > 0 ? problems.map((p) => `${p.name}: ${p.detail}`).join('; ') : messages.join('; ')}`, problems);
}

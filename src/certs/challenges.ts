// Publishing ACME challenges where the CA will look, and seeing them there before the CA is told
// (a CA told too early fails the validation, and Let's Encrypt counts that against the name).
//   DNS-01: TXT records at _acme-challenge.NAME, written into the zone as the service's own
//           records (marked `acme`, invisible to the customer's record API), so they reach every
//           name server through the change feed like any record; confirmed on our name servers.
//   HTTP-01: the tokens as the domain's challenge document, which the change feed carries to
//           every edge serving it; confirmed by fetching each token from each of those edges.
import { request } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { Resolver } from 'node:dns/promises';
import { ApiError } from '../errors.ts';
import type { DomainState } from '../model/domain.ts';
import type { EdgeNode } from '../model/node.ts';
import { TTL_MIN, type RecordState } from '../model/record.ts';
import { TYPE } from '../model/record-types.ts';
import { canonicalRecordValue } from '../model/record-values.ts';
import type { Store } from '../store/types.ts';
import type { ChallengePublisher, PendingChallenge } from './acme-order.ts';
import { IssueError } from './acme-order.ts';
import { dns01Owner } from './cert-names.ts';
import { StoreError } from '../store/errors.ts';

const POLL_MS = 100;

/** Polls `check` until it holds or `timeoutMs` passes; the last reason it gave when it did not. */
async function waitUntil(timeoutMs: number, check: () => Promise<string | true>): Promise<string | true> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const result = await check().catch((error: unknown) => (error as Error).message);
    if (result === true || Date.now() >= deadline) return result;
    await sleep(POLL_MS);
  }
}

export class Dns01Publisher implements ChallengePublisher {
  readonly kind = 'dns-01' as const;
  private ids: number[] = [];

  constructor(
    private readonly store: Store,
    private readonly domain: DomainState,
    /** Our name servers, host:port: each must answer the TXT before the CA is told. */
    private readonly nameservers: string[],
    private readonly timeoutMs: number,
  ) {}

  async publish(challenges: PendingChallenge[]): Promise<void> {
    const zone = this.domain.domain;
    const relative = (name: string) => (name === zone ? '@' : name.slice(0, -(zone.length + 1)));
    try {
      const { delta } = await this.store.changeRecords(zone, this.domain.ownerId, (view, ctx) => {
        const put: RecordState[] = [];
        for (const c of challenges) {
          const owner = relative(dns01Owner(c.name));
          // The customer may point _acme-challenge elsewhere (delegated validation); a TXT beside
          // their CNAME would be refused by every resolver's rules.
          if (view.at(owner).some((r) => r.type === TYPE.CNAME)) throw new ApiError('UNPROCESSABLE', `${dns01Owner(c.name)} has a CNAME; remove it, or validate through where it points`);
          const value = canonicalRecordValue(TYPE.TXT, c.keyAuthorization, zone);
          if (!value.ok) throw new ApiError('UNPROCESSABLE', `TXT ${value.message}`);
          put.push({ id: ctx.nextRecordId(), name: owner, type: TYPE.TXT, value: value.value, ttl: TTL_MIN, priority: null, target: [], acme: true });
        }
        return { put, del: [] };
      });
      this.ids = delta.put.map((r) => r.id);
    } catch (error) {
      // Refused by the rules (the caller's ApiError) or by the store (a limit, the domain gone): told
      // to the customer; the store failing is a failure of this attempt only.
      if (error instanceof ApiError || (error instanceof StoreError && error.code !== 'STORE_UNAVAILABLE' && error.code !== 'STORAGE_FULL' && error.code !== 'NOT_DURABLE')) {
        throw new IssueError(error.message, challenges.map((c) => ({ name: c.name, type: 'palisade:dns-record', detail: error.message })));
      }
      throw error;
    }
    const missing: string[] = [];
    await Promise.all(
      this.nameservers.flatMap((server) =>
        challenges.map(async (c) => {
          const resolver = new Resolver({ timeout: 1000, tries: 1 });
          resolver.setServers([server]);
          const owner = dns01Owner(c.name);
          const seen = await waitUntil(this.timeoutMs, async () => ((await resolver.resolveTxt(owner)).some((chunks) => chunks.join('') === c.keyAuthorization) ? true : 'not there yet'));
          if (seen !== true) missing.push(`${owner} on ${server} (${seen})`);
        }),
      ),
    );
    if (missing.length > 0) {
      throw new IssueError(`our name servers did not serve the DNS-01 TXT within ${this.timeoutMs / 1000} s: ${missing.join(', ')}`, challenges.map((c) => ({ name: c.name, type: 'palisade:txt-not-served', detail: `the TXT at ${dns01Owner(c.name)} was not seen on every name server` })));
    }
  }

  async remove(): Promise<void> {
    if (this.ids.length === 0) return;
    const ids = this.ids;
    await this.store
      .changeRecords(this.domain.domain, this.domain.ownerId, (view) => {
        const del = ids.filter((id) => view.byId(id)?.acme);
        return del.length === 0 ? undefined : { put: [], del };
      })
      .catch((error: unknown) => {
        // The domain was removed meanwhile: its records went with it.
        if (!(error instanceof StoreError && error.code === 'NOT_FOUND')) throw error;
      });
    this.ids = [];
  }
}

/** GET http://ADDRESS:PORT/.well-known/acme-challenge/TOKEN with Host: NAME → the body, as the CA would see it. */
function fetchToken(address: string, port: number, name: string, token: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = request({ host: address, port, path: `/.well-known/acme-challenge/${token}`, headers: { host: name }, timeout: 2000 }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (body += d.length + body.length <= 4096 ? d : ''));
      res.on('end', () => (res.statusCode === 200 ? resolve(body) : reject(new Error(`HTTP ${res.statusCode}`))));
    });
    req.on('timeout', () => req.destroy(new Error('no answer within 2 s')));
    req.on('error', reject);
    req.end();
  });
}

export class Http01Publisher implements ChallengePublisher {
  readonly kind = 'http-01' as const;
  private published = false;

  constructor(
    private readonly store: Store,
    private readonly domain: DomainState,
    /** The edges serving the domain: each must answer every token before the CA is told. */
    private readonly nodes: EdgeNode[],
    /** The port edges answer plain HTTP on, as the CA reaches them (80 in production). */
    private readonly port: number,
    private readonly timeoutMs: number,
  ) {}

  async publish(challenges: PendingChallenge[]): Promise<void> {
    const expires = new Date(Date.now() + Math.max(this.timeoutMs * 4, 600_000)).toISOString();
    await this.store.putChallenge({ domain: this.domain.domain, tokens: challenges.map((c) => ({ token: c.token, keyAuthorization: c.keyAuthorization })), expires });
    this.published = true;
    const missing: string[] = [];
    await Promise.all(
      this.nodes.flatMap((node) =>
        challenges.map(async (c) => {
          const address = node.ipv4 ?? node.ipv6!;
          const seen = await waitUntil(this.timeoutMs, async () => ((await fetchToken(address, this.port, c.name, c.token)) === c.keyAuthorization ? true : 'a different answer'));
          if (seen !== true) missing.push(`${c.name} on node ${node.name} (${seen})`);
        }),
      ),
    );
    if (missing.length > 0) {
      throw new IssueError(`edge nodes did not serve the HTTP-01 token within ${this.timeoutMs / 1000} s: ${missing.join(', ')}`, challenges.map((c) => ({ name: c.name, type: 'palisade:token-not-served', detail: `not every edge serving the domain answered the token (${missing.join(', ')})` })));
    }
  }

  async remove(): Promise<void> {
    if (!this.published) return;
    await this.store.deleteChallenge(this.domain.domain);
    this.published = false;
  }
}

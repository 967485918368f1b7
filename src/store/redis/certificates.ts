// Certificates and ACME challenges (Redis store): one document per domain, gone with the domain
// (zones.ts drops them with the holder's zone).
import { notFound } from '../../errors.ts';
import type { AcmeChallengeInput, AcmeChallengeState } from '../../model/acme-challenge.ts';
import type { CertificateInput, CertificateState } from '../../model/certificate.ts';
import { decodeCursor, encodeCursor } from '../cursor.ts';
import type { CertificateStore, Page, PageRequest } from '../types.ts';
import type { RedisCore } from './core.ts';
import { withRevision } from './plan.ts';

export class RedisCertificates implements CertificateStore {
  constructor(private readonly core: RedisCore) {}

  putCertificate(cert: CertificateInput): Promise<CertificateState> {
    return this.putDomainItem('certificate', 'cert', 'certs', cert);
  }

  getCertificate(domain: string): Promise<CertificateState | undefined> {
    return this.core.guard(() => this.core.json<CertificateState>(this.core.k('cert', domain)));
  }

  deleteCertificate(domain: string): Promise<boolean> {
    return this.deleteDomainItem('certificate', 'cert', 'certs', domain);
  }

  listCertificates(page: PageRequest): Promise<Page<CertificateState>> {
    return this.domainItemPage<CertificateState>('cert', 'certs', page);
  }

  putChallenge(challenge: AcmeChallengeInput): Promise<AcmeChallengeState> {
    return this.putDomainItem('challenge', 'acmech', 'acmechs', challenge);
  }

  getChallenge(domain: string): Promise<AcmeChallengeState | undefined> {
    return this.core.guard(() => this.core.json<AcmeChallengeState>(this.core.k('acmech', domain)));
  }

  deleteChallenge(domain: string): Promise<boolean> {
    return this.deleteDomainItem('challenge', 'acmech', 'acmechs', domain);
  }

  listChallenges(page: PageRequest): Promise<Page<AcmeChallengeState>> {
    return this.domainItemPage<AcmeChallengeState>('acmech', 'acmechs', page);
  }

  private putDomainItem<T extends { domain: string }>(kind: 'certificate' | 'challenge', prefix: string, index: string, item: T): Promise<T & { updated: string; revision: number }> {
    const zoneKey = this.core.k('zone', item.domain);
    return this.core.mutate(async () => {
      const text = await this.core.redis.get(zoneKey);
      if (text === null) throw notFound(`domain ${item.domain}`);
      const stored = { ...item, updated: new Date().toISOString(), revision: 0 };
      return {
        // The domain must still be there when the script runs (a deletion in between fails the check).
        checks: [[zoneKey, text]],
        ops: [withRevision(this.core.k(prefix, item.domain), stored, (c) => c), { op: 'zadd', key: this.core.k(index), s: 0, v: item.domain }],
        change: { kind, key: item.domain, op: 'put' },
        result: (revision) => ({ ...stored, revision }),
      };
    });
  }

  private deleteDomainItem(kind: 'certificate' | 'challenge', prefix: string, index: string, domain: string): Promise<boolean> {
    const key = this.core.k(prefix, domain);
    return this.core.mutate<boolean>(async () => {
      const text = await this.core.redis.get(key);
      if (text === null) return { unchanged: false };
      return {
        checks: [[key, text]],
        ops: [
          { op: 'del', key },
          { op: 'zrem', key: this.core.k(index), v: domain },
        ],
        change: { kind, key: domain, op: 'delete' },
        result: () => true,
      };
    });
  }

  private domainItemPage<T>(prefix: string, index: string, page: PageRequest): Promise<Page<T>> {
    return this.core.guard(async () => {
      const after = page.cursor === undefined ? undefined : decodeCursor(page.cursor);
      const names = await this.core.redis.zrangebylex(this.core.k(index), after === undefined ? '-' : `(${after}`, '+', 'LIMIT', 0, page.limit + 1);
      const more = names.length > page.limit;
      const chosen = names.slice(0, page.limit);
      const docs = chosen.length === 0 ? [] : await this.core.redis.mget(chosen.map((n) => this.core.k(prefix, n)));
      const items = docs.flatMap((d) => (d ? [JSON.parse(d) as T] : []));
      const last = chosen[chosen.length - 1];
      return { items, next: more && last ? encodeCursor(last) : undefined };
    });
  }
}

// Certificates and ACME challenges (embedded store): one document per domain, gone with the domain
// (zones.ts drops them with the holder's zone).
import { notFound } from '../../errors.ts';
import type { AcmeChallengeInput, AcmeChallengeState } from '../../model/acme-challenge.ts';
import type { CertificateInput, CertificateState } from '../../model/certificate.ts';
import type { CertificateStore, Page, PageRequest, ZoneHead } from '../types.ts';
import type { LmdbCore } from './core.ts';

export class LmdbCertificates implements CertificateStore {
  constructor(private readonly core: LmdbCore) {}

  putCertificate(cert: CertificateInput): Promise<CertificateState> {
    return this.putDomainItem('certificate', 'cert', cert);
  }

  async getCertificate(domain: string): Promise<CertificateState | undefined> {
    return this.core.get<CertificateState>(['cert', domain]);
  }

  deleteCertificate(domain: string): Promise<boolean> {
    return this.deleteDomainItem('certificate', 'cert', domain);
  }

  async listCertificates(page: PageRequest): Promise<Page<CertificateState>> {
    return this.core.pageByName<CertificateState>('cert', page, (c) => c.domain);
  }

  putChallenge(challenge: AcmeChallengeInput): Promise<AcmeChallengeState> {
    return this.putDomainItem('challenge', 'acmech', challenge);
  }

  async getChallenge(domain: string): Promise<AcmeChallengeState | undefined> {
    return this.core.get<AcmeChallengeState>(['acmech', domain]);
  }

  deleteChallenge(domain: string): Promise<boolean> {
    return this.deleteDomainItem('challenge', 'acmech', domain);
  }

  async listChallenges(page: PageRequest): Promise<Page<AcmeChallengeState>> {
    return this.core.pageByName<AcmeChallengeState>('acmech', page, (c) => c.domain);
  }

  private putDomainItem<T extends { domain: string }>(kind: 'certificate' | 'challenge', prefix: string, item: T): Promise<T & { updated: string; revision: number }> {
    return this.core.commit((tx) => {
      if (!this.core.get<ZoneHead>(['zone', item.domain])) throw notFound(`domain ${item.domain}`);
      const revision = tx.change(kind, item.domain, 'put');
      const stored = { ...item, updated: tx.now, revision };
      this.core.put([prefix, item.domain], stored);
      return stored;
    });
  }

  private deleteDomainItem(kind: 'certificate' | 'challenge', prefix: string, domain: string): Promise<boolean> {
    return this.core.commit((tx) => {
      if (!this.core.get([prefix, domain])) return false;
      this.core.del([prefix, domain]);
      tx.change(kind, domain, 'delete');
      return true;
    });
  }
}

// Certificates and ACME HTTP-01 challenges: one document per domain, gone with the domain.
import type { AcmeChallengeInput, AcmeChallengeState } from '../../model/acme-challenge.ts';
import type { CertificateInput, CertificateState } from '../../model/certificate.ts';
import type { Page, PageRequest } from './common.ts';

/** Certificates and challenges in flight (certificate tasks are documents: see documents.ts). */
export interface CertificateStore {
  /** Stores (replaces) a domain's certificate; NOT_FOUND when the domain does not exist. */
  putCertificate(cert: CertificateInput): Promise<CertificateState>;
  getCertificate(domain: string): Promise<CertificateState | undefined>;
  /** False when the domain has none. A domain's deletion removes its certificate with it. */
  deleteCertificate(domain: string): Promise<boolean>;
  /** Every stored certificate, in domain order. */
  listCertificates(page: PageRequest): Promise<Page<CertificateState>>;

  /** Stores (replaces) a domain's HTTP-01 challenge in flight; NOT_FOUND when the domain does not exist. */
  putChallenge(challenge: AcmeChallengeInput): Promise<AcmeChallengeState>;
  getChallenge(domain: string): Promise<AcmeChallengeState | undefined>;
  /** False when the domain has none. A domain's deletion removes it with it. */
  deleteChallenge(domain: string): Promise<boolean>;
  listChallenges(page: PageRequest): Promise<Page<AcmeChallengeState>>;
}

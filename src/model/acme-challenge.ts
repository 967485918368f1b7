// An ACME HTTP-01 challenge in flight for a domain: the tokens the CA will fetch from
// http://NAME/.well-known/acme-challenge/TOKEN and the key authorizations to answer with. The
// store keeps one per domain while its certificate order waits for validation; the change feed
// carries it to every edge that serves the domain. Key authorizations are public by design
// (RFC 8555 §8.3): they prove control of the account key only together with the account.

export interface HttpToken {
  token: string;
  keyAuthorization: string;
}

export interface AcmeChallengeState {
  /** The domain whose names are being validated (the store's key). */
  domain: string;
  tokens: HttpToken[];
  /** After this the edge stops answering even if nobody removed it (ISO time). */
  expires: string;
  updated: string;
  revision: number;
}

export type AcmeChallengeInput = Omit<AcmeChallengeState, 'updated' | 'revision'>;

/** RFC 8555 §8.3: a token is base64url, at least 128 bits of entropy. */
export const ACME_TOKEN = /^[A-Za-z0-9_-]{22,128}$/;

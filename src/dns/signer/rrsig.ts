// RRSIG records (RFC 4034 §3): the RDATA header, the signature over the canonical RRset (ECDSA
// P-256 with SHA-256 as r|s, RFC 6605; Ed25519, RFC 8080), through the signature cache.
import { sign } from 'node:crypto';
import type { RRset, SigningKey } from '../zone/types.ts';
import { canonicalRdata, labelCount, nameWire, signedData } from './canonical.ts';
import { RRSIG_TYPE } from './nsec.ts';
import type { SignatureCache } from './signature-cache.ts';
import { expirationOf, type Validity } from './validity.ts';

export interface SignerMetrics {
  signed: number;
}

/** A fresh signature was over the signing budget (../rate-limit/signing-budget.ts): the answer is not signed now. */
export class SigningLimited extends Error {
  constructor() {
    super('over the signing budget');
  }
}

/** Thrown as it is: under a flood it is thrown thousands of times a second, a stack trace each would cost. */
export const SIGNING_LIMITED = new SigningLimited();

export interface SigningJob {
  /** Asked before each signature not found in the cache; false: over the budget (SigningLimited is thrown). */
  mayMake?: () => boolean;
  key: SigningKey;
  /** The zone's apex: the RRSIG's signer name. */
  signer: string;
  validity: Validity;
  cache: SignatureCache;
  metrics: SignerMetrics;
}

/**
 * The RRSIG RRset over `set` as served (its owner and TTL). `wildcard`: the owner the records were
 * synthesised from ("*.encloser"), which is what is signed, with the Labels field of the wildcard
 * (its "*" not counted, RFC 4034 §3.1.3): the validator then expects proof that the name itself
 * does not exist.
 */
export function rrsigFor(set: RRset, job: SigningJob, wildcard?: string): RRset {
  const rdata = rrsigRdata(set, job, wildcard);
  return { name: set.name, type: RRSIG_TYPE, ttl: set.ttl, rdata: [{ type: 0, data: rdata }] };
}

function rrsigRdata(set: RRset, job: SigningJob, wildcard: string | undefined): Buffer {
  const { key, signer, validity } = job;
  const owner = wildcard ?? set.name;
  const signerWire = nameWire(signer);
  const header = Buffer.allocUnsafe(18 + signerWire.length);
  header.writeUInt16BE(set.type, 0);
  header[2] = key.algorithm;
  header[3] = wildcard ? labelCount(wildcard) - 1 : labelCount(set.name);
  header.writeUInt32BE(set.ttl >>> 0, 4);
  header.writeUInt32BE(expirationOf(validity, owner, set.type) >>> 0, 8);
  header.writeUInt32BE(validity.inception >>> 0, 12);
  header.writeUInt16BE(key.keyTag, 16);
  signerWire.copy(header, 18);
  const data = signedData(header, owner, set.type, set.ttl, canonicalRdata(set));
  const cacheKey = `${key.id}\u0000${data.toString('latin1')}`;
  let signature = job.cache.get(cacheKey);
  if (!signature) {
    if (job.mayMake && !job.mayMake()) throw SIGNING_LIMITED;
    signature =
      key.algorithm === 13 ? sign('sha256', data, { key: key.privateKey, dsaEncoding: 'ieee-p1363' }) : sign(null, data, key.privateKey);
    job.metrics.signed++;
    job.cache.set(cacheKey, signature);
  }
  return Buffer.concat([header, signature]);
}

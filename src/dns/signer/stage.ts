// The signer stage, after the engine: it sees the answer before it is encoded and signs it for a
// DNSSEC-OK query (sign-answer.ts); the answer cache then keeps the signed answer (under the DO=1
// key, chain/fast-key.ts) until its signatures' window ends. A zone whose domain says `dnssec`
// without a key this server holds answers SERVFAIL, whatever the DO bit. Not on the cached path.
import type { DnsStage } from '../chain/stage.ts';
import { RCODE } from '../wire/constants.ts';
import { SignatureCache, type SignatureCacheLimits } from './signature-cache.ts';
import { signAnswer } from './sign-answer.ts';

export interface SignerStats {
  /** Signatures made (not found in the signature cache). */
  signed: number;
  cache: SignatureCache;
}

export function signerStage(limits: SignatureCacheLimits, now: () => number = Date.now): { stage: DnsStage; stats: SignerStats } {
  const cache = new SignatureCache(limits);
  const stats: SignerStats = { signed: 0, cache };
  const stage: DnsStage = {
    name: 'signer',
    cached: null,
    full(ctx, next) {
      // The innermost stage: nothing after it; the engine encodes once this returns.
      next(ctx);
      const spec = ctx.spec;
      if (spec && spec.zones.length > 0) {
        if (spec.zones.some((zone) => zone.keyless)) {
          spec.rcode = RCODE.SERVFAIL;
          spec.aa = false;
          spec.answer = [];
          spec.authority = [];
          spec.additional = [];
        } else if (spec.edns?.dnssecOk && spec.question) {
          const { qname, qtype } = spec.question.query;
          const ends = signAnswer(spec, qname, qtype, { cache, metrics: stats }, now());
          if (ends !== undefined) spec.expires = ends;
        }
      }
    },
  };
  return { stage, stats };
}

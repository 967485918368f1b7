// The signer stage, after the engine: it sees the answer before it is encoded and signs it for a
// DNSSEC-OK query (sign-answer.ts); the answer cache then keeps the signed answer (under the DO=1
// key, chain/fast-key.ts) until its signatures' window ends. A zone whose domain says `dnssec`
// without a key this server holds answers SERVFAIL, whatever the DO bit. Not on the cached path.
//
// Fresh signatures are bounded per zone and per client network (../rate-limit/signing-budget.ts):
// an answer that needs one past the bound is not signed (unsigned data would be bogus to a
// validator) and not cached. A client over its network's bound over UDP without a valid cookie
// may be someone spoofing its addresses: it gets TC=1 and no records, so a real resolver asks
// again over TCP (or with a cookie), where its budget is its own, as response-rate limiting slips.
// Past the zone's bound, or a verified client's, the answer is SERVFAIL: nothing to make, the
// resolver tries the other name server or asks later, and over UDP response-rate limiting bounds it.
import type { SigningBudget, SigningRefusal } from '../rate-limit/signing-budget.ts';
import type { DnsStage } from '../chain/stage.ts';
import type { AnswerSpec } from '../chain/context.ts';
import { RCODE } from '../wire/constants.ts';
import { SIGNING_LIMITED } from './rrsig.ts';
import { SignatureCache, type SignatureCacheLimits } from './signature-cache.ts';
import { signAnswer } from './sign-answer.ts';

export interface SignerStats {
  /** Signatures made (not found in the signature cache). */
  signed: number;
  cache: SignatureCache;
}

export interface SignerOptions {
  /** Bounds on fresh signatures per zone and client network; absent: unbounded. */
  budget?: SigningBudget;
  now?: () => number;
}

function servfail(spec: AnswerSpec): void {
  spec.rcode = RCODE.SERVFAIL;
  spec.aa = false;
  spec.answer = [];
  spec.authority = [];
  spec.additional = [];
}

export function signerStage(limits: SignatureCacheLimits, options: SignerOptions = {}): { stage: DnsStage; stats: SignerStats } {
  const cache = new SignatureCache(limits);
  const stats: SignerStats = { signed: 0, cache };
  const { budget, now = Date.now } = options;
  const stage: DnsStage = {
    name: 'signer',
    cached: null,
    full(ctx, next) {
      // The innermost stage: nothing after it; the engine encodes once this returns.
      next(ctx);
      const spec = ctx.spec;
      if (spec && spec.zones.length > 0) {
        if (spec.zones.some((zone) => zone.keyless)) {
          servfail(spec);
        } else if (spec.edns?.dnssecOk && spec.question) {
          const { qname, qtype } = spec.question.query;
          const address = ctx.client.address;
          const verified = ctx.transport === 'tcp' || ctx.cookie?.valid === true;
          let refused: SigningRefusal | undefined;
          const mayMake = budget && ((apex: string) => (refused = budget.take(apex, address, verified)) === undefined);
          try {
            const ends = signAnswer(spec, qname, qtype, { cache, metrics: stats, mayMake }, now());
            if (ends !== undefined) spec.expires = ends;
          } catch (error) {
            if (error !== SIGNING_LIMITED) throw error;
            servfail(spec);
            if (refused === 'client' && !verified) {
              spec.rcode = RCODE.NOERROR;
              spec.tc = true;
            }
            // Not kept: the next asker may be within its bounds.
            spec.cacheable = false;
            spec.place = undefined;
          }
        }
      }
    },
  };
  return { stage, stats };
}

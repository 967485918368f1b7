// Signatures by what they sign (the RRset's signed octets: RRSIG header with key tag, window and
// labels, then the records) and the key's identity, so a variant or a CNAME target already signed
// in this window costs a map lookup. Bounded in entries and in bytes (keys and signatures
// counted); the least recently used go first.

export interface SignatureCacheLimits {
  entries: number;
  bytes: number;
}

/** 100,000 signatures (~ 25 MiB at the default key and answer sizes). */
export const SIGNATURE_CACHE_LIMITS: SignatureCacheLimits = { entries: 100_000, bytes: 32 * 1_048_576 };

export class SignatureCache {
  private readonly map = new Map<string, Buffer>();
  private held = 0;
  hits = 0;
  misses = 0;
  evicted = 0;

  constructor(private readonly limits: SignatureCacheLimits) {}

  get size(): number {
    return this.map.size;
  }

  get bytes(): number {
    return this.held;
  }

  get(key: string): Buffer | undefined {
    const found = this.map.get(key);
    if (!found) {
      this.misses++;
      return undefined;
    }
    this.hits++;
    // Most recently used last: delete and set again.
    this.map.delete(key);
    this.map.set(key, found);
    return found;
  }

  set(key: string, signature: Buffer): void {
    const cost = costOf(key, signature);
    if (cost > this.limits.bytes || this.limits.entries <= 0) return;
    const old = this.map.get(key);
    if (old) {
      this.map.delete(key);
      this.held -= costOf(key, old);
    }
    while (this.map.size >= this.limits.entries || this.held + cost > this.limits.bytes) {
      const oldest = this.map.entries().next().value;
      if (!oldest) break;
      this.map.delete(oldest[0]);
      this.held -= costOf(oldest[0], oldest[1]);
      this.evicted++;
    }
    this.map.set(key, signature);
    this.held += cost;
  }
}

/** Estimated bytes: the key's characters (one octet each, latin1), the signature, and per-entry overhead. */
const costOf = (key: string, signature: Buffer): number => key.length + signature.length + 96;

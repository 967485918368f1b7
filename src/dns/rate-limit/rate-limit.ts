// Response-rate limiting for UDP (the defence against reflection/amplification that Knot and
// NSD ship): each client network (/24 for IPv4, /56 for IPv6) may receive `rate` responses per
// second per response category. Past that, every `slip`-th response goes out truncated (TC=1, no
// data) so a real client retries over TCP, where spoofing is impossible; the rest are dropped.
import { ipToBytes } from '../../model/ip.ts';

export interface RateLimitOptions {
  /** Responses per second per client network and category; 0 turns limiting off. */
  rate: number;
  /** Every n-th limited response is sent truncated instead of dropped (0 = drop all). */
  slip: number;
  /** Bound on tracked networks; the table is cleared when it fills. */
  maxEntries?: number;
  /** Fresh DNSSEC signatures per second per zone, and per client network (./signing-budget.ts); 0 or absent = unbounded. */
  signZoneRate?: number;
  signClientRate?: number;
}

export type RateDecision = 'send' | 'slip' | 'drop';

/** Response categories limited separately (as in Knot/NSD): an NXDOMAIN flood does not starve answers. */
function category(response: Buffer): string {
  const rcode = response[3]! & 0xf;
  if (rcode === 3) return 'n';
  if (rcode !== 0) return 'e';
  if (!(response[2]! & 0x04)) return 'r'; // no AA: referral
  return response[7] === 0 && response[6] === 0 ? 'd' : 'a';
}

/** The client network an address belongs to (/24, /56): what one client is, for the limits here. */
export function clientNetwork(address: string): string {
  if (!address.includes(':')) return address.slice(0, address.lastIndexOf('.'));
  return Buffer.from(ipToBytes(address).subarray(0, 7)).toString('hex');
}

interface Bucket {
  second: number;
  count: number;
  limited: number;
}

export class ResponseRateLimiter {
  private readonly buckets = new Map<string, Bucket>();
  private readonly maxEntries: number;
  limited = 0;

  constructor(private readonly options: RateLimitOptions) {
    this.maxEntries = options.maxEntries ?? 100_000;
  }

  decide(address: string, response: Buffer, nowMs = Date.now()): RateDecision {
    const key = `${clientNetwork(address)}/${category(response)}`;
    const second = Math.floor(nowMs / 1000);
    let bucket = this.buckets.get(key);
    if (!bucket) {
      if (this.buckets.size >= this.maxEntries) this.buckets.clear();
      bucket = { second, count: 0, limited: 0 };
      this.buckets.set(key, bucket);
    }
    if (bucket.second !== second) {
      bucket.second = second;
      bucket.count = 0;
    }
    if (++bucket.count <= this.options.rate) return 'send';
    this.limited++;
    bucket.limited++;
    return this.options.slip > 0 && bucket.limited % this.options.slip === 0 ? 'slip' : 'drop';
  }
}

/** Header and question of a response, TC=1, no records: the "slip" answer. */
export function slipResponse(response: Buffer): Buffer {
  let end = 12;
  if (response[5] === 1) {
    while (end < response.length && response[end] !== 0) end += response[end]! + 1;
    end += 5;
  }
  const out = Buffer.from(response.subarray(0, Math.min(end, response.length)));
  out[2] = out[2]! | 0x02;
  out.fill(0, 6, 12);
  return out;
}

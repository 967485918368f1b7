// DNS counters and the answer-latency histogram. Plain arrays on the hot path: one increment per
// query, no label maps; `snapshot()` reads them into the families of dns-families.ts when asked.
import { histogramOf, labelled, single, type MetricsSnapshot } from '../../common/metrics/family.ts';
import { QTYPE, RCODE_NAME, qtypeName } from '../wire/constants.ts';
import * as F from './dns-families.ts';

const TRANSPORTS = ['udp', 'tcp'] as const;
const TRACKED_QTYPES = [QTYPE.A, QTYPE.AAAA, QTYPE.CNAME, QTYPE.MX, QTYPE.NS, QTYPE.TXT, QTYPE.SOA, QTYPE.SRV, QTYPE.ANY, QTYPE.DS, QTYPE.HINFO, QTYPE.SVCB, QTYPE.HTTPS];
const QTYPE_SLOT = new Map<number, number>(TRACKED_QTYPES.map((t, i) => [t, i]));
const OTHER_SLOT = TRACKED_QTYPES.length;
const BUCKETS = F.ANSWER_BUCKETS;

function qtypeOf(response: Buffer): number {
  if (response.length < 17 || response[5] === 0) return -1;
  let o = 12;
  while (o < response.length) {
    const len = response[o]!;
    if (len === 0) break;
    if (len >= 0xc0) return -1;
    o += len + 1;
  }
  return o + 2 < response.length ? response.readUInt16BE(o + 1) : -1;
}

export class DnsMetrics {
  /** [transport][rcode 0–15][qtype slot] */
  private readonly counts = TRANSPORTS.map(() => Array.from({ length: 16 }, () => new Array<number>(OTHER_SLOT + 1).fill(0)));
  private readonly histogram = new Array<number>(BUCKETS.length + 1).fill(0);
  private latencySum = 0;
  cacheHits = 0;
  cacheMisses = 0;
  truncated = 0;
  malformed = 0;
  dropped = 0;
  internalErrors = 0;
  tcpConnections = 0;
  tcpRejected = 0;
  tcpTimeouts = 0;
  tcpEvicted = 0;
  tcpOpen = () => 0;
  tcpBufferedBytes = () => 0;
  cookiesValid = 0;
  cookiesIssued = 0;
  /** Set by whoever feeds the index. */
  zonesServed = () => 0;
  deferredRebuilds = () => 0;
  revisionApplied = () => 0;
  rateLimited = () => 0;
  /** DNSSEC signing (../signer): set by the query chain. */
  signing = () => ({ signed: 0, cacheHits: 0, entries: 0, bytes: 0, evicted: 0, refusedZone: 0, refusedClient: 0 });
  /** Zone transfers (../transfer): set by the DNS server when transfers are on. */
  transfers = () => ({ axfr: 0, ixfr: 0, ixfrFull: 0, refused: 0, tsigFailures: 0, notifySent: 0, notifyAnswered: 0, notifyWaiting: 0, journalBytes: 0, journalEntries: 0, journalEvicted: 0, transfersRunning: 0, transfersWaiting: 0, transfersQueued: 0 });

  /** Counts one response; `qtype` when the caller knows it, else it is read from the response. */
  observe(response: Buffer, ms: number, transport: 'udp' | 'tcp', qtype = qtypeOf(response)): void {
    const rcode = response[3]! & 0xf;
    const type = qtype;
    this.counts[transport === 'udp' ? 0 : 1]![rcode]![QTYPE_SLOT.get(type) ?? OTHER_SLOT]!++;
    if (response[2]! & 0x02) this.truncated++;
    const seconds = ms / 1000;
    this.latencySum += seconds;
    let b = 0;
    while (b < BUCKETS.length && seconds > BUCKETS[b]!) b++;
    this.histogram[b]!++;
  }

  /** Total answered queries (for tests and logs). */
  get answered(): number {
    return this.histogram.reduce((a, b) => a + b, 0);
  }

  /** The figures as data (../../common/metrics), read from the arrays and counters above. */
  snapshot(): MetricsSnapshot {
    const queries: Array<[string[], number]> = [];
    this.counts.forEach((byRcode, t) =>
      byRcode.forEach((byType, rcode) =>
        byType.forEach((n, slot) => {
          if (n === 0) return;
          const qtype = slot === OTHER_SLOT ? 'other' : qtypeName(TRACKED_QTYPES[slot]!);
          queries.push([[TRANSPORTS[t]!, RCODE_NAME[rcode] ?? String(rcode), qtype], n]);
        }),
      ),
    );
    const t = this.transfers();
    const s = this.signing();
    return [
      labelled(F.DNS_QUERIES, queries),
      histogramOf(F.DNS_ANSWER_DURATION, this.histogram, this.latencySum),
      single(F.DNS_ZONES_SERVED, this.zonesServed()),
      single(F.DNS_REVISION_APPLIED, this.revisionApplied()),
      single(F.DNS_DEFERRED_REBUILDS, this.deferredRebuilds()),
      single(F.DNS_CACHE_HITS, this.cacheHits),
      single(F.DNS_CACHE_MISSES, this.cacheMisses),
      single(F.DNS_TRUNCATED, this.truncated),
      single(F.DNS_MALFORMED, this.malformed),
      single(F.DNS_DROPPED, this.dropped),
      single(F.DNS_INTERNAL_ERRORS, this.internalErrors),
      single(F.DNS_RATE_LIMITED, this.rateLimited()),
      single(F.DNS_TCP_CONNECTIONS, this.tcpConnections),
      single(F.DNS_TCP_REJECTED, this.tcpRejected),
      single(F.DNS_TCP_EVICTED, this.tcpEvicted),
      single(F.DNS_TCP_OPEN, this.tcpOpen()),
      single(F.DNS_TCP_BUFFERED_BYTES, this.tcpBufferedBytes()),
      single(F.DNS_COOKIES_VALID, this.cookiesValid),
      single(F.DNS_COOKIES_ISSUED, this.cookiesIssued),
      single(F.DNS_TCP_TIMEOUTS, this.tcpTimeouts),
      ...transferFigures(t),
      ...signingFigures(s),
    ];
  }
}

/** DNSSEC: signatures made, and the signature cache. */
function signingFigures(s: ReturnType<DnsMetrics['signing']>): MetricsSnapshot {
  return [
    single(F.DNS_SIGNATURES_MADE, s.signed),
    single(F.DNS_SIGNATURE_CACHE_HITS, s.cacheHits),
    single(F.DNS_SIGNATURE_CACHE_ENTRIES, s.entries),
    single(F.DNS_SIGNATURE_CACHE_BYTES, s.bytes),
    single(F.DNS_SIGNATURE_CACHE_EVICTED, s.evicted),
    single(F.DNS_SIGNATURES_REFUSED_ZONE, s.refusedZone),
    single(F.DNS_SIGNATURES_REFUSED_CLIENT, s.refusedClient),
  ];
}

/** The zone-transfer families (AXFR, IXFR, refusals, TSIG failures, NOTIFY). */
function transferFigures(t: ReturnType<DnsMetrics['transfers']>): MetricsSnapshot {
  return [
    single(F.DNS_AXFR, t.axfr),
    single(F.DNS_IXFR, t.ixfr),
    single(F.DNS_IXFR_FULL, t.ixfrFull),
    single(F.DNS_TRANSFERS_REFUSED, t.refused),
    single(F.DNS_TSIG_FAILURES, t.tsigFailures),
    single(F.DNS_NOTIFY_SENT, t.notifySent),
    single(F.DNS_NOTIFY_ANSWERED, t.notifyAnswered),
    single(F.DNS_NOTIFY_WAITING, t.notifyWaiting),
    single(F.DNS_TRANSFERS_RUNNING, t.transfersRunning),
    single(F.DNS_TRANSFERS_WAITING, t.transfersWaiting),
    single(F.DNS_TRANSFERS_QUEUED, t.transfersQueued),
    single(F.DNS_IXFR_JOURNAL_BYTES, t.journalBytes),
    single(F.DNS_IXFR_JOURNAL_ENTRIES, t.journalEntries),
    single(F.DNS_IXFR_JOURNAL_EVICTED, t.journalEvicted),
  ];
}

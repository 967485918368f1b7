// DNS counters and the answer-latency histogram, in Prometheus text format. Plain arrays on the
// hot path: one increment per query, no label maps.
import { QTYPE, RCODE_NAME, qtypeName } from '../wire/constants.ts';

const TRANSPORTS = ['udp', 'tcp'] as const;
const TRACKED_QTYPES = [QTYPE.A, QTYPE.AAAA, QTYPE.CNAME, QTYPE.MX, QTYPE.NS, QTYPE.TXT, QTYPE.SOA, QTYPE.SRV, QTYPE.ANY, QTYPE.DS, QTYPE.HINFO, QTYPE.SVCB, QTYPE.HTTPS];
const QTYPE_SLOT = new Map<number, number>(TRACKED_QTYPES.map((t, i) => [t, i]));
const OTHER_SLOT = TRACKED_QTYPES.length;
/** Upper bounds in seconds. */
const BUCKETS = [0.00001, 0.000025, 0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.05];

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

  render(): string {
    const lines: string[] = [];
    lines.push('# HELP palisade_dns_queries_total DNS queries answered, by transport, response code and query type.');
    lines.push('# TYPE palisade_dns_queries_total counter');
    this.counts.forEach((byRcode, t) =>
      byRcode.forEach((byType, rcode) =>
        byType.forEach((n, slot) => {
          if (n === 0) return;
          const qtype = slot === OTHER_SLOT ? 'other' : qtypeName(TRACKED_QTYPES[slot]!);
          lines.push(`palisade_dns_queries_total{transport="${TRANSPORTS[t]}",rcode="${RCODE_NAME[rcode] ?? rcode}",qtype="${qtype}"} ${n}`);
        }),
      ),
    );
    lines.push('# HELP palisade_dns_answer_duration_seconds Time from packet to response bytes.');
    lines.push('# TYPE palisade_dns_answer_duration_seconds histogram');
    let cumulative = 0;
    BUCKETS.forEach((le, i) => {
      cumulative += this.histogram[i]!;
      lines.push(`palisade_dns_answer_duration_seconds_bucket{le="${le}"} ${cumulative}`);
    });
    cumulative += this.histogram[BUCKETS.length]!;
    lines.push(`palisade_dns_answer_duration_seconds_bucket{le="+Inf"} ${cumulative}`);
    lines.push(`palisade_dns_answer_duration_seconds_sum ${this.latencySum}`);
    lines.push(`palisade_dns_answer_duration_seconds_count ${cumulative}`);
    const gauges: Array<[string, string, string, number]> = [
      ['palisade_dns_zones_served', 'gauge', 'Zones answered for (name servers activated).', this.zonesServed()],
      ['palisade_dns_revision_applied', 'gauge', 'Revision of the change feed the zone index reflects.', this.revisionApplied()],
      ['palisade_dns_deferred_rebuilds', 'gauge', 'Zones whose latest settings wait for their zone\'s or account\'s rebuild budget.', this.deferredRebuilds()],
      ['palisade_dns_cache_hits_total', 'counter', 'Answers served from the encoded-answer cache.', this.cacheHits],
      ['palisade_dns_cache_misses_total', 'counter', 'Answers built by the engine.', this.cacheMisses],
      ['palisade_dns_truncated_total', 'counter', 'Responses sent with TC=1.', this.truncated],
      ['palisade_dns_malformed_total', 'counter', 'Queries answered FORMERR/NOTIMP without reaching the engine.', this.malformed],
      ['palisade_dns_dropped_total', 'counter', 'Packets not answered (too short, or responses).', this.dropped],
      ['palisade_dns_internal_errors_total', 'counter', 'Queries answered SERVFAIL after an internal error.', this.internalErrors],
      ['palisade_dns_rate_limited_total', 'counter', 'UDP responses dropped or slipped (TC=1) by response-rate limiting.', this.rateLimited()],
      ['palisade_dns_tcp_connections_total', 'counter', 'TCP connections accepted.', this.tcpConnections],
      ['palisade_dns_tcp_rejected_total', 'counter', 'TCP connections refused (the client network holds its share of connections).', this.tcpRejected],
      ['palisade_dns_tcp_evicted_total', 'counter', 'TCP connections closed to make room: for a new client (least recently answered first) or for the answer budget (slowest reader first).', this.tcpEvicted],
      ['palisade_dns_tcp_open', 'gauge', 'TCP connections open now.', this.tcpOpen()],
      ['palisade_dns_tcp_buffered_bytes', 'gauge', 'Answer bytes waiting for TCP clients to read them.', this.tcpBufferedBytes()],
      ['palisade_dns_cookies_valid_total', 'counter', 'Queries carrying a valid server cookie (exempt from response-rate limiting).', this.cookiesValid],
      ['palisade_dns_cookies_issued_total', 'counter', 'Server cookies sent.', this.cookiesIssued],
      ['palisade_dns_tcp_timeouts_total', 'counter', 'TCP connections closed idle.', this.tcpTimeouts],
      ...transferGauges(this.transfers()),
      ...signingGauges(this.signing()),
    ];
    for (const [name, type, help, value] of gauges) lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`, `${name} ${value}`);
    return `${lines.join('\n')}\n`;
  }
}

/** DNSSEC: signatures made, and the signature cache. */
function signingGauges(s: ReturnType<DnsMetrics['signing']>): Array<[string, string, string, number]> {
  return [
    ['palisade_dns_signatures_made_total', 'counter', 'RRSIGs computed (not found in the signature cache).', s.signed],
    ['palisade_dns_signature_cache_hits_total', 'counter', 'RRSIGs taken from the signature cache.', s.cacheHits],
    ['palisade_dns_signature_cache_entries', 'gauge', 'Signatures held in the signature cache.', s.entries],
    ['palisade_dns_signature_cache_bytes', 'gauge', 'Estimated bytes of the signature cache (keys and signatures).', s.bytes],
    ['palisade_dns_signature_cache_evicted_total', 'counter', 'Signatures dropped from the signature cache to keep its bounds.', s.evicted],
    ['palisade_dns_signatures_refused_zone_total', 'counter', 'Answers not signed (SERVFAIL) because their zone had spent its fresh signatures for the second.', s.refusedZone],
    ['palisade_dns_signatures_refused_client_total', 'counter', 'Answers not signed (SERVFAIL) because the client network had spent its fresh signatures for the second.', s.refusedClient],
  ];
}

/** The zone-transfer families (AXFR, IXFR, refusals, TSIG failures, NOTIFY). */
function transferGauges(t: ReturnType<DnsMetrics['transfers']>): Array<[string, string, string, number]> {
  return [
    ['palisade_dns_axfr_total', 'counter', 'AXFR answered to secondaries.', t.axfr],
    ['palisade_dns_ixfr_total', 'counter', 'IXFR answered to secondaries.', t.ixfr],
    ['palisade_dns_ixfr_full_total', 'counter', 'IXFR answered with the whole zone (the asked serial\'s differences not held).', t.ixfrFull],
    ['palisade_dns_transfers_refused_total', 'counter', 'Transfer requests refused (not a listed secondary, no TSIG, not TCP, zone not served).', t.refused],
    ['palisade_dns_tsig_failures_total', 'counter', 'Messages whose TSIG failed (BADKEY, BADSIG, BADTIME).', t.tsigFailures],
    ['palisade_dns_notify_sent_total', 'counter', 'NOTIFY messages sent to secondaries (retries included).', t.notifySent],
    ['palisade_dns_notify_answered_total', 'counter', 'NOTIFY messages answered (properly signed).', t.notifyAnswered],
    ['palisade_dns_notify_waiting', 'gauge', 'NOTIFY messages waiting for an answer.', t.notifyWaiting],
    ['palisade_dns_transfers_running', 'gauge', 'Zone transfers being sent.', t.transfersRunning],
    ['palisade_dns_transfers_waiting', 'gauge', 'Zone transfers waiting for their secondary to have fewer running (PALISADE_DNS_TRANSFERS_PER_SECONDARY).', t.transfersWaiting],
    ['palisade_dns_transfers_queued_total', 'counter', 'Zone transfers that had to wait their turn.', t.transfersQueued],
    ['palisade_dns_ixfr_journal_bytes', 'gauge', 'Bytes (estimated) of zone differences kept for IXFR, every DNS process added up.', t.journalBytes],
    ['palisade_dns_ixfr_journal_entries', 'gauge', 'Zone changes kept for IXFR, every DNS process added up.', t.journalEntries],
    ['palisade_dns_ixfr_journal_evicted_total', 'counter', 'Zone changes dropped from the IXFR journal to stay within its bounds (a secondary behind them gets the whole zone).', t.journalEvicted],
  ];
}

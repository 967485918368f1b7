// Every DNS family a scraper sees, declared once: name, type, help, labels and how the figures
// of several DNS processes (the primary and its workers) combine. Gauges of what the primary alone
// knows (zones served, the feed's revision) are `first`; every other figure is each process's own,
// added up.
import { family } from '../../common/metrics/family.ts';

/** Upper bounds in seconds of the answer-latency histogram. */
export const ANSWER_BUCKETS = [0.00001, 0.000025, 0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.05];

export const DNS_QUERIES = family({ name: 'palisade_dns_queries_total', type: 'counter', help: 'DNS queries answered, by transport, response code and query type.', labels: ['transport', 'rcode', 'qtype'] });
export const DNS_ANSWER_DURATION = family({ name: 'palisade_dns_answer_duration_seconds', type: 'histogram', help: 'Time from packet to response bytes.', buckets: ANSWER_BUCKETS });

export const DNS_ZONES_SERVED = family({ name: 'palisade_dns_zones_served', type: 'gauge', help: 'Zones answered for (name servers activated).', combine: 'first' });
export const DNS_REVISION_APPLIED = family({ name: 'palisade_dns_revision_applied', type: 'gauge', help: 'Revision of the change feed the zone index reflects.', combine: 'first' });
export const DNS_DEFERRED_REBUILDS = family({ name: 'palisade_dns_deferred_rebuilds', type: 'gauge', help: "Zones whose latest settings wait for their zone's or account's rebuild budget." });
export const DNS_CACHE_HITS = family({ name: 'palisade_dns_cache_hits_total', type: 'counter', help: 'Answers served from the encoded-answer cache.' });
export const DNS_CACHE_MISSES = family({ name: 'palisade_dns_cache_misses_total', type: 'counter', help: 'Answers built by the engine.' });
export const DNS_TRUNCATED = family({ name: 'palisade_dns_truncated_total', type: 'counter', help: 'Responses sent with TC=1.' });
export const DNS_MALFORMED = family({ name: 'palisade_dns_malformed_total', type: 'counter', help: 'Queries answered FORMERR/NOTIMP without reaching the engine.' });
export const DNS_DROPPED = family({ name: 'palisade_dns_dropped_total', type: 'counter', help: 'Packets not answered (too short, or responses).' });
export const DNS_INTERNAL_ERRORS = family({ name: 'palisade_dns_internal_errors_total', type: 'counter', help: 'Queries answered SERVFAIL after an internal error.' });
export const DNS_RATE_LIMITED = family({ name: 'palisade_dns_rate_limited_total', type: 'counter', help: 'UDP responses dropped or slipped (TC=1) by response-rate limiting.' });
export const DNS_TCP_CONNECTIONS = family({ name: 'palisade_dns_tcp_connections_total', type: 'counter', help: 'TCP connections accepted.' });
export const DNS_TCP_REJECTED = family({ name: 'palisade_dns_tcp_rejected_total', type: 'counter', help: 'TCP connections refused (the client network holds its share of connections).' });
export const DNS_TCP_EVICTED = family({ name: 'palisade_dns_tcp_evicted_total', type: 'counter', help: 'TCP connections closed to make room: for a new client (least recently answered first) or for the answer budget (slowest reader first).' });
export const DNS_TCP_OPEN = family({ name: 'palisade_dns_tcp_open', type: 'gauge', help: 'TCP connections open now.' });
export const DNS_TCP_BUFFERED_BYTES = family({ name: 'palisade_dns_tcp_buffered_bytes', type: 'gauge', help: 'Answer bytes waiting for TCP clients to read them.' });
export const DNS_COOKIES_VALID = family({ name: 'palisade_dns_cookies_valid_total', type: 'counter', help: 'Queries carrying a valid server cookie (exempt from response-rate limiting).' });
export const DNS_COOKIES_ISSUED = family({ name: 'palisade_dns_cookies_issued_total', type: 'counter', help: 'Server cookies sent.' });
export const DNS_TCP_TIMEOUTS = family({ name: 'palisade_dns_tcp_timeouts_total', type: 'counter', help: 'TCP connections closed idle.' });
export const DNS_SIGNATURES_MADE = family({ name: 'palisade_dns_signatures_made_total', type: 'counter', help: 'RRSIGs computed (not found in the signature cache).' });
export const DNS_SIGNATURE_CACHE_HITS = family({ name: 'palisade_dns_signature_cache_hits_total', type: 'counter', help: 'RRSIGs taken from the signature cache.' });
export const DNS_SIGNATURE_CACHE_ENTRIES = family({ name: 'palisade_dns_signature_cache_entries', type: 'gauge', help: 'Signatures held in the signature cache.' });
export const DNS_SIGNATURE_CACHE_BYTES = family({ name: 'palisade_dns_signature_cache_bytes', type: 'gauge', help: 'Estimated bytes of the signature cache (keys and signatures).' });
export const DNS_SIGNATURE_CACHE_EVICTED = family({ name: 'palisade_dns_signature_cache_evicted_total', type: 'counter', help: 'Signatures dropped from the signature cache to keep its bounds.' });
export const DNS_SIGNATURES_REFUSED_ZONE = family({ name: 'palisade_dns_signatures_refused_zone_total', type: 'counter', help: 'Answers not signed (SERVFAIL) because their zone had spent its fresh signatures for the second.' });
export const DNS_SIGNATURES_REFUSED_CLIENT = family({ name: 'palisade_dns_signatures_refused_client_total', type: 'counter', help: 'Answers not signed (SERVFAIL) because the client network had spent its fresh signatures for the second.' });
export const DNS_AXFR = family({ name: 'palisade_dns_axfr_total', type: 'counter', help: 'AXFR answered to secondaries.' });
export const DNS_IXFR = family({ name: 'palisade_dns_ixfr_total', type: 'counter', help: 'IXFR answered to secondaries.' });
export const DNS_IXFR_FULL = family({ name: 'palisade_dns_ixfr_full_total', type: 'counter', help: "IXFR answered with the whole zone (the asked serial's differences not held)." });
export const DNS_TRANSFERS_REFUSED = family({ name: 'palisade_dns_transfers_refused_total', type: 'counter', help: 'Transfer requests refused (not a listed secondary, no TSIG, not TCP, zone not served).' });
export const DNS_TSIG_FAILURES = family({ name: 'palisade_dns_tsig_failures_total', type: 'counter', help: 'Messages whose TSIG failed (BADKEY, BADSIG, BADTIME).' });
export const DNS_NOTIFY_SENT = family({ name: 'palisade_dns_notify_sent_total', type: 'counter', help: 'NOTIFY messages sent to secondaries (retries included).' });
export const DNS_NOTIFY_ANSWERED = family({ name: 'palisade_dns_notify_answered_total', type: 'counter', help: 'NOTIFY messages answered (properly signed).' });
export const DNS_NOTIFY_WAITING = family({ name: 'palisade_dns_notify_waiting', type: 'gauge', help: 'NOTIFY messages waiting for an answer.' });
export const DNS_TRANSFERS_RUNNING = family({ name: 'palisade_dns_transfers_running', type: 'gauge', help: 'Zone transfers being sent.' });
export const DNS_TRANSFERS_WAITING = family({ name: 'palisade_dns_transfers_waiting', type: 'gauge', help: 'Zone transfers waiting for their secondary to have fewer running (PALISADE_DNS_TRANSFERS_PER_SECONDARY).' });
export const DNS_TRANSFERS_QUEUED = family({ name: 'palisade_dns_transfers_queued_total', type: 'counter', help: 'Zone transfers that had to wait their turn.' });
export const DNS_IXFR_JOURNAL_BYTES = family({ name: 'palisade_dns_ixfr_journal_bytes', type: 'gauge', help: 'Bytes (estimated) of zone differences kept for IXFR, every DNS process added up.' });
export const DNS_IXFR_JOURNAL_ENTRIES = family({ name: 'palisade_dns_ixfr_journal_entries', type: 'gauge', help: 'Zone changes kept for IXFR, every DNS process added up.' });
export const DNS_IXFR_JOURNAL_EVICTED = family({ name: 'palisade_dns_ixfr_journal_evicted_total', type: 'counter', help: 'Zone changes dropped from the IXFR journal to stay within its bounds (a secondary behind them gets the whole zone).' });

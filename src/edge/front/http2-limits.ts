// The bounds of one HTTP/2 connection: what nghttp2 (through Node's options) enforces, and the
// rates we count ourselves (h2-flood.ts). A connection past any of them is ended with GOAWAY. Each
// line says whose default it is and why the value; docs/edge.md has the same table for operators.
import type { SecureServerOptions } from 'node:http2';

/** Node's options for the h2 sessions the edge serves. */
export const HTTP2_OPTIONS = {
  settings: {
    // Ours (Node's default is 2^32-1, i.e. none): nginx's default is 128, browsers open ≤ 100.
    maxConcurrentStreams: 128,
    // Ours: the decoded header list a request may carry (HPACK counts 32 bytes per field), a
    // bound on an HPACK bomb's expansion; 32 KiB holds any header block HTTP/1.1 accepts here (16 KiB).
    maxHeaderListSize: 32 * 1024,
    // The edge pushes nothing.
    enablePush: false,
  },
  // Node's default, stated: at most 128 fields (pseudo-headers included) in one header block.
  maxHeaderListPairs: 128,
  // Node's default (MB): the session's buffered frames, headers and outbound queue; past it new
  // streams are refused and a session that still grows is ended (nghttp2 ENHANCE_YOUR_CALM).
  maxSessionMemory: 10,
  // Node's default: PINGs we sent and not yet acknowledged (we send none; a bound regardless).
  maxOutstandingPings: 10,
  // Ours (Node: 32): SETTINGS frames sent and not yet acknowledged by the peer.
  maxSettings: 16,
  // Ours (Node: 1000): invalid frames (and empty DATA frames without END_STREAM, CVE-2019-9518)
  // before the session is ended.
  maxSessionInvalidFrames: 100,
  // Node's default: streams refused (past maxConcurrentStreams, or malformed) before the session ends.
  maxSessionRejectedStreams: 100,
  // Ours (nghttp2: burst 1000, 33/s): RST_STREAM frames the peer may send, as a token bucket, before
  // nghttp2 answers GOAWAY (its own Rapid Reset guard, CVE-2023-44487; ours in h2-flood.ts is per second).
  streamResetBurst: 200,
  streamResetRate: 100,
  // Node's default: a TLS socket that negotiated no protocol we serve is closed after this.
  unknownProtocolTimeout: 10_000,
} satisfies SecureServerOptions;

/** What we count per connection per second (h2-flood.ts); past any, GOAWAY ENHANCE_YOUR_CALM. */
export const HTTP2_RATES = {
  /**
   * Streams ended by a reset before their response was finished (by the client's RST_STREAM:
   * Rapid Reset; or by the server for the client's malformed frames: MadeYouReset, CVE-2025-8671).
   * A browser cancelling a page's requests resets dozens at once, not hundreds a second.
   */
  resets: 100,
  /** PING frames received (each one costs an answer). */
  pings: 20,
  /** SETTINGS frames received (each one costs an acknowledgement and a settings change). */
  settings: 20,
} as const;

/**
 * Ours: how long a peer whose connection was ended for a flood is refused new connections on the
 * TLS port (h2-flood.ts, FloodCoolOff). Long enough that a reconnecting attacker spends its time
 * refused; short enough that a household behind the same address is back within seconds.
 */
export const HTTP2_FLOOD_COOL_OFF_MS = 10_000;

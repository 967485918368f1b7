// Per-connection rates of the frames that cost the server work and the client nothing (resets,
// PINGs, SETTINGS): counted in one-second windows, one counter per kind. nghttp2 bounds some of
// these on its own (its outbound acknowledgement queue, its reset token bucket); these counts end
// a connection that keeps within those bounds but still floods. Pure: the caller says the time.

/**
 * Streams the client opened that never became requests, from what a session tells once a second:
 * the last stream id it processed (client streams are odd) and how many requests it gave us since.
 * nghttp2 and Node reset such a stream before any event reaches us (a header list past its
 * bounds: an HPACK bomb, a thousand fields); a client opening them by the hundred is flooding.
 */
export class RefusedStreams {
  private lastStreamId = 0;
  private requests = 0;

  /** A stream became a request. */
  request(): void {
    this.requests++;
  }

  /** The streams opened since the last look that did not become requests (a header block still arriving counts once, early). */
  since(lastStreamId: number): number {
    const opened = Math.max(0, Math.floor((lastStreamId + 1) / 2) - Math.floor((this.lastStreamId + 1) / 2));
    this.lastStreamId = Math.max(this.lastStreamId, lastStreamId);
    const refused = opened - this.requests;
    this.requests = Math.max(0, -refused);
    return Math.max(0, refused);
  }
}

export class FrameRates<Kind extends string> {
  private windowStart = 0;
  private readonly counts = new Map<Kind, number>();

  constructor(private readonly limits: Readonly<Record<Kind, number>>) {}

  /** Counts `n` (one) frames of `kind` at `now` (ms); true when the connection is past that kind's bound. */
  count(kind: Kind, now: number, n = 1): boolean {
    if (now - this.windowStart >= 1000) {
      this.windowStart = now;
      this.counts.clear();
    }
    const count = (this.counts.get(kind) ?? 0) + n;
    this.counts.set(kind, count);
    return count > this.limits[kind];
  }
}

/**
 * Peers whose connection was just ended for a flood: refused new connections on the TLS port for
 * a while, so that an attacker reconnecting at once costs a refused connection, not a handshake
 * and another hundred streams each time. Keyed by the TCP peer's address (the caller leaves
 * trusted proxies out); at most `max` remembered, the oldest forgotten first.
 */
export class FloodCoolOff {
  private readonly until = new Map<string, number>();

  constructor(
    private readonly ms: number,
    private readonly max = 10_000,
  ) {}

  strike(address: string, now: number): void {
    this.until.delete(address);
    this.until.set(address, now + this.ms);
    if (this.until.size > this.max) this.until.delete(this.until.keys().next().value!);
  }

  refuses(address: string, now: number): boolean {
    if (this.until.size === 0) return false;
    const until = this.until.get(address);
    if (until === undefined) return false;
    if (now < until) return true;
    this.until.delete(address);
    return false;
  }
}

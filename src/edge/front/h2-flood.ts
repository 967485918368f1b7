// Per-connection rates of the frames that cost the server work and the client nothing (resets,
// PINGs, SETTINGS): counted in one-second windows, one counter per kind. nghttp2 bounds some of
// these on its own (its outbound acknowledgement queue, its reset token bucket); these counts end
// a connection that keeps within those bounds but still floods. Pure: the caller says the time.

export class FrameRates<Kind extends string> {
  private windowStart = 0;
  private readonly counts = new Map<Kind, number>();

  constructor(private readonly limits: Readonly<Record<Kind, number>>) {}

  /** Counts one frame of `kind` at `now` (ms); true when the connection is past that kind's bound. */
  count(kind: Kind, now: number): boolean {
    if (now - this.windowStart >= 1000) {
      this.windowStart = now;
      this.counts.clear();
    }
    const count = (this.counts.get(kind) ?? 0) + 1;
    this.counts.set(kind, count);
    return count > this.limits[kind];
  }
}

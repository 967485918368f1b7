// Log lines for refused transfers and failed TSIG checks, so an operator sees who is knocking
// (a secondary with a stale key, a wrong address, a scanner) and not only a counter going up.
// One line per client per minute: the first refusal of a minute says what happened; those after
// it are counted and told in one line once that minute is over. Bounded against floods from many
// (over UDP, spoofed) addresses: at most MAX_CLIENTS followed at once and MAX_FIRST_LINES first
// lines a minute; past either, refusals are only counted, and told as one line a minute.
export const WINDOW_MS = 60_000;
const MAX_CLIENTS = 10_000;
const MAX_FIRST_LINES = 100;

export interface Refusal {
  client: string;
  /** "refused": a transfer (or the catalog) refused; "tsig": a TSIG that failed (BADKEY, BADSIG, BADTIME). */
  kind: 'refused' | 'tsig';
  /** Why, in words ("not over TCP", "BADSIG", …). */
  reason: string;
  zone?: string;
  /** The TSIG key name the message was signed with, if any. */
  key?: string;
}

export interface RefusalLine {
  message: string;
  fields: Record<string, unknown>;
}

interface Followed {
  since: number;
  refused: number;
  tsig: number;
}

export class RefusalLog {
  private readonly clients = new Map<string, Followed>();
  private windowStart = Number.NEGATIVE_INFINITY;
  private firstLines = 0;
  /** Refusals counted but neither told nor followed per client (past the bounds) in this window. */
  private unfollowed = { refused: 0, tsig: 0 };

  constructor(
    private readonly write: (line: RefusalLine) => void,
    private readonly now: () => number = Date.now,
  ) {}

  note(refusal: Refusal): void {
    const now = this.now();
    if (now - this.windowStart >= WINDOW_MS) this.flush(now);
    const followed = this.clients.get(refusal.client);
    if (followed) {
      followed[refusal.kind]++;
      return;
    }
    if (this.firstLines >= MAX_FIRST_LINES || this.clients.size >= MAX_CLIENTS) {
      this.unfollowed[refusal.kind]++;
      return;
    }
    this.firstLines++;
    this.clients.set(refusal.client, { since: now, refused: 0, tsig: 0 });
    const { kind, ...fields } = refusal;
    const what = kind === 'tsig' ? 'TSIG check failed' : 'zone transfer refused';
    this.write({ message: `dns: ${what} (more from this client within a minute are counted, told in one line)`, fields });
  }

  /** Tells the counts of every client whose minute is over, and forgets it (called by a timer, and on each note). */
  flush(now = this.now()): void {
    for (const [client, followed] of this.clients) {
      if (now - followed.since < WINDOW_MS) continue;
      this.clients.delete(client);
      if (followed.refused + followed.tsig > 0) this.write({ message: 'dns: zone transfers refused and TSIG failures from one client in the last minute', fields: { client, refused: followed.refused, tsigFailures: followed.tsig } });
    }
    if (now - this.windowStart >= WINDOW_MS) {
      const { refused, tsig } = this.unfollowed;
      if (refused + tsig > 0) this.write({ message: 'dns: zone transfers refused and TSIG failures from clients past the logging bounds in the last minute', fields: { refused, tsigFailures: tsig } });
      this.unfollowed = { refused: 0, tsig: 0 };
      this.windowStart = now;
      this.firstLines = 0;
    }
  }
}

// Per-client limits for domains with baseprotection: a request rate (token bucket per client
// address: 429 past it) and a temporary ban for bad behaviour (BunkerWeb's rule: 10 refused
// requests within 60 s → banned for a while). Bounded: the least recently seen clients are
// forgotten first. A ban can be heard of (onBan) and passed on: the edge role's workers ban a
// client together.
import { lruByCount } from '../lru-by-count.ts';

export interface ClientLimitOptions {
  /** Requests per second per client; 0 = no rate limit. */
  rate: number;
  burst: number;
  /** Refusals within the window that earn a ban; 0 = never ban. */
  banAfter: number;
  banWindowMs: number;
  banMs: number;
}

interface ClientState {
  tokens: number;
  at: number;
  refusals: number[];
  bannedUntil: number;
}

export class ClientLimits {
  private readonly clients = lruByCount<string, ClientState>(200_000);

  /** Called when this process bans a client (not for bans passed in with ban()). */
  onBan: ((client: string, until: number) => void) | undefined;

  constructor(private readonly options: ClientLimitOptions) {}

  /** A ban decided elsewhere (another worker of this node), until the given time. */
  ban(client: string, until: number): void {
    const state = this.state(client, Date.now());
    state.bannedUntil = Math.max(state.bannedUntil, until);
  }

  private state(client: string, now: number): ClientState {
    let state = this.clients.get(client);
    if (!state) this.clients.set(client, (state = { tokens: this.options.burst, at: now, refusals: [], bannedUntil: 0 }));
    return state;
  }

  /** Why the client may not send this request now, if it may not. */
  check(client: string): { status: 403 | 429; reason: 'banned' | 'rate-limited'; retryAfter: number } | undefined {
    const now = Date.now();
    const state = this.state(client, now);
    if (state.bannedUntil > now) return { status: 403, reason: 'banned', retryAfter: Math.ceil((state.bannedUntil - now) / 1000) };
    if (this.options.rate <= 0) return undefined;
    state.tokens = Math.min(this.options.burst, state.tokens + ((now - state.at) / 1000) * this.options.rate);
    state.at = now;
    if (state.tokens < 1) return { status: 429, reason: 'rate-limited', retryAfter: Math.ceil((1 - state.tokens) / this.options.rate) };
    state.tokens -= 1;
    return undefined;
  }

  /** A request of this client was refused (WAF, protocol): counts towards a ban. */
  refused(client: string): void {
    if (this.options.banAfter <= 0) return;
    const now = Date.now();
    const state = this.state(client, now);
    state.refusals = state.refusals.filter((t) => now - t < this.options.banWindowMs);
    state.refusals.push(now);
    if (state.refusals.length < this.options.banAfter) return;
    state.bannedUntil = now + this.options.banMs;
    state.refusals = [];
    this.onBan?.(client, state.bannedUntil);
  }
}

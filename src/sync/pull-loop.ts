// What every consumer of the change feed (name server, edge) does alike: pull pages of changes in
// revision order until up to date — a snapshot first when it holds nothing, or when the API
// answers 410 (fallen behind the retained history) — on a timer and whenever a push says so
// (concurrent calls coalesce); log a failing API once, and its return once; keep the figures
// /healthz reports (applied, the API's revision, last success, since when behind).
import type { Logger } from 'pino';
import { coalesced } from '../common/coalesce.ts';

/** A page of changes may take seconds. */
const CHANGES_TIMEOUT_MS = 10_000;

export interface PullLoopOptions {
  /** Base URL of the API, e.g. http://api.internal:8080 */
  url: string;
  token: string;
  pollMs: number;
  log: Logger;
  /** Changes asked for per page (1000). */
  pageLimit?: number;
}

export abstract class PullLoop<Page extends { revision: number; current: number }> {
  applied = 0;
  /** The API's revision at the last successful pull. */
  current = 0;
  lastSuccess = 0;
  /** Since when the API has been known to be ahead of what is applied (ms), 0 when not behind. */
  behindSince = 0;
  readonly startedAt = Date.now();
  private timer: NodeJS.Timeout | undefined;
  private failing = false;

  constructor(
    protected readonly options: PullLoopOptions,
    /** The feed's changes path, and the prefix of log lines ("sync", "edge sync"). */
    private readonly feed: { changesPath: string; snapshotPath: string; who: string },
  ) {}

  /** Applies a whole snapshot (streamed from `res`); sets `applied` to its revision. */
  protected abstract loadSnapshot(res: Response): Promise<void>;
  /** Applies one page of changes; sets `applied` to its revision. */
  protected abstract apply(page: Page): Promise<void>;

  protected startPolling(): void {
    this.timer = setInterval(() => void this.catchUp(), this.options.pollMs);
    this.timer.unref();
    void this.catchUp();
  }

  protected async stopPolling(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.catchUp.settled();
  }

  private fetch(path: string, timeoutMs: number): Promise<Response> {
    return fetch(`${this.options.url}${path}`, { headers: { authorization: `Bearer ${this.options.token}` }, signal: AbortSignal.timeout(timeoutMs) });
  }

  /** One JSON document from the API; undefined when it answers 404. */
  protected async fetchDocument<T>(path: string): Promise<T | undefined> {
    const res = await this.fetch(path, CHANGES_TIMEOUT_MS);
    if (res.status === 404) {
      await res.body?.cancel();
      return undefined;
    }
    if (res.status !== 200) {
      await res.body?.cancel();
      throw new Error(`GET ${path} answered ${res.status}`);
    }
    return (await res.json()) as T;
  }

  /** Pulls until up to date; concurrent calls (polls, pushes) coalesce. */
  readonly catchUp = coalesced(async () => {
    try {
      while (await this.pull());
      if (this.failing) this.options.log.info({ revision: this.applied }, `${this.feed.who}: API reachable again; caught up`);
      this.failing = false;
      this.lastSuccess = Date.now();
      this.behindSince = this.applied < this.current ? this.behindSince || Date.now() : 0;
    } catch (error) {
      if (!this.failing) {
        this.options.log.error(
          { err: pullFailure(error), url: this.options.url, revision: this.applied },
          `${this.feed.who}: cannot pull from the API; serving the last applied state. ${certificateRefused(error) ? "The API's certificate is not trusted: set PALISADE_SYNC_CA_FILE to the PEM certificate of the CA that signed it" : 'Check PALISADE_SYNC_URL, the network path to the API, and PALISADE_SYNC_TOKEN'}`,
        );
      }
      this.failing = true;
    }
  });

  private async snapshot(timeoutMs: number): Promise<void> {
    const res = await this.fetch(this.feed.snapshotPath, timeoutMs);
    if (res.status !== 200 || !res.body) {
      await res.body?.cancel();
      throw new Error(`GET ${this.feed.snapshotPath} answered ${res.status}`);
    }
    await this.loadSnapshot(res);
    this.current = Math.max(this.current, this.applied);
  }

  /** One page of changes (or a snapshot); true when more may be waiting. */
  private async pull(): Promise<boolean> {
    // A snapshot may take minutes to arrive.
    const snapshotTimeoutMs = 600_000;
    if (this.applied === 0) {
      await this.snapshot(snapshotTimeoutMs);
      return true;
    }
    const path = this.feed.changesPath;
    const res = await this.fetch(`${path}${path.includes('?') ? '&' : '?'}since=${this.applied}&limit=${this.options.pageLimit ?? 1000}`, CHANGES_TIMEOUT_MS);
    if (res.status === 410) {
      await res.body?.cancel();
      this.options.log.warn({ revision: this.applied }, `${this.feed.who}: our revision is older than the API keeps; loading a fresh snapshot`);
      await this.snapshot(snapshotTimeoutMs);
      return true;
    }
    if (res.status !== 200) {
      await res.body?.cancel();
      throw new Error(`GET ${this.feed.changesPath} answered ${res.status}`);
    }
    const page = (await res.json()) as Page;
    this.current = page.current;
    if (page.revision <= this.applied) return false;
    await this.apply(page);
    return page.revision < page.current;
  }
}

/** fetch says only "fetch failed": the cause (refused, reset, a certificate) is what an operator needs. */
function pullFailure(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  return cause ? `${(error as Error).message}: ${cause.code ?? ''}${cause.code && cause.message ? ' ' : ''}${cause.message ?? ''}`.trim() : (error as Error).message;
}

/** TLS verification failures of the API's certificate (its CA unknown, its name or dates wrong). */
const CERTIFICATE_CODES = new Set(['UNABLE_TO_VERIFY_LEAF_SIGNATURE', 'SELF_SIGNED_CERT_IN_CHAIN', 'DEPTH_ZERO_SELF_SIGNED_CERT', 'UNABLE_TO_GET_ISSUER_CERT_LOCALLY', 'CERT_HAS_EXPIRED', 'ERR_TLS_CERT_ALTNAME_INVALID']);

function certificateRefused(error: unknown): boolean {
  return CERTIFICATE_CODES.has((error as { cause?: { code?: string } }).cause?.code ?? '');
}

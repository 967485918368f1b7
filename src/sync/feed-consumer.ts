// The one shape of every change-feed consumer (name servers and edges, fed by a store in the same
// process or by the API over HTTP): serve what is kept locally, then pull pages of changes in
// revision order until up to date — a snapshot first when nothing is held, or when the source no
// longer holds our revision (`gone`) — whenever the source signals news (a commit, a push, the
// poll timer; concurrent calls coalesce). A failing source is logged once, and its return once;
// the next signal retries. What differs is handed in: the source (where pages and snapshots come
// from) and the role's view (what a page does to what this process serves, and what it keeps).
import type { Logger } from 'pino';
import { coalesced } from '../common/coalesce.ts';

/** The source no longer holds the changes after our revision: a snapshot is needed. */
export interface Gone {
  gone: true;
}

export interface FeedPage {
  /** The last revision the page includes. */
  revision: number;
  /** The source's revision when the page was read. */
  current: number;
}

/** Where a consumer's snapshot and changes come from: a store in this process, or the API over HTTP. */
export interface FeedSource<Page extends FeedPage, Snapshot> {
  /** Prefix of log lines ("sync", "edge sync"). */
  readonly who: string;
  /** Whether `start` waits for the first snapshot (a store in the same process), or serves what is kept and pulls in the background. */
  readonly awaitFirstSnapshot: boolean;
  snapshot(): Promise<Snapshot>;
  changes(since: number): Promise<Page | Gone>;
  /** Calls `wake` whenever there may be news; returns what stops it. */
  follow(wake: () => void): () => void;
  /** The log line for a failing source (told once until it works again). */
  failure(error: unknown): { fields: Record<string, unknown>; message: string };
  readonly messages: { gone: string; back: string };
}

/** What the view advances: `applied` is set by the view in the same step as it applies. */
export interface Progress {
  applied: number;
}

/** A role's side: what a snapshot and a page do to what it serves, and what it keeps on disk. */
export interface FeedView<Page extends FeedPage, Snapshot> {
  /** Loads what is kept locally (synchronous: the caller serves right after); its revision, 0 for nothing. */
  resume(): number;
  /** Replaces everything with the snapshot; sets `at.applied` to its revision. */
  load(snapshot: Snapshot, at: Progress): Promise<void>;
  /** Applies one page (in one synchronous step for what is served); sets `at.applied`. */
  apply(page: Page, at: Progress): Promise<void>;
  close(): Promise<void>;
  /** Why what is kept on disk is behind what is served (a full or failing disk), for /healthz. */
  readonly localStateProblem?: { reason: string; since: number } | undefined;
}

export class FeedConsumer<Page extends FeedPage, Snapshot> implements Progress {
  applied = 0;
  /** The source's revision at the last successful pull. */
  current = 0;
  lastSuccess = 0;
  /** Since when the source has been known to be ahead of what is applied (ms), 0 when not behind. */
  behindSince = 0;
  readonly startedAt = Date.now();
  private failing = false;
  private unfollow: (() => void) | undefined;

  constructor(
    protected readonly source: FeedSource<Page, Snapshot>,
    protected readonly view: FeedView<Page, Snapshot>,
    protected readonly log: Logger,
  ) {}

  /** The last revision applied (the name the in-process consumers always had). */
  get revision(): number {
    return this.applied;
  }

  get localStateProblem(): { reason: string; since: number } | undefined {
    return this.view.localStateProblem;
  }

  /**
   * Serves what is kept (synchronously: for a remote source the caller may answer as soon as the
   * returned promise exists), then follows the source. A source in the same process is read whole
   * first, and its failure is the caller's (a start-up error). Each consumer's `start` calls this,
   * typed as its role has always used it.
   */
  protected begin(): Promise<void> {
    this.applied = this.view.resume();
    if (!this.source.awaitFirstSnapshot) {
      this.unfollow = this.source.follow(() => void this.catchUp());
      return Promise.resolve();
    }
    return this.loadSnapshot().then(() => {
      this.unfollow = this.source.follow(() => void this.catchUp());
    });
  }

  /** Stops following at once; resolves once a pull in progress is over and what is kept is closed. */
  protected end(): Promise<void> {
    this.unfollow?.();
    this.unfollow = undefined;
    return this.catchUp.settled().then(() => this.view.close());
  }

  /** Pulls until up to date; concurrent calls (commits, pushes, polls) coalesce. */
  readonly catchUp = coalesced(async () => {
    try {
      while (await this.pull());
      if (this.failing) this.log.info({ revision: this.applied }, `${this.source.who}: ${this.source.messages.back}`);
      this.failing = false;
      this.lastSuccess = Date.now();
      this.behindSince = this.applied < this.current ? this.behindSince || Date.now() : 0;
    } catch (error) {
      if (!this.failing) {
        const { fields, message } = this.source.failure(error);
        this.log.error({ ...fields, revision: this.applied }, `${this.source.who}: ${message}`);
      }
      this.failing = true;
    }
  });

  private async loadSnapshot(): Promise<void> {
    await this.view.load(await this.source.snapshot(), this);
    this.current = Math.max(this.current, this.applied);
  }

  /** One page of changes (or a snapshot); true when more may be waiting. */
  private async pull(): Promise<boolean> {
    if (this.applied === 0) {
      await this.loadSnapshot();
      // A snapshot at revision 0 (nothing ever written) has nothing after it yet.
      return this.applied > 0;
    }
    const page = await this.source.changes(this.applied);
    if ('gone' in page) {
      this.log.warn({ revision: this.applied }, `${this.source.who}: ${this.source.messages.gone}`);
      await this.loadSnapshot();
      return this.applied > 0;
    }
    this.current = page.current;
    if (page.revision <= this.applied) return false;
    await this.view.apply(page, this);
    return page.revision < page.current;
  }
}

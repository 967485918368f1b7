// The dns role's name server: the one feed consumer (feed-consumer.ts) fed by the API over HTTP
// (GET /sync/changes?v=2 in order; GET /sync/snapshot, streamed, when nothing is held or after
// 410), viewed as a name server with a local state on disk, served at start even with the API down.
import type { ZoneIndex } from '../dns/zone/index.ts';
import type { ChangePage } from './change-page.ts';
import { FeedConsumer } from './feed-consumer.ts';
import { HttpFeed, type HttpFeedOptions } from './http-source.ts';
import { nameServerHttpSource, type ZoneSnapshot } from './name-server-sources.ts';
import { NameServerView, type AppliedEvent } from './name-server-view.ts';

export type { AppliedEvent } from './name-server-view.ts';

export interface RemoteFeedOptions extends HttpFeedOptions {
  /** Directory of the local state. */
  dataDir: string;
  /** Told of what reached the index, for other processes' indexes (src/roles/dns-workers). */
  onApplied?: (event: AppliedEvent) => void;
}

export class RemoteFeed extends FeedConsumer<ChangePage, ZoneSnapshot> {
  constructor(index: ZoneIndex, options: RemoteFeedOptions) {
    const source = nameServerHttpSource(new HttpFeed(options));
    super(source, new NameServerView(index, source, { log: options.log, dataDir: options.dataDir, onApplied: options.onApplied }), options.log);
  }

  /** Serves the local state (the caller may serve DNS as soon as this returns), then pulls in the background. */
  start(): void {
    void this.begin();
  }

  stop(): Promise<void> {
    return this.end();
  }
}

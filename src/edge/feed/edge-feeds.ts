// The edge's two consumers, each the one feed consumer (../../sync/feed-consumer.ts) with the
// edge's view (edge-view.ts) and a source (edge-sources.ts):
//   StoreEdgeFeed — the serve role's edge: the store in this process (read whole before serving,
//     then every commit and a poll), nothing kept on disk;
//   RemoteEdgeFeed — the edge role: one node's share from the API over HTTP (polled; a verified
//     push calls catchUp), kept on disk and served at start.
import type { Logger } from 'pino';
import type { CertificateState } from '../../model/certificate.ts';
import type { EdgeChangePage } from '../../sync/edge-feed-format.ts';
import type { Store } from '../../store/types.ts';
import { FeedConsumer } from '../../sync/feed-consumer.ts';
import { HttpFeed, type HttpFeedOptions } from '../../sync/http-source.ts';
import type { EdgeState } from '../edge-state.ts';
import { edgeHttpSource, edgeStoreSource, type EdgeSnapshot } from './edge-sources.ts';
import { EdgeView } from './edge-view.ts';

export class StoreEdgeFeed extends FeedConsumer<EdgeChangePage, EdgeSnapshot> {
  constructor(
    store: Store,
    state: EdgeState,
    log: Logger,
    pollMs = 1000,
    /** Gives a certificate with its private key opened (the store keeps it sealed). */
    openKey: (cert: CertificateState) => CertificateState = (c) => c,
  ) {
    super(edgeStoreSource(store, pollMs, openKey), new EdgeView(state, { log }), log);
  }

  /** Reads the store whole (certificates opened: a missing operator key fails here), then follows its commits. */
  start(): Promise<void> {
    return this.begin();
  }

  /** Stops following (a pull in progress finishes on its own). */
  stop(): void {
    void this.end();
  }
}

export interface RemoteEdgeFeedOptions extends HttpFeedOptions {
  /** The consumer's HMAC secret: also the key of the digests that announce departed names. */
  secret: string;
  dataDir: string;
}

export class RemoteEdgeFeed extends FeedConsumer<EdgeChangePage, EdgeSnapshot> {
  constructor(state: EdgeState, options: RemoteEdgeFeedOptions) {
    super(edgeHttpSource(new HttpFeed(options)), new EdgeView(state, { log: options.log, kept: { dataDir: options.dataDir, secret: options.secret } }), options.log);
  }

  /** Serves the local state (the caller may listen as soon as this returns), then pulls in the background. */
  start(): void {
    void this.begin();
  }

  stop(): Promise<void> {
    return this.end();
  }
}

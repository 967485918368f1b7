// The serve role's name server: the one feed consumer (feed-consumer.ts) fed by the store in this
// process (a snapshot read before serving, then the changes after every local commit and by
// polling), viewed as a name server without a local state.
import type { Logger } from 'pino';
import type { ZoneIndex } from '../dns/zone/index.ts';
import type { DomainState } from '../model/domain.ts';
import type { Store } from '../store/types.ts';
import type { ChangePage } from './change-page.ts';
import { FeedConsumer } from './feed-consumer.ts';
import { nameServerStoreSource, type ZoneSnapshot } from './name-server-sources.ts';
import { NameServerView } from './name-server-view.ts';

export class StoreFeed extends FeedConsumer<ChangePage, ZoneSnapshot> {
  constructor(
    store: Store,
    index: ZoneIndex,
    log: Logger,
    pollMs = 1000,
    /** A domain as this name server holds it (signing keys opened: name-server-domain.ts). */
    domainView: (domain: DomainState) => DomainState = (domain) => domain,
  ) {
    const source = nameServerStoreSource(store, pollMs, domainView);
    super(source, new NameServerView(index, source, { log }), log);
  }

  /** Reads the store's snapshot (its failure is the caller's), then follows the store's commits. */
  start(): Promise<void> {
    return this.begin();
  }

  /** Stops following (a pull in progress finishes on its own). */
  stop(): void {
    void this.end();
  }
}

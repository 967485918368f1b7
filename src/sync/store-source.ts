// The transport of a consumer fed by a store in the same process (the serve role's name server
// and edge): news after every commit made through this store object (within milliseconds), and by
// polling for commits other processes make (the operator CLI); the first snapshot is read before
// serving. What the pages hold is the role's source's business.
import type { Store } from '../store/types.ts';
import type { FeedSource } from './feed-consumer.ts';

export type StoreSourceParts = Pick<FeedSource<never, never>, 'awaitFirstSnapshot' | 'follow' | 'failure' | 'messages'>;

export function storeSourceParts(store: Store, pollMs: number): StoreSourceParts {
  return {
    awaitFirstSnapshot: true,
    follow: (wake) => {
      const unsubscribe = store.onCommit(wake);
      const timer = setInterval(wake, pollMs);
      timer.unref();
      return () => {
        unsubscribe();
        clearInterval(timer);
      };
    },
    failure: (error) => ({ fields: { err: error }, message: 'applying store changes failed; retrying at the next poll' }),
    messages: { gone: 'the change feed no longer holds our revision; reloading the snapshot', back: 'store changes apply again; caught up' },
  };
}

// How an in-process consumer follows a store: `catchUp` after every commit made through this store
// object (within milliseconds), and by polling for commits other processes make (the admin CLI).
// Returns the function that stops following.
import type { Store } from '../store/types.ts';

export function followStore(store: Store, pollMs: number, catchUp: () => unknown): () => void {
  const unsubscribe = store.onCommit(() => void catchUp());
  const timer = setInterval(() => void catchUp(), pollMs);
  timer.unref();
  return () => {
    unsubscribe();
    clearInterval(timer);
  };
}

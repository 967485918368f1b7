// An LRU bounded by its number of entries that holds memory for the entries it has, not for the
// most it may have. lru-cache given `max` makes its key and value lists that long at once (filled:
// every page touched), so the edge's five count-bounded caches held ~12 MB per process idle — in
// every edge worker. Bounded as a size where each entry weighs 1, its lists grow with use instead.
import { LRUCache } from 'lru-cache';

// lru-cache's own bounds on keys and values (`{}`: anything but null and undefined).
// eslint-disable-next-line @typescript-eslint/no-empty-object-type
type Options<K extends {}, V extends {}> = Omit<LRUCache.Options<K, V, unknown>, 'max' | 'maxSize' | 'sizeCalculation'>;

// eslint-disable-next-line @typescript-eslint/no-empty-object-type
export function lruByCount<K extends {}, V extends {}>(entries: number, options: Options<K, V> = {}): LRUCache<K, V> {
  return new LRUCache<K, V>({ ...options, maxSize: entries, sizeCalculation: () => 1 } as LRUCache.Options<K, V, unknown>);
}

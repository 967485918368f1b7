// A max-heap of items by a size they carry, each knowing its own place in it: the largest found
// in O(1), an item's size changed (or the item removed) in O(log n). The journal keeps its
// accounts in one, so that past the global bound the account holding the most gives up first.

export interface Sized {
  /** What the heap orders by (the item's owner changes it, then calls `update`). */
  bytes: number;
  /** The item's index in the heap (-1: not in it); the heap's to set. */
  slot: number;
}

export class LargestFirst<T extends Sized> {
  private readonly items: T[] = [];

  get size(): number {
    return this.items.length;
  }

  largest(): T | undefined {
    return this.items[0];
  }

  /** Adds the item (absent) or moves it to where its size now puts it. */
  update(item: T): void {
    if (item.slot === -1) {
      item.slot = this.items.length;
      this.items.push(item);
    }
    this.down(this.up(item.slot));
  }

  remove(item: T): void {
    const at = item.slot;
    if (at === -1) return;
    const last = this.items.pop()!;
    item.slot = -1;
    if (last === item) return;
    this.items[at] = last;
    last.slot = at;
    this.down(this.up(at));
  }

  private up(at: number): number {
    const item = this.items[at]!;
    while (at > 0) {
      const parent = (at - 1) >> 1;
      const above = this.items[parent]!;
      if (above.bytes >= item.bytes) break;
      this.place(above, at);
      at = parent;
    }
    this.place(item, at);
    return at;
  }

  private down(at: number): void {
    const item = this.items[at]!;
    const n = this.items.length;
    for (;;) {
      const left = 2 * at + 1;
      if (left >= n) break;
      const right = left + 1;
      const child = right < n && this.items[right]!.bytes > this.items[left]!.bytes ? right : left;
      const below = this.items[child]!;
      if (below.bytes <= item.bytes) break;
      this.place(below, at);
      at = child;
    }
    this.place(item, at);
  }

  private place(item: T, at: number): void {
    this.items[at] = item;
    item.slot = at;
  }
}

// A list that grows at the back and is trimmed at the front, each in amortised constant time: the
// memory backend's retained events, trimmed by one on every append once at its cap. An array's
// splice(0, n) moves every element left each time (a 100 000-event log spent most of a webhook's
// time there); here the front only moves an offset, and the array is compacted once the trimmed
// part is as long as what remains.
const COMPACT_AFTER = 1_024;

export class FrontTrimmedList<T> {
  private items: T[] = [];
  private head = 0;

  get length(): number {
    return this.items.length - this.head;
  }

  at(index: number): T | undefined {
    return index < 0 ? undefined : this.items[this.head + index];
  }

  push(item: T): void {
    this.items.push(item);
  }

  /** Drops the first `count` items (all of them when there are fewer). */
  dropFront(count: number): void {
    if (count <= 0) return;
    this.head = Math.min(this.items.length, this.head + count);
    if (this.head === this.items.length) {
      this.items = [];
      this.head = 0;
    } else if (this.head >= COMPACT_AFTER && this.head * 2 >= this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
  }

  /** Items `from` (inclusive) to `to` (exclusive), as Array.prototype.slice counts them. */
  slice(from: number, to: number): T[] {
    return this.items.slice(this.head + Math.max(0, from), this.head + Math.max(0, Math.min(to, this.length)));
  }
}

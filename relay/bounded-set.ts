// A set of strings that forgets its oldest entries beyond a size: recent cursors, kept cheaply.

export class BoundedSet {
  private readonly items = new Set<string>();

  constructor(private readonly max: number) {}

  get size(): number {
    return this.items.size;
  }

  add(item: string): void {
    this.items.delete(item);
    this.items.add(item);
    if (this.items.size > this.max) {
      const oldest = this.items.values().next();
      if (!oldest.done) this.items.delete(oldest.value);
    }
  }

  has(item: string): boolean {
    return this.items.has(item);
  }

  delete(item: string): boolean {
    return this.items.delete(item);
  }
}

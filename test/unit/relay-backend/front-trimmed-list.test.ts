import { describe, expect, test } from 'vitest';
import { FrontTrimmedList } from '../../../relay/backend/front-trimmed-list';

/** The same operations on a plain array, the meaning the list must keep. */
function model(): { items: number[]; drop(n: number): void } {
  const items: number[] = [];
  return { items, drop: (n) => void items.splice(0, Math.max(0, n)) };
}

describe('FrontTrimmedList', () => {
  test('reads, slices and trims like an array, across many compactions', () => {
    const list = new FrontTrimmedList<number>();
    const m = model();
    let next = 0;
    for (let round = 0; round < 5_000; round += 1) {
      const pushes = (round * 7) % 5;
      for (let i = 0; i < pushes; i += 1) {
        list.push(next);
        m.items.push(next);
        next += 1;
      }
      const drops = (round * 3) % 4;
      list.dropFront(drops);
      m.drop(drops);
      expect(list.length).toBe(m.items.length);
      expect(list.at(0)).toBe(m.items[0]);
      expect(list.at(list.length - 1)).toBe(m.items[m.items.length - 1]);
      expect(list.at(list.length)).toBeUndefined();
      expect(list.slice(1, 4)).toEqual(m.items.slice(1, 4));
    }
    expect(next).toBeGreaterThan(9_000);
    expect(list.slice(0, list.length)).toEqual(m.items);
  });

  test('a trim past the end empties it; a negative index reads nothing', () => {
    const list = new FrontTrimmedList<string>();
    for (const s of ['a', 'b', 'c']) list.push(s);
    expect(list.at(-1)).toBeUndefined();
    list.dropFront(10);
    expect(list.length).toBe(0);
    expect(list.slice(0, 5)).toEqual([]);
    list.push('d');
    expect(list.slice(0, 5)).toEqual(['d']);
    list.dropFront(0);
    list.dropFront(-3);
    expect(list.at(0)).toBe('d');
  });

  test('a log at its cap, trimmed by one per append, keeps the newest in order', () => {
    const list = new FrontTrimmedList<number>();
    const cap = 3_000;
    for (let i = 0; i < 20_000; i += 1) {
      list.push(i);
      if (list.length > cap) list.dropFront(list.length - cap);
    }
    expect(list.length).toBe(cap);
    expect(list.at(0)).toBe(17_000);
    expect(list.slice(cap - 2, cap + 5)).toEqual([19_998, 19_999]);
  });
});

import { describe, expect, it } from 'vitest';
import { compact } from '../../../shared/compact';

describe('compact', () => {
  it('leaves out the undefined members only, in order, and keeps null, 0, false and empty strings', () => {
    const out = compact({ a: 1, b: undefined, c: null, d: 0, e: false, f: '', g: undefined, h: [undefined] });
    expect(out).toEqual({ a: 1, c: null, d: 0, e: false, f: '', h: [undefined] });
    expect(Object.keys(out)).toEqual(['a', 'c', 'd', 'e', 'f', 'h']);
    expect(JSON.stringify(out)).toBe('{"a":1,"c":null,"d":0,"e":false,"f":"","h":[null]}');
  });

  it('copies: the input is untouched and nested objects are shared, not compacted', () => {
    const nested = { x: undefined };
    const input = { keep: nested, drop: undefined };
    const out = compact(input);
    expect(out).not.toBe(input);
    expect(Object.keys(input)).toEqual(['keep', 'drop']);
    expect(out.keep).toBe(nested);
  });

  it('takes own members only, and a member named __proto__ stays a member without changing the prototype', () => {
    const inherited = Object.create({ fromProto: 1 }) as Record<string, unknown>;
    inherited.own = 2;
    expect(compact(inherited)).toEqual({ own: 2 });

    const parsed = JSON.parse('{"__proto__": {"polluted": true}, "ok": 1}') as Record<string, unknown>;
    const out = compact(parsed) as Record<string, unknown>;
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
    expect(Object.keys(out)).toEqual(['__proto__', 'ok']);
    expect((out as { polluted?: boolean }).polluted).toBeUndefined();
    expect(({} as { polluted?: boolean }).polluted).toBeUndefined();
  });
});

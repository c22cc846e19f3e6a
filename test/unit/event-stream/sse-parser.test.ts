import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { SseParser, reconnectDelay, retryAfterMs, type SseMessage } from '../../../electron/core/event-stream';

/** Feeds `bytes` split at `cuts` through a streaming UTF-8 decoder, as the client does. */
function parseInPieces(bytes: Uint8Array, cuts: number[]): SseMessage[] {
  const parser = new SseParser();
  const decoder = new TextDecoder('utf-8');
  const out: SseMessage[] = [];
  let start = 0;
  for (const cut of [...new Set(cuts)].sort((a, b) => a - b)) {
    out.push(...parser.push(decoder.decode(bytes.subarray(start, cut), { stream: true })));
    start = cut;
  }
  out.push(...parser.push(decoder.decode(bytes.subarray(start), { stream: true })));
  return out;
}

describe('SseParser', () => {
  it('parses id, data, event and comments, and carries the last id over', () => {
    const parser = new SseParser();
    const text = ': hb\n\nid: a-1\ndata: {"x":1}\n\nevent: other\ndata: one\ndata: two\n\ndata:no-space\n\nid\ndata: cleared\n\n';
    expect(parser.push(text)).toEqual([
      { id: 'a-1', event: 'message', data: '{"x":1}' },
      { id: 'a-1', event: 'other', data: 'one\ntwo' },
      { id: 'a-1', event: 'message', data: 'no-space' },
      { id: '', event: 'message', data: 'cleared' },
    ]);
  });

  it('does not dispatch a block without data, nor an unfinished one', () => {
    const parser = new SseParser();
    expect(parser.push('id: a-9\n\nid: a-10\ndata: half')).toEqual([]);
    expect(parser.push('\n\n')).toEqual([{ id: 'a-10', event: 'message', data: 'half' }]);
  });

  it('gives the same events however the bytes are split, for every kind of line break', () => {
    const event = fc.record({
      id: fc.stringMatching(/^[a-z0-9]{1,8}-[0-9]{1,5}$/),
      data: fc.array(fc.string({ unit: 'grapheme' }).map((s) => s.replace(/[\r\n]/g, '')), { minLength: 1, maxLength: 3 }),
      comment: fc.boolean(),
    });
    fc.assert(
      fc.property(fc.array(event, { minLength: 1, maxLength: 6 }), fc.constantFrom('\n', '\r\n', '\r'), fc.array(fc.nat(), { maxLength: 20 }), (events, eol, rawCuts) => {
        const text = events.map((e) => `${e.comment ? `: hb${eol}${eol}` : ''}id: ${e.id}${eol}${e.data.map((d) => `data: ${d}${eol}`).join('')}${eol}`).join('');
        const bytes = new TextEncoder().encode(text);
        const cuts = rawCuts.map((c) => c % (bytes.length + 1));
        const expected = events.map((e) => ({ id: e.id, event: 'message', data: e.data.join('\n') }));
        expect(parseInPieces(bytes, cuts)).toEqual(expected);
      }),
      { numRuns: 300 },
    );
  });

  it('survives a split between CR and LF', () => {
    const parser = new SseParser();
    expect(parser.push('data: a\r')).toEqual([]);
    expect(parser.push('\n\r')).toEqual([{ id: undefined, event: 'message', data: 'a' }]);
    expect(parser.push('\ndata: b\r\n\r\n')).toEqual([{ id: undefined, event: 'message', data: 'b' }]);
  });
});

describe('reconnectDelay', () => {
  it('starts near 200 ms, doubles, and stays within 5 s', () => {
    expect(reconnectDelay(0, 200, 5_000, () => 0)).toBe(200);
    expect(reconnectDelay(0, 200, 5_000, () => 1)).toBe(400);
    expect(reconnectDelay(1, 200, 5_000, () => 1)).toBe(800);
    for (let attempt = 0; attempt < 40; attempt += 1) {
      for (const r of [0, 0.5, 1]) {
        const d = reconnectDelay(attempt, 200, 5_000, () => r);
        expect(d).toBeGreaterThanOrEqual(200);
        expect(d).toBeLessThanOrEqual(5_000);
      }
    }
    expect(reconnectDelay(30, 200, 5_000, () => 1)).toBe(5_000);
  });
});

describe('retryAfterMs', () => {
  it('reads whole seconds, bounded to 5 minutes, and nothing else', () => {
    expect(retryAfterMs('37')).toBe(37_000);
    expect(retryAfterMs([' 2 '])).toBe(2_000);
    expect(retryAfterMs('300')).toBe(300_000);
    expect(retryAfterMs('86400')).toBe(300_000);
    for (const bad of [undefined, '', '0', '-5', '1.5', 'soon', 'Wed, 21 Oct 2015 07:28:00 GMT', '99999999999']) expect(retryAfterMs(bad)).toBeUndefined();
  });
});

// The muted calls kept in the tab's sessionStorage (renderer/app/muted-calls.ts): what a reloaded
// page reads back, and a storage it may not use, or that holds something else, costs nothing but the memory.
import { describe, expect, it } from 'vitest';
import { MutedCalls, type MuteStorage } from '../../../renderer/app/muted-calls';

function memory(initial?: string) {
  const kept = new Map<string, string>(initial === undefined ? [] : [['softphone.mutedCalls', initial]]);
  let writes = 0;
  const storage: MuteStorage = {
    getItem: (key) => kept.get(key) ?? null,
    setItem: (key, value) => {
      writes += 1;
      kept.set(key, value);
    },
  };
  return { storage, kept, writes: () => writes };
}

describe('the muted calls of a tab', () => {
  it('keeps each muted call once, forgets an unmuted one, and writes only what changed', () => {
    const m = memory();
    const muted = new MutedCalls(m.storage);
    muted.set('in:a', true);
    muted.set('in:a', true);
    muted.set('out:b', true);
    expect(new MutedCalls(m.storage).muted()).toEqual(['in:a', 'out:b']);
    muted.set('in:a', false);
    muted.set('in:c', false);
    expect(muted.muted()).toEqual(['out:b']);
    expect(m.writes()).toBe(3);
  });

  it('keeps only the calls still live', () => {
    const m = memory(JSON.stringify(['in:a', 'in:b']));
    new MutedCalls(m.storage).keepOnly(new Set(['in:b', 'in:c']));
    expect(new MutedCalls(m.storage).muted()).toEqual(['in:b']);
  });

  it('something else under its key, or a storage that refuses, reads as nothing muted', () => {
    expect(new MutedCalls(memory('not json').storage).muted()).toEqual([]);
    expect(new MutedCalls(memory(JSON.stringify({ 'in:a': true })).storage).muted()).toEqual([]);
    expect(new MutedCalls(memory(JSON.stringify(['in:a', 7, ''])).storage).muted()).toEqual(['in:a']);
    const refusing: MuteStorage = {
      getItem: () => {
        throw new Error('SecurityError: storage is disabled');
      },
      setItem: () => {
        throw new Error('QuotaExceededError');
      },
    };
    const muted = new MutedCalls(refusing);
    expect(() => muted.set('in:a', true)).not.toThrow();
    expect(muted.muted()).toEqual([]);
    expect(new MutedCalls(undefined).muted()).toEqual([]);
  });
});

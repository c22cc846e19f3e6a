// Who hears whom in a bridged call, and how a mix is summed: the rules the call's media applies on
// every change of routes and every tick.
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { CUSTOMER, HOLD_MUSIC, type Routes } from '../../../shared/bridge';
import { FRAME_SAMPLES } from '../../../bridge/media/audio-format';
import { defaultRoutes, listeningOf, sameListening, type Listening } from '../../../bridge/media/listening';
import { mixFrames } from '../../../bridge/media/mixer';

const all = new Set([CUSTOMER, 'agentA', 'agentB', 'supervisor']);
const sourcesOf = (listening: Listening): string[] => (listening.kind === 'forward' ? [listening.source] : listening.kind === 'mix' ? listening.sources : []);

describe('listeningOf', () => {
  test('one participant is forwarded; two or more are mixed; nobody is silence, or the music when listed', () => {
    const routes: Routes = {
      [CUSTOMER]: ['agentA'],
      agentA: [CUSTOMER, 'agentB'],
      agentB: [HOLD_MUSIC],
      supervisor: [CUSTOMER, HOLD_MUSIC],
    };
    expect(listeningOf(routes, CUSTOMER, all)).toEqual({ kind: 'forward', source: 'agentA' });
    expect(listeningOf(routes, 'agentA', all)).toEqual({ kind: 'mix', sources: [CUSTOMER, 'agentB'], music: false });
    expect(listeningOf(routes, 'agentB', all)).toEqual({ kind: 'music' });
    // A voice with the music is a mix too.
    expect(listeningOf(routes, 'supervisor', all)).toEqual({ kind: 'mix', sources: [CUSTOMER], music: true });
    expect(listeningOf({}, CUSTOMER, all)).toEqual({ kind: 'silence' });
    expect(listeningOf({ [CUSTOMER]: [] }, CUSTOMER, all)).toEqual({ kind: 'silence' });
  });

  test('nobody hears themselves, and only connected participants are heard', () => {
    expect(listeningOf({ agentA: ['agentA'] }, 'agentA', all)).toEqual({ kind: 'silence' });
    expect(listeningOf({ agentA: ['agentA', CUSTOMER] }, 'agentA', all)).toEqual({ kind: 'forward', source: CUSTOMER });
    expect(listeningOf({ [CUSTOMER]: ['agentA', 'agentB'] }, CUSTOMER, new Set([CUSTOMER, 'agentB']))).toEqual({ kind: 'forward', source: 'agentB' });
    // Routed to an agent who is gone for now: the customer hears the music, never dead air; an agent hears silence.
    expect(listeningOf({ [CUSTOMER]: ['agentC'] }, CUSTOMER, all)).toEqual({ kind: 'music' });
    expect(listeningOf({ agentA: ['agentC'] }, 'agentA', all)).toEqual({ kind: 'silence' });
    // A participant listed twice is heard once.
    expect(listeningOf({ [CUSTOMER]: ['agentA', 'agentA'] }, CUSTOMER, all)).toEqual({ kind: 'forward', source: 'agentA' });
  });

  test('property: whatever the routes, a listener hears exactly the connected others its routes list', () => {
    const participant = fc.constantFrom(CUSTOMER, 'agentA', 'agentB', 'supervisor', 'gone', HOLD_MUSIC);
    fc.assert(
      fc.property(fc.dictionary(fc.constantFrom(CUSTOMER, 'agentA', 'agentB', 'supervisor'), fc.array(participant, { maxLength: 6 })), (routes) => {
        for (const listener of all) {
          const listening = listeningOf(routes, listener, all);
          const heard = sourcesOf(listening);
          expect(heard).not.toContain(listener);
          expect(new Set(heard)).toEqual(new Set((routes[listener] ?? []).filter((p) => p !== listener && all.has(p))));
          const music = (routes[listener] ?? []).includes(HOLD_MUSIC);
          if (listening.kind === 'mix') expect(listening.music).toBe(music);
          else if (heard.length === 0) expect(listening.kind).toBe(music || (listener === CUSTOMER && (routes[listener] ?? []).length > 0) ? 'music' : 'silence');
          else expect(music).toBe(false);
        }
      }),
    );
  });

  test('sameListening tells a real change from the same listening again', () => {
    expect(sameListening({ kind: 'forward', source: 'a' }, { kind: 'forward', source: 'a' })).toBe(true);
    expect(sameListening({ kind: 'forward', source: 'a' }, { kind: 'forward', source: 'b' })).toBe(false);
    expect(sameListening({ kind: 'mix', sources: ['a', 'b'], music: false }, { kind: 'mix', sources: ['a', 'b'], music: false })).toBe(true);
    expect(sameListening({ kind: 'mix', sources: ['a', 'b'], music: false }, { kind: 'mix', sources: ['a', 'b'], music: true })).toBe(false);
    expect(sameListening({ kind: 'music' }, { kind: 'silence' })).toBe(false);
  });
});

describe('defaultRoutes', () => {
  test('before any agent is connected the customer hears the music; then the first agent and the customer hear each other', () => {
    expect(defaultRoutes([])).toEqual({ [CUSTOMER]: [HOLD_MUSIC] });
    expect(defaultRoutes(['agentA', 'agentB'])).toEqual({ [CUSTOMER]: ['agentA'], agentA: [CUSTOMER] });
  });
});

describe('mixFrames', () => {
  const frame = (value: number) => new Int16Array(FRAME_SAMPLES).fill(value);

  test('sums the frames present; a source with no frame adds nothing', () => {
    const { frame: out, clipped } = mixFrames([frame(1000), undefined, frame(-250)]);
    expect(out.length).toBe(FRAME_SAMPLES);
    expect(new Set(out)).toEqual(new Set([750]));
    expect(clipped).toBe(0);
    expect(new Set(mixFrames([]).frame)).toEqual(new Set([0]));
  });

  test('a sum beyond 16 bits is held at the limit, never wrapped round', () => {
    const loud = mixFrames([frame(30_000), frame(10_000)]);
    expect(new Set(loud.frame)).toEqual(new Set([32_767]));
    expect(loud.clipped).toBe(FRAME_SAMPLES);
    const low = mixFrames([frame(-30_000), frame(-10_000)]);
    expect(new Set(low.frame)).toEqual(new Set([-32_768]));
    const mixed = new Int16Array(FRAME_SAMPLES);
    mixed[0] = 20_000;
    mixed[1] = -20_000;
    const some = mixFrames([mixed, mixed]);
    expect([some.frame[0], some.frame[1], some.frame[2]]).toEqual([32_767, -32_768, 0]);
    expect(some.clipped).toBe(2);
  });

  test('property: each sample is the sum of its inputs, clamped', () => {
    const sample = fc.integer({ min: -32_768, max: 32_767 });
    fc.assert(
      fc.property(fc.array(fc.array(sample, { minLength: 4, maxLength: 4 }), { maxLength: 5 }), (inputs) => {
        const frames = inputs.map((v) => Int16Array.from(v));
        const { frame: out } = mixFrames(frames, new Int16Array(4));
        for (let i = 0; i < 4; i++) {
          const sum = inputs.reduce((acc, v) => acc + v[i]!, 0);
          expect(out[i]).toBe(Math.max(-32_768, Math.min(32_767, sum)));
        }
      }),
    );
  });
});

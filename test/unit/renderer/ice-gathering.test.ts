// When the wait for our own ICE candidates ends. The peer connection is the media tests' fake
// (fake-call-media.ts), its two events fired by hand; the real gathering is exercised by the e2e call
// tests.
import { afterEach, beforeEach, describe, expect, test, vi } from 'vitest';
import { watchIceGathering } from '../../../renderer/webrtc/ice-gathering';
import { FakePeerConnection } from './fake-call-media';

const UDP = 'candidate:1 1 udp 2122260223 192.0.2.10 50000 typ host';
const TCP = 'candidate:2 1 tcp 1518280447 192.0.2.10 9 typ host tcptype active';

const peer = () => {
  const pc = new FakePeerConnection();
  return { pc, asPeer: pc as unknown as RTCPeerConnection };
};

/** Resolves to how the wait ended, or 'waiting' if it has not ended after the timers so far. */
async function outcome(done: Promise<string>): Promise<string> {
  return Promise.race([done, Promise.resolve().then(() => 'waiting')]);
}

beforeEach(() => vi.useFakeTimers());
afterEach(() => vi.useRealTimers());

describe('watchIceGathering', () => {
  test('ends when gathering completes, by the null candidate or by the state', async () => {
    const a = peer();
    const w1 = watchIceGathering(a.asPeer, { capMs: 1500 });
    a.pc.gathered(UDP);
    a.pc.gathered(null);
    await expect(w1.done).resolves.toBe('complete');

    const b = peer();
    const w2 = watchIceGathering(b.asPeer, { capMs: 1500 });
    b.pc.gatheringComplete();
    await expect(w2.done).resolves.toBe('complete');
  });

  test('the cap ends a wait that has candidates', async () => {
    const { pc, asPeer } = peer();
    const w = watchIceGathering(asPeer, { capMs: 1500, firstCandidateGraceMs: 8500 });
    pc.gathered(UDP);
    await vi.advanceTimersByTimeAsync(1499);
    expect(await outcome(w.done)).toBe('waiting');
    await vi.advanceTimersByTimeAsync(1);
    expect(await outcome(w.done)).toBe('capped');
  });

  test('past the cap with no candidate, it waits for the first one and ends with it', async () => {
    const { pc, asPeer } = peer();
    const w = watchIceGathering(asPeer, { capMs: 1500, firstCandidateGraceMs: 8500 });
    await vi.advanceTimersByTimeAsync(4000);
    expect(await outcome(w.done)).toBe('waiting');
    pc.gathered(TCP);
    expect(await outcome(w.done)).toBe('capped');
  });

  test('the grace has its own end: no candidate at all ends the wait at cap + grace', async () => {
    const { asPeer } = peer();
    const w = watchIceGathering(asPeer, { capMs: 1500, firstCandidateGraceMs: 8500 });
    await vi.advanceTimersByTimeAsync(9999);
    expect(await outcome(w.done)).toBe('waiting');
    await vi.advanceTimersByTimeAsync(1);
    expect(await outcome(w.done)).toBe('capped');
  });

  test('without a grace ("Relay only"), the cap ends the wait even with no candidate', async () => {
    const { asPeer } = peer();
    const w = watchIceGathering(asPeer, { capMs: 1500 });
    await vi.advanceTimersByTimeAsync(1500);
    expect(await outcome(w.done)).toBe('capped');
  });

  test('settling on UDP: settleMs after the last UDP candidate, or at once on a TCP one', async () => {
    const a = peer();
    const w1 = watchIceGathering(a.asPeer, { capMs: 1500, settleOnUdp: true, settleMs: 25 });
    a.pc.gathered(UDP);
    await vi.advanceTimersByTimeAsync(20);
    a.pc.gathered(UDP.replace('192.0.2.10', '192.0.2.11'));
    await vi.advanceTimersByTimeAsync(20);
    expect(await outcome(w1.done)).toBe('waiting');
    await vi.advanceTimersByTimeAsync(5);
    expect(await outcome(w1.done)).toBe('settled');

    const b = peer();
    const w2 = watchIceGathering(b.asPeer, { capMs: 1500, settleOnUdp: true, settleMs: 25 });
    b.pc.gathered(UDP);
    b.pc.gathered(TCP);
    expect(await outcome(w2.done)).toBe('settled');
  });

  test('cancel ends the wait, and later events change nothing', async () => {
    const { pc, asPeer } = peer();
    const w = watchIceGathering(asPeer, { capMs: 1500 });
    w.cancel();
    pc.gathered(null);
    await expect(w.done).resolves.toBe('capped');
  });
});

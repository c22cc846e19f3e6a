// The team's live calls as the stored events tell them (relay/live-calls.ts): what an instance that
// holds none of the calls knows — the same picture every instance has from the backend's events —
// whether each records, and the customer leg's quality read from the node, at most once a second
// however many ask.
import { describe, expect, it } from 'vitest';
import { LiveCallsSource, LiveCallsTracker, qualityOf, UNANSWERED_KEPT_MS } from '../../../relay/live-calls';
import type { Audience, StoredEvent } from '../../../relay/backend/types';
import type { LegReport } from '../../../shared/bridge';
import type { RelayEvent } from '../../../shared/events';

let cursor = 0;
function stored(event: RelayEvent, receivedAt: number, audience: Audience = { kind: 'everyone' }): StoredEvent {
  cursor += 1;
  return { cursor: `c-${cursor}`, receivedAt, event, audience };
}

const ring = (callId: string, at: number, bridged = true) =>
  stored({ type: 'call.incoming', callId, from: '447700900123', name: 'Ada Customer', sdp: 'v=0', timestamp: at, ...(bridged ? { bridged: true } : {}) }, at, { kind: 'ringing' });
const claim = (callId: string, agentId: string, at: number) => stored({ type: 'call.claimed', callId, agentId, timestamp: at }, at);
const update = (callId: string, agentId: string, state: 'ringing' | 'consulting' | 'transferred' | 'joined' | 'with_customer' | 'not_answered' | 'cancelled', at: number, colleague?: string) =>
  stored(
    { type: 'call.transfer_update', callId, transferId: 'xfer-1', kind: 'consult', agentId, state, ...(colleague !== undefined ? { colleague: { agentId: colleague, name: colleague } } : {}), timestamp: at },
    at,
    { kind: 'agent', agentId },
  );
const monitor = (callId: string, supervisorId: string, mode: 'listen' | 'whisper' | 'barge' | 'left', at: number, agentIds: string[]) =>
  stored({ type: 'call.monitor', callId, supervisorId, name: 'Sam Lead', mode, timestamp: at }, at, { kind: 'agents', agentIds });

function picture(tracker: LiveCallsTracker, now: number): string[] {
  return tracker.live(now).map((c) => `${c.callId} ${c.direction} [${c.agents.join(',')}]${c.transfers.size > 0 ? ' transferring' : ''}${c.answeredAt !== undefined ? ' answered' : ''}${[...c.monitors].map(([id, m]) => ` ${id}:${m.mode}`).join('')}`);
}

describe('LiveCallsTracker', () => {
  it('follows a call from its ring through a consult, its cancel, a consult joined and a colleague leaving', () => {
    const t = new LiveCallsTracker();
    t.observe(ring('c1', 1_000));
    expect(picture(t, 1_100)).toEqual(['c1 incoming []']);
    expect(t.get('c1')).toMatchObject({ customer: { number: '447700900123', name: 'Ada Customer' }, startedAt: 1_000, bridged: true });
    t.observe(claim('c1', 'alice', 2_000));
    expect(picture(t, 2_100)).toEqual(['c1 incoming [alice] answered']);
    t.observe(update('c1', 'alice', 'ringing', 3_000, 'bob'));
    expect(picture(t, 3_100)).toEqual(['c1 incoming [alice] transferring answered']);
    t.observe(update('c1', 'alice', 'consulting', 4_000, 'bob'));
    expect(picture(t, 4_100)).toEqual(['c1 incoming [alice,bob] transferring answered']);
    t.observe(update('c1', 'bob', 'cancelled', 5_000, 'alice'));
    t.observe(update('c1', 'alice', 'cancelled', 5_000, 'bob'));
    expect(picture(t, 5_100)).toEqual(['c1 incoming [alice] answered']);
    t.observe(update('c1', 'alice', 'ringing', 6_000, 'bob'));
    t.observe(update('c1', 'alice', 'consulting', 6_500, 'bob'));
    t.observe(update('c1', 'alice', 'joined', 7_000, 'bob'));
    t.observe(update('c1', 'bob', 'joined', 7_000, 'alice'));
    expect(picture(t, 7_100)).toEqual(['c1 incoming [alice,bob] answered']);
    t.observe(update('c1', 'bob', 'with_customer', 8_000, 'alice'));
    expect(picture(t, 8_100)).toEqual(['c1 incoming [bob] answered']);
    t.observe(stored({ type: 'call.terminated', callId: 'c1', status: 'COMPLETED', timestamp: 9_000 }, 9_000, { kind: 'agents', agentIds: ['alice', 'bob'] }));
    expect(picture(t, 9_100)).toEqual([]);
    // A late status of the ended call does not bring it back.
    t.observe(stored({ type: 'call.status', callId: 'c1', status: 'ACCEPTED', timestamp: 9_500 }, 9_500));
    expect(picture(t, 9_600)).toEqual([]);
  });

  it('a transfer answered hands the call to the colleague; one not answered leaves it with the agent', () => {
    const t = new LiveCallsTracker();
    t.observe(ring('c2', 1_000));
    t.observe(claim('c2', 'alice', 1_500));
    t.observe(update('c2', 'alice', 'ringing', 2_000));
    t.observe(update('c2', 'alice', 'not_answered', 3_000));
    expect(picture(t, 3_100)).toEqual(['c2 incoming [alice] answered']);
    t.observe(update('c2', 'alice', 'ringing', 4_000, 'bob'));
    t.observe(update('c2', 'alice', 'transferred', 5_000, 'bob'));
    expect(picture(t, 5_100)).toEqual(['c2 incoming [bob] answered']);
  });

  it('an outgoing call from its claim and statuses, the customer from the first status that names them', () => {
    const t = new LiveCallsTracker();
    t.observe(claim('o1', 'bob', 1_000));
    t.observe(stored({ type: 'call.status', callId: 'o1', status: 'RINGING', recipientId: '447700900999', timestamp: 1_100 }, 1_100, { kind: 'agent', agentId: 'bob' }));
    expect(picture(t, 1_200)).toEqual(['o1 outgoing [bob]']);
    expect(t.get('o1')).toMatchObject({ customer: { number: '447700900999' }, startedAt: 1_000 });
    t.observe(stored({ type: 'call.status', callId: 'o1', status: 'ACCEPTED', timestamp: 2_000 }, 2_000, { kind: 'agent', agentId: 'bob' }));
    expect(t.get('o1')?.answeredAt).toBe(2_000);
  });

  it('the supervisors in a call are those their own events say; what the agents are told alone does not count', () => {
    const t = new LiveCallsTracker();
    t.observe(ring('c3', 1_000));
    t.observe(claim('c3', 'alice', 1_500));
    t.observe(monitor('c3', 'sam', 'listen', 2_000, ['sam']));
    expect(picture(t, 2_100)).toEqual(['c3 incoming [alice] answered sam:listen']);
    expect(t.joinedCall('sam')).toBe('c3');
    t.observe(monitor('c3', 'sam', 'whisper', 3_000, ['alice', 'sam']));
    // A switch back to a listen: the agents are told `left`, the supervisor `listen`.
    t.observe(monitor('c3', 'sam', 'left', 4_000, ['alice']));
    t.observe(monitor('c3', 'sam', 'listen', 4_001, ['sam']));
    expect(picture(t, 4_100)).toEqual(['c3 incoming [alice] answered sam:listen']);
    t.observe(monitor('c3', 'sam', 'left', 5_000, ['sam']));
    expect(picture(t, 5_100)).toEqual(['c3 incoming [alice] answered']);
    expect(t.joinedCall('sam')).toBeUndefined();
    t.observe(monitor('c3', 'sam', 'barge', 6_000, ['alice', 'sam']));
    expect(t.joinedCall('sam')).toBe('c3');
    // The call's end: nobody is joined to it any more, whether or not its `left` came.
    t.observe(stored({ type: 'call.bridge_failed', callId: 'c3', reason: 'node_gone', timestamp: 7_000 }, 7_000, { kind: 'agent', agentId: 'alice' }));
    expect(t.joinedCall('sam')).toBeUndefined();
    expect(picture(t, 7_100)).toEqual([]);
  });

  it('an agent not back while colleagues keep the call is out of it; a call nobody answered is lost after five minutes', () => {
    const t = new LiveCallsTracker();
    t.observe(ring('c4', 1_000));
    t.observe(claim('c4', 'alice', 1_500));
    t.observe(update('c4', 'alice', 'ringing', 2_000, 'bob'));
    t.observe(update('c4', 'alice', 'consulting', 2_500, 'bob'));
    t.observe(update('c4', 'alice', 'joined', 3_000, 'bob'));
    t.observe(stored({ type: 'call.bridge_failed', callId: 'c4', reason: 'agent_not_back', goesOn: true, awaySec: 60, timestamp: 4_000 }, 4_000, { kind: 'agent', agentId: 'alice' }));
    expect(picture(t, 4_100)).toEqual(['c4 incoming [bob] answered']);
    t.observe(ring('c5', 10_000, false));
    expect(picture(t, 10_000 + UNANSWERED_KEPT_MS)).toEqual(['c4 incoming [bob] answered', 'c5 incoming []']);
    expect(picture(t, 10_001 + UNANSWERED_KEPT_MS)).toEqual(['c4 incoming [bob] answered']);
  });
});

describe('whether a call records', () => {
  const recording = (callId: string, on: boolean, at: number, agentIds: string[]) => stored({ type: 'call.recording', callId, recording: on, timestamp: at }, at, { kind: 'agents', agentIds });

  it('is its last `call.recording` on an instance that does not hold the call, whoever it was told to', async () => {
    const tracker = new LiveCallsTracker();
    const source = new LiveCallsSource({ tracker, nameOf: (id) => id, now: () => 10_000 });
    tracker.observe(ring('r1', 1_000));
    tracker.observe(claim('r1', 'alice', 1_500));
    expect((await source.liveCalls()).calls[0]).not.toHaveProperty('recording');
    tracker.observe(recording('r1', true, 2_000, ['alice']));
    expect((await source.liveCalls()).calls[0]).toMatchObject({ callId: 'r1', recording: true });
    // Told again to a supervisor who joined: it still records.
    tracker.observe(recording('r1', true, 2_500, ['sam']));
    expect((await source.liveCalls()).calls[0]!.recording).toBe(true);
    tracker.observe(recording('r1', false, 3_000, ['alice', 'sam']));
    expect((await source.liveCalls()).calls[0]).not.toHaveProperty('recording');
    // A call it does not follow is not brought in by its recording.
    tracker.observe(recording('r-unknown', true, 3_500, ['bob']));
    expect((await source.liveCalls()).calls.map((c) => c.callId)).toEqual(['r1']);
  });

  it('is what the recordings say now on the instance that holds the call, ahead of the events', async () => {
    const tracker = new LiveCallsTracker();
    const recordingNow = new Set<string>();
    const source = new LiveCallsSource({
      tracker,
      nameOf: (id) => id,
      bridgedView: (callId) => (callId === 'r2' ? { direction: 'incoming', agents: ['alice'], held: false, transferring: false, monitors: [] } : undefined),
      isRecording: (callId) => recordingNow.has(callId),
      now: () => 10_000,
    });
    tracker.observe(ring('r2', 1_000));
    tracker.observe(claim('r2', 'alice', 1_500));
    tracker.observe(ring('r3', 1_200));
    tracker.observe(claim('r3', 'bob', 1_600));
    recordingNow.add('r2');
    tracker.observe(recording('r3', true, 2_000, ['bob']));
    expect((await source.liveCalls()).calls.map((c) => [c.callId, c.recording])).toEqual([
      ['r2', true],
      ['r3', true],
    ]);
    recordingNow.delete('r2');
    expect((await source.liveCalls()).calls[0]).not.toHaveProperty('recording');
  });
});

describe('the customer leg’s quality', () => {
  const report = (packetsReceived: number, packetsLost: number, extra: Partial<LegReport> = {}): LegReport => ({ state: 'connected', packetsReceived, packetsLost, ...extra });

  it('loss over the interval since the reading before, jitter, and the E-model’s MOS with the round trip', () => {
    expect(qualityOf({ at: 1_000, report: report(100, 0, { jitterMs: 4, roundTripMs: 40 }) }, undefined)).toEqual({ mos: 4.4, lossPercent: 0, jitterMs: 4 });
    // 50 packets since the last reading, 10 of them lost: 20 %.
    const poor = qualityOf({ at: 2_000, report: report(140, 10, { jitterMs: 30, roundTripMs: 300 }) }, { at: 1_000, report: report(100, 0) });
    expect(poor).toMatchObject({ lossPercent: 20, jitterMs: 30 });
    expect(poor!.mos).toBeLessThan(2);
    expect(qualityOf({ at: 1_000, report: { state: 'connecting', packetsReceived: 0, packetsLost: 0 } }, undefined)).toBeUndefined();
    expect(qualityOf({ at: 1_000, report: report(0, 0) }, undefined)).toBeUndefined();
  });

  it('is read once a second however many ask, one reading at a time, and left out when the node does not answer in time', async () => {
    const tracker = new LiveCallsTracker();
    tracker.observe(ring('q1', 1_000));
    tracker.observe(claim('q1', 'alice', 1_100));
    let now = 2_000;
    let asked = 0;
    let answer: (report: LegReport | undefined) => void = () => undefined;
    const source = new LiveCallsSource({
      tracker,
      nameOf: (id) => id,
      bridgedView: () => ({ direction: 'incoming', agents: ['alice'], held: false, transferring: false, monitors: [] }),
      customerReport: () => {
        asked += 1;
        return new Promise((resolve) => (answer = resolve));
      },
      now: () => now,
      reportTimeoutMs: 200,
    });
    const first = Promise.all([source.liveCalls(), source.liveCalls()]);
    await expect.poll(() => asked).toBe(1);
    answer(report(50, 0, { jitterMs: 2, roundTripMs: 20 }));
    const [a, b] = await first;
    expect(asked).toBe(1);
    expect(a.calls[0]!.quality).toEqual({ mos: 4.4, lossPercent: 0, jitterMs: 2 });
    expect(b.calls[0]!.quality).toEqual(a.calls[0]!.quality);
    now += 500;
    expect((await source.liveCalls()).calls[0]!.quality).toEqual(a.calls[0]!.quality);
    expect(asked).toBe(1);
    now += 600;
    // The node does not answer: this answer goes without the quality, and does not wait for it.
    const started = Date.now();
    expect((await source.liveCalls()).calls[0]!.quality).toBeUndefined();
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(asked).toBe(2);
  });
});

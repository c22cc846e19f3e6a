// The delivery rules of `call.capture_available` (relay/REFERENCE.md "Routing and claims"): one per
// call and kind; no connect and no tombstone of its own, and a call's tombstone does not drop it;
// stored to the call's participants, else its owner, else everyone — never to a ringing audience.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { dedupKeyOf, isConnect, isStaleConnect, leavesTombstone } from '../../../relay/backend/delivery-rules';
import type { Audience, RelayBackend, StoredEvent } from '../../../relay/backend/types';
import { audienceFor, decideDelivery, KnownCalls, type RingingContext } from '../../../relay/routing';
import { factsOfEvent } from '../../../relay/records/call-facts';
import type { RelayEvent } from '../../../shared/events';
import { FakeClock, RecordingLogger, incoming, store, terminated } from '../relay-backend/backend-fixtures';
import { memoryHarness, redisHarness } from '../relay-backend/backend-harnesses';

type CaptureEvent = Extract<RelayEvent, { type: 'call.capture_available' }>;
const capture = (callId: string, kind: CaptureEvent['kind'], timestamp: number): CaptureEvent => ({
  type: 'call.capture_available',
  callId,
  kind,
  mediaId: `${kind}-${callId}`,
  url: `https://media.example.com/${kind}/${callId}`,
  timestamp,
});
const stored = (event: RelayEvent, audience: Audience): StoredEvent => ({ cursor: '1-0', receivedAt: 0, event, audience });
const ringing: RingingContext = { receivedAt: 0, releaseMs: 15_000, standingOf: () => ({ agentId: 'alice', presence: 'available', connected: true }) };

describe('delivery rules', () => {
  it('keys one recording and one transcript per call, whatever their media or time; neither is a connect, stale, or leaves a tombstone', () => {
    expect(dedupKeyOf(capture('wacid.c1', 'recording', 1))).toBe('call:wacid.c1:capture:recording');
    expect(dedupKeyOf(capture('wacid.c1', 'transcript', 1))).toBe('call:wacid.c1:capture:transcript');
    expect(dedupKeyOf({ ...capture('wacid.c1', 'recording', 9), mediaId: 'other', url: 'https://media.example.com/again' })).toBe('call:wacid.c1:capture:recording');
    expect(dedupKeyOf(capture('wacid.c2', 'recording', 1))).not.toBe(dedupKeyOf(capture('wacid.c1', 'recording', 1)));
    for (const event of [capture('wacid.c1', 'recording', 0), capture('wacid.c1', 'transcript', 0)]) {
      expect(isConnect(event)).toBe(false);
      expect(isStaleConnect(event, 10 * 60_000)).toBe(false);
      expect(leavesTombstone(event)).toBe(false);
    }
  });

  it('stores it to the participants, else the owner, else everyone — not to the audience the call rang with', () => {
    const event = capture('wacid.c1', 'recording', 1);
    expect(audienceFor(event, { owner: 'alice', rang: { kind: 'ringing' }, participants: ['alice', 'bob'] }, ringing).audience).toEqual({ kind: 'agents', agentIds: ['alice', 'bob'] });
    expect(audienceFor(event, { owner: 'alice', rang: { kind: 'ringing' } }, ringing).audience).toEqual({ kind: 'agent', agentId: 'alice' });
    const headStart: Audience = { kind: 'ringing', preferredAgentId: 'alice', releaseAt: 15_000 };
    expect(audienceFor(event, { owner: undefined, rang: headStart }, ringing).audience).toEqual({ kind: 'everyone' });
    expect(audienceFor(event, { owner: undefined, rang: undefined }, ringing).audience).toEqual({ kind: 'everyone' });
    // Other events of the same call keep the audience it rang with.
    expect(audienceFor(terminated('wacid.c1', 1), { owner: undefined, rang: headStart }, ringing).audience).toEqual(headStart);
  });

  it('delivers to an owner or participant whatever its presence, and to every session when stored to everyone', () => {
    const event = capture('wacid.c1', 'transcript', 1);
    expect(decideDelivery(stored(event, { kind: 'agent', agentId: 'alice' }), 'alice', () => 'after_call_work', undefined)).toBe('deliver');
    expect(decideDelivery(stored(event, { kind: 'agent', agentId: 'alice' }), 'bob', () => 'available', undefined)).toBe('skip');
    expect(decideDelivery(stored(event, { kind: 'agents', agentIds: ['alice', 'bob'] }), 'bob', () => 'on_call', undefined)).toBe('deliver');
    expect(decideDelivery(stored(event, { kind: 'everyone' }), 'carol', () => 'dnd', 'dropped')).toBe('deliver');
  });

  it('is no fact of the call’s records', () => {
    const event = capture('wacid.c1', 'recording', 1_764_000_000_000);
    expect(factsOfEvent(event, { receivedAt: 1_764_000_001_000, audience: { kind: 'agent', agentId: 'alice' }, stored: true, reachable: () => ['alice'] })).toEqual([]);
  });
});

describe('KnownCalls: the participants of an ended transferred call', () => {
  it('remembers whom a call’s end was told to when it named agents, as long as a tombstone lives', () => {
    const clock = new FakeClock();
    const known = new KnownCalls(clock.now, 60_000);
    known.observe(stored(terminated('wacid.t1', 1), { kind: 'agents', agentIds: ['alice', 'bob'] }));
    known.observe(stored({ type: 'call.bridge_failed', callId: 'wacid.t2', reason: 'node_gone', timestamp: 1 }, { kind: 'agents', agentIds: ['carol', 'dave'] }));
    // An end told to the owner, and an agent not back while colleagues keep the call, are not a transferred call's end.
    known.observe(stored(terminated('wacid.t3', 1), { kind: 'agent', agentId: 'alice' }));
    known.observe(stored({ type: 'call.bridge_failed', callId: 'wacid.t4', reason: 'agent_not_back', goesOn: true, awaySec: 30, timestamp: 1 }, { kind: 'agents', agentIds: ['alice', 'bob'] }));
    expect(known.participantsOf('wacid.t1')).toEqual(['alice', 'bob']);
    expect(known.participantsOf('wacid.t2')).toEqual(['carol', 'dave']);
    expect(known.participantsOf('wacid.t3')).toBeUndefined();
    expect(known.participantsOf('wacid.t4')).toBeUndefined();
    clock.advance(60_000);
    expect(known.participantsOf('wacid.t1')).toBeUndefined();
  });
});

describe.each([memoryHarness(), redisHarness()])('$name backend', (harness) => {
  let clock: FakeClock;
  let backend: RelayBackend;
  beforeAll(() => harness.setup());
  afterAll(() => harness.teardown());
  afterEach(() => harness.closeAll());
  const open = async () => {
    clock = new FakeClock();
    backend = await harness.open({ now: clock.now, logger: new RecordingLogger() });
  };

  it('stores the recording and the transcript after the call’s tombstone, once each, with the audience given', async () => {
    await open();
    const t = clock.now();
    const owner: Audience = { kind: 'agent', agentId: 'alice' };
    await store(backend, incoming('wacid.c1', t), t, { kind: 'ringing' });
    await store(backend, terminated('wacid.c1', t), t, owner);
    expect(await backend.isTombstoned('wacid.c1')).toBe(true);
    expect(await backend.append({ event: incoming('wacid.c1', t), receivedAt: t, audience: { kind: 'ringing' } })).toEqual({ stored: false, reason: 'tombstoned' });
    clock.advance(40_000);
    const recording = await store(backend, capture('wacid.c1', 'recording', t + 40_000), t + 40_000, owner);
    expect(recording.audience).toEqual(owner);
    await store(backend, capture('wacid.c1', 'transcript', t + 40_000), t + 40_000, owner);
    expect(await backend.append({ event: capture('wacid.c1', 'recording', t + 45_000), receivedAt: t + 45_000, audience: owner })).toEqual({ stored: false, reason: 'duplicate' });
    expect(await backend.append({ event: capture('wacid.c1', 'transcript', t + 45_000), receivedAt: t + 45_000, audience: owner })).toEqual({ stored: false, reason: 'duplicate' });
    const read = await backend.readAfter(undefined, { limit: 100, sinceMs: 120_000 });
    expect(read.map((e) => (e.event.type === 'call.capture_available' ? `${e.event.type}:${e.event.kind}` : e.event.type))).toEqual([
      'call.incoming',
      'call.terminated',
      'call.capture_available:recording',
      'call.capture_available:transcript',
    ]);
  });

  it('stores one that came a minute after its call’s time: it is not a connect, never stale', async () => {
    await open();
    const t = clock.now();
    clock.advance(5 * 60_000);
    expect((await backend.append({ event: capture('wacid.c2', 'recording', t), receivedAt: clock.now(), audience: { kind: 'everyone' } })).stored).toBe(true);
    expect(await backend.isTombstoned('wacid.c2')).toBe(false);
  });
});

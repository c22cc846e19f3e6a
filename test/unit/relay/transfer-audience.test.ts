// The `agents` audience and the transfer events' delivery rules (relay/REFERENCE.md "Transfers"):
// a transferred call's events reach every agent named and nobody else; each ring and each agent's
// word of a transfer is stored once, on either backend; neither rings nor ends a call.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { dedupKeyOf, isConnect, leavesTombstone } from '../../../relay/backend/delivery-rules';
import type { Audience, RelayBackend, StoredEvent } from '../../../relay/backend/types';
import { audienceFor, decideDelivery, type RingingContext } from '../../../relay/routing';
import type { RelayEvent, TransferRingEvent, TransferUpdateEvent } from '../../../shared/events';
import { FakeClock, RecordingLogger, incoming, recorder, store, terminated, eventually } from '../relay-backend/backend-fixtures';
import { memoryHarness, redisHarness } from '../relay-backend/backend-harnesses';

const ring = (legId: string, timestamp: number): TransferRingEvent => ({
  type: 'call.transfer_ring',
  callId: 'wacid.t1',
  transferId: 'xfer-1',
  kind: 'consult',
  by: { agentId: 'alice', name: 'Alice Agent' },
  from: '447700900123',
  legId,
  sdp: 'v=0',
  timestamp,
});
const update = (agentId: string, state: TransferUpdateEvent['state'], timestamp: number): TransferUpdateEvent => ({
  type: 'call.transfer_update',
  callId: 'wacid.t1',
  transferId: 'xfer-1',
  kind: 'consult',
  agentId,
  state,
  colleague: { agentId: 'bob', name: 'Bob Agent' },
  timestamp,
});
const agents: Audience = { kind: 'agents', agentIds: ['alice', 'bob'] };
const stored = (event: RelayEvent, audience: Audience): StoredEvent => ({ cursor: '1-0', receivedAt: 0, event, audience });

describe('delivery rules', () => {
  it('an `agents` audience delivers to the agents it names and skips every other, whatever the event or presence', () => {
    for (const event of [terminated('wacid.t1', 1), update('alice', 'joined', 1)]) {
      expect(decideDelivery(stored(event, agents), 'alice', () => 'dnd', undefined)).toBe('deliver');
      expect(decideDelivery(stored(event, agents), 'bob', () => undefined, undefined)).toBe('deliver');
      expect(decideDelivery(stored(event, agents), 'carol', () => 'available', 'released')).toBe('skip');
    }
  });

  it('a call with participants gets the `agents` audience before its owner’s; without them nothing changes', () => {
    const ringing: RingingContext = { receivedAt: 0, releaseMs: 0, standingOf: () => undefined };
    expect(audienceFor(terminated('wacid.t1', 1), { owner: 'alice', rang: undefined, participants: ['alice', 'bob'] }, ringing).audience).toEqual(agents);
    expect(audienceFor(terminated('wacid.t1', 1), { owner: 'alice', rang: undefined }, ringing).audience).toEqual({ kind: 'agent', agentId: 'alice' });
  });

  it('keys: one ring per leg, one word per agent and state; neither is a connect nor leaves a tombstone', () => {
    expect(dedupKeyOf(ring('leg-b', 1))).toBe('call:wacid.t1:transfer:xfer-1:ring:leg-b');
    expect(dedupKeyOf(update('bob', 'cancelled', 1))).toBe('call:wacid.t1:transfer:xfer-1:bob:cancelled');
    for (const event of [ring('leg-b', 1), update('bob', 'cancelled', 1)]) {
      expect(isConnect(event)).toBe(false);
      expect(leavesTombstone(event)).toBe(false);
    }
  });

  it('keys an agent not back while the call goes on by the agent told and the time: two agents, or one twice, are each told', () => {
    const notBack = (timestamp: number): RelayEvent => ({ type: 'call.bridge_failed', callId: 'wacid.t1', reason: 'agent_not_back', goesOn: true, awaySec: 60, timestamp });
    const to = (agentId: string): Audience => ({ kind: 'agent', agentId });
    const keys = [dedupKeyOf(notBack(1), to('alice')), dedupKeyOf(notBack(1), to('bob')), dedupKeyOf(notBack(2), to('alice'))];
    expect(new Set(keys).size).toBe(3);
    expect(dedupKeyOf(notBack(1), to('alice'))).toBe(keys[0]);
    // The call's end by the bridge is one word, however many instances see it.
    const lost: RelayEvent = { type: 'call.bridge_failed', callId: 'wacid.t1', reason: 'node_gone', timestamp: 1 };
    expect(dedupKeyOf(lost, to('alice'))).toBe(dedupKeyOf({ ...lost, timestamp: 2 }, to('bob')));
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

  it('stores a transfer’s rings and words once each, and its agents audience as it was given', async () => {
    await open();
    const t = clock.now();
    const heard = recorder(backend);
    await store(backend, ring('leg-b', t), t, { kind: 'agent', agentId: 'bob' });
    await store(backend, ring('leg-c', t), t, { kind: 'agent', agentId: 'carol' });
    expect(await backend.append({ event: ring('leg-b', t + 5), receivedAt: t, audience: { kind: 'agent', agentId: 'bob' } })).toEqual({ stored: false, reason: 'duplicate' });
    await store(backend, update('alice', 'consulting', t), t, { kind: 'agent', agentId: 'alice' });
    await store(backend, update('alice', 'joined', t), t, { kind: 'agent', agentId: 'alice' });
    await store(backend, update('bob', 'joined', t), t, { kind: 'agent', agentId: 'bob' });
    expect(await backend.append({ event: update('bob', 'joined', t + 5), receivedAt: t, audience: { kind: 'agent', agentId: 'bob' } })).toEqual({ stored: false, reason: 'duplicate' });
    const end = await store(backend, terminated('wacid.t1', t), t, agents);
    expect(end.audience).toEqual(agents);

    const read = await backend.readAfter(undefined, { limit: 100, sinceMs: 60_000 });
    expect(read.map((e) => e.event.type)).toEqual(['call.transfer_ring', 'call.transfer_ring', 'call.transfer_update', 'call.transfer_update', 'call.transfer_update', 'call.terminated']);
    expect(read.at(-1)!.audience).toEqual(agents);
    await eventually(() => heard.events.length === 6, 'every stored event to reach the subscription');
    expect(heard.events.at(-1)!.audience).toEqual(agents);
    heard.stop();
  });

  it('a transfer’s events leave no tombstone: the call still rings if its connect comes late', async () => {
    await open();
    const t = clock.now();
    await store(backend, update('alice', 'cancelled', t), t, { kind: 'agent', agentId: 'alice' });
    expect(await backend.isTombstoned('wacid.t1')).toBe(false);
    expect((await backend.append({ event: incoming('wacid.t1', t), receivedAt: t, audience: { kind: 'ringing' } })).stored).toBe(true);
  });
});

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { PRESENCES, type Audience, type StoredEvent } from '../../../relay/backend/types';
import { KeyedTaskQueue } from '../../../relay/keyed-task-queue';
import { formatResumeToken, parseResumeToken } from '../../../relay/resume-token';
import {
  audienceFor,
  claimedAudienceFor,
  declineOfAnsweredCall,
  declineVerdict,
  decideDelivery,
  isFree,
  isReachable,
  KnownCalls,
  NO_CALL_FACTS,
  PRESENCE_ROUTING,
  preferredAgentOf,
  ringingDecision,
  type AgentStanding,
  type RingingContext,
} from '../../../relay/routing';
import type { RelayEvent } from '../../../shared/events';
import { OFFER_SDP } from '../../fixtures/sdp';
import { FakeClock } from '../../support/fake-clock';

const incoming = (audience: Audience): StoredEvent => ({
  cursor: 'c-1',
  receivedAt: 1,
  audience,
  event: { type: 'call.incoming', callId: 'wacid.1', sdp: OFFER_SDP, timestamp: 1 },
});
const terminated = (audience: Audience): StoredEvent => ({
  cursor: 'c-2',
  receivedAt: 2,
  audience,
  event: { type: 'call.terminated', callId: 'wacid.1', status: 'COMPLETED', timestamp: 2 },
});
const available = () => 'available' as const;
const dnd = () => 'dnd' as const;
const callWaiting = () => 'call_waiting' as const;
const unknown = () => undefined;

describe('routing rules', () => {
  it('delivers to everyone, to the owner only, and rings only available agents', () => {
    expect(decideDelivery(incoming({ kind: 'everyone' }), 'bob', dnd, undefined)).toBe('deliver');
    expect(decideDelivery(terminated({ kind: 'agent', agentId: 'alice' }), 'alice', available, undefined)).toBe('deliver');
    expect(decideDelivery(terminated({ kind: 'agent', agentId: 'alice' }), 'bob', available, undefined)).toBe('skip');
    expect(decideDelivery(incoming({ kind: 'ringing' }), 'bob', available, undefined)).toBe('deliver');
    expect(decideDelivery(incoming({ kind: 'ringing' }), 'bob', unknown, undefined)).toBe('deliver');
    expect(decideDelivery(incoming({ kind: 'ringing' }), 'bob', dnd, undefined)).toBe('skip');
    expect(decideDelivery(incoming({ kind: 'ringing' }), 'bob', () => 'on_call', undefined)).toBe('skip');
    // On one call and asked for call waiting: a new call rings it.
    expect(decideDelivery(incoming({ kind: 'ringing' }), 'bob', callWaiting, undefined)).toBe('deliver');
    // A ringing call's later events reach agents whatever their presence: a ringing agent must stop ringing.
    expect(decideDelivery(terminated({ kind: 'ringing' }), 'bob', dnd, undefined)).toBe('deliver');
  });

  it('holds a voice_call call for the others until its head start ends, then delivers or drops it', () => {
    const headStart: Audience = { kind: 'ringing', preferredAgentId: 'alice', releaseAt: 10_000 };
    expect(decideDelivery(incoming(headStart), 'alice', available, undefined)).toBe('deliver');
    expect(decideDelivery(incoming(headStart), 'bob', available, 'waiting')).toBe('hold');
    expect(decideDelivery(terminated(headStart), 'bob', available, 'waiting')).toBe('hold');
    expect(decideDelivery(incoming(headStart), 'bob', available, 'released')).toBe('deliver');
    expect(decideDelivery(incoming(headStart), 'bob', dnd, 'released')).toBe('skip');
    expect(decideDelivery(incoming(headStart), 'bob', () => 'on_call', 'released')).toBe('skip');
    // A colleague on one call with call waiting holds like everyone else, and rings on the release.
    expect(decideDelivery(incoming(headStart), 'bob', callWaiting, 'waiting')).toBe('hold');
    expect(decideDelivery(incoming(headStart), 'bob', callWaiting, 'released')).toBe('deliver');
    expect(decideDelivery(incoming(headStart), 'bob', available, 'dropped')).toBe('skip');
    expect(decideDelivery(terminated(headStart), 'bob', available, 'dropped')).toBe('skip');
    // A preferred agent without a release time is no head start at all: nobody waits.
    expect(decideDelivery(incoming({ kind: 'ringing', preferredAgentId: 'alice' }), 'bob', available, undefined)).toBe('deliver');
  });

  it('reads the agent of a voice_call payload, and nothing from anything else', () => {
    expect(preferredAgentOf('{"v":1,"agentId":"alice"}')).toBe('alice');
    expect(preferredAgentOf('{"v":1,"agentId":"bob","other":[1]}')).toBe('bob');
    const notOurs = [
      undefined,
      '',
      'alice',
      '{"agentId":1}',
      '{"agentId":""}',
      '["alice"]',
      'null',
      '{"v":1}',
      `{"agentId":"${'a'.repeat(2000)}"}`,
      // Unversioned, another version, or longer than protocol.md's 512 characters: not the app's.
      '{"agentId":"bob"}',
      '{"agentId":"bob","other":[1]}',
      '{"v":2,"agentId":"bob"}',
      JSON.stringify({ v: 1, agentId: 'bob', pad: 'x'.repeat(600) }),
    ];
    for (const payload of notOurs) {
      expect(preferredAgentOf(payload), String(payload)).toBeUndefined();
    }
    fc.assert(fc.property(fc.string(), (payload) => ['string', 'undefined'].includes(typeof preferredAgentOf(payload))));
  });

  it('remembers ringing audiences and claim owners of recent calls', () => {
    const clock = new FakeClock(1_000);
    const known = new KnownCalls(clock.now, 60_000, 2);
    const audience: Audience = { kind: 'ringing', preferredAgentId: 'alice', releaseAt: 5 };
    known.observe({ ...incoming(audience), event: { type: 'call.incoming', callId: 'a', sdp: OFFER_SDP, timestamp: 1 } });
    known.observe({ cursor: 'c-3', receivedAt: 3, audience: { kind: 'everyone' }, event: { type: 'call.claimed', callId: 'b', agentId: 'bob', timestamp: 3 } });
    expect(known.ringingAudienceOf('a')).toEqual(audience);
    expect(known.ownerOf('b')).toBe('bob');
    expect(known.ownerOf('a')).toBeUndefined();
    clock.advance(60_001);
    expect(known.ringingAudienceOf('a')).toBeUndefined();
    expect(known.ownerOf('b')).toBeUndefined();
  });
});

const standing = (agentId: string, presence: AgentStanding['presence'], connected: boolean): AgentStanding => ({ agentId, presence, connected });
/** A team of alice (available), bob (connected, no presence), carol (dnd, connected), dave (not connected, no presence). */
const TEAM: readonly AgentStanding[] = [standing('alice', 'available', false), standing('bob', undefined, true), standing('carol', 'dnd', true), standing('dave', undefined, false)];
const ringing = (overrides: Partial<RingingContext> = {}): RingingContext => ({
  receivedAt: 1_000,
  releaseMs: 10_000,
  standingOf: (agentId) => TEAM.find((a) => a.agentId === agentId),
  ...overrides,
});
const payloadFor = (agentId: string) => JSON.stringify({ v: 1, agentId });
const incomingEvent = (ctaPayload?: string): RelayEvent => ({ type: 'call.incoming', callId: 'wacid.1', sdp: OFFER_SDP, timestamp: 1, ...(ctaPayload !== undefined ? { ctaPayload } : {}) });
const statusEvent: RelayEvent = { type: 'call.status', callId: 'wacid.1', status: 'RINGING', timestamp: 2 };
const messageEvent: RelayEvent = { type: 'message.inbound', messageId: 'wamid.1', messageType: 'text', text: 'hi', timestamp: 3 };

describe('reachability', () => {
  it('counts an agent available when it says so, or when it said nothing and has a stream open', () => {
    expect(isReachable(standing('a', 'available', false))).toBe(true);
    expect(isReachable(standing('a', 'available', true))).toBe(true);
    expect(isReachable(standing('a', undefined, true))).toBe(true);
    expect(isReachable(standing('a', undefined, false))).toBe(false);
    for (const presence of ['on_call', 'dnd'] as const) {
      expect(isReachable(standing('a', presence, true)), presence).toBe(false);
      expect(isReachable(standing('a', presence, false)), presence).toBe(false);
    }
  });

  it('rings an agent on one call who asked for call waiting, but never counts it free', () => {
    expect(isReachable(standing('a', 'call_waiting', true))).toBe(true);
    expect(isReachable(standing('a', 'call_waiting', false))).toBe(true);
    expect(isFree(standing('a', 'call_waiting', true))).toBe(false);
    expect(isFree(standing('a', 'available', false))).toBe(true);
    expect(isFree(standing('a', undefined, true))).toBe(true);
    expect(isFree(standing('a', undefined, false))).toBe(false);
    for (const presence of ['on_call', 'dnd'] as const) expect(isFree(standing('a', presence, true)), presence).toBe(false);
  });

  it('has a routing rule for exactly the presences PUT /presence accepts', () => {
    expect(Object.keys(PRESENCE_ROUTING).sort()).toEqual([...PRESENCES].sort());
  });
});

describe('who a call rings', () => {
  it('rings everyone without a payload of the app', () => {
    for (const payload of [undefined, 'plain text', '{"agentId":"alice"}', '{"v":2,"agentId":"alice"}', '[]']) {
      expect(ringingDecision(payload, ringing()), String(payload)).toEqual({ audience: { kind: 'ringing' } });
    }
  });

  it('gives the agent of a voice_call payload a head start from when the webhook came', () => {
    expect(ringingDecision(payloadFor('alice'), ringing())).toEqual({ audience: { kind: 'ringing', preferredAgentId: 'alice', releaseAt: 11_000 } });
    // Connected without a reported presence counts as available.
    expect(ringingDecision(payloadFor('bob'), ringing({ receivedAt: 5, releaseMs: 300 }))).toEqual({ audience: { kind: 'ringing', preferredAgentId: 'bob', releaseAt: 305 } });
  });

  it('waits for nobody when the agent cannot ring or is not in the team, and says whom it passed over', () => {
    for (const agentId of ['carol', 'dave', 'mallory']) {
      expect(ringingDecision(payloadFor(agentId), ringing()), agentId).toEqual({ audience: { kind: 'ringing' }, passedOver: agentId });
    }
  });

  it('gives no head start to an agent on a call: call_waiting rings with the team at once, on_call does not hold it back', () => {
    const busy: readonly AgentStanding[] = [standing('erin', 'call_waiting', true), standing('frank', 'on_call', true)];
    const context = ringing({ standingOf: (agentId) => busy.find((a) => a.agentId === agentId) });
    for (const agentId of ['erin', 'frank']) {
      expect(ringingDecision(payloadFor(agentId), context), agentId).toEqual({ audience: { kind: 'ringing' }, passedOver: agentId });
    }
    // With no head start, the call_waiting agent rings when the call is delivered, like everyone else.
    expect(decideDelivery(incoming(ringingDecision(payloadFor('erin'), context).audience), 'erin', callWaiting, undefined)).toBe('deliver');
    expect(decideDelivery(incoming(ringingDecision(payloadFor('frank'), context).audience), 'frank', () => 'on_call', undefined)).toBe('skip');
  });

  it('gives no head start when head starts are off', () => {
    expect(ringingDecision(payloadFor('alice'), ringing({ releaseMs: 0 }))).toEqual({ audience: { kind: 'ringing' } });
  });

  it('does not route an unversioned payload to the agent it names', () => {
    // {"agentId":"bob"} may be anybody's button: bob is reachable, yet the call rings everyone.
    expect(ringingDecision('{"agentId":"bob"}', ringing())).toEqual({ audience: { kind: 'ringing' } });
    expect(ringingDecision(payloadFor('bob'), ringing()).audience).toMatchObject({ preferredAgentId: 'bob' });
  });
});

describe('the audience an event is stored with', () => {
  const rang = { kind: 'ringing', preferredAgentId: 'alice', releaseAt: 11_000 } as const;

  it('sends messages to everyone, whatever is known of calls', () => {
    expect(audienceFor(messageEvent, NO_CALL_FACTS, ringing())).toEqual({ audience: { kind: 'everyone' } });
    expect(audienceFor(messageEvent, { owner: 'alice', rang }, ringing())).toEqual({ audience: { kind: 'everyone' } });
  });

  it('sends a claimed call\'s events to its owner only, a connect included', () => {
    expect(audienceFor(statusEvent, { owner: 'bob', rang }, ringing())).toEqual({ audience: { kind: 'agent', agentId: 'bob' } });
    expect(audienceFor(incomingEvent(payloadFor('alice')), { owner: 'bob', rang: undefined }, ringing())).toEqual({ audience: { kind: 'agent', agentId: 'bob' } });
  });

  it('rings for an unclaimed call.incoming', () => {
    expect(audienceFor(incomingEvent(), NO_CALL_FACTS, ringing())).toEqual({ audience: { kind: 'ringing' } });
    expect(audienceFor(incomingEvent(payloadFor('alice')), NO_CALL_FACTS, ringing())).toEqual({ audience: rang });
    expect(audienceFor(incomingEvent(payloadFor('carol')), NO_CALL_FACTS, ringing())).toEqual({ audience: { kind: 'ringing' }, passedOver: 'carol' });
  });

  it('sends the later events of an unclaimed call to everyone it rang, or to everyone when it never rang here', () => {
    expect(audienceFor(statusEvent, { owner: undefined, rang }, ringing())).toEqual({ audience: rang });
    expect(audienceFor(statusEvent, NO_CALL_FACTS, ringing())).toEqual({ audience: { kind: 'everyone' } });
  });

  it('tells everyone the call rang of a claim, or only the owner of a call that rang nobody', () => {
    expect(claimedAudienceFor(rang, 'bob')).toEqual(rang);
    expect(claimedAudienceFor({ kind: 'ringing' }, 'bob')).toEqual({ kind: 'ringing' });
    expect(claimedAudienceFor(undefined, 'bob')).toEqual({ kind: 'agent', agentId: 'bob' });
  });
});

describe('decline verdicts', () => {
  it('answers "answered by" without counting when a colleague claimed the call', () => {
    expect(declineOfAnsweredCall('bob', 'alice')).toEqual({ othersRinging: 0, answeredBy: 'bob' });
    expect(declineOfAnsweredCall('alice', 'alice')).toEqual({ othersRinging: 0 });
    expect(declineOfAnsweredCall(undefined, 'alice')).toBeUndefined();
  });

  it('counts the colleagues who may still answer: reachable and not declined', () => {
    // Reachable: alice and bob. carol is on dnd, dave has no stream.
    expect(declineVerdict('carol', ['carol'], TEAM)).toEqual({ othersRinging: 2 });
    expect(declineVerdict('alice', ['alice'], TEAM)).toEqual({ othersRinging: 1 });
    expect(declineVerdict('alice', ['bob', 'alice'], TEAM)).toEqual({ othersRinging: 0 });
    // The decliner never counts itself, even before its own decline is in the list.
    expect(declineVerdict('bob', [], TEAM)).toEqual({ othersRinging: 1 });
    expect(declineVerdict('alice', ['alice', 'mallory'], [])).toEqual({ othersRinging: 0 });
  });

  it('counts a colleague on one call with call waiting as one who may still answer, not one on a call without it', () => {
    const team = [...TEAM, standing('erin', 'call_waiting', true), standing('frank', 'on_call', true)];
    expect(declineVerdict('alice', ['alice'], team)).toEqual({ othersRinging: 2 });
    expect(declineVerdict('alice', ['alice', 'bob'], team)).toEqual({ othersRinging: 1 });
    expect(declineVerdict('erin', ['alice', 'bob', 'erin'], team)).toEqual({ othersRinging: 0 });
  });
});

describe('resume tokens', () => {
  it('are the bare cursor when nothing is held', () => {
    expect(formatResumeToken('1718-0', [])).toBe('1718-0');
    expect(parseResumeToken('1718-0')).toEqual({ cursor: '1718-0', heldCallIds: [] });
    expect(parseResumeToken(undefined)).toEqual({ cursor: undefined, heldCallIds: [] });
    expect(parseResumeToken('  ')).toEqual({ cursor: undefined, heldCallIds: [] });
  });

  it('carry any held call ids through a round trip', () => {
    fc.assert(
      fc.property(fc.stringMatching(/^[a-z0-9-]{1,30}$/), fc.uniqueArray(fc.string({ minLength: 1, maxLength: 80 }), { maxLength: 10 }), (cursor, held) => {
        const token = formatResumeToken(cursor, held);
        expect(token).not.toMatch(/[\r\n\0]/);
        expect(parseResumeToken(token)).toEqual({ cursor, heldCallIds: held });
      }),
    );
  });

  it('keep the cursor of a token whose held part is garbage', () => {
    expect(parseResumeToken('m1-5~held~%%%')).toEqual({ cursor: 'm1-5', heldCallIds: [] });
    expect(parseResumeToken(`m1-5~held~${Buffer.from('{"a":1}').toString('base64url')}`)).toEqual({ cursor: 'm1-5', heldCallIds: [] });
  });
});

describe('KeyedTaskQueue', () => {
  it('runs tasks of one key in order and of different keys side by side', async () => {
    const queue = new KeyedTaskQueue();
    const log: string[] = [];
    let releaseA: () => void = () => undefined;
    const blockA = new Promise<void>((resolve) => (releaseA = resolve));
    void queue.run('a', async () => {
      await blockA;
      log.push('a1');
    });
    void queue.run('a', () => {
      log.push('a2');
      return Promise.resolve();
    });
    await queue.run('b', () => {
      log.push('b1');
      return Promise.resolve();
    });
    expect(log).toEqual(['b1']);
    releaseA();
    await queue.idle();
    expect(log).toEqual(['b1', 'a1', 'a2']);
    expect(queue.pending).toBe(0);
  });

  it('runs the next task of a key after one that failed, and idle() waits for the tasks that tasks queue', async () => {
    const queue = new KeyedTaskQueue();
    const log: string[] = [];
    void queue.run('a', () => Promise.reject(new Error('refused')));
    void queue.run('a', () => {
      log.push('a2');
      // Queued while the queue is busy: idle() below waits for it too.
      void queue.run('b', async () => {
        await new Promise((resolve) => setTimeout(resolve, 20));
        log.push('b1');
      });
      return Promise.resolve();
    });
    expect(queue.pending).toBe(2);
    await queue.idle();
    expect(log).toEqual(['a2', 'b1']);
    expect(queue.pending).toBe(0);
    // Nothing under way: idle() answers at once, and the queue takes work again.
    await queue.idle();
    await queue.run('a', () => {
      log.push('a3');
      return Promise.resolve();
    });
    expect(log).toEqual(['a2', 'b1', 'a3']);
  });
});

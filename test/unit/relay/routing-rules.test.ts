import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Audience, StoredEvent } from '../../../relay/backend/types';
import { KeyedTaskQueue } from '../../../relay/keyed-task-queue';
import { formatResumeToken, parseResumeToken } from '../../../relay/resume-token';
import { decideDelivery, KnownCalls, preferredAgentOf } from '../../../relay/routing';

const incoming = (audience: Audience): StoredEvent => ({
  cursor: 'c-1',
  receivedAt: 1,
  audience,
  event: { type: 'call.incoming', callId: 'wacid.1', sdp: 'v=0', timestamp: 1 },
});
const terminated = (audience: Audience): StoredEvent => ({
  cursor: 'c-2',
  receivedAt: 2,
  audience,
  event: { type: 'call.terminated', callId: 'wacid.1', status: 'COMPLETED', timestamp: 2 },
});
const available = () => 'available' as const;
const dnd = () => 'dnd' as const;
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
    expect(decideDelivery(incoming(headStart), 'bob', available, 'dropped')).toBe('skip');
    expect(decideDelivery(terminated(headStart), 'bob', available, 'dropped')).toBe('skip');
    // A preferred agent without a release time is no head start at all: nobody waits.
    expect(decideDelivery(incoming({ kind: 'ringing', preferredAgentId: 'alice' }), 'bob', available, undefined)).toBe('deliver');
  });

  it('reads the agent of a voice_call payload, and nothing from anything else', () => {
    expect(preferredAgentOf('{"v":1,"agentId":"alice"}')).toBe('alice');
    expect(preferredAgentOf('{"agentId":"bob","other":[1]}')).toBe('bob');
    for (const payload of [undefined, '', 'alice', '{"agentId":1}', '{"agentId":""}', '["alice"]', 'null', '{"v":1}', `{"agentId":"${'a'.repeat(2000)}"}`]) {
      expect(preferredAgentOf(payload), String(payload)).toBeUndefined();
    }
    fc.assert(fc.property(fc.string(), (payload) => ['string', 'undefined'].includes(typeof preferredAgentOf(payload))));
  });

  it('remembers ringing audiences and claim owners of recent calls', () => {
    const clock = { now: 1_000 };
    const known = new KnownCalls(() => clock.now, 60_000, 2);
    const audience: Audience = { kind: 'ringing', preferredAgentId: 'alice', releaseAt: 5 };
    known.observe({ ...incoming(audience), event: { type: 'call.incoming', callId: 'a', sdp: 'v=0', timestamp: 1 } });
    known.observe({ cursor: 'c-3', receivedAt: 3, audience: { kind: 'everyone' }, event: { type: 'call.claimed', callId: 'b', agentId: 'bob', timestamp: 3 } });
    expect(known.ringingAudienceOf('a')).toEqual(audience);
    expect(known.ownerOf('b')).toBe('bob');
    expect(known.ownerOf('a')).toBeUndefined();
    clock.now += 60_001;
    expect(known.ringingAudienceOf('a')).toBeUndefined();
    expect(known.ownerOf('b')).toBeUndefined();
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
});

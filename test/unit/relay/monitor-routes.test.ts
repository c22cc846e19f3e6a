// Who hears whom once supervisors join a bridged call (relay/REFERENCE.md "Supervisors"): the relay's
// routes (bridged-call.ts `routesOf`) read as the node's mixer reads them (bridge/media/listening.ts
// `listeningOf`), for each mode and each phase of a call. Legs are named after their agents: alice
// and bob are agents, sam and sue supervisors.
import { describe, expect, it } from 'vitest';
import { listeningOf } from '../../../bridge/media/listening';
import { routesOf, type BridgedCall, type Monitor, type Transfer } from '../../../relay/bridged-call';
import { CUSTOMER, type Routes } from '../../../shared/bridge';
import type { MonitorMode } from '../../../shared/supervision';

interface Shape {
  members?: string[];
  away?: string[];
  held?: boolean;
  transfer?: 'ringing' | 'consulting';
  /** Supervisor → its mode; an `offered:` prefix keeps its leg unanswered. */
  monitors?: Record<string, MonitorMode | `offered:${MonitorMode}`>;
}

function callOf(shape: Shape): BridgedCall {
  const members = shape.members ?? ['alice'];
  const timer = setTimeout(() => undefined, 0);
  clearTimeout(timer);
  const monitors = new Map<string, Monitor>(
    Object.entries(shape.monitors ?? {}).map(([supervisorId, said]) => {
      const offered = said.startsWith('offered:');
      const mode = (offered ? said.slice('offered:'.length) : said) as MonitorMode;
      return [supervisorId, { legId: supervisorId, mode, name: supervisorId, leg: offered ? { kind: 'offered', offer: 'o', timer } : { kind: 'connected', offer: 'o' } }];
    }),
  );
  const transfer: Transfer | undefined =
    shape.transfer === undefined
      ? undefined
      : { transferId: 'xfer-1', kind: 'consult', by: 'alice', named: true, rung: new Map([['bob', 'bob']]), declined: new Set(), phase: shape.transfer === 'ringing' ? { kind: 'ringing', timer } : { kind: 'consulting' } };
  return {
    callId: 'wacid.routes',
    nodeId: 'local',
    direction: 'incoming',
    legs: new Map(),
    declined: new Set(),
    members: new Map(members.map((agentId) => [agentId, agentId])),
    held: shape.held ?? false,
    ...(transfer !== undefined ? { transfer } : {}),
    transfers: new Map(transfer !== undefined ? [[transfer.transferId, transfer]] : []),
    everyone: new Set(members),
    away: new Map((shape.away ?? []).map((agentId) => [agentId, { since: 0, timer }])),
    strayLegs: [],
    monitors,
    caller: {},
    createdAt: 0,
  };
}

/** What each participant hears on the node, every leg connected: `a+b`, `music+a`, `silence`. */
function hearing(routes: Routes, participants: readonly string[]): Record<string, string> {
  const connected = new Set(participants);
  return Object.fromEntries(
    participants.map((p) => {
      const listening = listeningOf(routes, p, connected);
      const said =
        listening.kind === 'silence' ? 'silence' : listening.kind === 'music' ? 'music' : listening.kind === 'forward' ? listening.source : [...(listening.music ? ['music'] : []), ...[...listening.sources].sort()].join('+');
      return [p, said];
    }),
  );
}

const ONE = [CUSTOMER, 'alice', 'sam'];
const TWO = [CUSTOMER, 'alice', 'bob', 'sam'];

describe('routesOf with a supervisor', () => {
  it('without a connected supervisor the routes are the agents’ alone: an offered leg hears nothing and is heard by nobody', () => {
    expect(routesOf(callOf({}))).toEqual({ [CUSTOMER]: ['alice'], alice: [CUSTOMER] });
    expect(routesOf(callOf({ monitors: { sam: 'offered:barge' } }))).toEqual({ [CUSTOMER]: ['alice'], alice: [CUSTOMER] });
  });

  describe('one agent talking to the customer', () => {
    it('listen: the supervisor hears both, nobody hears it', () => {
      expect(hearing(routesOf(callOf({ monitors: { sam: 'listen' } })), ONE)).toEqual({ [CUSTOMER]: 'alice', alice: CUSTOMER, sam: `alice+${CUSTOMER}` });
    });
    it('whisper: the agent hears the supervisor, the customer does not', () => {
      expect(hearing(routesOf(callOf({ monitors: { sam: 'whisper' } })), ONE)).toEqual({ [CUSTOMER]: 'alice', alice: `${CUSTOMER}+sam`, sam: `alice+${CUSTOMER}` });
    });
    it('barge: all three hear each other', () => {
      expect(hearing(routesOf(callOf({ monitors: { sam: 'barge' } })), ONE)).toEqual({ [CUSTOMER]: 'alice+sam', alice: `${CUSTOMER}+sam`, sam: `alice+${CUSTOMER}` });
    });
  });

  describe('the customer held', () => {
    it('listen: the supervisor hears the music and the agent; the agent hears nothing', () => {
      expect(hearing(routesOf(callOf({ held: true, monitors: { sam: 'listen' } })), ONE)).toEqual({ [CUSTOMER]: 'music', alice: 'silence', sam: `music+alice+${CUSTOMER}` });
    });
    it('whisper: the held agent hears the supervisor alone; the customer the music alone', () => {
      expect(hearing(routesOf(callOf({ held: true, monitors: { sam: 'whisper' } })), ONE)).toEqual({ [CUSTOMER]: 'music', alice: 'sam', sam: `music+alice+${CUSTOMER}` });
    });
    it('barge: the customer hears the supervisor over the music, and the agent hears it', () => {
      expect(hearing(routesOf(callOf({ held: true, monitors: { sam: 'barge' } })), ONE)).toEqual({ [CUSTOMER]: 'music+sam', alice: 'sam', sam: `music+alice+${CUSTOMER}` });
    });
  });

  describe('a transfer ringing (the customer hears the music, the agent nothing)', () => {
    it('listen', () => {
      expect(hearing(routesOf(callOf({ transfer: 'ringing', monitors: { sam: 'listen' } })), ONE)).toEqual({ [CUSTOMER]: 'music', alice: 'silence', sam: `music+alice+${CUSTOMER}` });
    });
    it('whisper', () => {
      expect(hearing(routesOf(callOf({ transfer: 'ringing', monitors: { sam: 'whisper' } })), ONE)).toEqual({ [CUSTOMER]: 'music', alice: 'sam', sam: `music+alice+${CUSTOMER}` });
    });
    it('barge', () => {
      expect(hearing(routesOf(callOf({ transfer: 'ringing', monitors: { sam: 'barge' } })), ONE)).toEqual({ [CUSTOMER]: 'music+sam', alice: 'sam', sam: `music+alice+${CUSTOMER}` });
    });
  });

  describe('a consult (the agents talk, the customer hears the music)', () => {
    const consult = { members: ['alice', 'bob'], transfer: 'consulting' as const };
    it('listen: the supervisor hears the customer’s side and both agents', () => {
      expect(hearing(routesOf(callOf({ ...consult, monitors: { sam: 'listen' } })), TWO)).toEqual({ [CUSTOMER]: 'music', alice: 'bob', bob: 'alice', sam: `music+alice+bob+${CUSTOMER}` });
    });
    it('whisper: both agents hear the supervisor', () => {
      expect(hearing(routesOf(callOf({ ...consult, monitors: { sam: 'whisper' } })), TWO)).toEqual({ [CUSTOMER]: 'music', alice: 'bob+sam', bob: 'alice+sam', sam: `music+alice+bob+${CUSTOMER}` });
    });
    it('barge: the customer hears the supervisor over the music, both agents hear it', () => {
      expect(hearing(routesOf(callOf({ ...consult, monitors: { sam: 'barge' } })), TWO)).toEqual({ [CUSTOMER]: 'music+sam', alice: 'bob+sam', bob: 'alice+sam', sam: `music+alice+bob+${CUSTOMER}` });
    });
  });

  describe('a three-way call', () => {
    const threeWay = { members: ['alice', 'bob'] };
    it('listen', () => {
      expect(hearing(routesOf(callOf({ ...threeWay, monitors: { sam: 'listen' } })), TWO)).toEqual({ [CUSTOMER]: 'alice+bob', alice: `bob+${CUSTOMER}`, bob: `alice+${CUSTOMER}`, sam: `alice+bob+${CUSTOMER}` });
    });
    it('whisper', () => {
      expect(hearing(routesOf(callOf({ ...threeWay, monitors: { sam: 'whisper' } })), TWO)).toEqual({ [CUSTOMER]: 'alice+bob', alice: `bob+${CUSTOMER}+sam`, bob: `alice+${CUSTOMER}+sam`, sam: `alice+bob+${CUSTOMER}` });
    });
    it('barge', () => {
      expect(hearing(routesOf(callOf({ ...threeWay, monitors: { sam: 'barge' } })), TWO)).toEqual({ [CUSTOMER]: 'alice+bob+sam', alice: `bob+${CUSTOMER}+sam`, bob: `alice+${CUSTOMER}+sam`, sam: `alice+bob+${CUSTOMER}` });
    });
  });

  describe('a member away (its leg went; it hears and is heard by nobody)', () => {
    it('the only member away: the supervisor hears the customer and the music; a barge talks to the customer', () => {
      expect(hearing(routesOf(callOf({ away: ['alice'], monitors: { sam: 'listen' } })), ONE)).toEqual({ [CUSTOMER]: 'music', alice: 'silence', sam: `music+${CUSTOMER}` });
      expect(hearing(routesOf(callOf({ away: ['alice'], monitors: { sam: 'whisper' } })), ONE)).toEqual({ [CUSTOMER]: 'music', alice: 'silence', sam: `music+${CUSTOMER}` });
      expect(hearing(routesOf(callOf({ away: ['alice'], monitors: { sam: 'barge' } })), ONE)).toEqual({ [CUSTOMER]: 'music+sam', alice: 'silence', sam: `music+${CUSTOMER}` });
    });
    it('one of a three-way call’s agents away: the other and the supervisor go on', () => {
      expect(hearing(routesOf(callOf({ members: ['alice', 'bob'], away: ['bob'], monitors: { sam: 'whisper' } })), TWO)).toEqual({ [CUSTOMER]: 'alice', alice: `${CUSTOMER}+sam`, bob: 'silence', sam: `alice+${CUSTOMER}` });
    });
  });

  describe('two supervisors', () => {
    const both = [CUSTOMER, 'alice', 'sam', 'sue'];
    it('two barging hear each other; everyone hears both', () => {
      expect(hearing(routesOf(callOf({ monitors: { sam: 'barge', sue: 'barge' } })), both)).toEqual({ [CUSTOMER]: 'alice+sam+sue', alice: `${CUSTOMER}+sam+sue`, sam: `alice+${CUSTOMER}+sue`, sue: `alice+${CUSTOMER}+sam` });
    });
    it('a supervisor never hears another’s whisper, nor is heard listening', () => {
      expect(hearing(routesOf(callOf({ monitors: { sam: 'whisper', sue: 'listen' } })), both)).toEqual({ [CUSTOMER]: 'alice', alice: `${CUSTOMER}+sam`, sam: `alice+${CUSTOMER}`, sue: `alice+${CUSTOMER}` });
    });
    it('a barging one is heard by a whispering one; an offered one by nobody', () => {
      expect(hearing(routesOf(callOf({ monitors: { sam: 'whisper', sue: 'barge' } })), both)).toEqual({ [CUSTOMER]: 'alice+sue', alice: `${CUSTOMER}+sam+sue`, sam: `alice+${CUSTOMER}+sue`, sue: `alice+${CUSTOMER}` });
      const routes = routesOf(callOf({ monitors: { sam: 'barge', sue: 'offered:barge' } }));
      expect(routes.sue).toBeUndefined();
      expect(Object.values(routes).some((heard) => heard.includes('sue'))).toBe(false);
    });
  });

  it('a switch of mode changes the routes alone: the same legs, no other change', () => {
    const call = callOf({ monitors: { sam: 'listen' } });
    const listen = routesOf(call);
    call.monitors.get('sam')!.mode = 'barge';
    const barge = routesOf(call);
    expect(Object.keys(barge).sort()).toEqual(Object.keys(listen).sort());
    expect(barge).toEqual({ [CUSTOMER]: ['alice', 'sam'], alice: [CUSTOMER, 'sam'], sam: [CUSTOMER, 'alice'] });
    expect(listen).toEqual({ [CUSTOMER]: ['alice'], alice: [CUSTOMER], sam: [CUSTOMER, 'alice'] });
  });
});

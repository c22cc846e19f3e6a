// Supervisors on the bridge in the main process (shared/supervision.ts, electron/core/monitoring.ts):
// a supervisor's Team view list (getLiveCalls), joining a colleague's call ("Listen", "Whisper",
// "Barge": startMonitor, answerMonitor), switching without dropping, "Leave", one joined call at a
// time, none while on a call of its own, the join ended under it (the call ended, a call of its own
// began, its window went, the app quit); and the agents' side: the supervisors in their call as the
// relay tells them (CallState.monitors). Two apps, Sam's (a supervisor) and Alice's, on one relay
// speaking the contract of SUPERVISOR_PATHS (oversight-relay.ts).
import { afterEach, describe, expect, it } from 'vitest';
import { configureLogging } from '../../../shared/log';
import { ANSWER_SDP } from '../../fixtures/sdp';
import { MONITOR_OFFER_SDP, type OversightRelay } from './oversight-relay';
import { answerBridged, closeOversightDesks, CUSTOMER, lastCall, oversightDesk, pushed, SAM, until, type OversightDesk } from './oversight-desk';
import { ALICE, BOB } from './team-relay';

configureLogging({ sink: () => undefined });
afterEach(closeOversightDesks);

const TEAM = [ALICE, BOB, SAM];
/** The window's answer to the supervisor's leg. */
const MONITOR_ANSWER_SDP = ANSWER_SDP.replace('o=- 3 4', 'o=- 35 45');

/** Sam's app (a supervisor) and Alice's, on one relay. */
async function team(o: { tellAgents?: boolean } = {}): Promise<{ sam: OversightDesk; alice: OversightDesk; relay: OversightRelay }> {
  const sam = await oversightDesk({
    agent: SAM,
    agents: TEAM,
    before: (relay) => {
      relay.supervisors.add('sam');
      relay.tellAgents = o.tellAgents ?? false;
    },
  });
  const alice = await oversightDesk({ agent: ALICE, agents: TEAM, relay: sam.relay });
  return { sam, alice, relay: sam.relay };
}

/** A bridged call Bob took (his app is not in these tests): the relay has him in it. */
function bobsCall(relay: OversightRelay, callId: string): void {
  relay.ring(callId, '447700900456', []);
  const call = relay.calls.get(callId)!;
  call.members.add('bob');
  call.answeredAt = Date.now();
  call.connected = true;
}

const monitorRequests = (relay: OversightRelay) => relay.seen(/^\/team\/calls\/[^/]+\/monitor/);
const bodies = (relay: OversightRelay) => relay.relay.requests.filter((r) => /^\/team\/calls\//.test(r.path)).map((r) => r.body);

describe('the team’s live calls', () => {
  it('are the relay’s list for a supervisor, and the relay’s 403 in its words for an agent', async () => {
    const { sam, alice, relay } = await team();
    const alicesCall = await answerBridged(alice, 'wacid.live-1', 'alice');
    relay.ring('wacid.live-2', CUSTOMER, [], { bridged: false, name: 'Grace Hopper' });
    const listed = await sam.app.handle('getLiveCalls', {});
    expect(listed).toMatchObject({
      ok: true,
      value: {
        calls: [
          { callId: 'wacid.live-1', state: 'talking', bridged: true, agents: [{ id: 'alice', name: 'Alice Agent' }], customer: { number: CUSTOMER }, quality: { mos: 4.3 }, monitors: [] },
          { callId: 'wacid.live-2', state: 'ringing', bridged: false, agents: [], customer: { number: CUSTOMER, name: 'Grace Hopper' }, monitors: [] },
        ],
      },
    });
    expect(relay.relay.requests.filter((r) => r.path === '/team/calls').map((r) => r.agentId)).toEqual(['sam']);
    expect(await alice.app.handle('getLiveCalls', {})).toMatchObject({
      ok: false,
      error: { code: 'unauthorized', httpStatus: 403, message: 'The relay refused the live calls request (HTTP 403: only supervisors may see and join the team’s live calls)' },
    });
    // Every one of the supervisor's requests: refused by the relay before anything else, said as it says it.
    bobsCall(relay, 'wacid.live-3');
    expect(await alice.app.handle('hangUp', { localId: alicesCall })).toEqual({ ok: true, value: null });
    expect(await alice.app.handle('startMonitor', { callId: 'wacid.live-3', mode: 'listen' })).toMatchObject({ ok: false, error: { code: 'unauthorized', httpStatus: 403 } });
    expect(await alice.app.handle('leaveMonitor', { callId: 'wacid.live-3' })).toMatchObject({ ok: false, error: { code: 'unauthorized', httpStatus: 403 } });
    expect(relay.calls.get('wacid.live-3')!.monitors.size).toBe(0);
  });
});

describe('joining a colleague’s call', () => {
  it('Listen joins with a leg of the supervisor’s own, Whisper and Barge switch it without a new one, Leave leaves; the agent is told of the whisper and the barge', async () => {
    const { sam, alice, relay } = await team();
    const localId = await answerBridged(alice, 'wacid.mon-1', 'alice');

    const listening = await sam.app.handle('startMonitor', { callId: 'wacid.mon-1', mode: 'listen' });
    expect(listening).toEqual({ ok: true, value: { callId: 'wacid.mon-1', mode: 'listen', legId: 'leg-monitor-sam-2', offer: MONITOR_OFFER_SDP } });
    await until('Sam’s windows hear of the join', () => pushed(sam.pushes, 'monitorChanged').length === 1);
    expect(pushed(sam.pushes, 'monitorChanged')).toEqual([{ callId: 'wacid.mon-1', mode: 'listen' }]);
    expect(await sam.app.handle('answerMonitor', { callId: 'wacid.mon-1', legId: 'leg-monitor-sam-2', sdp: MONITOR_ANSWER_SDP })).toEqual({ ok: true, value: null });
    expect(relay.calls.get('wacid.mon-1')!.monitors.get('sam')).toEqual({ legId: 'leg-monitor-sam-2', mode: 'listen', answer: MONITOR_ANSWER_SDP });

    expect(await sam.app.handle('startMonitor', { callId: 'wacid.mon-1', mode: 'whisper' })).toEqual({ ok: true, value: { callId: 'wacid.mon-1', mode: 'whisper' } });
    await until('Alice hears of the whisper', () => lastCall(alice.pushes, localId)?.monitors !== undefined);
    expect(lastCall(alice.pushes, localId)).toMatchObject({ phase: 'active', monitors: [{ supervisorId: 'sam', name: 'Sam Supervisor', mode: 'whisper' }] });
    expect(await sam.app.handle('startMonitor', { callId: 'wacid.mon-1', mode: 'barge' })).toEqual({ ok: true, value: { callId: 'wacid.mon-1', mode: 'barge' } });
    await until('Alice hears Sam joined', () => lastCall(alice.pushes, localId)?.monitors?.[0]?.mode === 'barge');

    expect(await sam.app.handle('leaveMonitor', { callId: 'wacid.mon-1' })).toEqual({ ok: true, value: null });
    await until('Alice hears Sam left', () => lastCall(alice.pushes, localId)?.monitors === undefined);
    expect(lastCall(alice.pushes, localId)).toMatchObject({ phase: 'active' });
    // Leaving again is no error.
    expect(await sam.app.handle('leaveMonitor', { callId: 'wacid.mon-1' })).toEqual({ ok: true, value: null });

    expect(monitorRequests(relay)).toEqual([
      'POST /team/calls/wacid.mon-1/monitor',
      'POST /team/calls/wacid.mon-1/monitor/answer',
      'PUT /team/calls/wacid.mon-1/monitor',
      'PUT /team/calls/wacid.mon-1/monitor',
      'DELETE /team/calls/wacid.mon-1/monitor',
      'DELETE /team/calls/wacid.mon-1/monitor',
    ]);
    expect(bodies(relay)).toEqual([{ mode: 'listen' }, { legId: 'leg-monitor-sam-2', sdp: MONITOR_ANSWER_SDP }, { mode: 'whisper' }, { mode: 'barge' }, undefined, undefined]);
    await until('Sam’s windows heard it all', () => pushed(sam.pushes, 'monitorChanged').length === 4);
    expect(pushed(sam.pushes, 'monitorChanged')).toEqual([
      { callId: 'wacid.mon-1', mode: 'listen' },
      { callId: 'wacid.mon-1', mode: 'whisper' },
      { callId: 'wacid.mon-1', mode: 'barge' },
      { callId: 'wacid.mon-1', mode: 'left', reason: 'left' },
    ]);
    // The supervisor's own join is no call of Sam's.
    expect(pushed(sam.pushes, 'callChanged').filter((c) => c.callId === 'wacid.mon-1')).toEqual([]);
  });

  it('tells the agent of a listen only when the team says so', async () => {
    const { sam, alice } = await team({ tellAgents: true });
    const localId = await answerBridged(alice, 'wacid.mon-2', 'alice');
    expect(await sam.app.handle('startMonitor', { callId: 'wacid.mon-2', mode: 'listen' })).toMatchObject({ ok: true });
    await until('Alice hears Sam is listening', () => lastCall(alice.pushes, localId)?.monitors !== undefined);
    expect(lastCall(alice.pushes, localId)?.monitors).toEqual([{ supervisorId: 'sam', name: 'Sam Supervisor', mode: 'listen' }]);
    expect(await sam.app.handle('leaveMonitor', { callId: 'wacid.mon-2' })).toEqual({ ok: true, value: null });
    await until('Alice hears Sam left', () => lastCall(alice.pushes, localId)?.monitors === undefined);
  });

  it('one call at a time: joining another leaves the first; and the relay’s refusals are said as it says them', async () => {
    const { sam, relay } = await team();
    bobsCall(relay, 'wacid.a');
    bobsCall(relay, 'wacid.b');
    expect(await sam.app.handle('startMonitor', { callId: 'wacid.a', mode: 'listen' })).toMatchObject({ ok: true, value: { mode: 'listen' } });
    expect(await sam.app.handle('startMonitor', { callId: 'wacid.b', mode: 'whisper' })).toMatchObject({ ok: true, value: { callId: 'wacid.b', mode: 'whisper', offer: MONITOR_OFFER_SDP } });
    expect(monitorRequests(relay)).toEqual(['POST /team/calls/wacid.a/monitor', 'DELETE /team/calls/wacid.a/monitor', 'POST /team/calls/wacid.b/monitor']);
    expect(relay.calls.get('wacid.a')!.monitors.size).toBe(0);
    await until('Sam’s windows heard both', () => pushed(sam.pushes, 'monitorChanged').length >= 3);
    expect(pushed(sam.pushes, 'monitorChanged')).toEqual([
      { callId: 'wacid.a', mode: 'listen' },
      { callId: 'wacid.a', mode: 'left', reason: 'left' },
      { callId: 'wacid.b', mode: 'whisper' },
    ]);

    relay.ring('wacid.direct', CUSTOMER, [], { bridged: false });
    expect(await sam.app.handle('startMonitor', { callId: 'wacid.direct', mode: 'listen' })).toMatchObject({
      ok: false,
      error: { code: 'invalid_state', httpStatus: 409, message: 'The relay refused the monitor request (HTTP 409: a direct call cannot be joined)' },
    });
    relay.ring('wacid.ringing', CUSTOMER, ['alice']);
    expect(await sam.app.handle('startMonitor', { callId: 'wacid.ringing', mode: 'barge' })).toMatchObject({
      ok: false,
      error: { code: 'invalid_state', message: 'The relay refused the monitor request (HTTP 409: the call is not answered yet)' },
    });
    expect(await sam.app.handle('startMonitor', { callId: 'wacid.none', mode: 'listen' })).toMatchObject({
      ok: false,
      error: { code: 'not_found', httpStatus: 404, message: 'The relay refused the monitor request (HTTP 404: no live call with this id)' },
    });
    // A refused join of another call has left the one joined: the relay has it no longer either.
    expect(relay.calls.get('wacid.b')!.monitors.size).toBe(0);
    // An answer for a leg that is not the joined call's is refused here.
    expect(await sam.app.handle('answerMonitor', { callId: 'wacid.a', legId: 'leg-monitor-sam-1', sdp: MONITOR_ANSWER_SDP })).toMatchObject({
      ok: false,
      error: { code: 'invalid_state', message: 'You are not in call wacid.a: join it first', text: { code: 'supervision.notJoined', values: { callId: 'wacid.a' } } },
    });
  });

  it('joins afresh when the relay no longer has the join (its leg went): a switch it answers 404 becomes a join', async () => {
    const { sam, relay } = await team();
    bobsCall(relay, 'wacid.c');
    expect(await sam.app.handle('startMonitor', { callId: 'wacid.c', mode: 'listen' })).toMatchObject({ ok: true, value: { legId: 'leg-monitor-sam-1' } });
    relay.calls.get('wacid.c')!.monitors.delete('sam');
    expect(await sam.app.handle('startMonitor', { callId: 'wacid.c', mode: 'whisper' })).toEqual({ ok: true, value: { callId: 'wacid.c', mode: 'whisper', legId: 'leg-monitor-sam-2', offer: MONITOR_OFFER_SDP } });
    expect(monitorRequests(relay)).toEqual(['POST /team/calls/wacid.c/monitor', 'PUT /team/calls/wacid.c/monitor', 'POST /team/calls/wacid.c/monitor']);
    await until('Sam’s windows heard it', () => pushed(sam.pushes, 'monitorChanged').length >= 3);
    expect(pushed(sam.pushes, 'monitorChanged')).toEqual([
      { callId: 'wacid.c', mode: 'listen' },
      { callId: 'wacid.c', mode: 'left', reason: 'left' },
      { callId: 'wacid.c', mode: 'whisper' },
    ]);
  });
});

describe('a join ends under the supervisor', () => {
  it('when the call ends: the windows hear `left` with `call_ended`, and the next join needs no leave first', async () => {
    const { sam, relay } = await team();
    bobsCall(relay, 'wacid.d');
    expect(await sam.app.handle('startMonitor', { callId: 'wacid.d', mode: 'barge' })).toMatchObject({ ok: true });
    relay.end('wacid.d');
    await until('Sam’s windows hear the call ended', () => pushed(sam.pushes, 'monitorChanged').some((c) => c.mode === 'left'));
    expect(pushed(sam.pushes, 'monitorChanged')).toEqual([
      { callId: 'wacid.d', mode: 'barge' },
      { callId: 'wacid.d', mode: 'left', reason: 'call_ended' },
    ]);
    bobsCall(relay, 'wacid.e');
    expect(await sam.app.handle('startMonitor', { callId: 'wacid.e', mode: 'listen' })).toMatchObject({ ok: true });
    expect(monitorRequests(relay)).toEqual(['POST /team/calls/wacid.d/monitor', 'POST /team/calls/wacid.e/monitor']);
  });

  it('when the call ends while the join is on its way: the windows hear the join, then `left` with `call_ended`', async () => {
    const { sam, relay } = await team();
    bobsCall(relay, 'wacid.h');
    // The relay joins Sam, the call ends, its word on that reaches Sam before the join's answer does.
    relay.relay.routes.unshift(async ({ method, path }) => {
      if (method !== 'POST' || path !== '/team/calls/wacid.h/monitor') return undefined;
      relay.relay.send({ type: 'call.monitor', callId: 'wacid.h', supervisorId: 'sam', name: 'Sam Supervisor', mode: 'listen', timestamp: Date.now() }, ['sam']);
      relay.end('wacid.h');
      relay.relay.send({ type: 'call.monitor', callId: 'wacid.h', supervisorId: 'sam', name: 'Sam Supervisor', mode: 'left', reason: 'call_ended', timestamp: Date.now() }, ['sam']);
      await new Promise((resolve) => setTimeout(resolve, 200));
      return { status: 200, json: { legId: 'leg-monitor-sam-9', offer: MONITOR_OFFER_SDP, mode: 'listen' } };
    });
    expect(await sam.app.handle('startMonitor', { callId: 'wacid.h', mode: 'listen' })).toMatchObject({ ok: true, value: { legId: 'leg-monitor-sam-9' } });
    expect(pushed(sam.pushes, 'monitorChanged')).toEqual([
      { callId: 'wacid.h', mode: 'listen' },
      { callId: 'wacid.h', mode: 'left', reason: 'call_ended' },
    ]);
    // Nothing is joined: the next call's join needs no leave first.
    bobsCall(relay, 'wacid.i');
    expect(await sam.app.handle('startMonitor', { callId: 'wacid.i', mode: 'listen' })).toMatchObject({ ok: true });
    expect(monitorRequests(relay)).toEqual(['POST /team/calls/wacid.h/monitor', 'POST /team/calls/wacid.i/monitor']);
  });

  it('is refused while the supervisor is on a call of its own, and left when it takes one', async () => {
    const { sam, relay } = await team();
    bobsCall(relay, 'wacid.f');
    expect(await sam.app.handle('startMonitor', { callId: 'wacid.f', mode: 'listen' })).toMatchObject({ ok: true });
    // Rung before the join (the relay rings nobody joined): Sam answers it, and the join goes.
    const own = await answerBridged(sam, 'wacid.own', 'sam');
    await until('the joined call is left', () => monitorRequests(relay).includes('DELETE /team/calls/wacid.f/monitor'));
    await until('Sam’s windows hear it', () => pushed(sam.pushes, 'monitorChanged').at(-1)?.mode === 'left');
    expect(relay.calls.get('wacid.f')!.monitors.size).toBe(0);
    const refused = await sam.app.handle('startMonitor', { callId: 'wacid.f', mode: 'listen' });
    expect(refused).toMatchObject({ ok: false, error: { code: 'invalid_state', message: 'You are on a call: finish it before you join a colleague’s call', text: { code: 'supervision.onCall' } } });
    expect(monitorRequests(relay)).toEqual(['POST /team/calls/wacid.f/monitor', 'DELETE /team/calls/wacid.f/monitor']);
    expect(await sam.app.handle('hangUp', { localId: own })).toEqual({ ok: true, value: null });
    expect(await sam.app.handle('startMonitor', { callId: 'wacid.f', mode: 'listen' })).toMatchObject({ ok: true });
  });

  it('when the window that carried its audio goes, and when the app quits', async () => {
    const { sam, relay } = await team();
    bobsCall(relay, 'wacid.g');
    expect(await sam.app.handle('startMonitor', { callId: 'wacid.g', mode: 'whisper' })).toMatchObject({ ok: true });
    await sam.app.windowGone('all', { code: 'service.shuttingDown' });
    await until('the joined call is left', () => monitorRequests(relay).includes('DELETE /team/calls/wacid.g/monitor'));
    await until('Sam’s windows hear it', () => pushed(sam.pushes, 'monitorChanged').at(-1)?.mode === 'left');
    expect(relay.calls.get('wacid.g')!.monitors.size).toBe(0);

    expect(await sam.app.handle('startMonitor', { callId: 'wacid.g', mode: 'listen' })).toMatchObject({ ok: true });
    await sam.app.close();
    expect(monitorRequests(relay)).toEqual(['POST /team/calls/wacid.g/monitor', 'DELETE /team/calls/wacid.g/monitor', 'POST /team/calls/wacid.g/monitor', 'DELETE /team/calls/wacid.g/monitor']);
    expect(relay.calls.get('wacid.g')!.monitors.size).toBe(0);
  });
});

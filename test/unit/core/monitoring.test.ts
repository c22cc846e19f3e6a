// Supervisors on the bridge in the main process (shared/supervision.ts, electron/core/monitoring.ts):
// a supervisor's Team view list (getLiveCalls), joining a colleague's call ("Listen", "Whisper",
// "Barge": startMonitor, answerMonitor), switching without dropping, "Leave", one joined call at a
// time, none while on a call of its own, the join ended under it (the call ended, a call of its own
// began, its window went, the app quit); and the agents' side: the supervisors in their call as the
// relay tells them (CallState.monitors). Two apps, Sam's (a supervisor) and Alice's, on a real relay
// with a bridge node in its process (oversight-desk.ts); Bob takes calls without an app.
import { afterEach, describe, expect, it } from 'vitest';
import { configureLogging } from '../../../shared/log';
import { eventually } from '../bridge/bridge-harness';
import { answerBridged, answerRinging, closeOversight, CUSTOMER, lastCall, oversightTeam, pushed, SAM, TONES, until, type OversightDesk, type OversightTeam, type OversightTeamOptions } from './oversight-desk';
import { ALICE } from './team-relay';

configureLogging({ sink: () => undefined });
// Apps, peers and servers: longer than a hook's default on a busy machine.
afterEach(closeOversight, 30_000);

/** Sam's app (a supervisor) and Alice's, on one team. */
async function team(o: Pick<OversightTeamOptions, 'tellAgents' | 'mediaTimeoutMs'> = {}): Promise<{ sam: OversightDesk; alice: OversightDesk; relay: OversightTeam }> {
  const relay = await oversightTeam({ supervisors: ['sam'], ...o });
  const sam = await relay.desk(SAM);
  const alice = await relay.desk(ALICE);
  return { sam, alice, relay };
}

/** A bridged call Bob took (his app is not in these tests): the relay has him in it. */
async function bobsCall(relay: OversightTeam, callId: string): Promise<void> {
  await relay.take('bob', callId);
}

/** A call that rings direct: no bridge node is live when it comes. */
async function directCall(relay: OversightTeam, callId: string, name?: string): Promise<void> {
  relay.nodeLive(false);
  await relay.ring(callId, name !== undefined ? { name } : {});
  relay.nodeLive(true);
}

/** Sam's window answers the leg the node offered him. */
async function samAnswers(relay: OversightTeam, offer: string | undefined): Promise<string> {
  return relay.window(TONES.sam!).answer(offer ?? '');
}

const monitorRequests = (relay: OversightTeam) => relay.tap.seen(/^\/team\/calls\/[^/]+\/monitor/);
const bodies = (relay: OversightTeam) => relay.tap.requests.filter((r) => /^\/team\/calls\//.test(r.path)).map((r) => r.body);
const samsCalls = (sam: OversightDesk, callId: string) => pushed(sam.pushes, 'callChanged').filter((c) => c.callId === callId);

describe('the team’s live calls', () => {
  it('are the relay’s list for a supervisor, and the relay’s 403 in its words for an agent', async () => {
    const { sam, alice, relay } = await team();
    const alicesCall = await answerBridged(alice, 'wacid.live-1');
    await directCall(relay, 'wacid.live-2', 'Grace Hopper');
    // The node's reading of the customer's leg is in the list once it has one.
    const listed = await eventually('the call’s quality', async () => {
      const answer = await sam.app.handle('getLiveCalls', {});
      return answer.ok && answer.value.calls[0]?.quality !== undefined ? answer : undefined;
    }, 15_000);
    expect(listed).toMatchObject({
      ok: true,
      value: {
        calls: [
          { callId: 'wacid.live-1', state: 'talking', bridged: true, agents: [{ id: 'alice', name: 'Alice Agent' }], customer: { number: CUSTOMER, name: 'Ada Customer' }, quality: { mos: expect.any(Number) }, monitors: [] },
          { callId: 'wacid.live-2', state: 'ringing', bridged: false, agents: [], customer: { number: CUSTOMER, name: 'Grace Hopper' }, monitors: [] },
        ],
      },
    });
    // A lossless call on this machine: the E-model's good band.
    const mos = listed.ok ? listed.value.calls[0]?.quality?.mos : undefined;
    expect(mos).toBeGreaterThanOrEqual(4);
    expect(mos).toBeLessThanOrEqual(4.5);
    expect(relay.tap.requests.filter((r) => r.path === '/team/calls').every((r) => r.agentId === 'sam')).toBe(true);
    expect(await alice.app.handle('getLiveCalls', {})).toMatchObject({
      ok: false,
      error: { code: 'unauthorized', httpStatus: 403, message: 'The relay refused the live calls request (HTTP 403: only a supervisor sees and joins the team\'s live calls)' },
    });
    // Every one of the supervisor's requests: refused by the relay before anything else, said as it says it.
    await bobsCall(relay, 'wacid.live-3');
    expect(await alice.app.handle('hangUp', { localId: alicesCall })).toEqual({ ok: true, value: null });
    expect(await alice.app.handle('startMonitor', { callId: 'wacid.live-3', mode: 'listen' })).toMatchObject({ ok: false, error: { code: 'unauthorized', httpStatus: 403 } });
    expect(await alice.app.handle('leaveMonitor', { callId: 'wacid.live-3' })).toMatchObject({ ok: false, error: { code: 'unauthorized', httpStatus: 403 } });
    expect(relay.tap.seen(/^\/team\/calls\/wacid\.live-3\//)).toEqual(['POST /team/calls/wacid.live-3/monitor', 'DELETE /team/calls/wacid.live-3/monitor']);
    expect((await relay.liveCalls('sam')).find((c) => c.callId === 'wacid.live-3')).toMatchObject({ agents: [{ id: 'bob' }], monitors: [] });
  }, 60_000);
});

describe('joining a colleague’s call', () => {
  it('Listen joins with a leg of the supervisor’s own, Whisper and Barge switch it without a new one, Leave leaves; the agent is told of the whisper and the barge', async () => {
    const { sam, alice, relay } = await team();
    const localId = await answerBridged(alice, 'wacid.mon-1');
    // The call rang Sam too, until Alice answered it.
    await until('Sam’s ring ended', () => lastCall(sam.pushes, 'in:wacid.mon-1')?.phase === 'ended');
    const samsRing = samsCalls(sam, 'wacid.mon-1').length;

    const listening = await sam.app.handle('startMonitor', { callId: 'wacid.mon-1', mode: 'listen' });
    expect(listening).toEqual({ ok: true, value: { callId: 'wacid.mon-1', mode: 'listen', legId: expect.any(String), offer: expect.stringMatching(/^v=0\r\n/) } });
    const { legId, offer } = listening.ok ? listening.value : {};
    await until('Sam’s windows hear of the join', () => pushed(sam.pushes, 'monitorChanged').length === 1);
    expect(pushed(sam.pushes, 'monitorChanged')).toEqual([{ callId: 'wacid.mon-1', mode: 'listen' }]);
    const answer = await samAnswers(relay, offer);
    expect(await sam.app.handle('answerMonitor', { callId: 'wacid.mon-1', legId: legId!, sdp: answer })).toEqual({ ok: true, value: null });
    expect((await relay.liveCalls('sam')).find((c) => c.callId === 'wacid.mon-1')?.monitors).toEqual([{ id: 'sam', name: 'Sam Supervisor', mode: 'listen' }]);
    const legs = await relay.legsOf('wacid.mon-1');
    expect(legs).toContain(legId);

    expect(await sam.app.handle('startMonitor', { callId: 'wacid.mon-1', mode: 'whisper' })).toEqual({ ok: true, value: { callId: 'wacid.mon-1', mode: 'whisper' } });
    await until('Alice hears of the whisper', () => lastCall(alice.pushes, localId)?.monitors !== undefined);
    expect(lastCall(alice.pushes, localId)).toMatchObject({ phase: 'active', monitors: [{ supervisorId: 'sam', name: 'Sam Supervisor', mode: 'whisper' }] });
    expect(await sam.app.handle('startMonitor', { callId: 'wacid.mon-1', mode: 'barge' })).toEqual({ ok: true, value: { callId: 'wacid.mon-1', mode: 'barge' } });
    await until('Alice hears Sam joined', () => lastCall(alice.pushes, localId)?.monitors?.[0]?.mode === 'barge');
    // One leg of Sam's the whole time.
    expect(await relay.legsOf('wacid.mon-1')).toEqual(legs);

    expect(await sam.app.handle('leaveMonitor', { callId: 'wacid.mon-1' })).toEqual({ ok: true, value: null });
    await until('Alice hears Sam left', () => lastCall(alice.pushes, localId)?.monitors === undefined);
    expect(lastCall(alice.pushes, localId)).toMatchObject({ phase: 'active' });
    expect(await relay.legsOf('wacid.mon-1')).not.toContain(legId);
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
    expect(bodies(relay)).toEqual([{ mode: 'listen' }, { legId, sdp: answer }, { mode: 'whisper' }, { mode: 'barge' }, undefined, undefined]);
    await relay.heardAll(sam);
    expect(pushed(sam.pushes, 'monitorChanged')).toEqual([
      { callId: 'wacid.mon-1', mode: 'listen' },
      { callId: 'wacid.mon-1', mode: 'whisper' },
      { callId: 'wacid.mon-1', mode: 'barge' },
      { callId: 'wacid.mon-1', mode: 'left', reason: 'left' },
    ]);
    // The supervisor's own join is no call of Sam's.
    expect(samsCalls(sam, 'wacid.mon-1')).toHaveLength(samsRing);
  }, 60_000);

  it('tells the agent of a listen only when the team says so', async () => {
    const { sam, alice, relay } = await team({ tellAgents: true });
    const localId = await answerBridged(alice, 'wacid.mon-2');
    const joined = await sam.app.handle('startMonitor', { callId: 'wacid.mon-2', mode: 'listen' });
    expect(joined).toMatchObject({ ok: true });
    if (!joined.ok) return;
    expect(await sam.app.handle('answerMonitor', { callId: 'wacid.mon-2', legId: joined.value.legId!, sdp: await samAnswers(relay, joined.value.offer) })).toEqual({ ok: true, value: null });
    await until('Alice hears Sam is listening', () => lastCall(alice.pushes, localId)?.monitors !== undefined);
    expect(lastCall(alice.pushes, localId)?.monitors).toEqual([{ supervisorId: 'sam', name: 'Sam Supervisor', mode: 'listen' }]);
    expect(await sam.app.handle('leaveMonitor', { callId: 'wacid.mon-2' })).toEqual({ ok: true, value: null });
    await until('Alice hears Sam left', () => lastCall(alice.pushes, localId)?.monitors === undefined);
  }, 60_000);

  it('one call at a time: joining another leaves the first; and the relay’s refusals are said as it says them', async () => {
    const { sam, relay } = await team();
    await bobsCall(relay, 'wacid.a');
    await bobsCall(relay, 'wacid.b');
    const first = await sam.app.handle('startMonitor', { callId: 'wacid.a', mode: 'listen' });
    expect(first).toMatchObject({ ok: true, value: { mode: 'listen' } });
    const legA = first.ok ? first.value.legId : undefined;
    expect(await relay.legsOf('wacid.a')).toContain(legA);
    const second = await sam.app.handle('startMonitor', { callId: 'wacid.b', mode: 'whisper' });
    expect(second).toMatchObject({ ok: true, value: { callId: 'wacid.b', mode: 'whisper', legId: expect.any(String), offer: expect.stringMatching(/^v=0\r\n/) } });
    const legB = second.ok ? second.value.legId : undefined;
    expect(monitorRequests(relay)).toEqual(['POST /team/calls/wacid.a/monitor', 'DELETE /team/calls/wacid.a/monitor', 'POST /team/calls/wacid.b/monitor']);
    expect(await relay.legsOf('wacid.a')).not.toContain(legA);
    expect(await relay.legsOf('wacid.b')).toContain(legB);
    await relay.heardAll(sam);
    expect(pushed(sam.pushes, 'monitorChanged')).toEqual([
      { callId: 'wacid.a', mode: 'listen' },
      { callId: 'wacid.a', mode: 'left', reason: 'left' },
      { callId: 'wacid.b', mode: 'whisper' },
    ]);

    await directCall(relay, 'wacid.direct');
    expect(await sam.app.handle('startMonitor', { callId: 'wacid.direct', mode: 'listen' })).toMatchObject({
      ok: false,
      error: { code: 'invalid_state', httpStatus: 409, message: 'The relay refused the monitor request (HTTP 409: call wacid.direct is a direct call: only a call through the team\'s bridge can be joined)' },
    });
    await relay.ring('wacid.ringing');
    expect(await sam.app.handle('startMonitor', { callId: 'wacid.ringing', mode: 'barge' })).toMatchObject({
      ok: false,
      error: { code: 'invalid_state', message: 'The relay refused the monitor request (HTTP 409: call wacid.ringing is not answered yet)' },
    });
    expect(await sam.app.handle('startMonitor', { callId: 'wacid.none', mode: 'listen' })).toMatchObject({
      ok: false,
      error: { code: 'not_found', httpStatus: 404, message: 'The relay refused the monitor request (HTTP 404: no live call wacid.none)' },
    });
    // A refused join of another call has left the one joined: the relay has it no longer either.
    expect(await relay.legsOf('wacid.b')).not.toContain(legB);
    expect(monitorRequests(relay).slice(3)).toEqual(['DELETE /team/calls/wacid.b/monitor', 'POST /team/calls/wacid.direct/monitor', 'POST /team/calls/wacid.ringing/monitor', 'POST /team/calls/wacid.none/monitor']);
    // An answer for a leg that is not the joined call's is refused here.
    expect(await sam.app.handle('answerMonitor', { callId: 'wacid.a', legId: legA!, sdp: await samAnswers(relay, first.ok ? first.value.offer : undefined) })).toMatchObject({
      ok: false,
      error: { code: 'invalid_state', message: 'You are not in call wacid.a: join it first', text: { code: 'supervision.notJoined', values: { callId: 'wacid.a' } } },
    });
    expect(monitorRequests(relay)).toHaveLength(7);
  }, 60_000);

  it('joins afresh when the relay no longer has the join (its leg went): a switch it answers 404 becomes a join', async () => {
    // A leg that hears nothing for 3 s has gone, on this node.
    const { sam, relay } = await team({ mediaTimeoutMs: 3_000 });
    await bobsCall(relay, 'wacid.c');
    const joined = await sam.app.handle('startMonitor', { callId: 'wacid.c', mode: 'listen' });
    expect(joined).toMatchObject({ ok: true, value: { legId: expect.any(String) } });
    if (!joined.ok) return;
    const window = relay.window(TONES.sam!);
    expect(await sam.app.handle('answerMonitor', { callId: 'wacid.c', legId: joined.value.legId!, sdp: await window.answer(joined.value.offer!) })).toEqual({ ok: true, value: null });
    await eventually('Sam’s leg connects', () => window.pc.connectionState === 'connected', 15_000);
    // The leg goes while Sam's event stream is slow: the relay drops the join before Sam hears so.
    relay.tap.holdStream('sam');
    await window.pc.close();
    await relay.stored('Sam out of the call', (e) => e.type === 'call.monitor' && e.callId === 'wacid.c' && e.supervisorId === 'sam' && e.mode === 'left');
    const again = await sam.app.handle('startMonitor', { callId: 'wacid.c', mode: 'whisper' });
    expect(again).toEqual({ ok: true, value: { callId: 'wacid.c', mode: 'whisper', legId: expect.any(String), offer: expect.stringMatching(/^v=0\r\n/) } });
    expect(again.ok && again.value.legId).not.toBe(joined.value.legId);
    expect(monitorRequests(relay)).toEqual(['POST /team/calls/wacid.c/monitor', 'POST /team/calls/wacid.c/monitor/answer', 'PUT /team/calls/wacid.c/monitor', 'POST /team/calls/wacid.c/monitor']);
    // The relay's word on the leg that went arrives late: the new join stays.
    relay.tap.flow('sam');
    await relay.heardAll(sam);
    expect(pushed(sam.pushes, 'monitorChanged')).toEqual([
      { callId: 'wacid.c', mode: 'listen' },
      { callId: 'wacid.c', mode: 'left', reason: 'left' },
      { callId: 'wacid.c', mode: 'whisper' },
    ]);
  }, 60_000);

  it('a leave the relay tells back late does not end a join of the same call made since', async () => {
    const { sam, relay } = await team();
    await bobsCall(relay, 'wacid.j');
    const joined = await sam.app.handle('startMonitor', { callId: 'wacid.j', mode: 'listen' });
    if (!joined.ok) throw new Error(joined.error.message);
    expect(await sam.app.handle('answerMonitor', { callId: 'wacid.j', legId: joined.value.legId!, sdp: await samAnswers(relay, joined.value.offer) })).toEqual({ ok: true, value: null });
    await relay.heardAll(sam);
    relay.tap.holdStream('sam');
    expect(await sam.app.handle('leaveMonitor', { callId: 'wacid.j' })).toEqual({ ok: true, value: null });
    const again = await sam.app.handle('startMonitor', { callId: 'wacid.j', mode: 'barge' });
    if (!again.ok) throw new Error(again.error.message);
    expect(await sam.app.handle('answerMonitor', { callId: 'wacid.j', legId: again.value.legId!, sdp: await samAnswers(relay, again.value.offer) })).toEqual({ ok: true, value: null });
    relay.tap.flow('sam');
    await relay.heardAll(sam);
    expect(pushed(sam.pushes, 'monitorChanged')).toEqual([
      { callId: 'wacid.j', mode: 'listen' },
      { callId: 'wacid.j', mode: 'left', reason: 'left' },
      { callId: 'wacid.j', mode: 'barge' },
    ]);
    // The join stands: Sam leaves it as joined, and switches it until then.
    expect(await sam.app.handle('startMonitor', { callId: 'wacid.j', mode: 'whisper' })).toEqual({ ok: true, value: { callId: 'wacid.j', mode: 'whisper' } });
    expect(await relay.legsOf('wacid.j')).toContain(again.value.legId);
  }, 60_000);
});

describe('a join ends under the supervisor', () => {
  it('when the call ends: the windows hear `left` with `call_ended`, and the next join needs no leave first', async () => {
    const { sam, relay } = await team();
    await bobsCall(relay, 'wacid.d');
    expect(await sam.app.handle('startMonitor', { callId: 'wacid.d', mode: 'barge' })).toMatchObject({ ok: true });
    await relay.end('wacid.d');
    await until('Sam’s windows hear the call ended', () => pushed(sam.pushes, 'monitorChanged').some((c) => c.mode === 'left'));
    expect(pushed(sam.pushes, 'monitorChanged')).toEqual([
      { callId: 'wacid.d', mode: 'barge' },
      { callId: 'wacid.d', mode: 'left', reason: 'call_ended' },
    ]);
    await bobsCall(relay, 'wacid.e');
    expect(await sam.app.handle('startMonitor', { callId: 'wacid.e', mode: 'listen' })).toMatchObject({ ok: true });
    expect(monitorRequests(relay)).toEqual(['POST /team/calls/wacid.d/monitor', 'POST /team/calls/wacid.e/monitor']);
  }, 60_000);

  it('when the call ends while the join is on its way: the windows hear the join, then `left` with `call_ended`', async () => {
    const { sam, relay } = await team();
    await bobsCall(relay, 'wacid.h');
    // The relay joins Sam, the call ends, its word on that reaches Sam before the join's answer does.
    const reply = relay.tap.holdReply('POST', '/team/calls/wacid.h/monitor');
    const joining = sam.app.handle('startMonitor', { callId: 'wacid.h', mode: 'listen' });
    await reply.answered;
    await relay.end('wacid.h');
    await relay.stored('Sam told the call ended', (e) => e.type === 'call.monitor' && e.callId === 'wacid.h' && e.supervisorId === 'sam' && e.mode === 'left');
    await relay.heardAll(sam);
    expect(pushed(sam.pushes, 'monitorChanged')).toEqual([]);
    reply.release();
    expect(await joining).toMatchObject({ ok: true, value: { legId: expect.any(String) } });
    expect(pushed(sam.pushes, 'monitorChanged')).toEqual([
      { callId: 'wacid.h', mode: 'listen' },
      { callId: 'wacid.h', mode: 'left', reason: 'call_ended' },
    ]);
    // Nothing is joined: the next call's join needs no leave first.
    await bobsCall(relay, 'wacid.i');
    expect(await sam.app.handle('startMonitor', { callId: 'wacid.i', mode: 'listen' })).toMatchObject({ ok: true });
    expect(monitorRequests(relay)).toEqual(['POST /team/calls/wacid.h/monitor', 'POST /team/calls/wacid.i/monitor']);
  }, 60_000);

  it('is refused while the supervisor is on a call of its own, and left when it takes one', async () => {
    const { sam, relay } = await team();
    await bobsCall(relay, 'wacid.f');
    // Rung before the join (the relay rings no supervisor joined to a call): Sam answers it, and the join goes.
    await relay.ring('wacid.own');
    await until('Sam’s call rings', () => lastCall(sam.pushes, 'in:wacid.own')?.phase === 'ringing');
    const joined = await sam.app.handle('startMonitor', { callId: 'wacid.f', mode: 'listen' });
    expect(joined).toMatchObject({ ok: true });
    const legF = joined.ok ? joined.value.legId : undefined;
    expect(await relay.legsOf('wacid.f')).toContain(legF);
    const own = await answerRinging(sam, 'wacid.own');
    await until('the joined call is left', () => monitorRequests(relay).includes('DELETE /team/calls/wacid.f/monitor'));
    await until('Sam’s windows hear it', () => pushed(sam.pushes, 'monitorChanged').at(-1)?.mode === 'left');
    await eventually('Sam’s leg closes', async () => !(await relay.legsOf('wacid.f')).includes(legF!));
    const refused = await sam.app.handle('startMonitor', { callId: 'wacid.f', mode: 'listen' });
    expect(refused).toMatchObject({ ok: false, error: { code: 'invalid_state', message: 'You are on a call: finish it before you join a colleague’s call', text: { code: 'supervision.onCall' } } });
    expect(monitorRequests(relay)).toEqual(['POST /team/calls/wacid.f/monitor', 'DELETE /team/calls/wacid.f/monitor']);
    expect(await sam.app.handle('hangUp', { localId: own })).toEqual({ ok: true, value: null });
    expect(await sam.app.handle('startMonitor', { callId: 'wacid.f', mode: 'listen' })).toMatchObject({ ok: true });
  }, 60_000);

  it('when the window that carried its audio goes, and when the app quits', async () => {
    const { sam, relay } = await team();
    await bobsCall(relay, 'wacid.g');
    const whispering = await sam.app.handle('startMonitor', { callId: 'wacid.g', mode: 'whisper' });
    expect(whispering).toMatchObject({ ok: true });
    const first = whispering.ok ? whispering.value.legId : undefined;
    expect(await relay.legsOf('wacid.g')).toContain(first);
    await sam.app.windowGone('all', { code: 'service.shuttingDown' });
    await until('the joined call is left', () => monitorRequests(relay).includes('DELETE /team/calls/wacid.g/monitor'));
    await until('Sam’s windows hear it', () => pushed(sam.pushes, 'monitorChanged').at(-1)?.mode === 'left');
    await eventually('Sam’s leg closes', async () => !(await relay.legsOf('wacid.g')).includes(first!));

    const listening = await sam.app.handle('startMonitor', { callId: 'wacid.g', mode: 'listen' });
    expect(listening).toMatchObject({ ok: true });
    const second = listening.ok ? listening.value.legId : undefined;
    expect(await relay.legsOf('wacid.g')).toContain(second);
    await sam.app.close();
    expect(monitorRequests(relay)).toEqual(['POST /team/calls/wacid.g/monitor', 'DELETE /team/calls/wacid.g/monitor', 'POST /team/calls/wacid.g/monitor', 'DELETE /team/calls/wacid.g/monitor']);
    expect(await relay.legsOf('wacid.g')).not.toContain(second);
  }, 60_000);
});

// Supervisors joined to bridged calls (relay/monitors.ts, relay/REFERENCE.md "Supervisors"): the
// relay's BridgedCalls on a node that records what it is asked (transfer-fixtures.ts). What a join,
// its answer, each switch and a leave ask of the node, who is told what (`call.monitor`) with and
// without the team telling agents of a listen, and what a call's end, a lost leg and a transfer do.
import { afterEach, describe, expect, it } from 'vitest';
import { CallMonitors, type MonitorEvent } from '../../../relay/monitors';
import { KeyedTaskQueue } from '../../../relay/keyed-task-queue';
import type { BridgedCall } from '../../../relay/bridged-call';
import { CUSTOMER } from '../../../shared/bridge';
import { BAD_SDP, quietLogger, RecordingBridge, TransferHarness } from './transfer-fixtures';

const SAM = { id: 'sam', name: 'Sam Lead' };
const SUE = { id: 'sue', name: 'Sue Lead' };

const harnesses: TransferHarness[] = [];
afterEach(async () => {
  for (const h of harnesses.splice(0)) await h.calls.close();
});

function harness(options: { tellAgentsWhenMonitored?: boolean } = {}): TransferHarness {
  const h = new TransferHarness(options);
  harnesses.push(h);
  return h;
}

/** What was told, as `audience → mode[:reason]` with the audience's agents sorted. */
function toldOf(h: TransferHarness): string[] {
  return h.monitorTold.map(({ event, agentIds }) => `${[...agentIds].sort().join(',')} → ${event.supervisorId}:${event.mode}${event.reason !== undefined ? `:${event.reason}` : ''}`);
}

/** Sam joins alice's call in `mode` and his window answers: his leg is connected. */
async function joined(h: TransferHarness, callId: string, mode: 'listen' | 'whisper' | 'barge', supervisor = SAM): Promise<string> {
  const join = await h.calls.monitors.join(callId, supervisor, mode);
  if (!join.ok) throw new Error(join.refusal.message);
  h.nameLeg(join.value.legId, supervisor.id);
  const answered = await h.calls.monitors.answer(callId, supervisor.id, join.value.legId, `window-answer-${supervisor.id}`);
  if (!answered.ok) throw new Error(answered.refusal.message);
  return join.value.legId;
}

describe('joining a bridged call', () => {
  it('offers a leg of the supervisor’s own, routes it once answered, and offers the same leg again when asked again', async () => {
    const h = harness();
    await h.answeredCall('wacid.m1', 'alice');
    const join = await h.calls.monitors.join('wacid.m1', SAM, 'listen');
    expect(join).toEqual({ ok: true, value: { legId: expect.stringMatching(/^leg-/) as string, offer: `offer-${join.ok ? join.value.legId : ''}`, mode: 'listen' } });
    if (!join.ok) return;
    h.nameLeg(join.value.legId, 'sam');
    // Offered, not answered: the routes are the agents' alone, and nobody is told anything yet.
    expect(h.routes('wacid.m1')).toEqual({ [CUSTOMER]: ['alice'], alice: [CUSTOMER] });
    expect(h.monitorTold).toEqual([]);
    // Asked again (a retry): the same leg and its offer, in the mode asked now.
    expect(await h.calls.monitors.join('wacid.m1', SAM, 'whisper')).toEqual({ ok: true, value: { legId: join.value.legId, offer: join.value.offer, mode: 'whisper' } });
    expect(h.control.offered.filter((leg) => leg === join.value.legId)).toHaveLength(1);

    expect(await h.calls.monitors.answer('wacid.m1', 'sam', join.value.legId, 'window-answer-sam')).toEqual({ ok: true, value: null });
    expect(h.control.answers.get(join.value.legId)).toBe('window-answer-sam');
    expect(h.routes('wacid.m1')).toEqual({ [CUSTOMER]: ['alice'], alice: [CUSTOMER, 'sam'], sam: [CUSTOMER, 'alice'] });
    expect(toldOf(h)).toEqual(['alice,sam → sam:whisper']);
    // The same answer again is no change.
    expect(await h.calls.monitors.answer('wacid.m1', 'sam', join.value.legId, 'window-answer-sam')).toEqual({ ok: true, value: null });
    expect(toldOf(h)).toHaveLength(1);
  });

  it('refuses a call that is not bridged here, not answered yet, or that the supervisor is in or rung for', async () => {
    const h = harness();
    expect(await h.calls.monitors.join('wacid.none', SAM, 'listen')).toMatchObject({ ok: false, refusal: { status: 404, code: 'not_found' } });
    expect(await h.calls.takeIncoming('wacid.ringing', 'service-offer')).toBe('taken');
    expect(await h.calls.monitors.join('wacid.ringing', SAM, 'listen')).toEqual({ ok: false, refusal: { status: 409, code: 'invalid_state', message: 'call wacid.ringing is not answered yet' } });
    await h.answeredCall('wacid.mine', 'alice');
    expect(await h.calls.monitors.join('wacid.mine', { id: 'alice', name: 'Alice Agent' }, 'listen')).toMatchObject({ ok: false, refusal: { status: 409, code: 'invalid_state' } });
    expect((await h.calls.transfer('wacid.mine', 'alice', { to: 'bob', kind: 'consult' })).ok).toBe(true);
    expect(await h.calls.monitors.join('wacid.mine', { id: 'bob', name: 'Bob Agent' }, 'listen')).toMatchObject({ ok: false, refusal: { status: 409, code: 'invalid_state' } });
    expect(h.control.offered.filter((leg) => h.legOwner(leg) === undefined)).toEqual([]);
  });

  it('an answer for another leg is 403, one the node refuses 400 naming sdp (the offer stays answerable), and a supervisor not joined 404', async () => {
    const h = harness();
    await h.answeredCall('wacid.m2', 'alice');
    expect(await h.calls.monitors.answer('wacid.m2', 'sam', 'leg-x', 'sdp')).toMatchObject({ ok: false, refusal: { status: 404, code: 'not_found', message: 'this supervisor is not in call wacid.m2' } });
    expect(await h.calls.monitors.switchMode('wacid.m2', 'sam', 'barge')).toMatchObject({ ok: false, refusal: { status: 404, code: 'not_found' } });
    const join = await h.calls.monitors.join('wacid.m2', SAM, 'barge');
    if (!join.ok) throw new Error(join.refusal.message);
    expect(await h.calls.monitors.answer('wacid.m2', 'sam', 'leg-other', 'sdp')).toMatchObject({ ok: false, refusal: { status: 403, code: 'forbidden' } });
    expect(await h.calls.monitors.answer('wacid.m2', 'sam', join.value.legId, BAD_SDP)).toMatchObject({ ok: false, refusal: { status: 400, code: 'invalid_input', field: 'sdp' } });
    expect(h.monitorTold).toEqual([]);
    expect(await h.calls.monitors.answer('wacid.m2', 'sam', join.value.legId, 'good')).toEqual({ ok: true, value: null });
    expect(toldOf(h)).toEqual(['alice,sam → sam:barge']);
  });

  it('joining another call leaves the first: one call at a time', async () => {
    const h = harness();
    await h.answeredCall('wacid.first', 'alice');
    await h.answeredCall('wacid.second', 'bob');
    const first = await joined(h, 'wacid.first', 'whisper');
    await joined(h, 'wacid.second', 'listen');
    expect(h.control.closed).toContain(first);
    expect(h.routes('wacid.first')).toEqual({ [CUSTOMER]: ['alice'], alice: [CUSTOMER] });
    expect(h.calls.monitors.joinedCall('sam')).toBe('wacid.second');
    expect(toldOf(h)).toEqual(['alice,sam → sam:whisper', 'alice,sam → sam:left:left', 'sam → sam:listen']);
  });
});

describe('switching and leaving', () => {
  it('without the team telling of listens: the agents hear of whispers and barges, a switch to a listen is a `left` to them, the supervisor hears every change', async () => {
    const h = harness();
    await h.answeredCall('wacid.s1', 'alice');
    const leg = await joined(h, 'wacid.s1', 'listen');
    const closedBefore = h.control.closed.length;
    for (const mode of ['whisper', 'barge', 'barge', 'listen', 'barge'] as const) expect(await h.calls.monitors.switchMode('wacid.s1', 'sam', mode)).toEqual({ ok: true, value: { mode } });
    expect(h.routes('wacid.s1')).toEqual({ [CUSTOMER]: ['alice', 'sam'], alice: [CUSTOMER, 'sam'], sam: [CUSTOMER, 'alice'] });
    expect(await h.calls.monitors.leave('wacid.s1', 'sam')).toEqual({ ok: true, value: { ok: true } });
    expect(await h.calls.monitors.leave('wacid.s1', 'sam')).toEqual({ ok: true, value: { ok: true } });
    expect(toldOf(h)).toEqual([
      'sam → sam:listen',
      'alice,sam → sam:whisper',
      'alice,sam → sam:barge',
      'alice → sam:left:left',
      'sam → sam:listen',
      'alice,sam → sam:barge',
      'alice,sam → sam:left:left',
    ]);
    // No new leg for a switch; the one leg closes at the leave, and the routes are the agents' again.
    expect(h.control.offered.filter((l) => h.legOwner(l) === 'sam')).toEqual([leg]);
    expect(h.control.closed.slice(closedBefore)).toEqual([leg]);
    expect(h.routes('wacid.s1')).toEqual({ [CUSTOMER]: ['alice'], alice: [CUSTOMER] });
  });

  it('with the team telling of listens: the agents hear of every mode and of the leave', async () => {
    const h = harness({ tellAgentsWhenMonitored: true });
    await h.answeredCall('wacid.s2', 'alice');
    await joined(h, 'wacid.s2', 'listen');
    await h.calls.monitors.switchMode('wacid.s2', 'sam', 'whisper');
    await h.calls.monitors.switchMode('wacid.s2', 'sam', 'listen');
    await h.calls.monitors.leave('wacid.s2', 'sam');
    expect(toldOf(h)).toEqual(['alice,sam → sam:listen', 'alice,sam → sam:whisper', 'alice,sam → sam:listen', 'alice,sam → sam:left:left']);
  });

  it('a listen left without the team telling is told to the supervisor alone', async () => {
    const h = harness();
    await h.answeredCall('wacid.s3', 'alice');
    await joined(h, 'wacid.s3', 'listen');
    await h.calls.monitors.leave('wacid.s3', 'sam');
    expect(toldOf(h)).toEqual(['sam → sam:listen', 'sam → sam:left:left']);
  });

  it('each event has a time of its own, later than the one before', async () => {
    const h = harness();
    await h.answeredCall('wacid.s4', 'alice');
    await joined(h, 'wacid.s4', 'listen');
    for (const mode of ['barge', 'listen', 'barge'] as const) await h.calls.monitors.switchMode('wacid.s4', 'sam', mode);
    const times = h.monitorTold.map((t) => t.event.timestamp);
    expect(new Set(times).size).toBe(times.length);
    expect([...times].sort((a, b) => a - b)).toEqual(times);
  });
});

describe('what the call does to its supervisors', () => {
  it('the call’s end tells each supervisor `call_ended`, and nobody else', async () => {
    const h = harness();
    await h.answeredCall('wacid.e1', 'alice');
    await joined(h, 'wacid.e1', 'whisper');
    await joined(h, 'wacid.e1', 'listen', SUE);
    h.monitorTold.splice(0);
    await h.calls.ended('wacid.e1');
    expect(toldOf(h)).toEqual(['sam → sam:left:call_ended', 'sue → sue:left:call_ended']);
    expect(h.calls.monitors.joinedCall('sam')).toBeUndefined();
  });

  it('a supervisor whose leg fails or closes is out of the call: routes without it, the agents told `left`', async () => {
    const h = harness();
    await h.answeredCall('wacid.e2', 'alice');
    const leg = await joined(h, 'wacid.e2', 'barge');
    await h.calls.legLost('wacid.e2', 'local', leg, Date.now());
    expect(h.routes('wacid.e2')).toEqual({ [CUSTOMER]: ['alice'], alice: [CUSTOMER] });
    expect(toldOf(h)).toEqual(['alice,sam → sam:barge', 'alice,sam → sam:left:left']);
    // It is not joined any more: a switch finds nothing to switch.
    expect(await h.calls.monitors.switchMode('wacid.e2', 'sam', 'listen')).toMatchObject({ ok: false, refusal: { status: 404 } });
  });

  it('a transfer keeps the supervisor: the colleague who answers is told of the whisper, and hears it', async () => {
    const h = harness();
    await h.answeredCall('wacid.t1', 'alice');
    await joined(h, 'wacid.t1', 'whisper');
    const started = await h.calls.transfer('wacid.t1', 'alice', { to: 'bob', kind: 'transfer' });
    if (!started.ok) throw new Error(started.refusal.message);
    // While it rings, alice hears the whisper alone; the supervisor hears the customer's side and alice.
    expect(h.routes('wacid.t1')).toEqual({ [CUSTOMER]: ['music'], alice: ['sam'], sam: [CUSTOMER, 'music', 'alice'] });
    expect((await h.answerRing('wacid.t1', started.value.transferId, 'bob')).ok).toBe(true);
    await expect.poll(() => toldOf(h)).toEqual(['alice,sam → sam:whisper', 'bob → sam:whisper']);
    expect(h.routes('wacid.t1')).toEqual({ [CUSTOMER]: ['bob'], bob: [CUSTOMER, 'sam'], sam: [CUSTOMER, 'bob'] });
    // Its later words go to the call's agents now.
    await h.calls.monitors.leave('wacid.t1', 'sam');
    expect(toldOf(h).at(-1)).toBe('bob,sam → sam:left:left');
  });

  it('a listen the team does not tell of is not told to the colleague who answers either', async () => {
    const h = harness();
    await h.answeredCall('wacid.t2', 'alice');
    await joined(h, 'wacid.t2', 'listen');
    const started = await h.calls.transfer('wacid.t2', 'alice', { to: 'bob', kind: 'consult' });
    if (!started.ok) throw new Error(started.refusal.message);
    expect((await h.answerRing('wacid.t2', started.value.transferId, 'bob')).ok).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(toldOf(h)).toEqual(['sam → sam:listen']);
    expect(h.routes('wacid.t2')).toEqual({ [CUSTOMER]: ['music'], alice: ['bob'], bob: ['alice'], sam: [CUSTOMER, 'music', 'alice', 'bob'] });
  });

  it('a supervisor who answers a transfer of the call takes part in it: it is no longer joined to it', async () => {
    const h = harness();
    h.team.push({ agentId: 'sam', name: 'Sam Lead', presence: undefined, connected: true });
    await h.answeredCall('wacid.t3', 'alice');
    const leg = await joined(h, 'wacid.t3', 'barge');
    const started = await h.calls.transfer('wacid.t3', 'alice', { to: 'sam', kind: 'transfer' });
    if (!started.ok) throw new Error(started.refusal.message);
    expect((await h.answerRing('wacid.t3', started.value.transferId, 'sam')).ok).toBe(true);
    await expect.poll(() => h.calls.monitors.joinedCall('sam')).toBeUndefined();
    expect(h.control.closed).toContain(leg);
    expect(Object.keys(h.routes('wacid.t3')!).sort()).toEqual([CUSTOMER, 'sam']);
  });
});

describe('an offered leg nobody answers', () => {
  it('closes after the answer window, and the supervisor is told `left`', async () => {
    const control = new RecordingBridge();
    const calls = new Map<string, BridgedCall>();
    const turns = new KeyedTaskQueue();
    const monitors = new CallMonitors(
      {
        call: (callId) => calls.get(callId),
        calls: () => calls.values(),
        control: () => control,
        asked: (_nodeId, request) => request,
        inTurn: (callId, work) => new Promise((resolve, reject) => void turns.run(callId, () => work().then(resolve, reject))),
      },
      { logger: quietLogger, now: Date.now, tellAgentsOfListen: false, answerMs: 50 },
    );
    const told: MonitorEvent[] = [];
    monitors.onEvent((event) => told.push(event));
    calls.set('wacid.o1', {
      callId: 'wacid.o1',
      nodeId: 'local',
      direction: 'incoming',
      legs: new Map(),
      declined: new Set(),
      members: new Map([['alice', 'leg-alice']]),
      held: false,
      transfers: new Map(),
      everyone: new Set(['alice']),
      away: new Map(),
      strayLegs: [],
      monitors: new Map(),
      caller: {},
      createdAt: Date.now(),
    });
    const join = await monitors.join('wacid.o1', SAM, 'barge');
    if (!join.ok) throw new Error(join.refusal.message);
    await expect.poll(() => control.closed).toEqual([join.value.legId]);
    expect(told.map((e) => `${e.supervisorId}:${e.mode}`)).toEqual(['sam:left']);
    expect(calls.get('wacid.o1')!.monitors.size).toBe(0);
    expect(control.routes.size).toBe(0);
  });
});

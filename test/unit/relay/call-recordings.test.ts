// When bridged calls record (relay/call-recordings.ts), on BridgedCalls driving a node that records
// what it is asked (transfer-fixtures.ts): `always` starts as the customer connects, `on-demand` at a
// member's word; every member and every supervisor joined to the call is told each change, one who
// joins or rejoins while it records is told too, and everyone who was in the call from its first
// start on is among its agents (supervisors never are: they may hear every recording anyway).
import { describe, expect, it } from 'vitest';
import { MemoryBackend } from '../../../relay/backend/memory-backend';
import { BridgedCalls, localBridge } from '../../../relay/bridged-calls';
import { CallRecordings, callRecordingsFor, type RecordingEvent } from '../../../relay/call-recordings';
import { RecordingsStore } from '../../../relay/recordings-store';
import type { RecordMode } from '../../../shared/bridge-recording';
import { agent, CALLER, quietLogger, RecordingBridge } from './transfer-fixtures';

const NOTICE = new Int16Array(4_800);

interface Told {
  agentIds: readonly string[];
  event: RecordingEvent;
}

/** BridgedCalls on a recording node, watched by the recordings of `mode`; what they told and the agents they kept. */
class Harness {
  readonly control = new RecordingBridge();
  readonly told: Told[] = [];
  readonly agents = new Map<string, { agents: string[]; startedAt: number }>();
  readonly calls: BridgedCalls;
  readonly recordings: CallRecordings;
  private readonly owners = new Map<string, string>();
  clock = 1_000_000;

  constructor(mode: RecordMode, startRetry?: { forMs: number; everyMs: number }) {
    const store = {
      noteAgents: (callId: string, agents: readonly string[], startedAt: number) => {
        this.agents.set(callId, { agents: [...agents], startedAt });
        return Promise.resolve();
      },
    };
    this.recordings =
      mode === 'never'
        ? new CallRecordings({ mode, logger: quietLogger })
        : new CallRecordings({ mode, notice: NOTICE, store, logger: quietLogger, now: () => this.clock, ...(startRetry !== undefined ? { startRetry } : {}) });
    this.calls = new BridgedCalls({
      nodes: this.recordings.observe(localBridge(this.control)),
      placements: new MemoryBackend({ retentionMs: 600_000, dedupWindowMs: 600_000 }),
      ownerOf: (callId) => Promise.resolve(this.owners.get(callId)),
      team: () => [agent('alice'), agent('bob'), agent('carol')],
      logger: quietLogger,
    });
    this.recordings.attach(this.calls);
    this.recordings.onEvent((event, agentIds) => this.told.push({ event, agentIds }));
  }

  /** An incoming call answered and accepted by `agentId`: the customer is connected. */
  async answered(callId: string, agentId: string): Promise<string> {
    expect(await this.calls.takeIncoming(callId, 'service-offer', CALLER)).toBe('taken');
    const leg = await this.calls.legFor(callId, agentId);
    if (!leg.ok) throw new Error(leg.refusal.message);
    this.owners.set(callId, agentId);
    expect((await this.calls.answer(callId, agentId, leg.value.legId, 'window-answer')).ok).toBe(true);
    expect(await this.calls.accepted(callId, agentId)).toEqual({ ok: true, value: null });
    await this.settled();
    return leg.value.legId;
  }

  /** A call `agentId` dialled and the gateway placed: the customer has not answered. */
  async dialled(callId: string, agentId: string): Promise<void> {
    const dial = await this.calls.dial(agentId, 'window-offer');
    if (!dial.ok) throw new Error(dial.refusal.message);
    expect(await this.calls.placed(dial.value.ref, agentId, callId)).toEqual({ ok: true, value: null });
    this.owners.set(callId, agentId);
    await this.settled();
  }

  /** Every step the recordings queued has run. */
  async settled(): Promise<void> {
    for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
  }

  /** What each agent was told, as `agent:on|off[:by]`. */
  words(): string[] {
    return this.told.flatMap(({ event, agentIds }) => agentIds.map((agentId) => `${agentId}:${event.recording ? 'on' : 'off'}${event.by !== undefined ? `:${event.by}` : ''}`));
  }
}

describe('recording always', () => {
  it('starts with the notice as the customer connects, tells the agent, and keeps it among the agents', async () => {
    const h = new Harness('always');
    await h.answered('c1', 'alice');
    expect(h.control.recordingAsks).toEqual([`start:c1:${NOTICE.length}`]);
    expect(h.words()).toEqual(['alice:on']);
    expect(h.told[0]!.event).toEqual({ type: 'call.recording', callId: 'c1', recording: true, timestamp: 1_000_000 });
    expect(h.agents.get('c1')).toEqual({ agents: ['alice'], startedAt: 1_000_000 });
    expect(h.recordings.isRecording('c1')).toBe(true);
    expect(h.recordings.offered).toBe('always');
    // Nobody starts or stops it by hand.
    expect(await h.recordings.toggle('c1', 'alice', false)).toEqual({
      ok: false,
      refusal: { status: 409, code: 'invalid_state', message: 'the team records every call (--record always): its recording is not started or stopped by hand' },
    });
  });

  it('an outgoing call records once the customer answers, not before', async () => {
    const h = new Harness('always');
    await h.dialled('out-1', 'bob');
    expect(h.control.recordingAsks).toEqual([]);
    await h.calls.customerAnswered('out-1', 'customer-answer');
    await h.settled();
    expect(h.control.recordingAsks).toEqual([`start:out-1:${NOTICE.length}`]);
    expect(h.words()).toEqual(['bob:on']);
  });

  it('a colleague who takes the call over, or joins it, is told it records and may hear it; the one it records for already is not told twice', async () => {
    const h = new Harness('always');
    await h.answered('c2', 'alice');
    const consult = await h.calls.transfer('c2', 'alice', { to: 'bob', kind: 'consult' });
    if (!consult.ok) throw new Error(consult.refusal.message);
    await h.settled();
    expect(h.words()).toEqual(['alice:on']);
    // The ring's leg: the node offered it; bob's window answers it.
    const bobLeg = h.control.offered.at(-1)!;
    expect(await h.calls.answerTransfer('c2', consult.value.transferId, 'bob', bobLeg, 'window-answer-bob')).toEqual({ ok: true, value: null });
    await h.settled();
    expect(h.words()).toEqual(['alice:on', 'bob:on']);
    expect(h.agents.get('c2')?.agents).toEqual(['alice', 'bob']);
    expect(await h.calls.completeTransfer('c2', consult.value.transferId, 'alice')).toEqual({ ok: true, value: null });
    await h.settled();
    expect(h.words()).toEqual(['alice:on', 'bob:on']);
    expect(h.agents.get('c2')?.agents).toEqual(['alice', 'bob']);
  });

  it('a member who rejoins with a new leg is told again', async () => {
    const h = new Harness('always');
    await h.answered('c3', 'alice');
    const rejoin = await h.calls.rejoin('c3', 'alice');
    if (!rejoin.ok) throw new Error(rejoin.refusal.message);
    await h.settled();
    expect(h.words()).toEqual(['alice:on']);
    expect(await h.calls.rejoinAnswer('c3', 'alice', rejoin.value.legId, 'window-answer-again')).toEqual({ ok: true, value: null });
    await h.settled();
    expect(h.words()).toEqual(['alice:on', 'alice:on']);
  });

  it('asks a node not ready yet again, and gives up on one that refuses otherwise', async () => {
    const h = new Harness('always', { forMs: 5_000, everyMs: 5 });
    h.control.recordingRefusals.push({ code: 'invalid_state', message: 'the customer leg is not connected' }, { code: 'invalid_state', message: 'the customer leg is not connected' });
    await h.answered('c4', 'alice');
    await expect.poll(() => h.control.recordingAsks).toEqual([`start:c4:${NOTICE.length}`]);
    await expect.poll(() => h.words()).toEqual(['alice:on']);

    h.control.recordingRefusals.push({ code: 'media_failed', message: 'no encoder' });
    await h.answered('c5', 'alice');
    await h.settled();
    expect(h.control.recordingAsks).toEqual([`start:c4:${NOTICE.length}`]);
    expect(h.recordings.isRecording('c5')).toBe(false);
  });
});

describe('recording on demand', () => {
  it('a member starts and stops it, each change told to every member with who did it; repeating a state is nothing', async () => {
    const h = new Harness('on-demand');
    await h.answered('d1', 'alice');
    expect(h.control.recordingAsks).toEqual([]);
    expect(await h.recordings.toggle('d1', 'alice', true)).toEqual({ ok: true, value: { recording: true } });
    expect(h.control.recordingAsks).toEqual([`start:d1:${NOTICE.length}`]);
    expect(await h.recordings.toggle('d1', 'alice', true)).toEqual({ ok: true, value: { recording: true } });
    expect(h.control.recordingAsks).toHaveLength(1);
    h.clock += 1;
    expect(await h.recordings.toggle('d1', 'alice', false)).toEqual({ ok: true, value: { recording: false } });
    // Within the same millisecond as the stop: its time is later still, so that it is another word.
    expect(await h.recordings.toggle('d1', 'alice', true)).toEqual({ ok: true, value: { recording: true } });
    expect(h.control.recordingAsks).toEqual([`start:d1:${NOTICE.length}`, 'stop:d1', `start:d1:${NOTICE.length}`]);
    expect(h.words()).toEqual(['alice:on:alice', 'alice:off:alice', 'alice:on:alice']);
    expect(h.told.map((t) => t.event.timestamp)).toEqual([1_000_000, 1_000_001, 1_000_002]);
    expect(h.agents.get('d1')).toEqual({ agents: ['alice'], startedAt: 1_000_000 });
  });

  it('refuses an agent not in the call, a call it does not hold, and a call whose customer is not connected yet', async () => {
    const h = new Harness('on-demand');
    await h.answered('d2', 'alice');
    expect(await h.recordings.toggle('d2', 'bob', true)).toEqual({ ok: false, refusal: { status: 403, code: 'forbidden', message: 'only an agent in the call starts or stops its recording' } });
    expect(await h.recordings.toggle('nope', 'alice', true)).toEqual({ ok: false, refusal: { status: 404, code: 'not_found', message: 'no bridged call nope' } });
    await h.dialled('d3', 'bob');
    expect(await h.recordings.toggle('d3', 'bob', true)).toEqual({ ok: false, refusal: { status: 409, code: 'invalid_state', message: 'the customer is not connected yet: a call records once they are' } });
    expect(h.control.recordingAsks).toEqual([]);
  });

  it('says what the node says: a call it does not know is 404, one it cannot record yet 409, any other failure 502', async () => {
    const h = new Harness('on-demand');
    await h.answered('d4', 'alice');
    h.control.recordingRefusals.push(
      { code: 'invalid_state', message: 'the customer leg is not connected' },
      { code: 'not_found', message: 'no call d4' },
      { code: 'media_failed', message: 'the recorder failed' },
    );
    expect(await h.recordings.toggle('d4', 'alice', true)).toEqual({ ok: false, refusal: { status: 409, code: 'invalid_state', message: 'the customer leg is not connected' } });
    expect(await h.recordings.toggle('d4', 'alice', true)).toEqual({ ok: false, refusal: { status: 404, code: 'not_found', message: 'no bridged call d4' } });
    expect(await h.recordings.toggle('d4', 'alice', true)).toEqual({ ok: false, refusal: { status: 502, code: 'bridge_failed', message: 'the recorder failed' } });
    expect(h.words()).toEqual([]);
    expect(h.recordings.isRecording('d4')).toBe(false);
  });

  it('who joins after it stopped is still among the agents (the call had a recording), and is told nothing until it records again', async () => {
    const h = new Harness('on-demand');
    await h.answered('d5', 'alice');
    await h.recordings.toggle('d5', 'alice', true);
    await h.recordings.toggle('d5', 'alice', false);
    const consult = await h.calls.transfer('d5', 'alice', { to: 'bob', kind: 'consult' });
    if (!consult.ok) throw new Error(consult.refusal.message);
    await h.calls.answerTransfer('d5', consult.value.transferId, 'bob', h.control.offered.at(-1)!, 'window-answer-bob');
    await h.settled();
    expect(h.words()).toEqual(['alice:on:alice', 'alice:off:alice']);
    expect(h.agents.get('d5')?.agents).toEqual(['alice', 'bob']);
    expect(await h.recordings.toggle('d5', 'bob', true)).toEqual({ ok: true, value: { recording: true } });
    expect(h.words()).toEqual(['alice:on:alice', 'alice:off:alice', 'alice:on:bob', 'bob:on:bob']);
  });

  it('an agent who was never in a call that records is not among its agents', async () => {
    const h = new Harness('on-demand');
    await h.answered('d6', 'alice');
    const transfer = await h.calls.transfer('d6', 'alice', { to: 'bob', kind: 'transfer' });
    if (!transfer.ok) throw new Error(transfer.refusal.message);
    await h.calls.answerTransfer('d6', transfer.value.transferId, 'bob', h.control.offered.at(-1)!, 'window-answer-bob');
    await h.settled();
    // Alice handed it over before anyone recorded it.
    expect(await h.recordings.toggle('d6', 'alice', true)).toMatchObject({ ok: false, refusal: { status: 403 } });
    expect(await h.recordings.toggle('d6', 'bob', true)).toEqual({ ok: true, value: { recording: true } });
    expect(h.agents.get('d6')?.agents).toEqual(['bob']);
    expect(h.words()).toEqual(['bob:on:bob']);
  });

  it('a call that ended, or that the bridge lost, is forgotten', async () => {
    const h = new Harness('on-demand');
    await h.answered('d7', 'alice');
    await h.recordings.toggle('d7', 'alice', true);
    await h.calls.ended('d7');
    await h.settled();
    expect(h.recordings.isRecording('d7')).toBe(false);
    expect(await h.recordings.toggle('d7', 'alice', false)).toMatchObject({ ok: false, refusal: { status: 404 } });

    await h.answered('d8', 'alice');
    await h.recordings.toggle('d8', 'alice', true);
    expect(await h.calls.nodeGone('local', 'left')).toEqual(['d8']);
    await h.settled();
    expect(h.recordings.isRecording('d8')).toBe(false);
  });
});

describe('supervisors joined to a call', () => {
  const SAM = { id: 'sam', name: 'Sam Lead' };

  /** Sam joins the call in `mode`; his window answers the leg unless `answered` is false. */
  async function samJoins(h: Harness, callId: string, mode: 'listen' | 'whisper' | 'barge', answered = true): Promise<string> {
    const joined = await h.calls.monitors.join(callId, SAM, mode);
    if (!joined.ok) throw new Error(joined.refusal.message);
    if (answered) expect(await h.calls.monitors.answer(callId, 'sam', joined.value.legId, 'window-answer-sam')).toEqual({ ok: true, value: null });
    await h.settled();
    return joined.value.legId;
  }

  it('hear each start and stop with the call’s agents, whatever their mode, and are never among its agents', async () => {
    const h = new Harness('on-demand');
    await h.answered('s1', 'alice');
    await samJoins(h, 's1', 'listen');
    expect(h.words()).toEqual([]);
    expect(await h.recordings.toggle('s1', 'alice', true)).toEqual({ ok: true, value: { recording: true } });
    expect(h.words()).toEqual(['alice:on:alice', 'sam:on:alice']);
    // A switch is new routes, not a new leg: nothing to tell.
    expect(await h.calls.monitors.switchMode('s1', 'sam', 'barge')).toEqual({ ok: true, value: { mode: 'barge' } });
    await h.settled();
    expect(h.words()).toEqual(['alice:on:alice', 'sam:on:alice']);
    h.clock += 1;
    expect(await h.recordings.toggle('s1', 'alice', false)).toEqual({ ok: true, value: { recording: false } });
    expect(h.words()).toEqual(['alice:on:alice', 'sam:on:alice', 'alice:off:alice', 'sam:off:alice']);
    // One event per change, told to both at once.
    expect(h.told.map((t) => t.agentIds)).toEqual([
      ['alice', 'sam'],
      ['alice', 'sam'],
    ]);
    expect(h.agents.get('s1')).toEqual({ agents: ['alice'], startedAt: 1_000_000 });

    // Out of the call, sam hears no more of it.
    expect(await h.calls.monitors.leave('s1', 'sam')).toEqual({ ok: true, value: { ok: true } });
    await h.settled();
    expect(await h.recordings.toggle('s1', 'alice', true)).toEqual({ ok: true, value: { recording: true } });
    expect(h.words().slice(4)).toEqual(['alice:on:alice']);
    expect(h.agents.get('s1')?.agents).toEqual(['alice']);
  });

  it('one whose leg connects to a call that records is told at once, once; one whose leg is only offered is not told yet', async () => {
    const h = new Harness('always');
    await h.answered('s2', 'alice');
    expect(h.words()).toEqual(['alice:on']);
    const legId = await samJoins(h, 's2', 'whisper', false);
    expect(h.words()).toEqual(['alice:on']);
    expect(await h.calls.monitors.answer('s2', 'sam', legId, 'window-answer-sam')).toEqual({ ok: true, value: null });
    await h.settled();
    expect(h.words()).toEqual(['alice:on', 'sam:on']);
    expect(h.told.at(-1)).toEqual({ agentIds: ['sam'], event: { type: 'call.recording', callId: 's2', recording: true, timestamp: 1_000_001 } });
    // New routes for anyone else (a hold) tell nobody again.
    expect(await h.calls.hold('s2', 'alice', true)).toMatchObject({ ok: true });
    await h.settled();
    expect(h.words()).toEqual(['alice:on', 'sam:on']);

    // Left and joined again: a new leg, told again.
    await h.calls.monitors.leave('s2', 'sam');
    await samJoins(h, 's2', 'listen');
    expect(h.words()).toEqual(['alice:on', 'sam:on', 'sam:on']);
    expect(h.agents.get('s2')?.agents).toEqual(['alice']);
  });

  it('joined to an on-demand call that records with who started it, a supervisor is told who did', async () => {
    const h = new Harness('on-demand');
    await h.answered('s3', 'alice');
    await h.recordings.toggle('s3', 'alice', true);
    await samJoins(h, 's3', 'barge');
    expect(h.words()).toEqual(['alice:on:alice', 'sam:on:alice']);
  });
});

describe('never recording', () => {
  it('offers nothing, asks the node nothing, and answers a member’s "Record" 409', async () => {
    const h = new Harness('never');
    await h.answered('n1', 'alice');
    expect(h.recordings.offered).toBeUndefined();
    expect(await h.recordings.toggle('n1', 'alice', true)).toEqual({ ok: false, refusal: { status: 409, code: 'invalid_state', message: 'the team does not record calls (--record never)' } });
    expect(await h.recordings.toggle('n1', 'bob', true)).toMatchObject({ ok: false, refusal: { status: 403 } });
    expect(h.control.recordingAsks).toEqual([]);
  });

  it('refuses a mode that records without a store or a notice', () => {
    expect(() => callRecordingsFor({ mode: 'always' }, quietLogger)).toThrow('recordings: record always needs a store: where the recordings are kept');
    expect(() => callRecordingsFor({ mode: 'on-demand', store: new RecordingsStore({ dir: 'unused', logger: quietLogger }) }, quietLogger)).toThrow('recordings: record on-demand needs a notice: the customer hears it when a recording starts');
    expect(callRecordingsFor(undefined, quietLogger).mode).toBe('never');
  });
});

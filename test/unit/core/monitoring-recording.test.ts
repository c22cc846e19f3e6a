// A supervisor's window shows "Recording" while the call it joined records (relay/REFERENCE.md
// "Recordings", electron/core/monitoring.ts): the relay tells a joined supervisor each start and stop
// of the call's recording (`call.recording`), and tells one whose leg connects to a call that records
// at once; main pushes each as `monitorChanged` with the join's mode in force. The call is none of the
// supervisor's own: the call machine never hears its recording. Sam's app (a supervisor) and
// Alice's on one relay speaking the contract (oversight-relay.ts).
import { afterEach, describe, expect, it } from 'vitest';
import { callEventOf } from '../../../electron/core/relay-call-events';
import type { RelayEvent } from '../../../shared/events';
import { configureLogging } from '../../../shared/log';
import { ANSWER_SDP } from '../../fixtures/sdp';
import { LEG_OFFER_SDP } from './bridge-relay';
import { answerBridged, closeOversightDesks, lastCall, oversightDesk, pushed, SAM, until, type OversightDesk } from './oversight-desk';
import type { OversightRelay } from './oversight-relay';
import { ALICE, BOB } from './team-relay';

configureLogging({ sink: () => undefined });
afterEach(closeOversightDesks);

const TEAM = [ALICE, BOB, SAM];
const MONITOR_ANSWER_SDP = ANSWER_SDP.replace('o=- 3 4', 'o=- 35 45');

/** Sam's app (a supervisor) and Alice's, on one relay that records as `record` says. */
async function team(record: OversightRelay['record'] = 'on-demand'): Promise<{ sam: OversightDesk; alice: OversightDesk; relay: OversightRelay }> {
  const sam = await oversightDesk({
    agent: SAM,
    agents: TEAM,
    before: (relay) => {
      relay.supervisors.add('sam');
      relay.record = record;
    },
  });
  const alice = await oversightDesk({ agent: ALICE, agents: TEAM, relay: sam.relay });
  return { sam, alice, relay: sam.relay };
}

/** Sam joins `callId` in `mode` and his window answers the leg: the leg is connected. */
async function samJoins(sam: OversightDesk, callId: string, mode: 'listen' | 'whisper' | 'barge'): Promise<void> {
  const joined = await sam.app.handle('startMonitor', { callId, mode });
  if (!joined.ok || joined.value.legId === undefined) throw new Error(`no join of ${callId}`);
  expect(await sam.app.handle('answerMonitor', { callId, legId: joined.value.legId, sdp: MONITOR_ANSWER_SDP })).toEqual({ ok: true, value: null });
}

const joinPushes = (sam: OversightDesk) => pushed(sam.pushes, 'monitorChanged');

describe('the recording of a joined call', () => {
  it('each start and stop reaches the supervisor’s windows with the mode in force, as the agent’s call shows it; the supervisor’s calls are untouched', async () => {
    const { sam, alice } = await team();
    const callId = 'wacid.rec-mon-1';
    const localId = await answerBridged(alice, callId, 'alice');
    await samJoins(sam, callId, 'listen');
    expect(joinPushes(sam)).toEqual([{ callId, mode: 'listen' }]);

    expect(await alice.app.handle('setRecording', { localId, recording: true })).toEqual({ ok: true, value: { recording: true } });
    await until('Sam’s windows hear it records', () => joinPushes(sam).length === 2);
    await until('Alice’s call records', () => lastCall(alice.pushes, localId)?.recording === true);
    expect(joinPushes(sam)[1]).toEqual({ callId, mode: 'listen', recording: true });

    // A switch carries what the call is doing.
    expect(await sam.app.handle('startMonitor', { callId, mode: 'whisper' })).toEqual({ ok: true, value: { callId, mode: 'whisper' } });
    await until('Sam’s windows hear the switch', () => joinPushes(sam).length === 3);
    expect(joinPushes(sam)[2]).toEqual({ callId, mode: 'whisper', recording: true });

    expect(await alice.app.handle('setRecording', { localId, recording: false })).toEqual({ ok: true, value: { recording: false } });
    await until('Sam’s windows hear it stopped', () => joinPushes(sam).length === 4);
    expect(joinPushes(sam)[3]).toEqual({ callId, mode: 'whisper', recording: false });
    await until('Alice’s call no longer records', () => lastCall(alice.pushes, localId)?.recording === undefined);

    expect(await sam.app.handle('leaveMonitor', { callId })).toEqual({ ok: true, value: null });
    await until('Sam’s windows hear he left', () => joinPushes(sam).length === 5);
    expect(joinPushes(sam)[4]).toEqual({ callId, mode: 'left', reason: 'left' });
    expect(pushed(sam.pushes, 'callChanged').filter((c) => c.callId === callId)).toEqual([]);
  });

  it('a supervisor whose leg connects to a call that records now is told at once; joined again, told again', async () => {
    const { sam, alice } = await team('always');
    const callId = 'wacid.rec-mon-2';
    const localId = await answerBridged(alice, callId, 'alice');
    await until('Alice’s call records', () => lastCall(alice.pushes, localId)?.recording === true);

    await samJoins(sam, callId, 'barge');
    await until('Sam’s windows hear it records', () => joinPushes(sam).length === 2);
    expect(joinPushes(sam)).toEqual([
      { callId, mode: 'barge' },
      { callId, mode: 'barge', recording: true },
    ]);

    // A new join is a new leg: what the call does is said afresh, not carried over.
    expect(await sam.app.handle('leaveMonitor', { callId })).toEqual({ ok: true, value: null });
    await samJoins(sam, callId, 'listen');
    await until('Sam’s windows hear it records again', () => joinPushes(sam).length === 5);
    expect(joinPushes(sam).slice(2)).toEqual([
      { callId, mode: 'left', reason: 'left' },
      { callId, mode: 'listen' },
      { callId, mode: 'listen', recording: true },
    ]);
  });

  it('never reaches the supervisor’s call machine: the call, handed to him later, rings without a recording it no longer has', async () => {
    const { sam, alice, relay } = await team();
    const callId = 'wacid.rec-mon-3';
    const localId = await answerBridged(alice, callId, 'alice');
    await samJoins(sam, callId, 'listen');
    expect(await alice.app.handle('setRecording', { localId, recording: true })).toEqual({ ok: true, value: { recording: true } });
    await until('Sam’s windows hear it records', () => joinPushes(sam).length === 2);
    expect(await sam.app.handle('leaveMonitor', { callId })).toEqual({ ok: true, value: null });
    // Out of the call, Sam is not told it stopped.
    expect(await alice.app.handle('setRecording', { localId, recording: false })).toEqual({ ok: true, value: { recording: false } });
    await until('Alice’s call no longer records', () => lastCall(alice.pushes, localId)?.recording === undefined);

    const ring: RelayEvent = {
      type: 'call.transfer_ring',
      callId,
      transferId: 'xfer-1',
      kind: 'transfer',
      by: { agentId: 'alice', name: 'Alice Agent' },
      from: '447700900123',
      legId: 'leg-sam-ring',
      sdp: LEG_OFFER_SDP,
      timestamp: Date.now(),
    };
    relay.relay.send(ring, ['sam']);
    await until('the transfer rings Sam', () => lastCall(sam.pushes, 'tr:xfer-1')?.phase === 'ringing');
    expect(lastCall(sam.pushes, 'tr:xfer-1')).not.toHaveProperty('recording');
  });
});

describe('callEventOf: a joined call’s recording', () => {
  const envelope = (event: RelayEvent) => ({ id: 'e-1', receivedAt: 1, event });
  const recording: RelayEvent = { type: 'call.recording', callId: 'wacid.joined', recording: true, by: 'alice', timestamp: 5 };

  it('is no call event; any other call’s recording is', () => {
    expect(callEventOf(envelope(recording), 9, 'sam', 'wacid.joined')).toBeUndefined();
    expect(callEventOf(envelope(recording), 9, 'sam', 'wacid.other')).toEqual({ type: 'remote.recording', at: 9, callId: 'wacid.joined', recording: true, timestamp: 5 });
    expect(callEventOf(envelope(recording), 9, 'sam')).toEqual({ type: 'remote.recording', at: 9, callId: 'wacid.joined', recording: true, timestamp: 5 });
  });
});

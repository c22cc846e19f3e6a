// A supervisor's window shows "Recording" while the call it joined records (relay/REFERENCE.md
// "Recordings", electron/core/monitoring.ts): the relay tells a joined supervisor each start and stop
// of the call's recording (`call.recording`), and tells one whose leg connects to a call that records
// at once; main pushes each as `monitorChanged` with the join's mode in force. The call is none of the
// supervisor's own: the call machine never hears its recording. Sam's app (a supervisor) and
// Alice's on a real relay whose bridge node records (oversight-desk.ts); their windows answer the
// legs the node offers.
import { afterEach, describe, expect, it } from 'vitest';
import { callEventOf } from '../../../electron/core/relay-call-events';
import { transferLocalId } from '../../../shared/calls/types';
import type { RelayEvent } from '../../../shared/events';
import { configureLogging } from '../../../shared/log';
import type { RecordMode } from '../../../shared/bridge-recording';
import { eventually } from '../bridge/bridge-harness';
import { answerBridged, closeOversight, lastCall, oversightTeam, pushed, SAM, TONES, until, type OversightDesk, type OversightTeam } from './oversight-desk';
import { ALICE } from './team-relay';

configureLogging({ sink: () => undefined });
// Apps, peers and servers: longer than a hook's default on a busy machine.
afterEach(closeOversight, 30_000);

/** Sam's app (a supervisor) and Alice's, on one team whose bridge records as `record` says. */
async function team(record: RecordMode = 'on-demand'): Promise<{ sam: OversightDesk; alice: OversightDesk; relay: OversightTeam }> {
  const relay = await oversightTeam({ supervisors: ['sam'], record });
  const sam = await relay.desk(SAM);
  const alice = await relay.desk(ALICE);
  return { sam, alice, relay };
}

/** Sam joins `callId` in `mode` and his window answers the leg: the leg is connected. */
async function samJoins(sam: OversightDesk, callId: string, mode: 'listen' | 'whisper' | 'barge'): Promise<void> {
  const joined = await sam.app.handle('startMonitor', { callId, mode });
  if (!joined.ok || joined.value.legId === undefined || joined.value.offer === undefined) throw new Error(`no join of ${callId}`);
  const window = sam.team.window(TONES.sam!);
  const sdp = await window.answer(joined.value.offer);
  expect(await sam.app.handle('answerMonitor', { callId, legId: joined.value.legId, sdp })).toEqual({ ok: true, value: null });
  await eventually('Sam’s leg connects', () => window.pc.connectionState === 'connected', 15_000);
}

const joinPushes = (sam: OversightDesk) => pushed(sam.pushes, 'monitorChanged');
const samsCalls = (sam: OversightDesk, callId: string) => pushed(sam.pushes, 'callChanged').filter((c) => c.callId === callId);

/** Alice answers `callId`, which rang Sam too until then: his ring has ended. How many callChanged Sam had of it. */
async function aliceAnswers(sam: OversightDesk, alice: OversightDesk, callId: string): Promise<{ localId: string; samsRing: number }> {
  const localId = await answerBridged(alice, callId);
  await until('Sam’s ring ended', () => lastCall(sam.pushes, `in:${callId}`)?.phase === 'ended');
  return { localId, samsRing: samsCalls(sam, callId).length };
}

describe('the recording of a joined call', () => {
  it('each start and stop reaches the supervisor’s windows with the mode in force, as the agent’s call shows it; the supervisor’s calls are untouched', async () => {
    const { sam, alice } = await team();
    const callId = 'wacid.rec-mon-1';
    const { localId, samsRing } = await aliceAnswers(sam, alice, callId);
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
    // The call rang Sam until Alice answered it; nothing since is a call of Sam's.
    expect(samsCalls(sam, callId)).toHaveLength(samsRing);
    expect(samsCalls(sam, callId).some((c) => 'recording' in c)).toBe(false);
  }, 60_000);

  it('a supervisor whose leg connects to a call that records now is told at once; joined again, told again', async () => {
    const { sam, alice } = await team('always');
    const callId = 'wacid.rec-mon-2';
    const { localId } = await aliceAnswers(sam, alice, callId);
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
  }, 60_000);

  it('never reaches the supervisor’s call machine: the call, handed to him later, rings without a recording it no longer has', async () => {
    const { sam, alice, relay } = await team();
    const callId = 'wacid.rec-mon-3';
    const { localId } = await aliceAnswers(sam, alice, callId);
    await samJoins(sam, callId, 'listen');
    expect(await alice.app.handle('setRecording', { localId, recording: true })).toEqual({ ok: true, value: { recording: true } });
    await until('Sam’s windows hear it records', () => joinPushes(sam).length === 2);
    expect(await sam.app.handle('leaveMonitor', { callId })).toEqual({ ok: true, value: null });
    await until('Sam’s windows hear he left', () => joinPushes(sam).length === 3);
    // Out of the call, Sam is not told it stopped.
    expect(await alice.app.handle('setRecording', { localId, recording: false })).toEqual({ ok: true, value: { recording: false } });
    await until('Alice’s call no longer records', () => lastCall(alice.pushes, localId)?.recording === undefined);

    // Alice hands the call to Sam: the relay rings him with a leg of his own.
    const transfer = await alice.app.handle('transferCall', { localId, to: 'sam', kind: 'transfer' });
    expect(transfer).toMatchObject({ ok: true, value: { transferId: expect.any(String) } });
    if (!transfer.ok) return;
    const ring = await relay.stored('the transfer ringing Sam', (e) => e.type === 'call.transfer_ring' && e.callId === callId);
    expect(ring).toMatchObject({ kind: 'transfer', transferId: transfer.value.transferId });
    const samsLocalId = transferLocalId(transfer.value.transferId);
    await until('the transfer rings Sam', () => lastCall(sam.pushes, samsLocalId)?.phase === 'ringing');
    expect(lastCall(sam.pushes, samsLocalId)).toMatchObject({ callId, phase: 'ringing' });
    expect(lastCall(sam.pushes, samsLocalId)).not.toHaveProperty('recording');
    expect(joinPushes(sam)).toHaveLength(3);
  }, 60_000);
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

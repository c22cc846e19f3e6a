// The team's own recordings of bridged calls in the main process (shared/bridge-recording.ts): the
// team's mode from GET /me reaching the windows (TeamInfo.record), "Record" and "Stop recording"
// (setRecording → the relay's toggle), "Recording" on the call from the relay's call.recording, the
// recent-calls entry marked `teamRecording`, and "Play recording" (getRecording → GET
// /recordings/{callId}) with what each refusal says. Alice's app on a real relay whose bridge node
// records (oversight-desk.ts): the files played are the ones the node made of her calls.
import { afterEach, describe, expect, it } from 'vitest';
import { RelayClient } from '../../../electron/core/relay-client';
import { RECORDING_AGENT_PATHS } from '../../../shared/bridge-recording';
import { english } from '../../../shared/i18n/text';
import { configureLogging } from '../../../shared/log';
import { TRANSFER_PATHS } from '../../../shared/transfer';
import { eventually } from '../bridge/bridge-harness';
import { answerBridged, answerRinging, closeOversight, lastCall, oversightTeam, pushed, until, type OversightDesk, type OversightTeamOptions } from './oversight-desk';
import { ALICE } from './team-relay';

configureLogging({ sink: () => undefined });
// Apps, peers and servers: longer than a hook's default on a busy machine.
afterEach(closeOversight, 30_000);

/** Alice's app on a team of Alice, Bob and Sam whose bridge records as `o` says. */
async function aliceDesk(o: OversightTeamOptions = {}): Promise<OversightDesk> {
  const team = await oversightTeam(o);
  return team.desk(ALICE);
}

const toggles = (d: OversightDesk) => d.team.tap.requests.filter((r) => r.path.endsWith('/bridge/recording')).map((r) => ({ path: r.path, body: r.body }));
const entryOf = (d: OversightDesk, localId: string) => pushed(d.pushes, 'historyChanged').at(-1)?.find((e) => e.localId === localId);
const base64 = (file: Uint8Array | undefined) => Buffer.from(file ?? []).toString('base64');

describe('the team’s recording mode', () => {
  it('reaches the windows from GET /me with the team’s role and settings, and stays when the settings are told again', async () => {
    const d = await aliceDesk({ record: 'on-demand' });
    await until('the team is told with its recording', () => pushed(d.pushes, 'teamChanged').at(-1)?.record === 'on-demand');
    const snapshot = await d.app.handle('getSnapshot', {});
    expect(snapshot).toMatchObject({ ok: true, value: { team: { role: 'agent', record: 'on-demand' } } });
    // The relay's file changed: its event says so, and so does GET /team/settings from now on.
    d.team.teamSettings.replace({ ...d.team.teamSettings.current(), afterCallWorkSeconds: 30 });
    await until('the settings are told again', () => pushed(d.pushes, 'teamChanged').at(-1)?.settings.afterCallWorkSeconds === 30);
    expect(pushed(d.pushes, 'teamChanged').at(-1)).toMatchObject({ record: 'on-demand' });
  }, 30_000);

  it('is absent when the team never records, and the agent is still known', async () => {
    const never = await aliceDesk({ settings: { afterCallWorkSeconds: 20 } });
    await until('the team is told', () => pushed(never.pushes, 'teamChanged').length > 0);
    const snapshot = await never.app.handle('getSnapshot', {});
    expect(snapshot.ok && snapshot.value.team).toEqual({ agentId: ALICE.id, role: 'agent', settings: expect.objectContaining({ afterCallWorkSeconds: 20 }) });
    expect(pushed(never.pushes, 'teamChanged').every((t) => !('record' in t))).toBe(true);

    const client = new RelayClient({ url: never.team.relay.url, token: ALICE.token });
    expect(await client.me()).toEqual({ ok: true, value: { agentId: 'alice', name: 'Alice Agent', bridged: true } });
    await client.close();
  }, 30_000);
});

describe('Record and Stop recording', () => {
  it('ask the relay, and the call shows "Recording" from the relay’s word to every window in it, not from the answer', async () => {
    const d = await aliceDesk({ record: 'on-demand' });
    const localId = await answerBridged(d, 'wacid.rec-1');
    expect(lastCall(d.pushes, localId)).not.toHaveProperty('recording');

    expect(await d.app.handle('setRecording', { localId, recording: true })).toEqual({ ok: true, value: { recording: true } });
    await until('the call records', () => lastCall(d.pushes, localId)?.recording === true);
    expect(await d.app.handle('setRecording', { localId, recording: false })).toEqual({ ok: true, value: { recording: false } });
    await until('the call no longer records', () => lastCall(d.pushes, localId)?.recording === undefined);
    expect(lastCall(d.pushes, localId)).toMatchObject({ phase: 'active', bridged: true });
    expect(toggles(d)).toEqual([
      { path: '/calls/wacid.rec-1/bridge/recording', body: { recording: true } },
      { path: '/calls/wacid.rec-1/bridge/recording', body: { recording: false } },
    ]);

    // A colleague's word moves the call the same way: Alice consults Bob, Bob starts it in his window.
    expect((await d.team.ask('bob', 'PUT', '/presence', { status: 'available' })).status).toBe(200);
    expect(await d.app.handle('transferCall', { localId, to: 'bob', kind: 'consult' })).toMatchObject({ ok: true });
    const ring = await d.team.stored('the consult ringing Bob', (e) => e.type === 'call.transfer_ring' && e.callId === 'wacid.rec-1');
    if (ring.type !== 'call.transfer_ring') throw new Error('not a ring');
    const bobAnswer = await d.team.window(960).answer(ring.sdp);
    expect(await d.team.ask('bob', 'POST', TRANSFER_PATHS.answer('wacid.rec-1', ring.transferId), { legId: ring.legId, sdp: bobAnswer })).toEqual({ status: 200, body: { ok: true } });
    expect(await d.team.ask('bob', 'POST', RECORDING_AGENT_PATHS.toggle('wacid.rec-1'), { recording: true })).toEqual({ status: 200, body: { recording: true } });
    await until('the call records again', () => lastCall(d.pushes, localId)?.recording === true);
    expect(toggles(d)).toHaveLength(2);
  }, 40_000);

  it('say the relay’s refusals as it says them: a team that records always or never (409), an agent not in the call (403)', async () => {
    const d = await aliceDesk({ record: 'always' });
    // Ringing, the call is not Alice's yet: the relay refuses her.
    await d.team.ring('wacid.rec-2');
    await until('the call rings', () => lastCall(d.pushes, 'in:wacid.rec-2')?.phase === 'ringing');
    expect(await d.app.handle('setRecording', { localId: 'in:wacid.rec-2', recording: true })).toMatchObject({
      ok: false,
      error: { code: 'unauthorized', httpStatus: 403, message: 'The relay refused the recording request (HTTP 403: only an agent in the call starts or stops its recording)' },
    });
    const localId = await answerRinging(d, 'wacid.rec-2');
    // Always: the relay records from the moment the customer is connected, and tells so.
    await until('the call records from the start', () => lastCall(d.pushes, localId)?.recording === true);
    expect(await d.app.handle('setRecording', { localId, recording: false })).toMatchObject({
      ok: false,
      error: { code: 'invalid_state', httpStatus: 409, message: 'The relay refused the recording request (HTTP 409: the team records every call (--record always): its recording is not started or stopped by hand)' },
    });
    expect(lastCall(d.pushes, localId)).toMatchObject({ recording: true });
    const client = new RelayClient({ url: d.team.relay.url, token: ALICE.token });
    expect(await client.me()).toEqual({ ok: true, value: { agentId: 'alice', name: 'Alice Agent', bridged: true, record: 'always' } });
    await client.close();

    // A team that never records.
    const never = await aliceDesk();
    const neverCall = await answerBridged(never, 'wacid.rec-2n');
    expect(await never.app.handle('setRecording', { localId: neverCall, recording: true })).toMatchObject({
      ok: false,
      error: { code: 'invalid_state', httpStatus: 409, message: 'The relay refused the recording request (HTTP 409: the team does not record calls (--record never))' },
    });
    expect(lastCall(never.pushes, neverCall)).not.toHaveProperty('recording');
  }, 60_000);

  it('are refused here, the relay not asked, for a direct call, an ended one, and one there is not', async () => {
    const d = await aliceDesk({ record: 'on-demand' });
    // No bridge node is live: the call rings direct.
    d.team.nodeLive(false);
    await d.team.ring('wacid.direct-1');
    d.team.nodeLive(true);
    const direct = 'in:wacid.direct-1';
    await until('the direct call rings', () => lastCall(d.pushes, direct)?.phase === 'ringing');
    const ringing = lastCall(d.pushes, direct);
    expect(ringing).not.toHaveProperty('bridged');
    const sdp = await d.team.window(720).answer(ringing?.direction === 'incoming' ? ringing.offerSdp : '');
    expect(await d.app.handle('answerCall', { localId: direct, sdp })).toEqual({ ok: true, value: null });
    expect(await d.app.handle('setRecording', { localId: direct, recording: true })).toMatchObject({
      ok: false,
      error: { code: 'invalid_state', message: 'This call does not go through the team’s media server, so the team cannot record it', text: { code: 'teamRecording.notBridged' } },
    });
    expect(await d.app.handle('hangUp', { localId: direct })).toEqual({ ok: true, value: null });
    expect(await d.app.handle('setRecording', { localId: direct, recording: true })).toMatchObject({
      ok: false,
      error: { code: 'invalid_state', message: 'The call is ended: only a call under way can be recorded', text: { code: 'teamRecording.onlyLive' } },
    });
    expect(await d.app.handle('setRecording', { localId: 'in:wacid.none', recording: true })).toMatchObject({ ok: false, error: { code: 'not_found', message: 'There is no call in:wacid.none' } });
    expect(toggles(d)).toEqual([]);
  }, 30_000);
});

describe('Play recording', () => {
  it('marks the entry of a call the bridge recorded, even stopped before the end, then plays the relay’s file; "not ready yet" until the relay has it', async () => {
    const d = await aliceDesk({ record: 'on-demand', holdRecordings: true });
    const localId = await answerBridged(d, 'wacid.rec-3');
    expect(await d.app.handle('setRecording', { localId, recording: true })).toMatchObject({ ok: true });
    await until('the call records', () => lastCall(d.pushes, localId)?.recording === true);
    expect(await d.app.handle('setRecording', { localId, recording: false })).toMatchObject({ ok: true });
    await until('the call stopped recording', () => lastCall(d.pushes, localId)?.recording === undefined);
    await d.team.end('wacid.rec-3');
    await until('the call ended', () => lastCall(d.pushes, localId)?.phase === 'ended');
    await until('the entry is marked', () => entryOf(d, localId)?.teamRecording === true);
    expect(lastCall(d.pushes, localId)).not.toHaveProperty('recording');

    // The node has finished the file; the relay does not have it yet.
    await until('the node finished the file', () => d.team.finished.has('wacid.rec-3'));
    const early = await d.app.handle('getRecording', { localId });
    expect(early).toMatchObject({ ok: false, error: { code: 'not_found', httpStatus: 404, text: { code: 'teamRecording.notReady' } } });
    expect(!early.ok && early.error.message).toBe('The team’s recording of this call is not ready yet: the media server hands it over once the call has ended');

    await d.team.handOver('wacid.rec-3');
    const file = base64(d.team.finished.get('wacid.rec-3'));
    expect(Buffer.from(file, 'base64').subarray(0, 4).toString('latin1')).toBe('OggS');
    const played = await d.app.handle('getRecording', { localId });
    expect(played).toEqual({ ok: true, value: { mimeType: 'audio/ogg', data: file } });
    expect(d.team.tap.seen(/^\/recordings\//)).toEqual(['GET /recordings/wacid.rec-3', 'GET /recordings/wacid.rec-3']);
    expect(d.team.tap.requests.filter((r) => r.path.startsWith('/recordings/')).every((r) => r.authorization === `Bearer ${ALICE.token}`)).toBe(true);

    // Kept across a restart, and through a later correction of the entry.
    await d.app.close();
    const again = await d.open();
    const snapshot = await again.handle('getSnapshot', {});
    expect(snapshot.ok && snapshot.value.history.find((e) => e.localId === localId)).toMatchObject({ teamRecording: true, callId: 'wacid.rec-3' });
    expect(await again.handle('getRecording', { localId })).toEqual({ ok: true, value: { mimeType: 'audio/ogg', data: file } });
  }, 40_000);

  it('says there is none for a call the bridge did not record, and the relay’s refusal for one the agent may not hear', async () => {
    const d = await aliceDesk({ record: 'on-demand' });
    const localId = await answerBridged(d, 'wacid.rec-4');
    await d.team.end('wacid.rec-4');
    await until('the call ended', () => lastCall(d.pushes, localId)?.phase === 'ended');
    const none = await d.app.handle('getRecording', { localId });
    expect(none).toMatchObject({ ok: false, error: { code: 'not_found', text: { code: 'teamRecording.none', values: { call: localId } } } });
    expect(!none.ok && none.error.message).toBe(`There is no recording of call ${localId} by the team’s media server`);
    expect(entryOf(d, localId)).not.toHaveProperty('teamRecording');

    // A call that rang Alice too, answered and recorded by Bob: the relay keeps it for Bob.
    await d.team.take('bob', 'wacid.rec-4b');
    const bobs = 'in:wacid.rec-4b';
    await until('Bob’s call was Alice’s ring', () => lastCall(d.pushes, bobs)?.phase === 'ended');
    expect(await d.team.ask('bob', 'POST', RECORDING_AGENT_PATHS.toggle('wacid.rec-4b'), { recording: true })).toEqual({ status: 200, body: { recording: true } });
    await d.team.end('wacid.rec-4b');
    await eventually('the relay keeps Bob’s recording', async () => (await d.team.store!.meta('wacid.rec-4b'))?.storedAt !== undefined, 15_000);
    await until('Bob’s call is in Alice’s recent calls', () => entryOf(d, bobs) !== undefined);
    expect(await d.app.handle('getRecording', { localId: bobs })).toMatchObject({
      ok: false,
      error: { code: 'unauthorized', httpStatus: 403, message: 'The relay refused the recording request (HTTP 403: only the agents who were in the call and supervisors hear its recording)' },
    });
    expect(await d.app.handle('getRecording', { localId: 'in:wacid.none' })).toMatchObject({ ok: false, error: { code: 'not_found', text: { code: 'teamRecording.none' } } });
    expect(english({ code: 'teamRecording.none', values: { call: 'x' } })).toBe('There is no recording of call x by the team’s media server');
  }, 40_000);

  it('marks the entry when the relay’s word comes after the call ended here', async () => {
    const d = await aliceDesk({ record: 'always' });
    await d.team.ring('wacid.rec-5');
    // Alice's event stream is slow from here: what the relay tells her arrives once it flows again.
    await until('the call rings', () => lastCall(d.pushes, 'in:wacid.rec-5')?.phase === 'ringing');
    d.team.tap.holdStream('alice');
    const localId = await answerRinging(d, 'wacid.rec-5');
    await d.team.stored('the call’s recording', (e) => e.type === 'call.recording' && e.callId === 'wacid.rec-5' && e.recording);
    expect(await d.app.handle('hangUp', { localId })).toEqual({ ok: true, value: null });
    await until('the call ended', () => lastCall(d.pushes, localId)?.phase === 'ended');
    await until('the entry is kept', () => entryOf(d, localId) !== undefined);
    expect(entryOf(d, localId)).not.toHaveProperty('teamRecording');
    expect(lastCall(d.pushes, localId)).not.toHaveProperty('recording');

    d.team.tap.flow('alice');
    await until('the entry is marked', () => entryOf(d, localId)?.teamRecording === true);
    await eventually('the relay keeps the recording', async () => (await d.team.store!.meta('wacid.rec-5'))?.storedAt !== undefined, 15_000);
    expect(await d.app.handle('getRecording', { localId })).toEqual({ ok: true, value: { mimeType: 'audio/ogg', data: base64(d.team.finished.get('wacid.rec-5')) } });
  }, 40_000);
});

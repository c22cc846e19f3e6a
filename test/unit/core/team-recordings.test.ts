// The team's own recordings of bridged calls in the main process (shared/bridge-recording.ts): the
// team's mode from GET /me reaching the windows (TeamInfo.record), "Record" and "Stop recording"
// (setRecording → the relay's toggle), "Recording" on the call from the relay's call.recording, the
// recent-calls entry marked `teamRecording`, and "Play recording" (getRecording → GET
// /recordings/{callId}) with what each refusal says. The relay is a real HTTP server speaking the
// contract of RECORDING_AGENT_PATHS (oversight-relay.ts).
import { afterEach, describe, expect, it } from 'vitest';
import { RelayClient } from '../../../electron/core/relay-client';
import { english } from '../../../shared/i18n/text';
import { configureLogging } from '../../../shared/log';
import { OGG_OPUS_MIME_TYPE, oggOpusFile } from '../../../shared/ogg-opus';
import { ANSWER_SDP } from '../../fixtures/sdp';
import { answerBridged, closeOversightDesks, CUSTOMER, lastCall, oversightDesk, pushed, SAM, until, type OversightDesk } from './oversight-desk';
import { ALICE, BOB } from './team-relay';

configureLogging({ sink: () => undefined });
afterEach(closeOversightDesks);

/** A second of a real Ogg Opus file (stereo, as the bridge writes): silent CELT frames. */
function recordingFile(): Buffer {
  const file = oggOpusFile(
    Array.from({ length: 50 }, () => Uint8Array.of(0xfc, 0xff, 0xfe)),
    { channels: 2 },
  );
  if (!file.ok) throw new Error(file.error.message);
  return Buffer.from(file.value);
}

const aliceDesk = (before?: Parameters<typeof oversightDesk>[0]['before']) => oversightDesk({ agent: ALICE, agents: [ALICE, BOB, SAM], ...(before !== undefined ? { before } : {}) });

const toggles = (d: OversightDesk) => d.relay.relay.requests.filter((r) => r.path.endsWith('/bridge/recording')).map((r) => ({ path: r.path, body: r.body }));

describe('the team’s recording mode', () => {
  it('reaches the windows from GET /me with the team’s role and settings, and stays when the settings are told again', async () => {
    const d = await aliceDesk((relay) => {
      relay.record = 'on-demand';
      relay.relay.me = { bridged: true, record: 'on-demand' };
    });
    await until('the team is told with its recording', () => pushed(d.pushes, 'teamChanged').at(-1)?.record === 'on-demand');
    const snapshot = await d.app.handle('getSnapshot', {});
    expect(snapshot).toMatchObject({ ok: true, value: { team: { role: 'agent', record: 'on-demand' } } });
    // The relay's file changed: its event says so, and so does GET /team/settings from now on.
    d.relay.relay.team = { role: 'agent', settings: { ...d.relay.relay.team.settings, afterCallWorkSeconds: 30 } };
    d.relay.relay.sendTeam(d.relay.relay.team, ['alice']);
    await until('the settings are told again', () => pushed(d.pushes, 'teamChanged').at(-1)?.settings.afterCallWorkSeconds === 30);
    expect(pushed(d.pushes, 'teamChanged').at(-1)).toMatchObject({ record: 'on-demand' });
  });

  it('is absent when the team never records; a mode this app does not know offers nothing, and the agent is still known', async () => {
    const never = await aliceDesk((relay) => (relay.relay.team = { ...relay.relay.team, settings: { ...relay.relay.team.settings, afterCallWorkSeconds: 20 } }));
    await until('the team is told', () => pushed(never.pushes, 'teamChanged').length > 0);
    const snapshot = await never.app.handle('getSnapshot', {});
    expect(snapshot.ok && snapshot.value.team).toEqual({ role: 'agent', settings: expect.objectContaining({ afterCallWorkSeconds: 20 }) });
    expect(pushed(never.pushes, 'teamChanged').every((t) => !('record' in t))).toBe(true);

    never.relay.relay.me = { bridged: true, record: 'on-weekdays' };
    const client = new RelayClient({ url: never.relay.url, token: ALICE.token });
    expect(await client.me()).toEqual({ ok: true, value: { agentId: 'alice', name: 'Alice Agent', bridged: true } });
    never.relay.relay.me = { bridged: true, record: 'always' };
    expect(await client.me()).toEqual({ ok: true, value: { agentId: 'alice', name: 'Alice Agent', bridged: true, record: 'always' } });
    await client.close();
  });
});

describe('Record and Stop recording', () => {
  it('ask the relay, and the call shows "Recording" from the relay’s word to every window in it, not from the answer', async () => {
    const d = await aliceDesk((relay) => (relay.relay.me = { bridged: true, record: 'on-demand' }));
    const localId = await answerBridged(d, 'wacid.rec-1', 'alice');
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

    // A colleague's word moves the call the same way (Bob started it in his window).
    d.relay.relay.send({ type: 'call.recording', callId: 'wacid.rec-1', recording: true, by: 'bob', timestamp: Date.now() }, ['alice']);
    await until('the call records again', () => lastCall(d.pushes, localId)?.recording === true);
  });

  it('say the relay’s refusals as it says them: a team that records always or never (409), an agent not in the call (403)', async () => {
    const d = await aliceDesk((relay) => {
      relay.record = 'always';
      relay.relay.me = { bridged: true, record: 'always' };
    });
    const localId = await answerBridged(d, 'wacid.rec-2', 'alice');
    // Always: the relay records from the moment the customer is connected, and tells so.
    await until('the call records from the start', () => lastCall(d.pushes, localId)?.recording === true);
    expect(await d.app.handle('setRecording', { localId, recording: false })).toMatchObject({
      ok: false,
      error: { code: 'invalid_state', httpStatus: 409, message: 'The relay refused the recording request (HTTP 409: the team records every call (--record always))' },
    });
    d.relay.record = 'never';
    expect(await d.app.handle('setRecording', { localId, recording: true })).toMatchObject({
      ok: false,
      error: { code: 'invalid_state', message: 'The relay refused the recording request (HTTP 409: the team does not record calls (--record never))' },
    });
    d.relay.record = 'on-demand';
    d.relay.calls.get('wacid.rec-2')!.members.delete('alice');
    expect(await d.app.handle('setRecording', { localId, recording: false })).toMatchObject({
      ok: false,
      error: { code: 'unauthorized', httpStatus: 403, message: 'The relay refused the recording request (HTTP 403: only an agent in the call can record it)' },
    });
    expect(lastCall(d.pushes, localId)).toMatchObject({ recording: true });
  });

  it('are refused here, the relay not asked, for a direct call, an ended one, and one there is not', async () => {
    const d = await aliceDesk((relay) => (relay.relay.me = { bridged: true, record: 'on-demand' }));
    d.relay.ring('wacid.direct-1', CUSTOMER, ['alice'], { bridged: false });
    const direct = 'in:wacid.direct-1';
    await until('the direct call rings', () => lastCall(d.pushes, direct)?.phase === 'ringing');
    expect(await d.app.handle('answerCall', { localId: direct, sdp: ANSWER_SDP })).toEqual({ ok: true, value: null });
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
  });
});

describe('Play recording', () => {
  it('marks the entry of a call the bridge recorded, even stopped before the end, then plays the relay’s file; "not ready yet" until the relay has it', async () => {
    const d = await aliceDesk((relay) => (relay.relay.me = { bridged: true, record: 'on-demand' }));
    const localId = await answerBridged(d, 'wacid.rec-3', 'alice');
    expect(await d.app.handle('setRecording', { localId, recording: true })).toMatchObject({ ok: true });
    await until('the call records', () => lastCall(d.pushes, localId)?.recording === true);
    expect(await d.app.handle('setRecording', { localId, recording: false })).toMatchObject({ ok: true });
    await until('the call stopped recording', () => lastCall(d.pushes, localId)?.recording === undefined);
    d.relay.end('wacid.rec-3');
    await until('the call ended', () => lastCall(d.pushes, localId)?.phase === 'ended');
    const entryOf = () => pushed(d.pushes, 'historyChanged').at(-1)?.find((e) => e.localId === localId);
    await until('the entry is marked', () => entryOf()?.teamRecording === true);
    expect(lastCall(d.pushes, localId)).not.toHaveProperty('recording');

    const early = await d.app.handle('getRecording', { localId });
    expect(early).toMatchObject({ ok: false, error: { code: 'not_found', httpStatus: 404, text: { code: 'teamRecording.notReady' } } });
    expect(!early.ok && early.error.message).toBe('The team’s recording of this call is not ready yet: the media server hands it over once the call has ended');

    const file = recordingFile();
    d.relay.recordings.set('wacid.rec-3', { bytes: file, agents: new Set(['alice']) });
    const played = await d.app.handle('getRecording', { localId });
    expect(played).toEqual({ ok: true, value: { mimeType: 'audio/ogg', data: file.toString('base64') } });
    expect(d.relay.seen(/^\/recordings\//)).toEqual(['GET /recordings/wacid.rec-3', 'GET /recordings/wacid.rec-3']);
    expect(d.relay.relay.requests.filter((r) => r.path.startsWith('/recordings/')).every((r) => r.authorization === `Bearer ${ALICE.token}`)).toBe(true);

    // Kept across a restart, and through a later correction of the entry.
    await d.app.close();
    const again = await d.open();
    const snapshot = await again.handle('getSnapshot', {});
    expect(snapshot.ok && snapshot.value.history.find((e) => e.localId === localId)).toMatchObject({ teamRecording: true, callId: 'wacid.rec-3' });
    expect(await again.handle('getRecording', { localId })).toEqual({ ok: true, value: { mimeType: 'audio/ogg', data: file.toString('base64') } });
  });

  it('says there is none for a call the bridge did not record, and the relay’s refusal for one the agent may not hear', async () => {
    const d = await aliceDesk((relay) => (relay.relay.me = { bridged: true, record: 'on-demand' }));
    const localId = await answerBridged(d, 'wacid.rec-4', 'alice');
    d.relay.end('wacid.rec-4');
    await until('the call ended', () => lastCall(d.pushes, localId)?.phase === 'ended');
    const none = await d.app.handle('getRecording', { localId });
    expect(none).toMatchObject({ ok: false, error: { code: 'not_found', text: { code: 'teamRecording.none', values: { call: localId } } } });
    expect(!none.ok && none.error.message).toBe(`There is no recording of call ${localId} by the team’s media server`);
    expect(pushed(d.pushes, 'historyChanged').at(-1)?.find((e) => e.localId === localId)).not.toHaveProperty('teamRecording');

    d.relay.recordings.set('wacid.rec-4', { bytes: recordingFile(), agents: new Set(['bob']) });
    expect(await d.app.handle('getRecording', { localId })).toMatchObject({
      ok: false,
      error: { code: 'unauthorized', httpStatus: 403, message: 'The relay refused the recording request (HTTP 403: only the agents of the call and supervisors may hear its recording)' },
    });
    expect(await d.app.handle('getRecording', { localId: 'in:wacid.none' })).toMatchObject({ ok: false, error: { code: 'not_found', text: { code: 'teamRecording.none' } } });
    expect(english({ code: 'teamRecording.none', values: { call: 'x' } })).toBe('There is no recording of call x by the team’s media server');
  });

  it('marks the entry when the relay says so after the call ended here too, and the file’s own type is kept', async () => {
    const d = await aliceDesk((relay) => (relay.relay.me = { bridged: true, record: 'always' }));
    const localId = await answerBridged(d, 'wacid.rec-5', 'alice');
    expect(await d.app.handle('hangUp', { localId })).toEqual({ ok: true, value: null });
    await until('the call ended', () => lastCall(d.pushes, localId)?.phase === 'ended');
    d.relay.relay.send({ type: 'call.recording', callId: 'wacid.rec-5', recording: true, timestamp: Date.now() }, ['alice']);
    await until('the entry is marked', () => pushed(d.pushes, 'historyChanged').at(-1)?.find((e) => e.localId === localId)?.teamRecording === true);
    d.relay.recordings.set('wacid.rec-5', { bytes: recordingFile(), agents: new Set(['alice']) });
    d.relay.relay.routes.unshift(({ path }) => (path === '/recordings/wacid.rec-5' ? { status: 200, bytes: recordingFile(), headers: { 'Content-Type': OGG_OPUS_MIME_TYPE } } : undefined));
    expect(await d.app.handle('getRecording', { localId })).toMatchObject({ ok: true, value: { mimeType: OGG_OPUS_MIME_TYPE } });
  });
});

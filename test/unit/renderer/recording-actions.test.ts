// The recordings' domain on a fake host: a voicemail's or the service's recording handed over as
// base64 becomes a Blob of its bytes and type, a refusal comes as it was, an answer that is not audio
// in base64 is refused, the player is told the calls' speaker; a transcript comes checked, with the
// agent's own name from the wallboard or the team, none when neither knows it; the team's own
// recording fetched the same way, and "Record" / "Stop recording" asked of the host.
import { describe, expect, test } from 'vitest';
import { err, ok } from '../../../shared/result';
import { RecordingActions } from '../../../renderer/app/recording-actions';
import { fakeApi } from './fake-api';

describe('the voicemail\'s audio', () => {
  test('the base64 the host hands over becomes a Blob of those bytes and that type; the call and media id go with the command', async () => {
    const bytes = new Uint8Array([0x4f, 0x67, 0x67, 0x53, 0, 2, 255, 128]);
    const { api, calls } = fakeApi({ getVoicemail: () => ok({ mimeType: 'audio/ogg; codecs=opus', data: Buffer.from(bytes).toString('base64') }) });
    const audio = await new RecordingActions({ api }).voicemail({ callId: 'wacid.1', mediaId: 'media-1' });
    if (!audio.ok) throw new Error(audio.error.message);
    expect(audio.value.type).toBe('audio/ogg; codecs=opus');
    expect(new Uint8Array(await audio.value.arrayBuffer())).toEqual(bytes);
    expect(calls).toEqual([{ name: 'getVoicemail', params: { callId: 'wacid.1', mediaId: 'media-1' } }]);
    await new RecordingActions({ api }).voicemail({ callId: 'wacid.2' });
    expect(calls[1]?.params).toEqual({ callId: 'wacid.2' });
  });

  test('a refusal comes as it was; an answer that is not audio in base64 is refused, never played', async () => {
    const refused = await new RecordingActions({ api: fakeApi({ getVoicemail: () => err('not_found', 'No voicemail for call wacid.1') }).api }).voicemail({ callId: 'wacid.1' });
    expect(refused).toEqual({ ok: false, error: { code: 'not_found', message: 'No voicemail for call wacid.1' } });
    for (const answer of [{ mimeType: 'audio/ogg', data: 'not base64!' }, { mimeType: '', data: 'AAAA' }, { data: 'AAAA' }, { mimeType: 'audio/ogg', data: '' }]) {
      const audio = await new RecordingActions({ api: fakeApi({ getVoicemail: () => ok(answer as { mimeType: string; data: string }) }).api }).voicemail({ callId: 'wacid.1' });
      expect(audio.ok, JSON.stringify(answer)).toBe(false);
    }
  });

  test('plays on the calls\' speaker, the system default without one', () => {
    const { api } = fakeApi({});
    expect(new RecordingActions({ api, speaker: () => 'headset-1' }).speakerId()).toBe('headset-1');
    expect(new RecordingActions({ api }).speakerId()).toBe('');
  });
});

describe('the service\'s recording', () => {
  test('asked for by the recent call\'s localId; its bytes become a Blob of that type; a refusal or a broken answer is refused', async () => {
    const bytes = new Uint8Array([0x4f, 0x67, 0x67, 0x53, 9, 8, 7]);
    const { api, calls } = fakeApi({ getServiceRecording: () => ok({ mimeType: 'audio/ogg; codecs=opus', data: Buffer.from(bytes).toString('base64') }) });
    const audio = await new RecordingActions({ api }).serviceRecording('in:wacid.1');
    if (!audio.ok) throw new Error(audio.error.message);
    expect(audio.value.type).toBe('audio/ogg; codecs=opus');
    expect(new Uint8Array(await audio.value.arrayBuffer())).toEqual(bytes);
    expect(calls).toEqual([{ name: 'getServiceRecording', params: { localId: 'in:wacid.1' } }]);

    const refused = await new RecordingActions({ api: fakeApi({ getServiceRecording: () => err('not_found', 'No recording for this call') }).api }).serviceRecording('in:wacid.1');
    expect(refused).toEqual({ ok: false, error: { code: 'not_found', message: 'No recording for this call' } });
    for (const answer of [{ mimeType: 'audio/ogg', data: '@@' }, { mimeType: 'audio/ogg', data: '' }, { data: 'AAAA' }]) {
      const audio2 = await new RecordingActions({ api: fakeApi({ getServiceRecording: () => ok(answer as { mimeType: string; data: string }) }).api }).serviceRecording('x');
      expect(audio2.ok, JSON.stringify(answer)).toBe(false);
    }
  });
});

describe('the team\'s own recording of a bridged call', () => {
  test('"Play recording": the relay\'s file, asked for by the recent call\'s localId, as a Blob; a refusal as it came; a broken answer refused', async () => {
    const bytes = new Uint8Array([0x4f, 0x67, 0x67, 0x53, 0, 2, 1]);
    const { api, calls } = fakeApi({ getRecording: () => ok({ mimeType: 'audio/ogg', data: Buffer.from(bytes).toString('base64') }) });
    const audio = await new RecordingActions({ api }).teamRecording('in:wacid.1');
    if (!audio.ok) throw new Error(audio.error.message);
    expect(audio.value.type).toBe('audio/ogg');
    expect(new Uint8Array(await audio.value.arrayBuffer())).toEqual(bytes);
    expect(calls).toEqual([{ name: 'getRecording', params: { localId: 'in:wacid.1' } }]);
    const refused = await new RecordingActions({ api: fakeApi({ getRecording: () => err('not_found', "The team's recording is not ready yet") }).api }).teamRecording('in:wacid.1');
    expect(refused).toEqual({ ok: false, error: { code: 'not_found', message: "The team's recording is not ready yet" } });
    const broken = await new RecordingActions({ api: fakeApi({ getRecording: () => ok({ mimeType: 'audio/ogg', data: '%%' }) }).api }).teamRecording('x');
    expect(broken.ok).toBe(false);
  });

  test('"Record" and "Stop recording": setRecording for the call, answered with whether it records now; a refusal as it came', async () => {
    const { api, calls } = fakeApi({ setRecording: ({ recording }) => ok({ recording }) });
    const actions = new RecordingActions({ api });
    await expect(actions.setRecording('in:wacid.1', true)).resolves.toEqual({ ok: true, value: true });
    await expect(actions.setRecording('in:wacid.1', false)).resolves.toEqual({ ok: true, value: false });
    expect(calls).toEqual([
      { name: 'setRecording', params: { localId: 'in:wacid.1', recording: true } },
      { name: 'setRecording', params: { localId: 'in:wacid.1', recording: false } },
    ]);
    const refused = await new RecordingActions({ api: fakeApi({ setRecording: () => err('unauthorized', 'Not an agent in this call') }).api }).setRecording('in:wacid.1', true);
    expect(refused).toEqual({ ok: false, error: { code: 'unauthorized', message: 'Not an agent in this call' } });
  });
});

describe('the transcript', () => {
  const SEGMENTS = [
    { speaker: 'Business', channel: 0 as const, start: 0.4, end: 2.1, text: 'This call is recorded.', confidence: 0.9 },
    { speaker: 'Customer', channel: 1 as const, start: 3, end: 5.5, text: 'Hello, I have a question.' },
  ];

  test('its segments as they came, and the agent\'s name from the wallboard when it was read: the team is not asked', async () => {
    const { api, calls } = fakeApi({ getTranscript: () => ok({ segments: SEGMENTS }) });
    const transcript = await new RecordingActions({ api, ownName: () => 'Rosa Diaz' }).transcript('in:wacid.1');
    expect(transcript).toEqual({ ok: true, value: { segments: SEGMENTS, agentName: 'Rosa Diaz' } });
    expect(calls).toEqual([{ name: 'getTranscript', params: { localId: 'in:wacid.1' } }]);
  });

  test('without a wallboard, the agent\'s name is the team\'s own entry; none when the team cannot be read', async () => {
    const team = [
      { agentId: 'a1', name: 'Jake Peralta', presence: 'available' },
      { agentId: 'a2', name: 'Rosa Diaz', presence: 'on_call', self: true },
    ];
    const known = await new RecordingActions({ api: fakeApi({ getTranscript: () => ok({ segments: SEGMENTS }), getTeam: () => ok(team as never) }).api }).transcript('l');
    expect(known.ok && known.value.agentName).toBe('Rosa Diaz');
    const unknown = await new RecordingActions({ api: fakeApi({ getTranscript: () => ok({ segments: SEGMENTS }), getTeam: () => err('not_available', 'No relay') }).api }).transcript('l');
    expect(unknown).toEqual({ ok: true, value: { segments: SEGMENTS, agentName: undefined } });
  });

  test('a refusal comes as it was; a document that breaks the schema is refused, not shown', async () => {
    const refused = await new RecordingActions({ api: fakeApi({ getTranscript: () => err('not_found', 'No transcript for this call') }).api }).transcript('l');
    expect(refused).toEqual({ ok: false, error: { code: 'not_found', message: 'No transcript for this call' } });
    for (const answer of [{}, { segments: [{ channel: 2, speaker: 'X', start: 0, end: 1, text: '' }] }, { segments: [{ channel: 0, speaker: 'X', start: -1, end: 1, text: '' }] }]) {
      const broken = await new RecordingActions({ api: fakeApi({ getTranscript: () => ok(answer as never) }).api }).transcript('l');
      expect(broken.ok, JSON.stringify(answer)).toBe(false);
    }
  });
});

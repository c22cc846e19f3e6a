// "Play voicemail"'s domain on a fake host: the audio handed over as base64 becomes a Blob of its
// bytes and type, a refusal comes as it was, an answer that is not audio in base64 is refused, and
// the player is told the calls' speaker.
import { describe, expect, test } from 'vitest';
import { err, ok } from '../../../shared/result';
import { VoicemailActions } from '../../../renderer/app/voicemail-actions';
import { fakeApi } from './fake-api';

describe('the voicemail\'s audio', () => {
  test('the base64 the host hands over becomes a Blob of those bytes and that type; the call and media id go with the command', async () => {
    const bytes = new Uint8Array([0x4f, 0x67, 0x67, 0x53, 0, 2, 255, 128]);
    const { api, calls } = fakeApi({ getVoicemail: () => ok({ mimeType: 'audio/ogg; codecs=opus', data: Buffer.from(bytes).toString('base64') }) });
    const audio = await new VoicemailActions({ api }).audio({ callId: 'wacid.1', mediaId: 'media-1' });
    if (!audio.ok) throw new Error(audio.error.message);
    expect(audio.value.type).toBe('audio/ogg; codecs=opus');
    expect(new Uint8Array(await audio.value.arrayBuffer())).toEqual(bytes);
    expect(calls).toEqual([{ name: 'getVoicemail', params: { callId: 'wacid.1', mediaId: 'media-1' } }]);
    await new VoicemailActions({ api }).audio({ callId: 'wacid.2' });
    expect(calls[1]?.params).toEqual({ callId: 'wacid.2' });
  });

  test('a refusal comes as it was; an answer that is not audio in base64 is refused, never played', async () => {
    const refused = await new VoicemailActions({ api: fakeApi({ getVoicemail: () => err('not_found', 'No voicemail for call wacid.1') }).api }).audio({ callId: 'wacid.1' });
    expect(refused).toEqual({ ok: false, error: { code: 'not_found', message: 'No voicemail for call wacid.1' } });
    for (const answer of [{ mimeType: 'audio/ogg', data: 'not base64!' }, { mimeType: '', data: 'AAAA' }, { data: 'AAAA' }, { mimeType: 'audio/ogg', data: '' }]) {
      const audio = await new VoicemailActions({ api: fakeApi({ getVoicemail: () => ok(answer as { mimeType: string; data: string }) }).api }).audio({ callId: 'wacid.1' });
      expect(audio.ok, JSON.stringify(answer)).toBe(false);
    }
  });

  test('plays on the calls\' speaker, the system default without one', () => {
    const { api } = fakeApi({});
    expect(new VoicemailActions({ api, speaker: () => 'headset-1' }).speakerId()).toBe('headset-1');
    expect(new VoicemailActions({ api }).speakerId()).toBe('');
  });
});

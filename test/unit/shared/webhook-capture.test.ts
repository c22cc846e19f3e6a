// The service's own recording and transcript of a call in the relay's events (protocol.md "What the
// service added in 2026"): a `calls` item `call_recording_available` or `call_transcription_available`
// becomes `call.capture_available` with the file's media id, url, mime type and hash. It has no
// direction and no SDP and is never a call of its own. Payloads are written as the service sends
// them, as plain JSON.
import { describe, expect, it } from 'vitest';
import { normaliseWebhook, normaliseWebhookDetailed } from '../../../shared/webhook';

const CALL_ID = 'wacid.HBgLMTY1MDM4Nzk0MzkVAgARGBIyRkQwMjc0OTQ3Mjk4MTA1RDQA';
const T = '1764000000';
const T_MS = 1_764_000_000_000;
const RECORDING_URL = 'https://lookaside.fbsbx.example/whatsapp_business/attachments/?mid=1207335570923245&ext=1764000300&hash=ATu9';
const TRANSCRIPT_URL = 'https://lookaside.fbsbx.example/whatsapp_business/attachments/?mid=1207335570923246&ext=1764000300&hash=ATv0';

/** A `calls` webhook as the service sends it, with the given items. */
function callsWebhook(...calls: Record<string, unknown>[]): unknown {
  return {
    object: 'chatapp_business_account',
    entry: [
      {
        id: '102290129340398',
        changes: [{ field: 'calls', value: { messaging_product: 'chatapp', metadata: { display_phone_number: '15550001111', phone_number_id: '106540352242922' }, calls } }],
      },
    ],
  };
}

function recordingItem(audio: Record<string, unknown> = {}, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    id: CALL_ID,
    timestamp: T,
    event: 'call_recording_available',
    call_recording: { type: 'audio', audio: { id: '1207335570923245', sha256: 'k3Yb4tPq1V6nI+Xw3bGzq0T2y5C8RjwM0bq7o2cR5wE=', mime_type: 'audio/ogg; codecs=opus', url: RECORDING_URL, ...audio } },
    ...extra,
  };
}

function transcriptItem(document: Record<string, unknown> = {}, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    id: CALL_ID,
    timestamp: T,
    event: 'call_transcription_available',
    call_transcript: { document: { id: '1207335570923246', sha256: 'Q2hhbm5lbDAgaXMgdGhlIGJ1c2luZXNzLCAxIHRoZSBjdXN0b21lcg==', mime_type: 'application/json', url: TRANSCRIPT_URL, ...document } },
    ...extra,
  };
}

describe('the service’s recording and transcript in the relay’s events', () => {
  it('makes a recording item call.capture_available with kind "recording" and the audio’s id, url, mime type and hash', () => {
    expect(normaliseWebhookDetailed(callsWebhook(recordingItem()))).toEqual({
      events: [
        {
          type: 'call.capture_available',
          callId: CALL_ID,
          kind: 'recording',
          mediaId: '1207335570923245',
          url: RECORDING_URL,
          mimeType: 'audio/ogg; codecs=opus',
          sha256: 'k3Yb4tPq1V6nI+Xw3bGzq0T2y5C8RjwM0bq7o2cR5wE=',
          timestamp: T_MS,
        },
      ],
      skipped: [],
    });
  });

  it('makes a transcript item call.capture_available with kind "transcript" and the document’s id, url, mime type and hash', () => {
    expect(normaliseWebhookDetailed(callsWebhook(transcriptItem()))).toEqual({
      events: [
        {
          type: 'call.capture_available',
          callId: CALL_ID,
          kind: 'transcript',
          mediaId: '1207335570923246',
          url: TRANSCRIPT_URL,
          mimeType: 'application/json',
          sha256: 'Q2hhbm5lbDAgaXMgdGhlIGJ1c2luZXNzLCAxIHRoZSBjdXN0b21lcg==',
          timestamp: T_MS,
        },
      ],
      skipped: [],
    });
  });

  it('reads both items of one webhook, after a terminate in the same list, in order, and never as a call that rings', () => {
    const terminate = { id: CALL_ID, from: '447700900123', to: '15550001111', event: 'terminate', timestamp: T, direction: 'USER_INITIATED', status: 'COMPLETED' };
    const events = normaliseWebhook(callsWebhook(terminate, recordingItem(), transcriptItem()));
    expect(events.map((e) => [e.type, 'kind' in e ? e.kind : undefined])).toEqual([
      ['call.terminated', undefined],
      ['call.capture_available', 'recording'],
      ['call.capture_available', 'transcript'],
    ]);
    expect(events.some((e) => e.type === 'call.incoming' || e.type === 'call.answered')).toBe(false);
  });

  it('accepts the bare value and the event name in any case; leaves out a hash or mime type that is not a string', () => {
    const bare = { calls: [recordingItem({ sha256: 42_000, mime_type: { not: 'a string' } }, { event: 'CALL_RECORDING_AVAILABLE' })] };
    expect(normaliseWebhookDetailed(bare)).toEqual({
      events: [{ type: 'call.capture_available', callId: CALL_ID, kind: 'recording', mediaId: '1207335570923245', url: RECORDING_URL, sha256: '42000', timestamp: T_MS }],
      skipped: [],
    });
    const noExtras = normaliseWebhook(callsWebhook(transcriptItem({ sha256: undefined, mime_type: undefined })));
    expect(noExtras).toEqual([{ type: 'call.capture_available', callId: CALL_ID, kind: 'transcript', mediaId: '1207335570923246', url: TRANSCRIPT_URL, timestamp: T_MS }]);
  });

  it('skips an item without the file’s id or url, or without a timestamp, naming where; the other items still count', () => {
    const { events, skipped } = normaliseWebhookDetailed(
      callsWebhook(
        recordingItem({ url: undefined }),
        transcriptItem({ id: '  ' }),
        recordingItem({}, { timestamp: undefined }),
        { id: CALL_ID, timestamp: T, event: 'call_recording_available', call_recording: { type: 'audio' } },
        // The transcript's file is the document, not an audio: a recording's shape under the transcript's event is no file.
        { id: CALL_ID, timestamp: T, event: 'call_transcription_available', call_transcript: { audio: { id: '1', url: TRANSCRIPT_URL } } },
        transcriptItem(),
      ),
    );
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ type: 'call.capture_available', kind: 'transcript', mediaId: '1207335570923246' });
    expect(skipped.map((s) => s.path)).toEqual([
      'entry[0].changes[0].value.calls[0].call_recording.audio.url',
      'entry[0].changes[0].value.calls[1].call_transcript.document.id',
      'entry[0].changes[0].value.calls[2].timestamp',
      'entry[0].changes[0].value.calls[3].call_recording.audio',
      'entry[0].changes[0].value.calls[4].call_transcript.document',
    ]);
    for (const s of skipped) expect(s.reason).not.toBe('');
  });

  it('reads a recording with a file under the transcript’s member as nothing: each event reads its own member', () => {
    const crossed = { id: CALL_ID, timestamp: T, event: 'call_recording_available', call_transcript: { document: { id: '1', url: RECORDING_URL } } };
    const { events, skipped } = normaliseWebhookDetailed(callsWebhook(crossed));
    expect(events).toEqual([]);
    expect(skipped.map((s) => s.path)).toEqual(['entry[0].changes[0].value.calls[0].call_recording.audio']);
  });
});

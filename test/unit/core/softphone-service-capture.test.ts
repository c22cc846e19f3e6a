// The service's own recording and transcription through the service, as the window reaches it:
// Settings → saveServiceCapture (kept beside the other settings, in every settings answer and push,
// refused naming the field), what accept and initiate then carry to the gateway (never reject or
// terminate), and a call's recording and transcript kept with its recent-calls entry when the
// service says they are ready, played with getServiceRecording and read with getTranscript. Real
// servers on 127.0.0.1 throughout.
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { mediaFileName } from '../../../electron/core/media-files';
import type { PushMessage } from '../../../shared/api';
import { text } from '../../../shared/i18n/text';
import { configureLogging } from '../../../shared/log';
import { DEFAULT_SERVICE_CAPTURE, type ServiceCaptureSettings } from '../../../shared/service-capture';
import type { PublicSettings } from '../../../shared/settings';
import { ANSWER_SDP, DIAL_OFFER_SDP, OFFER_SDP } from '../../fixtures/sdp';
import { happyGateway, initiated, type FakeGateway } from './fake-gateway';
import { VOICE_MIME, voiceBytes } from './fake-media';
import { closeDesks, historyOf, mediaDesk, until, type Desk } from './media-desk';

configureLogging({ sink: () => undefined });

const API_KEY = 'account-api-key-capture-1';
const ASKED: ServiceCaptureSettings = { record: true, transcribe: true, purpose: 'Quality and training', language: 'en_GB' };
const REQUEST = { status: 'ENABLED', purpose: 'Quality and training', announcement_language: 'en_GB' };

afterEach(closeDesks);

/** Alice's app on an account: a relay, a gateway with call control and media. */
const desk = (): Promise<Desk> => mediaDesk({ apiKey: API_KEY, dirPrefix: 'softphone-capture-service-', route: (req) => (req.path.endsWith('/initiate') ? initiated('wacid.out-c1') : happyGateway(req)) });

const bodiesOf = (gateway: FakeGateway, action: string): unknown[] => gateway.requests.filter((r) => r.path.endsWith(`/calls/${action}`)).map((r) => r.body);

/** A call to Alice that she answers and hangs up: its entry in recent calls. */
async function answered(d: Desk, callId: string): Promise<void> {
  d.relay.send({ type: 'call.incoming', callId, from: '447400123456', name: 'Ada Lovelace', sdp: OFFER_SDP, timestamp: Date.now() }, ['alice']);
  await until(`${callId} rings`, () => d.pushes.some((p) => p.name === 'callChanged' && p.payload.callId === callId && p.payload.phase === 'ringing'));
  expect(await d.app.handle('answerCall', { localId: `in:${callId}`, sdp: ANSWER_SDP })).toEqual({ ok: true, value: null });
  expect(await d.app.handle('hangUp', { localId: `in:${callId}` })).toEqual({ ok: true, value: null });
  await until(`${callId} is in recent calls`, () => historyOf(d.pushes, callId) !== undefined);
}

const settingsPushes = (pushes: PushMessage[]): PublicSettings[] =>
  pushes.filter((p): p is Extract<PushMessage, { name: 'settingsChanged' }> => p.name === 'settingsChanged').map((p) => p.payload);


describe('Settings → the service’s recording and transcription', () => {
  it('starts with nothing asked, saves beside the other settings, pushes settingsChanged and survives a restart', async () => {
    const d = await desk();
    expect(await d.app.handle('getSnapshot', {})).toMatchObject({ ok: true, value: { settings: { serviceCapture: DEFAULT_SERVICE_CAPTURE } } });

    const saved = await d.app.handle('saveServiceCapture', { serviceCapture: { ...ASKED, purpose: '  Quality and training ' } });
    expect(saved).toEqual({ ok: true, value: expect.objectContaining({ mode: 'account', serviceCapture: ASKED, network: expect.objectContaining({ servers: [] }) }) });
    expect(settingsPushes(d.pushes)).toContainEqual(saved.ok && saved.value);
    expect(JSON.parse(await readFile(join(d.dataDir, 'service-capture.json'), 'utf8'))).toEqual(ASKED);

    await d.app.close();
    const app = await d.open();
    expect(await app.handle('getSnapshot', {})).toMatchObject({ ok: true, value: { settings: { serviceCapture: ASKED } } });
  });

  it('refuses a missing or over-long purpose naming the field, and changes nothing', async () => {
    const d = await desk();
    const before = settingsPushes(d.pushes).length;
    const missing = await d.app.handle('saveServiceCapture', { serviceCapture: { ...ASKED, transcribe: false, purpose: ' ' } });
    expect(missing).toMatchObject({ ok: false, error: { code: 'invalid_input', field: 'serviceCapture.purpose' } });
    const long = await d.app.handle('saveServiceCapture', { serviceCapture: { ...ASKED, purpose: 'p'.repeat(251) } });
    expect(long).toMatchObject({ ok: false, error: { code: 'invalid_input', field: 'serviceCapture.purpose', message: expect.stringContaining('250') } });
    expect(settingsPushes(d.pushes).slice(before).filter((s) => s.serviceCapture.record)).toEqual([]);
    expect(await readdir(d.dataDir)).not.toContain('service-capture.json');
    // Nothing asked for: no purpose needed.
    expect(await d.app.handle('saveServiceCapture', { serviceCapture: DEFAULT_SERVICE_CAPTURE })).toMatchObject({ ok: true, value: { serviceCapture: DEFAULT_SERVICE_CAPTURE } });
    expect(await readdir(d.dataDir)).toContain('service-capture.json');
  });

  it('a damaged file is kept aside and nothing is asked of the service', async () => {
    const d = await desk();
    expect((await d.app.handle('saveServiceCapture', { serviceCapture: ASKED })).ok).toBe(true);
    await d.app.close();
    await writeFile(join(d.dataDir, 'service-capture.json'), '{"record": tru');
    const app = await d.open();
    expect(await app.handle('getSnapshot', {})).toMatchObject({ ok: true, value: { settings: { serviceCapture: DEFAULT_SERVICE_CAPTURE } } });
    expect((await readdir(d.dataDir)).filter((f) => f.startsWith('service-capture.json'))).toEqual([expect.stringMatching(/^service-capture\.json\..+/)]);
  });
});

describe('accept and initiate', () => {
  it('carry what the settings ask for, from the next call on; reject and terminate never do', async () => {
    const d = await desk();
    await answered(d, 'wacid.c0');
    expect((await d.app.handle('saveServiceCapture', { serviceCapture: ASKED })).ok).toBe(true);
    await answered(d, 'wacid.c1');
    const dialed = await d.app.handle('startCall', { localId: 'out:c1', to: '+44 7400 123456', sdp: DIAL_OFFER_SDP });
    expect(dialed).toMatchObject({ ok: true, value: { callId: 'wacid.out-c1' } });
    expect(await d.app.handle('hangUp', { localId: 'out:c1' })).toEqual({ ok: true, value: null });
    d.relay.send({ type: 'call.incoming', callId: 'wacid.c2', from: '447400123456', sdp: OFFER_SDP, timestamp: Date.now() }, ['alice']);
    await until('wacid.c2 rings', () => d.pushes.some((p) => p.name === 'callChanged' && p.payload.callId === 'wacid.c2' && p.payload.phase === 'ringing'));
    expect(await d.app.handle('declineCall', { localId: 'in:wacid.c2' })).toEqual({ ok: true, value: null });
    await until('the calls end on the gateway', () => bodiesOf(d.gateway, 'terminate').length === 3 && bodiesOf(d.gateway, 'reject').length === 1);

    const accepts = bodiesOf(d.gateway, 'accept');
    expect(accepts).toEqual([
      expect.not.objectContaining({ recording: expect.anything() }),
      expect.objectContaining({ call_id: 'wacid.c1', recording: REQUEST, transcription: REQUEST }),
    ]);
    expect(accepts[0]).not.toHaveProperty('transcription');
    expect(bodiesOf(d.gateway, 'initiate')).toEqual([expect.objectContaining({ action: 'connect', recording: REQUEST, transcription: REQUEST })]);
    for (const body of [...bodiesOf(d.gateway, 'terminate'), ...bodiesOf(d.gateway, 'reject')]) expect(Object.keys(body as object).sort()).toEqual(['action', 'call_id', 'messaging_product']);

    // Only the recording asked for: the transcription is left out.
    expect((await d.app.handle('saveServiceCapture', { serviceCapture: { ...ASKED, transcribe: false } })).ok).toBe(true);
    await answered(d, 'wacid.c3');
    const last = bodiesOf(d.gateway, 'accept').at(-1);
    expect(last).toMatchObject({ call_id: 'wacid.c3', recording: REQUEST });
    expect(last).not.toHaveProperty('transcription');
  });
});

/** The url the service hands out for a media id now (the test's own lookup, as the service's event carries one). */
async function urlOf(d: Desk, mediaId: string): Promise<string> {
  const res = await fetch(`${d.gateway.baseUrl}/chatapp/media/${mediaId}`, { headers: { 'API-KEY': API_KEY } });
  return ((await res.json()) as { url: string }).url;
}

const lookups = (d: Desk, mediaId: string): number => d.gateway.requests.filter((r) => r.path === `/restapi/v1/chatapp/media/${mediaId}`).length;

const TRANSCRIPT = {
  transcript: {
    segments: [
      { speaker: 'Customer', channel: 1, start: 4.2, end: 6, text: 'I would like to change my booking', confidence: 0.92, words: [{ word: 'I', start: 4.2, end: 4.3 }] },
      { speaker: 'Business', channel: 0, start: 0.5, end: 3.9, text: 'Hello, how can I help?', confidence: 0.88, words: [] },
    ],
  },
};

async function ready(d: Desk, callId: string, kind: 'recording' | 'transcript', mediaId: string, at = Date.now(), url?: string): Promise<void> {
  d.relay.send(
    {
      type: 'call.capture_available',
      callId,
      kind,
      mediaId,
      url: url ?? (await urlOf(d, mediaId)),
      mimeType: kind === 'recording' ? VOICE_MIME : 'application/json',
      timestamp: at,
    },
    ['alice'],
  );
}

describe('the service’s recording and transcript of a call', () => {
  it('mark the call’s entry at once, are fetched from the url that came with them and kept, then play and read', async () => {
    const d = await desk();
    const audio = voiceBytes(40_000, 31);
    d.library.files.set('media-rec-1', { bytes: audio, mimeType: VOICE_MIME });
    d.library.files.set('media-tr-1', { bytes: Buffer.from(JSON.stringify(TRANSCRIPT)), mimeType: 'application/json' });
    await answered(d, 'wacid.cap-1');
    const at = Date.now();
    await ready(d, 'wacid.cap-1', 'recording', 'media-rec-1', at);
    await ready(d, 'wacid.cap-1', 'transcript', 'media-tr-1', at);
    const before = [lookups(d, 'media-rec-1'), lookups(d, 'media-tr-1')];

    await until('marked', () => historyOf(d.pushes, 'wacid.cap-1')?.serviceRecording !== undefined && historyOf(d.pushes, 'wacid.cap-1')?.transcript !== undefined);
    const first = d.pushes.filter((p) => p.name === 'historyChanged').map((p) => historyOf([p], 'wacid.cap-1')?.serviceRecording).find((m) => m !== undefined);
    expect(first).toEqual({ mediaId: 'media-rec-1', at, saved: false });
    await until('kept', () => historyOf(d.pushes, 'wacid.cap-1')?.serviceRecording?.saved === true && historyOf(d.pushes, 'wacid.cap-1')?.transcript?.saved === true);
    expect(historyOf(d.pushes, 'wacid.cap-1')).toMatchObject({ serviceRecording: { mediaId: 'media-rec-1', at, saved: true }, transcript: { mediaId: 'media-tr-1', at, saved: true } });
    // The url was enough: the media ids were not looked up again.
    expect([lookups(d, 'media-rec-1'), lookups(d, 'media-tr-1')]).toEqual(before);
    const name = mediaFileName('wacid.cap-1');
    expect(await readdir(join(d.dataDir, 'recordings'))).toEqual(expect.arrayContaining([`${name}.ogg`, `${name}.json`]));
    expect(await readdir(join(d.dataDir, 'transcripts'))).toEqual(expect.arrayContaining([`${name}.data.json`, `${name}.json`]));

    d.library.files.clear();
    expect(await d.app.handle('getServiceRecording', { localId: 'in:wacid.cap-1' })).toEqual({ ok: true, value: { mimeType: VOICE_MIME, data: audio.toString('base64') } });
    expect(await d.app.handle('getTranscript', { localId: 'in:wacid.cap-1' })).toEqual({
      ok: true,
      value: {
        segments: [
          { speaker: 'Business', channel: 0, start: 0.5, end: 3.9, text: 'Hello, how can I help?', confidence: 0.88 },
          { speaker: 'Customer', channel: 1, start: 4.2, end: 6, text: 'I would like to change my booking', confidence: 0.92 },
        ],
      },
    });
    // The same event again changes nothing.
    await ready(d, 'wacid.cap-1', 'recording', 'media-rec-1', at, 'http://127.0.0.1:9/never');
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(historyOf(d.pushes, 'wacid.cap-1')?.serviceRecording).toEqual({ mediaId: 'media-rec-1', at, saved: true });
  });

  it('look the media id up again when the url lapsed, and wait for a call whose entry is not there yet', async () => {
    const d = await desk();
    const audio = voiceBytes(9_000, 32);
    d.library.files.set('media-rec-2', { bytes: audio, mimeType: VOICE_MIME });
    d.library.expiredUrls = 1;
    const lapsed = await urlOf(d, 'media-rec-2');
    d.relay.send({ type: 'call.incoming', callId: 'wacid.cap-2', from: '447400123456', sdp: OFFER_SDP, timestamp: Date.now() }, ['alice']);
    await until('rings', () => d.pushes.some((p) => p.name === 'callChanged' && p.payload.callId === 'wacid.cap-2' && p.payload.phase === 'ringing'));
    expect(await d.app.handle('answerCall', { localId: 'in:wacid.cap-2', sdp: ANSWER_SDP })).toEqual({ ok: true, value: null });
    // Before the call is in recent calls: held.
    await ready(d, 'wacid.cap-2', 'recording', 'media-rec-2', Date.now(), lapsed);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(lookups(d, 'media-rec-2')).toBe(1);
    expect(await d.app.handle('hangUp', { localId: 'in:wacid.cap-2' })).toEqual({ ok: true, value: null });
    await until('kept', () => historyOf(d.pushes, 'wacid.cap-2')?.serviceRecording?.saved === true);
    expect(lookups(d, 'media-rec-2')).toBe(2);
    expect(await d.app.handle('getServiceRecording', { localId: 'in:wacid.cap-2' })).toEqual({ ok: true, value: { mimeType: VOICE_MIME, data: audio.toString('base64') } });
    // A call that has none.
    expect(await d.app.handle('getTranscript', { localId: 'in:wacid.cap-2' })).toMatchObject({ ok: false, error: { code: 'not_found', text: text('capture.noTranscript', { call: 'in:wacid.cap-2' }) } });
    expect(await d.app.handle('getServiceRecording', { localId: 'in:wacid.none' })).toMatchObject({ ok: false, error: { code: 'not_found', text: text('capture.noRecording', { call: 'in:wacid.none' }) } });
  });

  it('a failed fetch is said on the entry and tried again; a transcript that is no transcript is a clear error', async () => {
    const d = await desk();
    d.library.files.set('media-tr-3', { bytes: Buffer.from('{"transcript": {"segments": [{"speaker": "Business", "channel": 7}]}}'), mimeType: 'application/json' });
    await answered(d, 'wacid.cap-3');
    d.library.failingLookups = 1;
    await ready(d, 'wacid.cap-3', 'transcript', 'media-tr-3', Date.now(), 'http://127.0.0.1:9/gone');
    await until('said', () => historyOf(d.pushes, 'wacid.cap-3')?.transcript?.fetchError !== undefined);
    expect(historyOf(d.pushes, 'wacid.cap-3')?.transcript).toMatchObject({ mediaId: 'media-tr-3', saved: false, fetchError: expect.any(String) });
    await until('kept on the next try (2 s later)', () => historyOf(d.pushes, 'wacid.cap-3')?.transcript?.saved === true, 6_000);
    expect(historyOf(d.pushes, 'wacid.cap-3')?.transcript).not.toHaveProperty('fetchError');

    const read = await d.app.handle('getTranscript', { localId: 'in:wacid.cap-3' });
    expect(read).toMatchObject({ ok: false, error: { code: 'gateway_unreachable', text: text('capture.badTranscript'), detail: expect.stringContaining('transcript.segments.0') } });
    d.library.files.set('media-tr-4', { bytes: Buffer.from('not json'), mimeType: 'application/json' });
    await answered(d, 'wacid.cap-4');
    await ready(d, 'wacid.cap-4', 'transcript', 'media-tr-4');
    await until('kept', () => historyOf(d.pushes, 'wacid.cap-4')?.transcript?.saved === true);
    expect(await d.app.handle('getTranscript', { localId: 'in:wacid.cap-4' })).toMatchObject({ ok: false, error: { code: 'gateway_unreachable', text: text('capture.badTranscript') } });
  }, 15_000);

  it('not kept when the app closes, are fetched at its next start', async () => {
    const d = await desk();
    const audio = voiceBytes(5_000, 35);
    d.library.files.set('media-rec-5', { bytes: audio, mimeType: VOICE_MIME });
    await answered(d, 'wacid.cap-5');
    d.library.failingLookups = 1;
    await ready(d, 'wacid.cap-5', 'recording', 'media-rec-5', Date.now(), 'http://127.0.0.1:9/gone');
    await until('the fetch failed', () => historyOf(d.pushes, 'wacid.cap-5')?.serviceRecording?.fetchError !== undefined);
    await d.app.close();
    const app = await d.open();
    await until('kept at start', () => historyOf(d.pushes, 'wacid.cap-5')?.serviceRecording?.saved === true);
    expect(await app.handle('getServiceRecording', { localId: 'in:wacid.cap-5' })).toEqual({ ok: true, value: { mimeType: VOICE_MIME, data: audio.toString('base64') } });
  });
});

// The service's own recording and transcript (sandbox/REFERENCE.md "The service's recording and
// transcript"; protocol.md "What the service added in 2026"): accept and connect ask for them with a
// purpose the gateway checks; the customer's phone plays the notice toward the business first; a few
// seconds after the terminate come call_recording_available and call_transcription_available, whose
// urls serve an Ogg Opus file of two channels and a JSON transcript. The business is a real werift
// peer sending a 440 Hz tone; ffmpeg decodes the recording.
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import { BUSINESS_PLACEHOLDER, CUSTOMER_PLACEHOLDER } from '../../../sandbox/call-recorder';
import type { SandboxServer } from '../../../sandbox/server';
import { loadServiceNotice, noticeMs, SERVICE_NOTICE_CHIME_HZ, SERVICE_NOTICE_TEXT } from '../../../sandbox/service-notice';
import { toneAmplitude } from '../../../sandbox/tone-probe';
import type { SandboxCallReport } from '../../../shared/sandbox';
import { transcriptDocumentSchema } from '../../../shared/service-capture';
import type { CallRecordingAvailableItem, CallTranscriptionAvailableItem } from '../../../shared/webhook';
import { BusinessPeer } from './business-peer';
import { API_KEY, callItem, control, eventually, gatewayPost, signatureValid, startTestSandbox, startWebhookReceiver, type ReceivedWebhook, type WebhookReceiver } from './harness';

const run = promisify(execFile);
const CAPTURE_READY_MS = 400;
const RATE = 48_000;

let relay: WebhookReceiver;
let sandbox: SandboxServer;
let dir: string;
/** Added to the media store's clock: a test moves it past a url's 5 minutes. */
let clockOffsetMs = 0;
const closers: (() => Promise<void>)[] = [];

beforeAll(async () => {
  relay = await startWebhookReceiver();
  sandbox = await startTestSandbox(relay, { timeouts: { captureReadyMs: CAPTURE_READY_MS }, mediaStore: { clock: () => Date.now() + clockOffsetMs } });
  dir = await mkdtemp(join(tmpdir(), 'softphone-capture-'));
});
afterEach(async () => {
  clockOffsetMs = 0;
  await Promise.all(closers.splice(0).map((c) => c()));
});
afterAll(async () => {
  await sandbox?.close();
  await relay?.close();
  await rm(dir, { recursive: true, force: true });
});

const ASKED = { status: 'ENABLED', purpose: 'quality assurance', announcement_language: 'es_MX' };

type CaptureItem = CallRecordingAvailableItem | CallTranscriptionAvailableItem;

/** The capture items the relay received for a call, each with its webhook. */
function captureItems(callId: string): { item: CaptureItem; hook: ReceivedWebhook }[] {
  const out: { item: CaptureItem; hook: ReceivedWebhook }[] = [];
  for (const hook of relay.received) {
    for (const change of hook.body.entry[0]!.changes) {
      for (const raw of (change.value.calls ?? []) as unknown as CaptureItem[]) {
        if (raw.id === callId && (raw.event === 'call_recording_available' || raw.event === 'call_transcription_available')) out.push({ item: raw, hook });
      }
    }
  }
  return out;
}

const report = async (callId: string) => (await control<SandboxCallReport>(sandbox, `/control/calls/${callId}`)).body;

/** An incoming call the business answers with `extra` on the accept; the business peer keeps what it hears. */
async function answeredCall(number: string, extra: Record<string, unknown>): Promise<{ callId: string; business: BusinessPeer; acceptedAt: number }> {
  const callId = (await control<{ callId: string }>(sandbox, '/control/incoming', { number })).body.callId;
  const { call } = await eventually('the connect webhook', () => callItem(relay, callId, 'connect'));
  const business = new BusinessPeer({ keepHeard: true });
  closers.push(() => business.close());
  const answer = await business.answer(call.session!.sdp);
  const acceptedAt = Date.now();
  const accepted = await gatewayPost(sandbox, 'accept', { messaging_product: 'chatapp', call_id: callId, action: 'accept', session: { sdp_type: 'answer', sdp: answer }, ...extra });
  expect(accepted.status).toBe(200);
  return { callId, business, acceptedAt };
}

const terminate = async (callId: string) => expect((await gatewayPost(sandbox, 'terminate', { messaging_product: 'chatapp', call_id: callId, action: 'terminate' })).status).toBe(200);

/** The file behind an event's url, as the app fetches it (the API key on the gateway's origin). */
async function download(url: string): Promise<{ status: number; bytes: Buffer; mimeType: string | null }> {
  const res = await fetch(url, { headers: { 'API-KEY': API_KEY } });
  return { status: res.status, bytes: Buffer.from(await res.arrayBuffer()), mimeType: res.headers.get('content-type') };
}

/** ffmpeg's reading of an Ogg Opus file: its stream, and each channel's samples at 48 kHz. */
async function decodeStereo(bytes: Buffer): Promise<{ codec: string; channels: number; sampleRate: number; left: Int16Array; right: Int16Array }> {
  const path = join(dir, `${createHash('sha256').update(bytes).digest('hex')}.opus`);
  await writeFile(path, bytes);
  const probe = await run('ffprobe', ['-v', 'error', '-show_entries', 'stream=codec_name,channels,sample_rate', '-of', 'json', path]);
  const stream = (JSON.parse(probe.stdout) as { streams: { codec_name: string; channels: number; sample_rate: string }[] }).streams[0]!;
  const { stdout, stderr } = await run('ffmpeg', ['-v', 'error', '-i', path, '-f', 's16le', '-ac', '2', '-ar', '48000', '-'], { encoding: 'buffer', maxBuffer: 64 * 1024 * 1024 });
  expect(stderr.toString('utf8')).toBe('');
  const frames = stdout.length / 4;
  const left = new Int16Array(frames);
  const right = new Int16Array(frames);
  for (let i = 0; i < frames; i++) {
    left[i] = stdout.readInt16LE(i * 4);
    right[i] = stdout.readInt16LE(i * 4 + 2);
  }
  return { codec: stream.codec_name, channels: stream.channels, sampleRate: Number(stream.sample_rate), left, right };
}

function rms(samples: Int16Array): number {
  let squares = 0;
  for (const s of samples) squares += (s / 32768) ** 2;
  return samples.length === 0 ? 0 : Math.sqrt(squares / samples.length);
}

/** The first stretch of `samples` louder than silence: where a sound starts. */
function firstSound(samples: Int16Array): number {
  const block = RATE / 50;
  for (let at = 0; at + block <= samples.length; at += block) if (rms(samples.subarray(at, at + block)) > 0.01) return at;
  return -1;
}

describe('what accept and connect ask for', () => {
  const refused: [string, string, Record<string, unknown>, string][] = [
    ['a recording without a purpose', 'accept', { recording: { status: 'ENABLED', announcement_language: 'en_US' } }, 'recording.purpose'],
    ['a recording with an empty purpose', 'accept', { recording: { ...ASKED, purpose: '' } }, 'recording.purpose'],
    ['a transcription whose purpose is 251 characters', 'accept', { transcription: { ...ASKED, purpose: 'x'.repeat(251) } }, 'transcription.purpose'],
    ['a recording on a connect whose purpose is 251 characters', 'initiate', { recording: { ...ASKED, purpose: 'x'.repeat(251) } }, 'recording.purpose'],
    ['a transcription on a connect without a purpose', 'initiate', { transcription: { status: 'ENABLED', announcement_language: 'en_US' } }, 'transcription.purpose'],
    ['a recording that is not ENABLED', 'accept', { recording: { ...ASKED, status: 'DISABLED' } }, 'recording.status'],
  ];
  test.each(refused)('%s is refused with error 100 naming the field, and nothing happens', async (_what, action, extra, field) => {
    const business = new BusinessPeer();
    closers.push(() => business.close());
    let body: Record<string, unknown>;
    let callId: string | undefined;
    if (action === 'accept') {
      callId = (await control<{ callId: string }>(sandbox, '/control/incoming', { number: '12025550171' })).body.callId;
      const { call } = await eventually('the connect webhook', () => callItem(relay, callId!, 'connect'));
      body = { messaging_product: 'chatapp', call_id: callId, action: 'accept', session: { sdp_type: 'answer', sdp: await business.answer(call.session!.sdp) }, ...extra };
    } else {
      body = { messaging_product: 'chatapp', to: '12025550172', action: 'connect', session: { sdp_type: 'offer', sdp: await business.offer() }, ...extra };
    }
    const answer = await gatewayPost(sandbox, action, body);
    expect(answer.status).toBe(400);
    const error = (answer.body as { error: { code: number; message: string; error_data: { details: string } } }).error;
    expect(error.code).toBe(100);
    expect(error.message.startsWith(`(#100) ${field}: `)).toBe(true);
    expect(error.error_data.details).toContain(field);
    if (callId !== undefined) {
      const after = await report(callId);
      expect(after.state).toBe('ringing');
      expect(after.capture).toBeUndefined();
      await gatewayPost(sandbox, 'reject', { messaging_product: 'chatapp', call_id: callId, action: 'reject' });
    }
  });

  test('a purpose of exactly 250 characters is taken, and the call report says what was asked', async () => {
    const purpose = 'p'.repeat(250);
    const { callId } = await answeredCall('12025550173', { recording: { ...ASKED, purpose }, transcription: { ...ASKED, announcement_language: 'pt_BR' } });
    const capture = (await report(callId)).capture!;
    expect(capture.recording).toEqual({ purpose, announcementLanguage: 'es_MX' });
    expect(capture.transcription).toEqual({ purpose: 'quality assurance', announcementLanguage: 'pt_BR' });
    expect(capture.notice).toMatchObject({ text: SERVICE_NOTICE_TEXT, spokenLanguage: 'en', askedLanguage: 'es_MX' });
    await terminate(callId);
  });

  test('a call that asked for neither has no capture and no event after its terminate', async () => {
    const { callId } = await answeredCall('12025550174', {});
    await eventually('media to flow', async () => (await report(callId)).framesHeard > 10);
    await terminate(callId);
    await new Promise((r) => setTimeout(r, CAPTURE_READY_MS + 600));
    expect((await report(callId)).capture).toBeUndefined();
    expect(captureItems(callId)).toEqual([]);
  });
});

describe('a call the service records and transcribes', () => {
  test('plays the notice to the business first, then sends both events after the terminate, whose urls serve the recording and the transcript', async () => {
    const notice = loadServiceNotice().notice;
    const { callId, business } = await answeredCall('12025550175', { recording: ASKED, transcription: ASKED });

    // The notice went out whole, and the customer counts as having heard it.
    const played = await eventually('the notice to be played', async () => {
      const capture = (await report(callId)).capture!;
      return capture.notice.endedAt !== undefined && capture;
    });
    expect(played.notice.heardByCustomer).toBe(true);
    expect(played.notice.endedAt! - played.notice.startedAt!).toBeGreaterThan(noticeMs(notice) - 500);

    // What the agent heard first is the notice's chime: both notes, then the words.
    const heard = business.heard();
    const start = firstSound(heard);
    expect(start).toBeGreaterThanOrEqual(0);
    const [low, high] = SERVICE_NOTICE_CHIME_HZ;
    expect(toneAmplitude(heard.subarray(start + RATE / 50, start + RATE / 5 - RATE / 50), RATE, low)).toBeGreaterThan(0.1);
    expect(toneAmplitude(heard.subarray(start + RATE / 5 + RATE / 50, start + (2 * RATE) / 5 - RATE / 50), RATE, high)).toBeGreaterThan(0.1);
    expect(rms(heard.subarray(start + (7 * RATE) / 10, start + 2 * RATE))).toBeGreaterThan(0.02);

    // A second of the call after the notice, then the business ends it.
    await new Promise((r) => setTimeout(r, 1_000));
    await terminate(callId);
    const terminatedAt = Date.now();
    const { call: terminateItem } = await eventually('the terminate webhook', () => callItem(relay, callId, 'terminate'));
    expect(captureItems(callId)).toEqual([]);

    const items = await eventually('both capture events', () => {
      const found = captureItems(callId);
      return found.length === 2 && found;
    });
    expect(Date.now() - terminatedAt).toBeGreaterThanOrEqual(CAPTURE_READY_MS - 50);
    for (const { hook } of items) {
      expect(signatureValid(hook)).toBe(true);
      expect(hook.body.entry[0]!.changes[0]!.field).toBe('calls');
    }
    const recording = items.find((i) => i.item.event === 'call_recording_available')!.item as CallRecordingAvailableItem;
    const transcript = items.find((i) => i.item.event === 'call_transcription_available')!.item as CallTranscriptionAvailableItem;
    // No direction and no SDP: they must never ring (protocol.md).
    expect(recording).toEqual({
      id: callId,
      from: terminateItem.from,
      to: terminateItem.to,
      event: 'call_recording_available',
      timestamp: expect.stringMatching(/^\d+$/) as unknown,
      call_recording: {
        type: 'audio',
        audio: { id: expect.stringMatching(/^[1-9]\d{15}$/) as unknown, sha256: expect.stringMatching(/^[0-9a-f]{64}$/) as unknown, mime_type: 'audio/ogg; codecs=opus', url: expect.any(String) as unknown },
      },
    });
    expect(transcript).toEqual({
      id: callId,
      from: terminateItem.from,
      to: terminateItem.to,
      event: 'call_transcription_available',
      timestamp: expect.stringMatching(/^\d+$/) as unknown,
      call_transcript: {
        document: { id: expect.stringMatching(/^[1-9]\d{15}$/) as unknown, sha256: expect.stringMatching(/^[0-9a-f]{64}$/) as unknown, mime_type: 'application/json', url: expect.any(String) as unknown },
      },
    });
    const after = (await report(callId)).capture!;
    expect(after).toMatchObject({ recordingMediaId: recording.call_recording.audio.id, transcriptMediaId: transcript.call_transcript.document.id });
    expect(after.sentAt).toBeGreaterThanOrEqual(terminatedAt);

    // The recording: Ogg Opus, two channels, as long as the capture, energy on each.
    const file = await download(recording.call_recording.audio.url);
    expect(file.status).toBe(200);
    expect(file.mimeType).toBe('audio/ogg; codecs=opus');
    expect(createHash('sha256').update(file.bytes).digest('hex')).toBe(recording.call_recording.audio.sha256);
    const decoded = await decodeStereo(file.bytes);
    expect(decoded).toMatchObject({ codec: 'opus', channels: 2, sampleRate: 48_000 });
    expect(decoded.left.length).toBe((after.capturedMs * RATE) / 1000);
    // From the notice's start to the terminate, less what a loaded machine's send clock skips.
    expect(after.capturedMs).toBeGreaterThan(noticeMs(notice) + 700);
    expect(after.capturedMs).toBeLessThanOrEqual(terminatedAt - after.notice.startedAt! + 100);
    // Channel 1, the customer: the notice's chime at its very start, then its words and the voice.
    expect(toneAmplitude(decoded.right.subarray(RATE / 50, RATE / 5 - RATE / 50), RATE, low)).toBeGreaterThan(0.1);
    expect(toneAmplitude(decoded.right.subarray(RATE / 5 + RATE / 50, (2 * RATE) / 5 - RATE / 50), RATE, high)).toBeGreaterThan(0.1);
    expect(rms(decoded.right.subarray(RATE, 2 * RATE))).toBeGreaterThan(0.02);
    // Channel 0, the business: its 440 Hz tone, and none of the chime.
    const businessSecond = decoded.left.subarray(decoded.left.length - 1.5 * RATE, decoded.left.length - 0.5 * RATE);
    expect(rms(businessSecond)).toBeGreaterThan(0.1);
    // Measured in 100 ms blocks: the test peer's 20 ms interval timer runs slow, so the recording's
    // send clock finds its queue empty now and then, and the tone breaks for a frame.
    const blocks = Array.from({ length: 10 }, (_, i) => toneAmplitude(businessSecond.subarray((i * RATE) / 10, ((i + 1) * RATE) / 10), RATE, 440));
    expect(blocks.filter((amplitude) => amplitude > 0.1).length).toBeGreaterThanOrEqual(5);
    expect(toneAmplitude(decoded.left.subarray(RATE / 50, RATE / 5 - RATE / 50), RATE, low)).toBeLessThan(0.02);

    // The transcript: the service's document, each channel's speech a segment.
    const document = await download(transcript.call_transcript.document.url);
    expect(document.status).toBe(200);
    expect(document.mimeType).toBe('application/json');
    expect(createHash('sha256').update(document.bytes).digest('hex')).toBe(transcript.call_transcript.document.sha256);
    const json = JSON.parse(document.bytes.toString('utf8')) as { transcript: { segments: Record<string, unknown>[] } };
    expect(transcriptDocumentSchema.safeParse(json).success).toBe(true);
    const segments = json.transcript.segments;
    for (const segment of segments) {
      expect(Object.keys(segment).sort()).toEqual(['channel', 'confidence', 'end', 'speaker', 'start', 'text', 'words']);
      expect(segment.words).toEqual([]);
      expect(segment.speaker).toBe(segment.channel === 0 ? 'Business' : 'Customer');
      expect(segment.end as number).toBeGreaterThan(segment.start as number);
      expect(segment.end as number).toBeLessThanOrEqual(after.capturedMs / 1000);
    }
    const starts = segments.map((s) => s.start as number);
    expect(starts).toEqual([...starts].sort((a, b) => a - b));
    // The notice's words, after the chime; then the customer's voice, whose words the sandbox does not know.
    const spoken = segments.find((s) => s.text === SERVICE_NOTICE_TEXT)!;
    expect(spoken).toMatchObject({ speaker: 'Customer', channel: 1, confidence: 1 });
    expect(spoken.start as number).toBeGreaterThanOrEqual(0.5);
    expect(spoken.start as number).toBeLessThan(1);
    expect(segments.some((s) => s.channel === 1 && s.text === CUSTOMER_PLACEHOLDER && (s.start as number) >= (spoken.end as number))).toBe(true);
    // The business's tone: the sandbox says it does not transcribe that side.
    expect(segments.some((s) => s.channel === 0 && s.text === BUSINESS_PLACEHOLDER && s.confidence === 0)).toBe(true);

    // The urls live 5 minutes; the media ids stay, and give new urls.
    clockOffsetMs = 5 * 60 * 1000 + 1_000;
    expect((await download(recording.call_recording.audio.url)).status).toBe(404);
    const lookup = await fetch(`${sandbox.gatewayUrl}/chatapp/media/${transcript.call_transcript.document.id}`, { headers: { 'API-KEY': API_KEY } });
    expect(lookup.status).toBe(200);
    const again = await download(((await lookup.json()) as { url: string }).url);
    expect(again.bytes.equals(document.bytes)).toBe(true);
  });

  test('an outgoing call that asked only for a transcript gets only call_transcription_available', async () => {
    const business = new BusinessPeer();
    closers.push(() => business.close());
    const initiated = await gatewayPost(sandbox, 'initiate', {
      messaging_product: 'chatapp',
      to: '12025550176',
      action: 'connect',
      session: { sdp_type: 'offer', sdp: await business.offer() },
      transcription: { ...ASKED, announcement_language: 'hi' },
    });
    expect(initiated.status).toBe(200);
    const callId = (initiated.body as { calls: { id: string }[] }).calls[0]!.id;
    const { call } = await eventually('the customer to answer', () => callItem(relay, callId, 'connect'));
    await business.applyAnswer(call.session!.sdp);
    const capture = await eventually('the notice to start', async () => {
      const now = (await report(callId)).capture;
      return now?.notice.startedAt !== undefined && now;
    });
    expect(capture.recording).toBeUndefined();
    expect(capture.transcription).toEqual({ purpose: 'quality assurance', announcementLanguage: 'hi' });
    expect(capture.notice.askedLanguage).toBe('hi');
    await eventually('the notice to end', async () => (await report(callId)).capture!.notice.heardByCustomer);
    await terminate(callId);
    const [only] = await eventually('the transcript event', () => {
      const found = captureItems(callId);
      return found.length > 0 && found;
    });
    expect(only!.item.event).toBe('call_transcription_available');
    await new Promise((r) => setTimeout(r, 300));
    expect(captureItems(callId)).toHaveLength(1);
    expect((await report(callId)).capture!.recordingMediaId).toBeUndefined();
    const document = await download((only!.item as CallTranscriptionAvailableItem).call_transcript.document.url);
    const parsed = transcriptDocumentSchema.parse(JSON.parse(document.bytes.toString('utf8')));
    expect(parsed.transcript.segments.find((s) => s.text === SERVICE_NOTICE_TEXT)).toMatchObject({ channel: 1, speaker: 'Customer' });
  });
});

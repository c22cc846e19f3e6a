// POST /control/voicemail (sandbox/REFERENCE.md "Control API"; protocol.md "Voicemail"): the
// customer of an incoming call the business rejected, or that rang out, leaves a voicemail: an
// inbound audio message whose id is the call's, its audio an Ogg Opus file of the customer's own
// tone kept as media. The webhooks arrive at a real HTTP server in place of the relay; the audio is
// fetched as the app fetches it and decoded by ffmpeg.
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import { DEFAULT_CUSTOMERS } from '../../../sandbox/customers';
import type { SandboxServer } from '../../../sandbox/server';
import { toneAmplitude } from '../../../sandbox/tone-probe';
import { sandboxVoicemailToneHz, type SandboxMessageReport } from '../../../shared/sandbox';
import { normaliseWebhook } from '../../../shared/webhook';
import { BusinessPeer } from './business-peer';
import { API_KEY, callItem, control, eventually, gatewayPost, signatureValid, startTestSandbox, startWebhookReceiver, type WebhookReceiver } from './harness';

const run = promisify(execFile);
const RING_TIMEOUT_MS = 1_500;

let relay: WebhookReceiver;
let sandbox: SandboxServer;
let dir: string;
const closers: (() => Promise<void>)[] = [];

beforeAll(async () => {
  relay = await startWebhookReceiver();
  sandbox = await startTestSandbox(relay, { timeouts: { ringTimeoutMs: RING_TIMEOUT_MS } });
  dir = await mkdtemp(join(tmpdir(), 'softphone-voicemail-'));
});
afterEach(async () => {
  await Promise.all(closers.splice(0).map((c) => c()));
});
afterAll(async () => {
  await sandbox?.close();
  await relay?.close();
  await rm(dir, { recursive: true, force: true });
});

const ADA = DEFAULT_CUSTOMERS.find((c) => c.name === 'Ada Lovelace')!;
const GRACE = DEFAULT_CUSTOMERS.find((c) => c.name === 'Grace Hopper')!;
const ALAN = DEFAULT_CUSTOMERS.find((c) => c.behaviour === 'rejects')!;

interface ControlError {
  error: { code: string; message: string; field?: string };
}

const incoming = async (number: string) => (await control<{ callId: string }>(sandbox, '/control/incoming', { number })).body.callId;
const reject = async (callId: string) => expect((await gatewayPost(sandbox, 'reject', { messaging_product: 'chatapp', call_id: callId, action: 'reject' })).status).toBe(200);
const leave = (body: unknown) => control<{ callId: string; mediaId: string } & Partial<ControlError>>(sandbox, '/control/voicemail', body);

async function rejectedCall(number: string): Promise<string> {
  const callId = await incoming(number);
  await reject(callId);
  return callId;
}

/** The `messages` webhook whose message has this id. */
const messageHook = (id: string) =>
  eventually(`the messages webhook of ${id}`, () =>
    relay.received.find((hook) => hook.body.entry[0]!.changes[0]!.field === 'messages' && JSON.stringify(hook.body).includes(`"id":"${id}"`)),
  );

/** The voicemail's audio as the app gets it: the media id's url, then the file, both with the API key. */
async function download(mediaId: string): Promise<{ bytes: Buffer; mimeType: string | null }> {
  const lookup = await fetch(`${sandbox.gatewayUrl}/chatapp/media/${mediaId}`, { headers: { 'API-KEY': API_KEY } });
  expect(lookup.status).toBe(200);
  const { url } = (await lookup.json()) as { url: string };
  const file = await fetch(url, { headers: { 'API-KEY': API_KEY } });
  expect(file.status).toBe(200);
  return { bytes: Buffer.from(await file.arrayBuffer()), mimeType: file.headers.get('content-type') };
}

/** ffmpeg's reading of an Ogg Opus file: its stream's format, and its samples as 48 kHz mono. */
async function decode(bytes: Buffer): Promise<{ channels: number; sampleRate: number; codec: string; samples: Int16Array }> {
  const path = join(dir, `${createHash('sha256').update(bytes).digest('hex')}.opus`);
  await writeFile(path, bytes);
  const probe = await run('ffprobe', ['-v', 'error', '-show_entries', 'stream=codec_name,channels,sample_rate', '-of', 'json', path]);
  const stream = (JSON.parse(probe.stdout) as { streams: { codec_name: string; channels: number; sample_rate: string }[] }).streams[0]!;
  const { stdout, stderr } = await run('ffmpeg', ['-v', 'error', '-i', path, '-f', 's16le', '-ac', '1', '-ar', '48000', '-'], { encoding: 'buffer', maxBuffer: 16 * 1024 * 1024 });
  expect(stderr.toString('utf8')).toBe('');
  const samples = new Int16Array(stdout.length / 2);
  for (let i = 0; i < samples.length; i++) samples[i] = stdout.readInt16LE(i * 2);
  return { channels: stream.channels, sampleRate: Number(stream.sample_rate), codec: stream.codec_name, samples };
}

describe('a voicemail after a rejected call', () => {
  test('is an inbound audio message whose id is the call’s, with the contact, signed, under field messages', async () => {
    const callId = await rejectedCall(ADA.number);
    const before = Math.floor(Date.now() / 1000);
    const { status, body } = await leave({ callId });
    expect(status).toBe(200);
    expect(body).toEqual({ callId, mediaId: expect.stringMatching(/^[1-9]\d{15}$/) as unknown });
    const hook = await messageHook(callId);
    expect(signatureValid(hook)).toBe(true);
    const change = hook.body.entry[0]!.changes[0]!;
    expect(change.field).toBe('messages');
    const value = change.value as unknown as Record<string, unknown>;
    const sha256 = ((value.messages as { audio: { sha256: string } }[])[0]!).audio.sha256;
    expect(value).toEqual({
      messaging_product: 'chatapp',
      metadata: { display_phone_number: '16505550100', phone_number_id: '106000000000001' },
      contacts: [{ profile: { name: 'Ada Lovelace' }, wa_id: ADA.number }],
      messages: [
        {
          from: ADA.number,
          id: callId,
          timestamp: expect.stringMatching(/^\d+$/) as unknown,
          type: 'audio',
          audio: { id: body.mediaId, mime_type: 'audio/ogg; codecs=opus', sha256, voice: true },
        },
      ],
    });
    const timestamp = Number((value.messages as { timestamp: string }[])[0]!.timestamp);
    expect(timestamp).toBeGreaterThanOrEqual(before);
    expect(timestamp).toBeLessThanOrEqual(Math.ceil(Date.now() / 1000));

    // What the relay makes of it: a message.inbound of type audio, the call's id its message id.
    expect(normaliseWebhook(hook.body)).toEqual([
      expect.objectContaining({ type: 'message.inbound', messageId: callId, from: ADA.number, name: 'Ada Lovelace', messageType: 'audio', mediaId: body.mediaId }),
    ]);
  });

  test('carries about 4 s of the customer’s own tone: Ogg Opus, mono, 48 kHz, its hash the message’s', async () => {
    const callId = await rejectedCall(GRACE.number);
    const { body } = await leave({ callId });
    const hook = await messageHook(callId);
    const audio = (hook.body.entry[0]!.changes[0]!.value as unknown as { messages: { audio: { sha256: string } }[] }).messages[0]!.audio;
    const { bytes, mimeType } = await download(body.mediaId);
    expect(mimeType).toBe('audio/ogg; codecs=opus');
    expect(createHash('sha256').update(bytes).digest('hex')).toBe(audio.sha256);

    const decoded = await decode(bytes);
    expect(decoded).toMatchObject({ codec: 'opus', channels: 1, sampleRate: 48_000 });
    expect(decoded.samples.length).toBe(4 * 48_000);
    const middle = decoded.samples.subarray(48_000, 3 * 48_000);
    const own = sandboxVoicemailToneHz(GRACE.number);
    expect(toneAmplitude(middle, 48_000, own)).toBeGreaterThan(0.2);
    // Every other default customer's tone is absent: the voicemail says whose it is.
    for (const other of DEFAULT_CUSTOMERS.filter((c) => c.number !== GRACE.number)) {
      expect(toneAmplitude(middle, 48_000, sandboxVoicemailToneHz(other.number)), other.name).toBeLessThan(0.01);
    }
  });

  test('each default customer has a tone of its own, from its number, the same every time', () => {
    const tones = DEFAULT_CUSTOMERS.map((c) => sandboxVoicemailToneHz(c.number));
    expect(new Set(tones).size).toBe(DEFAULT_CUSTOMERS.length);
    for (const hz of tones) {
      expect(hz).toBeGreaterThanOrEqual(500);
      expect(hz).toBeLessThanOrEqual(1450);
    }
    expect(sandboxVoicemailToneHz('+1 202-555-0101')).toBe(sandboxVoicemailToneHz(ADA.number));
  });

  test('one a call: a second one for the same call is refused (409, naming callId)', async () => {
    const callId = await rejectedCall('12025550161');
    expect((await leave({ callId })).status).toBe(200);
    const again = await leave({ callId });
    expect(again.status).toBe(409);
    expect(again.body.error).toMatchObject({ code: 'invalid_state', field: 'callId' });
    expect(again.body.error!.message).toMatch(/already has a voicemail/);
  });

  test('is listed among the messages the sandbox saw', async () => {
    const callId = await rejectedCall('12025550162');
    await leave({ callId });
    const reports = (await control<SandboxMessageReport[]>(sandbox, '/control/messages')).body;
    expect(reports.find((m) => m.messageId === callId)).toMatchObject({ direction: 'inbound', number: '12025550162', type: 'audio', status: 'delivered' });
  });
});

describe('by number', () => {
  test('the customer’s last call that rang out, or was rejected, is the one', async () => {
    const number = '12025550163';
    const first = await rejectedCall(number);
    const rangOut = await incoming(number);
    await eventually('the call to ring out', () => callItem(relay, rangOut, 'terminate'), RING_TIMEOUT_MS + 10_000);
    // A later call the customer gave up on does not count.
    const gaveUp = await incoming(number);
    expect((await control(sandbox, '/control/hangup', { callId: gaveUp })).status).toBe(200);

    const { status, body } = await leave({ number: `+${number}` });
    expect(status).toBe(200);
    expect(body.callId).toBe(rangOut);
    await messageHook(rangOut);
    expect((await leave({ number })).body.error).toMatchObject({ code: 'invalid_state', field: 'callId' });
    expect((await leave({ callId: first })).status).toBe(200);
  });

  test('a number with no incoming call is 404; one whose calls do not qualify is 409, naming the number', async () => {
    const none = await leave({ number: '12025550164' });
    expect(none.status).toBe(404);
    expect(none.body.error).toMatchObject({ code: 'not_found', field: 'number' });

    const callId = await incoming('12025550165');
    await control(sandbox, '/control/hangup', { callId });
    const gaveUp = await leave({ number: '12025550165' });
    expect(gaveUp.status).toBe(409);
    expect(gaveUp.body.error).toMatchObject({ code: 'invalid_state', field: 'number' });
  });
});

describe('only after a rejected or rung-out incoming call', () => {
  test('a call still ringing is 409 naming callId', async () => {
    const callId = await incoming('12025550166');
    const ringing = await leave({ callId });
    expect(ringing.status).toBe(409);
    expect(ringing.body.error).toMatchObject({ code: 'invalid_state', field: 'callId' });
    expect(ringing.body.error!.message).toMatch(/still ringing/);
    await reject(callId);
  });

  test('a call the customer hung up while it rang is 409', async () => {
    const callId = await incoming('12025550167');
    await control(sandbox, '/control/hangup', { callId });
    const answer = await leave({ callId });
    expect(answer.status).toBe(409);
    expect(answer.body.error).toMatchObject({ code: 'invalid_state', field: 'callId' });
  });

  test('an answered call is 409, during it and after it', async () => {
    const callId = await incoming('12025550168');
    const { call } = await eventually('the connect webhook', () => callItem(relay, callId, 'connect'));
    const business = new BusinessPeer();
    closers.push(() => business.close());
    const answer = await business.answer(call.session!.sdp);
    const accepted = await gatewayPost(sandbox, 'accept', { messaging_product: 'chatapp', call_id: callId, action: 'accept', session: { sdp_type: 'answer', sdp: answer } });
    expect(accepted.status).toBe(200);
    expect((await leave({ callId })).status).toBe(409);
    await gatewayPost(sandbox, 'terminate', { messaging_product: 'chatapp', call_id: callId, action: 'terminate' });
    const after = await leave({ callId });
    expect(after.status).toBe(409);
    expect(after.body.error).toMatchObject({ code: 'invalid_state', field: 'callId' });
    expect(after.body.error!.message).toMatch(/was answered/);
  });

  test('a call the business placed is 409, even one the customer rejected', async () => {
    const business = new BusinessPeer();
    closers.push(() => business.close());
    const initiated = await gatewayPost(sandbox, 'initiate', { messaging_product: 'chatapp', to: ALAN.number, action: 'connect', session: { sdp_type: 'offer', sdp: await business.offer() } });
    const callId = (initiated.body as { calls: { id: string }[] }).calls[0]!.id;
    await eventually('the customer to reject', () => callItem(relay, callId, 'terminate'));
    const answer = await leave({ callId });
    expect(answer.status).toBe(409);
    expect(answer.body.error).toMatchObject({ code: 'invalid_state', field: 'callId' });
  });

  test('an unknown call is 404 naming callId', async () => {
    const answer = await leave({ callId: 'wacid.nosuchcall' });
    expect(answer.status).toBe(404);
    expect(answer.body.error).toMatchObject({ code: 'not_found', field: 'callId' });
  });
});

describe('the body', () => {
  const refused: [string, unknown, string, string, RegExp][] = [
    ['nothing', {}, 'invalid_input', 'callId', /exactly one of callId and number/],
    ['both', { callId: 'wacid.x', number: ADA.number }, 'invalid_input', 'number', /not be given together with callId/],
    ['an empty callId', { callId: '' }, 'invalid_input', 'callId', /empty/],
    ['a callId that is no string', { callId: 42 }, 'invalid_input', 'callId', /string/],
    ['a number that is none', { number: '12' }, 'invalid_phone_number', 'number', /./],
    ['a member it does not take', { callid: 'wacid.x' }, 'invalid_input', '(root)', /callid/],
  ];
  test.each(refused)('%s is 400 naming the field', async (_what, body, code, field, rule) => {
    const answer = await leave(body);
    expect(answer.status).toBe(400);
    expect(answer.body.error).toMatchObject({ code, field });
    expect(answer.body.error!.message).toMatch(rule);
  });

  test('a body that is not JSON is 400', async () => {
    const res = await fetch(`${sandbox.url}/control/voicemail`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{"callId":' });
    expect(res.status).toBe(400);
    expect(((await res.json()) as ControlError).error.code).toBe('invalid_input');
  });
});

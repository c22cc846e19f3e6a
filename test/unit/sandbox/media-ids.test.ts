// The service's media as the gateway serves them (sandbox/REFERENCE.md "Media ids"): a media id
// answers with a signed url that lives 5 minutes; the url, with the API key, answers with the file.
// The sandbox's clock is the test's, moved on instead of waited for.
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { graphErrorSchema } from '../../../shared/gateway';
import { VOICEMAIL_KEPT_MS } from '../../../shared/voicemail';
import type { SandboxMedia } from '../../../shared/sandbox';
import type { SandboxServer } from '../../../sandbox/server';
import { API_KEY, control, gatewayPost, startTestSandbox, startWebhookReceiver, type WebhookReceiver } from './harness';

let relay: WebhookReceiver;
let sandbox: SandboxServer;
let now = Date.now();

beforeAll(async () => {
  relay = await startWebhookReceiver();
  sandbox = await startTestSandbox(relay, { mediaStore: { clock: () => now } });
});
afterAll(async () => {
  await sandbox?.close();
  await relay?.close();
});

const MINUTE = 60_000;
const MEDIA_ID = /^[1-9]\d{15}$/;

interface MediaAnswer {
  id: string;
  url: string;
  mime_type: string;
  sha256: string;
  file_size: number;
}

async function get(url: string, options: { apiKey?: string | null; method?: string } = {}): Promise<Response> {
  const apiKey = options.apiKey === undefined ? API_KEY : options.apiKey;
  return fetch(url, { method: options.method ?? 'GET', headers: apiKey === null ? {} : { 'API-KEY': apiKey } });
}

const mediaUrl = (id: string, product = 'chatapp') => `${sandbox.gatewayUrl}/${product}/media/${id}`;

async function lookUp(id: string): Promise<MediaAnswer> {
  const res = await get(mediaUrl(id));
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  return (await res.json()) as MediaAnswer;
}

/** A Graph error envelope with its status and code; the error returned. */
async function graphError(res: Response, status: number, code: number) {
  expect(res.status).toBe(status);
  const parsed = graphErrorSchema.safeParse(await res.json());
  expect(parsed.success).toBe(true);
  expect(parsed.data!.error.code).toBe(code);
  return parsed.data!.error;
}

/** A customer's call the business rejects, and the voicemail the customer then leaves. */
async function voicemail(number: string): Promise<{ callId: string; mediaId: string }> {
  const { body } = await control<{ callId: string }>(sandbox, '/control/incoming', { number });
  const rejected = await gatewayPost(sandbox, 'reject', { messaging_product: 'chatapp', call_id: body.callId, action: 'reject' });
  expect(rejected.status).toBe(200);
  const left = await control<{ callId: string; mediaId: string }>(sandbox, '/control/voicemail', { callId: body.callId });
  expect(left.status).toBe(200);
  return left.body;
}

describe('a media id', () => {
  test('answers with its url, type, hash and size; the url, with the key, with the file itself', async () => {
    const { mediaId } = await voicemail('12025550131');
    expect(mediaId).toMatch(MEDIA_ID);
    const answer = await lookUp(mediaId);
    expect(Object.keys(answer).sort()).toEqual(['file_size', 'id', 'mime_type', 'sha256', 'url']);
    expect(answer).toMatchObject({ id: mediaId, mime_type: 'audio/ogg; codecs=opus' });
    const url = new URL(answer.url);
    expect(url.origin).toBe(new URL(sandbox.gatewayUrl).origin);
    expect(url.pathname).toBe(`/restapi/v1/chatapp/media/${mediaId}/file`);
    expect(url.searchParams.get('expires')).toBe(String(Math.floor((now + 5 * MINUTE) / 1000)));
    expect(url.searchParams.get('signature')).toMatch(/^[0-9a-f]{64}$/);

    const file = await get(answer.url);
    expect(file.status).toBe(200);
    expect(file.headers.get('content-type')).toBe('audio/ogg; codecs=opus');
    const bytes = Buffer.from(await file.arrayBuffer());
    expect(file.headers.get('content-length')).toBe(String(bytes.length));
    expect(bytes.length).toBe(answer.file_size);
    expect(createHash('sha256').update(bytes).digest('hex')).toBe(answer.sha256);
    expect(bytes.toString('ascii', 0, 4)).toBe('OggS');
  });

  test('the account’s uploaded files are media ids too, served the same way', async () => {
    const library = (await control<SandboxMedia[]>(sandbox, '/control/media')).body;
    const mp3 = library.find((m) => m.mimeType === 'audio/mpeg')!;
    const answer = await lookUp(mp3.id);
    expect(answer).toMatchObject({ id: mp3.id, mime_type: 'audio/mpeg', sha256: mp3.sha256, file_size: mp3.size });
    const file = await get(answer.url);
    expect(file.headers.get('content-type')).toBe('audio/mpeg');
    expect(createHash('sha256').update(Buffer.from(await file.arrayBuffer())).digest('hex')).toBe(mp3.sha256);
  });

  test('the url is on the host the lookup came to', async () => {
    const { mediaId } = await voicemail('12025550132');
    const res = await get(`http://localhost:${sandbox.port}/restapi/v1/chatapp/media/${mediaId}`);
    const answer = (await res.json()) as MediaAnswer;
    expect(new URL(answer.url).origin).toBe(`http://localhost:${sandbox.port}`);
    expect((await get(answer.url)).status).toBe(200);
  });

  test('an unknown id is 404 in the Graph envelope, naming the id', async () => {
    const error = await graphError(await get(mediaUrl('1234567890123456')), 404, 100);
    expect(error.message).toMatch(/^\(#100\) /);
    expect(error.message).toContain("'1234567890123456'");
    expect(error.type).toBe('GraphMethodException');
  });

  test('a voicemail’s id is kept 7 days, then unknown; the account’s own files stay', async () => {
    const { mediaId } = await voicemail('12025550133');
    const start = now;
    try {
      now = start + VOICEMAIL_KEPT_MS - MINUTE;
      expect((await lookUp(mediaId)).id).toBe(mediaId);
      now = start + VOICEMAIL_KEPT_MS;
      const error = await graphError(await get(mediaUrl(mediaId)), 404, 100);
      expect(error.message).toContain(`'${mediaId}'`);
      expect(await lookUp('1900000000000002')).toMatchObject({ mime_type: 'audio/mpeg' });
    } finally {
      now = start;
    }
  });
});

describe('the url', () => {
  test('lives 5 minutes; then it is 404 saying it expired, and the id gives a new one', async () => {
    const { mediaId } = await voicemail('12025550134');
    const start = now;
    try {
      const { url } = await lookUp(mediaId);
      now = start + 5 * MINUTE - 1_000;
      expect((await get(url)).status).toBe(200);
      now = start + 5 * MINUTE;
      const error = await graphError(await get(url), 404, 100);
      expect(error.message).toMatch(/expired/);
      expect(error.message).toContain(mediaId);
      const fresh = await lookUp(mediaId);
      expect(fresh.url).not.toBe(url);
      expect((await get(fresh.url)).status).toBe(200);
    } finally {
      now = start;
    }
  });

  test('a changed signature, a later expiry or another id is refused as expired', async () => {
    const first = await voicemail('12025550135');
    const second = await voicemail('12025550136');
    const { url } = await lookUp(first.mediaId);
    const signature = new URL(url).searchParams.get('signature')!;
    const forged = [
      url.replace(signature, `${signature.slice(0, -1)}${signature.endsWith('0') ? '1' : '0'}`),
      url.replace(/expires=(\d+)/, (_, s: string) => `expires=${Number(s) + 3600}`),
      url.replace(`/media/${first.mediaId}/`, `/media/${second.mediaId}/`),
      url.replace(/\?.*$/, ''),
    ];
    for (const bad of forged) {
      const error = await graphError(await get(bad), 404, 100);
      expect(error.message).toMatch(/expired/);
    }
    expect((await get(url)).status).toBe(200);
  });

  test('wants the API key, as the lookup does: 401 without it or with a wrong one', async () => {
    const { mediaId } = await voicemail('12025550137');
    const { url } = await lookUp(mediaId);
    const missing = await graphError(await get(url, { apiKey: null }), 401, 190);
    expect(missing.message).toBe('API-KEY header: is required');
    const wrong = await graphError(await get(url, { apiKey: 'nope' }), 401, 190);
    expect(wrong.message).toBe('API-KEY header: invalid key');
    const lookup = await graphError(await get(mediaUrl(mediaId), { apiKey: null }), 401, 190);
    expect(lookup.message).toBe('API-KEY header: is required');
  });
});

describe('paths, methods and the log', () => {
  test('another product word is 404 (2500); a method other than GET is 405 allowing GET', async () => {
    await graphError(await get(mediaUrl('1900000000000002', 'otherapp')), 404, 2500);
    const posted = await get(mediaUrl('1900000000000002'), { method: 'POST' });
    expect(posted.headers.get('allow')).toBe('GET');
    await graphError(posted, 405, 100);
  });

  test('lookups and downloads are in the request log with their media id', async () => {
    const { mediaId } = await voicemail('12025550138');
    const before = (await control<unknown[]>(sandbox, '/control/log')).body.length;
    const { url } = await lookUp(mediaId);
    await get(url);
    await get(url, { apiKey: null });
    const log = (await control<{ action: string; mediaId?: string; status: number }[]>(sandbox, '/control/log')).body.slice(before);
    expect(log.map(({ action, mediaId: id, status }) => ({ action, mediaId: id, status }))).toEqual([
      { action: 'media', mediaId, status: 200 },
      { action: 'media_file', mediaId, status: 200 },
      { action: 'media_file', mediaId, status: 401 },
    ]);
  });
});

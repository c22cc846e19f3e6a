// The gateway client's media fetch (sandbox/REFERENCE.md "Media", modelled on the service's): the
// lookup by media id, the download of the short-lived url it gives, the API key only to the
// gateway's own origin, the size limit, a lapsed url asked for again, Graph errors and timeouts.
import { createHash } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { GatewayClient, type GatewayClientOptions } from '../../../electron/core/gateway-client';
import { text } from '../../../shared/i18n/text';
import { configureLogging } from '../../../shared/log';
import { VOICEMAIL_MAX_BYTES } from '../../../shared/voicemail';
import { startFakeGateway, success, type FakeGateway } from './fake-gateway';
import { mediaLibrary, mediaRoutes, VOICE_MIME, voiceBytes, type MediaLibrary } from './fake-media';

configureLogging({ sink: () => undefined });

const API_KEY = 'sk_live_media_key_7c1d2e';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A gateway serving `library` on its own origin; `options` for the client. */
async function setup(options: Partial<GatewayClientOptions> & { product?: string } = {}): Promise<{ gateway: FakeGateway; library: MediaLibrary; client: GatewayClient }> {
  const library = mediaLibrary(API_KEY, options.product ?? 'chatapp');
  const routes = mediaRoutes(library, { keyOnDownload: true });
  const gateway = await startFakeGateway((req) => routes(req) ?? success());
  library.fileOrigin = new URL(gateway.baseUrl).origin;
  const client = new GatewayClient({ baseUrl: gateway.baseUrl, apiKey: API_KEY, product: 'chatapp', ...options });
  cleanups.push(async () => {
    await client.close();
    await gateway.close();
  });
  return { gateway, library, client };
}

const paths = (gateway: FakeGateway): string[] => gateway.requests.map((r) => r.path.replace(/\?.*$/, '?…'));

describe('GatewayClient.fetchMedia', () => {
  it('asks {base}/{product}/media/{id} with the API key, then downloads the url it gives, with the key on the gateway’s own origin', async () => {
    const { gateway, library, client } = await setup({ product: 'acme' });
    const bytes = voiceBytes(48_000);
    library.files.set('media/77 x', { bytes, mimeType: VOICE_MIME });
    const fetched = await client.fetchMedia('media/77 x', VOICEMAIL_MAX_BYTES);
    expect(fetched).toEqual({ ok: true, value: { mediaId: 'media/77 x', mimeType: VOICE_MIME, bytes, sha256: createHash('sha256').update(bytes).digest('hex') } });
    expect(paths(gateway)).toEqual(['/restapi/v1/acme/media/media%2F77%20x', '/restapi/v1/acme/media/media%2F77%20x/file?…']);
    expect(gateway.requests.map((r) => [r.method, r.headers['api-key']])).toEqual([
      ['GET', API_KEY],
      ['GET', API_KEY],
    ]);
  });

  it('sends the API key to no other origin: a url elsewhere is downloaded without it', async () => {
    const { gateway, library, client } = await setup();
    const cdnRoutes = mediaRoutes(library, { keyOnDownload: false });
    const cdn = await startFakeGateway((req) => cdnRoutes(req) ?? success());
    cleanups.push(() => cdn.close());
    // Same host, another port: another origin.
    library.fileOrigin = new URL(cdn.baseUrl).origin;
    const bytes = voiceBytes(9_000, 2);
    library.files.set('m-cdn', { bytes, mimeType: VOICE_MIME });
    const fetched = await client.fetchMedia('m-cdn', VOICEMAIL_MAX_BYTES);
    expect(fetched.ok && fetched.value.bytes.equals(bytes)).toBe(true);
    expect(gateway.requests.map((r) => r.headers['api-key'])).toEqual([API_KEY]);
    expect(cdn.requests).toHaveLength(1);
    expect(cdn.requests[0]!.path).toMatch(/^\/restapi\/v1\/chatapp\/media\/m-cdn\/file\?expires=\d+&signature=[0-9a-f]{64}$/);
    expect(cdn.requests[0]!.headers['api-key']).toBeUndefined();
    expect(JSON.stringify(cdn.requests[0]!.headers)).not.toContain(API_KEY);
  });

  it('asks for the media id again when the url lapsed before its download (404), once', async () => {
    const { gateway, library, client } = await setup();
    const bytes = voiceBytes(5_000, 3);
    library.files.set('m-lapsed', { bytes, mimeType: VOICE_MIME });
    library.expiredUrls = 1;
    const fetched = await client.fetchMedia('m-lapsed', VOICEMAIL_MAX_BYTES);
    expect(fetched.ok && fetched.value.bytes.equals(bytes)).toBe(true);
    expect(paths(gateway)).toEqual(['/restapi/v1/chatapp/media/m-lapsed', '/restapi/v1/chatapp/media/m-lapsed/file?…', '/restapi/v1/chatapp/media/m-lapsed', '/restapi/v1/chatapp/media/m-lapsed/file?…']);

    library.expiredUrls = 2;
    const again = await client.fetchMedia('m-lapsed', VOICEMAIL_MAX_BYTES);
    expect(again).toMatchObject({ ok: false, error: { code: 'gateway_error', gatewayCode: 100, httpStatus: 404 } });
    expect(gateway.requests).toHaveLength(8);
  });

  it('maps the service’s Graph errors as for every request: an unknown media id, a refused key, a failure', async () => {
    const { gateway, library, client } = await setup();
    expect(await client.fetchMedia('m-unknown', VOICEMAIL_MAX_BYTES)).toMatchObject({
      ok: false,
      error: { code: 'gateway_error', gatewayCode: 100, httpStatus: 404, message: 'The service does not have this media (it keeps media for 7 days)', detail: expect.stringContaining("'m-unknown' does not exist") },
    });
    library.failingLookups = 1;
    library.files.set('m-1', { bytes: voiceBytes(100), mimeType: VOICE_MIME });
    expect(await client.fetchMedia('m-1', VOICEMAIL_MAX_BYTES)).toMatchObject({ ok: false, error: { code: 'gateway_error', gatewayCode: 1, httpStatus: 500 } });

    const other = new GatewayClient({ baseUrl: gateway.baseUrl, apiKey: 'not-the-key', product: 'chatapp' });
    cleanups.push(() => other.close());
    const refused = await other.fetchMedia('m-1', VOICEMAIL_MAX_BYTES);
    expect(refused).toMatchObject({ ok: false, error: { code: 'gateway_error', gatewayCode: 190, httpStatus: 401 } });
    expect(JSON.stringify(refused)).not.toContain('not-the-key');
  });

  it('refuses a file larger than the limit: by the size the lookup gives (nothing downloaded), by its Content-Length, or as it arrives', async () => {
    const { gateway, library, client } = await setup();
    const tooLarge = { ok: false, error: { code: 'not_available', text: text('gateway.mediaTooLarge', { mediaId: 'm-big', megabytes: 16 }) } };
    library.files.set('m-big', { bytes: voiceBytes(VOICEMAIL_MAX_BYTES + 1), mimeType: VOICE_MIME });
    expect(await client.fetchMedia('m-big', VOICEMAIL_MAX_BYTES)).toMatchObject(tooLarge);
    expect(paths(gateway)).toEqual(['/restapi/v1/chatapp/media/m-big']);

    // The lookup says nothing of the size: the file's Content-Length says it.
    library.described = () => ({});
    expect(await client.fetchMedia('m-big', VOICEMAIL_MAX_BYTES)).toMatchObject(tooLarge);
    expect(gateway.requests).toHaveLength(3);

    // No Content-Length either: the download stops once the bytes pass the limit.
    library.onFile = (id) => ({ status: 200, body: library.files.get(id)!.bytes, contentType: VOICE_MIME, chunked: true });
    expect(await client.fetchMedia('m-big', VOICEMAIL_MAX_BYTES)).toMatchObject(tooLarge);
    library.files.set('m-small', { bytes: voiceBytes(1_000), mimeType: VOICE_MIME });
    expect(await client.fetchMedia('m-small', 999)).toMatchObject({ ok: false, error: { code: 'not_available', text: text('gateway.mediaTooLarge', { mediaId: 'm-small', megabytes: 0 }) } });
    const fine = await client.fetchMedia('m-small', 1_000);
    expect(fine.ok && fine.value.bytes.length).toBe(1_000);
  });

  it('refuses bytes that are not what the lookup said: another size or another SHA-256', async () => {
    const { library, client } = await setup();
    const bytes = voiceBytes(2_000);
    library.files.set('m-x', { bytes, mimeType: VOICE_MIME });
    const damaged = { ok: false, error: { code: 'gateway_unreachable', text: text('gateway.mediaDamaged', { mediaId: 'm-x' }) } };
    library.described = () => ({ file_size: 1_999 });
    expect(await client.fetchMedia('m-x', VOICEMAIL_MAX_BYTES)).toMatchObject(damaged);
    library.described = () => ({ sha256: createHash('sha256').update('other').digest('hex'), file_size: 2_000 });
    expect(await client.fetchMedia('m-x', VOICEMAIL_MAX_BYTES)).toMatchObject(damaged);
    // The digest in base64 (as some of the service's payloads give it) is read too.
    library.described = () => ({ sha256: createHash('sha256').update(bytes).digest('base64'), file_size: '2000' });
    expect((await client.fetchMedia('m-x', VOICEMAIL_MAX_BYTES)).ok).toBe(true);
  });

  it('times out a lookup and a download that do not answer, each on its own deadline', async () => {
    const { gateway, library, client } = await setup({ timeoutMs: 300, downloadTimeoutMs: 400 });
    library.files.set('m-slow', { bytes: voiceBytes(100), mimeType: VOICE_MIME });
    library.onFile = () => 'hang';
    const started = Date.now();
    expect(await client.fetchMedia('m-slow', VOICEMAIL_MAX_BYTES)).toMatchObject({ ok: false, error: { code: 'timeout', text: text('gateway.timeout', { action: 'media download', seconds: 0 }) } });
    expect(Date.now() - started).toBeGreaterThanOrEqual(380);
    const handler = gateway.handler;
    gateway.handler = () => 'hang';
    expect(await client.fetchMedia('m-slow', VOICEMAIL_MAX_BYTES)).toMatchObject({ ok: false, error: { code: 'timeout', text: text('gateway.timeout', { action: 'media', seconds: 0 }) } });
    gateway.handler = handler;
  });

  it('refuses a lookup whose url is not an http(s) address, and gives up at once when told to', async () => {
    const { library, client } = await setup();
    library.files.set('m-file', { bytes: voiceBytes(100), mimeType: VOICE_MIME });
    library.fileOrigin = 'file://';
    expect(await client.fetchMedia('m-file', VOICEMAIL_MAX_BYTES)).toMatchObject({ ok: false, error: { code: 'gateway_unreachable', httpStatus: 200 } });
    const stop = new AbortController();
    stop.abort();
    expect(await client.fetchMedia('m-file', VOICEMAIL_MAX_BYTES, stop.signal)).toMatchObject({ ok: false, error: { code: 'not_available', text: text('service.shuttingDown') } });
  });
});

describe('GatewayClient.fetchMedia with the url the service gave', () => {
  /** A url the service hands out for the media id now, fetched outside the client. */
  async function givenUrl(gateway: FakeGateway, mediaId: string): Promise<string> {
    const res = await fetch(`${gateway.baseUrl}/chatapp/media/${mediaId}`, { headers: { 'API-KEY': API_KEY } });
    const url = ((await res.json()) as { url: string }).url;
    gateway.requests.splice(0);
    return url;
  }

  it('downloads it first, checked against the digest given, with no lookup; the key only to the gateway’s origin', async () => {
    const { gateway, library, client } = await setup();
    const cdnRoutes = mediaRoutes(library, { keyOnDownload: false });
    const cdn = await startFakeGateway((req) => cdnRoutes(req) ?? success());
    cleanups.push(() => cdn.close());
    const bytes = voiceBytes(7_000, 5);
    library.files.set('m-given', { bytes, mimeType: VOICE_MIME });
    const sha256 = createHash('sha256').update(bytes).digest('base64');
    const own = await givenUrl(gateway, 'm-given');
    expect(await client.fetchMedia('m-given', VOICEMAIL_MAX_BYTES, undefined, { url: own, mimeType: VOICE_MIME, sha256 })).toMatchObject({ ok: true, value: { bytes, mimeType: VOICE_MIME } });
    expect(gateway.requests.map((r) => [r.path.replace(/\?.*$/, '?…'), r.headers['api-key']])).toEqual([['/restapi/v1/chatapp/media/m-given/file?…', API_KEY]]);

    library.fileOrigin = new URL(cdn.baseUrl).origin;
    const elsewhere = await givenUrl(gateway, 'm-given');
    expect((await client.fetchMedia('m-given', VOICEMAIL_MAX_BYTES, undefined, { url: elsewhere, mimeType: VOICE_MIME })).ok).toBe(true);
    expect(gateway.requests).toEqual([]);
    expect(cdn.requests.map((r) => r.headers['api-key'])).toEqual([undefined]);
  });

  it('looks the media id up when the url lapsed, is damaged or is no http(s) url', async () => {
    const { gateway, library, client } = await setup();
    const bytes = voiceBytes(3_000, 6);
    library.files.set('m-again', { bytes, mimeType: VOICE_MIME });
    library.expiredUrls = 1;
    const lapsed = await givenUrl(gateway, 'm-again');
    expect(await client.fetchMedia('m-again', VOICEMAIL_MAX_BYTES, undefined, { url: lapsed, mimeType: VOICE_MIME })).toMatchObject({ ok: true, value: { bytes } });
    expect(paths(gateway)).toEqual(['/restapi/v1/chatapp/media/m-again/file?…', '/restapi/v1/chatapp/media/m-again', '/restapi/v1/chatapp/media/m-again/file?…']);

    gateway.requests.splice(0);
    const fresh = await givenUrl(gateway, 'm-again');
    expect((await client.fetchMedia('m-again', VOICEMAIL_MAX_BYTES, undefined, { url: fresh, mimeType: VOICE_MIME, sha256: 'f'.repeat(64) })).ok).toBe(true);
    expect(paths(gateway)).toEqual(['/restapi/v1/chatapp/media/m-again/file?…', '/restapi/v1/chatapp/media/m-again', '/restapi/v1/chatapp/media/m-again/file?…']);

    gateway.requests.splice(0);
    expect((await client.fetchMedia('m-again', VOICEMAIL_MAX_BYTES, undefined, { url: 'file:///etc/passwd', mimeType: VOICE_MIME })).ok).toBe(true);
    expect(paths(gateway)).toEqual(['/restapi/v1/chatapp/media/m-again', '/restapi/v1/chatapp/media/m-again/file?…']);
  });
});

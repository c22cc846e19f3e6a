// The app's media link check (gateway-spec.md 2.3) on undici against a real HTTP server on
// 127.0.0.1: what the messaging service and the window get back — the size, where the file is, notes
// that need nothing, and the media rules the agent confirms with "Send anyway". The fetching and
// judging itself is tested in test/unit/shared/media-fetch.test.ts.
import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkMediaLink, undiciByteFetch } from '../../../electron/core/media-link-check';
import { nodeByteFetch } from '../../../sandbox/media-judge';
import { checkMediaFile, type ByteFetch } from '../../../shared/media-fetch';
import { inspectMedia } from '../../../shared/media-inspect';
import { mediaCorpus } from '../../fixtures/media-corpus';
import { MB } from '../../../shared/messages';
import { cutOff, dribble, file, redirect, silent, startMediaFileServer, statusOnly, type MediaFileServer } from '../../support/media-file-server';
import { closedPortUrl, closingServer, resettingServer, selfSignedServer, UNRESOLVABLE_HOST, type FailingServer } from '../shared/network-failures';

let server: MediaFileServer;
let base: string;
const bytes = new Map<string, Uint8Array>();

beforeAll(async () => {
  const corpus = await mediaCorpus();
  for (const name of ['rgb.png', 'high-bframes.mp4', 'moov-at-end.mp4', 'rgb16.png', 'doc.pdf']) bytes.set(name, new Uint8Array(await readFile(corpus.file(name).path)));
  server = await startMediaFileServer({
    '/photo.png': file(bytes.get('rgb.png')!, { contentType: 'image/png' }),
    '/deep.png': file(bytes.get('rgb16.png')!, { contentType: 'image/png' }),
    '/clip.mp4': file(bytes.get('high-bframes.mp4')!, { contentType: 'video/mp4' }),
    '/late-moov.mp4': file(bytes.get('moov-at-end.mp4')!, { contentType: 'video/mp4', ranges: false }),
    '/files/8c1f2a': file(bytes.get('doc.pdf')!, { contentType: 'application/pdf' }),
    '/moved.png': redirect('/photo.png', 301),
    '/missing.png': statusOnly(404),
    '/slow.png': silent,
    // 1 MB of text, 64 KB every 40 ms: about 0.7 s.
    '/steady.txt': dribble(new Uint8Array(MB).fill(0x61), { contentType: 'text/plain', chunkBytes: 64 * 1024, everyMs: 40 }),
  });
  base = server.url;
}, 120_000);

afterAll(async () => {
  await server?.close();
});

describe('checkMediaLink', () => {
  it('a file that fits: its type, its size as read, where it is, what it is, and nothing to confirm', async () => {
    const png = bytes.get('rgb.png')!;
    const inspected = await inspectMedia('image', { head: png, size: png.length }, { extension: '.png', mimeType: 'image/png' });
    if (!inspected.ok) throw new Error(inspected.error.message);
    const result = await checkMediaLink('image', `${base}/moved.png`);
    expect(result).toMatchObject({
      ok: true,
      value: { contentType: 'image/png', contentLength: png.length, finalUrl: `${base}/photo.png`, confirm: [], description: inspected.value.description },
    });
    expect(inspected.value.description).toMatch(/^8-bit RGB PNG/);
  });

  it('notes (no extension, a private network) need no confirmation', async () => {
    const result = await checkMediaLink('document', `${base}/files/8c1f2a`);
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.value.confirm).toEqual([]);
    expect(result.value.notes.join(' ')).toContain('no file extension');
    expect(result.value.notes.join(' ')).toContain('private network');
  });

  it("the inspection's warnings are to confirm, word for word", async () => {
    for (const [path, name] of [['/clip.mp4', 'high-bframes.mp4'], ['/late-moov.mp4', 'moov-at-end.mp4']] as const) {
      const file = bytes.get(name)!;
      const inspected = await inspectMedia('video', { head: file, size: file.length }, { extension: '.mp4', mimeType: 'video/mp4' });
      if (!inspected.ok) throw new Error(inspected.error.message);
      expect(inspected.value.warnings.length).toBeGreaterThan(0);
      const result = await checkMediaLink('video', `${base}${path}`);
      expect(result.ok).toBe(true);
      if (!result.ok) return;
      expect(result.value.confirm).toEqual(inspected.value.warnings.map((w) => w.message));
      expect(result.value.notes.join(' ')).not.toContain(inspected.value.warnings[0]!.message);
    }
    const late = await checkMediaLink('video', `${base}/late-moov.mp4`);
    if (late.ok) expect(late.value.confirm.join(' ')).toContain('-movflags +faststart');
  });

  it('refusals pass through with their field, status and rule', async () => {
    const deep = await checkMediaLink('image', `${base}/deep.png`, { field: 'content.image.link' });
    expect(deep).toMatchObject({ ok: false, error: { code: 'invalid_input', field: 'content.image.link' } });
    if (!deep.ok) expect(deep.error.message.startsWith('content.image.link: ')).toBe(true);
    const missing = await checkMediaLink('image', `${base}/missing.png`);
    expect(missing).toMatchObject({ ok: false, error: { code: 'invalid_input', field: 'link', httpStatus: 404 } });
    if (!missing.ok) expect(missing.error.message).toContain('HTTP 404 (Not Found)');
    const slow = await checkMediaLink('image', `${base}/slow.png`, { timeoutMs: 200 });
    expect(slow).toMatchObject({ ok: false, error: { code: 'timeout', field: 'link' } });
    if (!slow.ok) expect(slow.error.message).toContain('did not answer within 200 ms');
  });

  it('on undici, a large file on a slow link is judged within its grown deadline; without the growth it is not', async () => {
    expect(await checkMediaLink('document', `${base}/steady.txt`, { timeoutMs: 300, msPerMb: 3_000 })).toMatchObject({ ok: true, value: { contentLength: MB } });
    const fixed = await checkMediaLink('document', `${base}/steady.txt`, { timeoutMs: 300, msPerMb: 0 });
    expect(fixed).toMatchObject({ ok: false, error: { code: 'timeout', field: 'link' } });
    if (!fixed.ok) expect(fixed.error.message).toMatch(/^link: the file did not arrive within 300 ms \(\d+ KB of 1 MB read\)$/);
  });

  it("a refusal of a signed link names neither its query nor its fragment", async () => {
    const missing = await checkMediaLink('image', `${base}/missing.png?X-Amz-Signature=5ecret#5ecret`);
    expect(missing).toMatchObject({ ok: false, error: { httpStatus: 404 } });
    if (!missing.ok) expect(`${missing.error.message} ${missing.error.detail ?? ''}`).not.toContain('5ecret');
  });

  it('uses the fetch it is given: GETs with a Range, never HEAD', async () => {
    const png = bytes.get('rgb.png')!;
    const calls: string[] = [];
    const fetchImpl: ByteFetch = async (url, init) => {
      calls.push(`GET ${url} ${init.headers.Range ?? ''}`);
      return {
        status: 200,
        headers: new Headers({ 'content-type': 'image/png', 'content-length': String(png.length) }),
        body: (async function* () {
          yield png;
        })(),
        cancel: async () => undefined,
      };
    };
    const result = await checkMediaLink('image', 'https://media.example.com/photo.png', { fetchImpl });
    expect(result).toMatchObject({ ok: true, value: { contentType: 'image/png', contentLength: png.length, finalUrl: 'https://media.example.com/photo.png', notes: [], confirm: [] } });
    expect(calls).toHaveLength(1);
    expect(calls[0]).toMatch(/^GET https:\/\/media\.example\.com\/photo\.png bytes=0-\d+$/);
  });
});

describe('the undici fetch', () => {
  it('does not follow redirects itself, and streams the body', async () => {
    const controller = new AbortController();
    const moved = await undiciByteFetch(`${base}/moved.png`, { headers: {}, signal: controller.signal });
    expect(moved.status).toBe(301);
    expect(moved.headers.get('Location')).toBe('/photo.png');
    await moved.cancel();
    const photo = await undiciByteFetch(`${base}/photo.png`, { headers: { Range: 'bytes=0-9' }, signal: controller.signal });
    expect(photo.status).toBe(206);
    expect(photo.headers.get('content-range')).toBe(`bytes 0-9/${bytes.get('rgb.png')!.length}`);
    const chunks: Uint8Array[] = [];
    for await (const chunk of photo.body!) chunks.push(chunk);
    expect(Buffer.concat(chunks).equals(Buffer.from(bytes.get('rgb.png')!.subarray(0, 10)))).toBe(true);
    await photo.cancel();
  });
});

describe.each([
  ['app (undici)', undiciByteFetch],
  ['sandbox (Node fetch)', nodeByteFetch],
] as const)('network failures, on the %s fetch', (_name, fetchImpl) => {
  const reason = async (url: string): Promise<string | undefined> => {
    const result = await checkMediaFile('image', url, { fetch: fetchImpl, timeoutMs: 5_000 });
    return result.ok ? undefined : result.error.message;
  };

  it('are said in the rule catalogue\'s words', async () => {
    const failing: FailingServer[] = [await closingServer(), await resettingServer(), await selfSignedServer()];
    const cut = await startMediaFileServer({ '/cut.png': cutOff({ 'Content-Type': 'image/png' }, 100) });
    try {
      const [closing, resetting, tls] = failing as [FailingServer, FailingServer, FailingServer];
      expect(await reason(`${await closedPortUrl()}/photo.png`)).toBe('link: the link could not be reached (the server refused the connection, ECONNREFUSED)');
      expect(await reason(`http://${UNRESOLVABLE_HOST}/photo.png`)).toBe('link: the link could not be reached (the host name was not found)');
      expect(await reason(`${closing.url}/photo.png`)).toBe('link: the link could not be reached (the connection was closed)');
      expect(await reason(`${resetting.url}/photo.png`)).toBe('link: the link could not be reached (the connection was closed)');
      expect(await reason(`https://localhost:${tls.port}/photo.png`)).toBe(
        "link: the link could not be reached (the server's certificate is not valid, DEPTH_ZERO_SELF_SIGNED_CERT)",
      );
      expect(await reason(`${cut.url}/cut.png`)).toBe('link: the file could not be read to its end (the connection was closed, after 100 bytes)');
    } finally {
      for (const server of failing) await server.close();
      await cut.close();
    }
  });
});

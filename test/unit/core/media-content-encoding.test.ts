// Content codings against real servers on 127.0.0.1 that encode the file whatever the request asks
// (Accept-Encoding: identity ignored), the ways such servers do: a stored gzip with its length, gzip
// streamed on the fly, ranges over the coded bytes or over the file's, deflate (zlib-wrapped and
// raw), br, and a coding no client decodes. The app's fetch (undici, electron/core/media-link-check.ts)
// and the sandbox's (Node's fetch, sandbox/media-judge.ts) must judge the decoded file alike, and as
// the file served plainly is judged.
import { readFile } from 'node:fs/promises';
import type { IncomingMessage } from 'node:http';
import { brotliCompressSync, deflateRawSync, deflateSync, gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { undiciByteFetch } from '../../../electron/core/media-link-check';
import { nodeByteFetch } from '../../../sandbox/media-judge';
import { checkMediaFile, type ByteFetch, type MediaFileCheck } from '../../../shared/media-fetch';
import { MB, type MediaType } from '../../../shared/messages';
import type { Result } from '../../../shared/result';
import { mediaCorpus, type CorpusFile } from '../../fixtures/media-corpus';
import { file, startMediaFileServer, type MediaFileServer, type Route } from '../../support/media-file-server';

const ADAPTERS: readonly (readonly [string, ByteFetch])[] = [
  ['app (undici)', undiciByteFetch],
  ['sandbox (Node fetch)', nodeByteFetch],
];

/** A pass, a refusal and a warning of each kind of reading: whole files, and an MP4 whose moov is read from its tail. */
const FILES = ['rgb.png', 'rgb16.png', 'baseline.mp4', 'moov-at-end.mp4', 'vp9.mp4', 'plain.txt', 'latin1.txt', 'opus-stereo.ogg'];

/** How a server that encodes regardless answers: each is a route for a file of `contentType`. */
const SERVERS: Readonly<Record<string, (bytes: Uint8Array, contentType: string) => Route>> = {
  // A stored .gz served as the file: its length stated, Range ignored.
  'gzip, whole, with its length': (bytes, contentType) => coded('gzip', gzipSync(bytes), contentType, { length: true }),
  // Compression on the fly: chunked, its size unsaid.
  'gzip on the fly, chunked': (bytes, contentType) => coded('gzip', gzipSync(bytes), contentType, { length: false }),
  // A stored .gz with ranges: Content-Range counts the coded bytes (RFC 9110 14.4).
  'gzip, ranges over the coded bytes': (bytes, contentType) => codedRanges('gzip', gzipSync(bytes), contentType),
  // A range of the file, then compressed on its way out: Content-Range counts the file's bytes.
  'gzip, ranges over the file, each part coded': (bytes, contentType) => (req, res) => {
    const range = /^bytes=(\d+)-(\d+)$/.exec(req.headers.range ?? '');
    if (!range) return coded('gzip', gzipSync(bytes), contentType, { length: false })(req, res);
    const start = Number(range[1]);
    const end = Math.min(Number(range[2]), bytes.length - 1);
    const part = gzipSync(bytes.subarray(start, end + 1));
    res.writeHead(206, { 'Content-Type': contentType, 'Content-Encoding': 'gzip', 'Content-Range': `bytes ${start}-${end}/${bytes.length}`, 'Content-Length': String(part.length) }).end(part);
  },
  'x-gzip': (bytes, contentType) => coded('x-gzip', gzipSync(bytes), contentType, { length: true }),
  'deflate (zlib)': (bytes, contentType) => coded('deflate', deflateSync(bytes), contentType, { length: true }),
  'deflate (raw)': (bytes, contentType) => coded('deflate', deflateRawSync(bytes), contentType, { length: false }),
  br: (bytes, contentType) => coded('br', brotliCompressSync(bytes), contentType, { length: true }),
  'gzip, then br': (bytes, contentType) => coded('gzip, br', brotliCompressSync(gzipSync(bytes)), contentType, { length: true }),
};

/** The Accept-Encoding of every request, by path. */
const acceptEncoding = new Map<string, (string | undefined)[]>();

function coded(encoding: string, body: Buffer, contentType: string, options: { length: boolean }): Route {
  return (req, res) => {
    const headers: Record<string, string> = { 'Content-Type': contentType, 'Content-Encoding': encoding };
    if (options.length) headers['Content-Length'] = String(body.length);
    res.writeHead(200, headers);
    if (options.length) return void res.end(body);
    const half = Math.floor(body.length / 2);
    res.write(body.subarray(0, half));
    res.end(body.subarray(half));
  };
}

function codedRanges(encoding: string, body: Buffer, contentType: string): Route {
  const whole = coded(encoding, body, contentType, { length: true });
  return (req, res) => {
    const range = /^bytes=(\d+)-(\d+)$/.exec(req.headers.range ?? '');
    if (!range) return whole(req, res);
    const start = Number(range[1]);
    const end = Math.min(Number(range[2]), body.length - 1);
    res.writeHead(206, { 'Content-Type': contentType, 'Content-Encoding': encoding, 'Content-Range': `bytes ${start}-${end}/${body.length}`, 'Content-Length': String(end - start + 1) }).end(body.subarray(start, end + 1));
  };
}

const recording =
  (route: Route): Route =>
  (req: IncomingMessage, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    acceptEncoding.set(path, [...(acceptEncoding.get(path) ?? []), req.headers['accept-encoding']]);
    route(req, res);
  };

let server: MediaFileServer;
let corpus: Awaited<ReturnType<typeof mediaCorpus>>;
const serverNames = Object.keys(SERVERS);

beforeAll(async () => {
  corpus = await mediaCorpus();
  const routes: Record<string, Route> = {};
  for (const name of FILES) {
    const f = corpus.file(name);
    const bytes = new Uint8Array(await readFile(f.path));
    routes[`/plain/${name}`] = file(bytes, { contentType: f.mimeType });
    serverNames.forEach((server, i) => {
      routes[`/coded${i}/${name}`] = recording(SERVERS[server]!(bytes, f.mimeType));
    });
  }
  const png = new Uint8Array(await readFile(corpus.file('rgb.png').path));
  routes['/compress/rgb.png'] = recording(coded('compress', Buffer.from(png), 'image/png', { length: true }));
  routes['/broken/rgb.png'] = recording(coded('gzip', Buffer.from(png), 'image/png', { length: true }));
  routes['/broken-br/rgb.png'] = recording(coded('br', Buffer.from(png), 'image/png', { length: false }));
  // 8 MB of zeros in about 8 KB: a body of unsaid size past the image limit once decoded.
  routes['/bomb/rgb.png'] = recording(coded('gzip', gzipSync(new Uint8Array(8 * MB)), 'image/png', { length: true }));
  server = await startMediaFileServer(routes);
}, 120_000);

afterAll(async () => {
  await server?.close();
});

/** What a check says, without where the file was found (the paths differ). */
function verdict(result: Result<MediaFileCheck>): unknown {
  if (!result.ok) return { ok: false, code: result.error.code, message: result.error.message.replace(server.url, '<server>') };
  const { description, mimeType, warnings, contentType, size } = result.value;
  return { ok: true, description, mimeType, warnings: warnings.map((w) => w.rule), contentType, size };
}

const check = (fetch: ByteFetch, type: MediaType, path: string) => checkMediaFile(type, `${server.url}${path}`, { fetch, field: `${type}.link` });

describe('a server that encodes the file whatever is asked', () => {
  it('both fetches judge the decoded file, as the plain file is judged', async () => {
    for (const name of FILES) {
      const f: CorpusFile = corpus.file(name);
      const plain = verdict(await check(undiciByteFetch, f.type, `/plain/${name}`));
      expect(plain, name).toMatchObject({ ok: f.verdict !== 'refuse' });
      for (const [i, serverName] of serverNames.entries()) {
        for (const [adapter, fetch] of ADAPTERS) {
          expect(verdict(await check(fetch, f.type, `/coded${i}/${name}`)), `${name}, ${serverName}, ${adapter}`).toEqual(plain);
        }
      }
    }
  }, 120_000);

  it('both fetches ask for the file as it is: Accept-Encoding identity, whatever the caller says', async () => {
    for (const [adapter, fetch] of ADAPTERS) {
      acceptEncoding.clear();
      for (const headers of [{}, { 'accept-encoding': 'gzip, br' }, { 'Accept-Encoding': 'br' }] as Record<string, string>[]) {
        const res = await fetch(`${server.url}/coded0/rgb.png`, { headers, signal: new AbortController().signal });
        await res.cancel();
      }
      expect(acceptEncoding.get('/coded0/rgb.png'), adapter).toEqual(['identity', 'identity', 'identity']);
    }
  });

  it('a coding no client decodes is refused by both, naming it', async () => {
    const [app, sandbox] = await Promise.all(ADAPTERS.map(([, fetch]) => check(fetch, 'image', '/compress/rgb.png')));
    expect(verdict(app!)).toEqual(verdict(sandbox!));
    expect(app).toMatchObject({ ok: false, error: { code: 'invalid_input', field: 'image.link' } });
    if (!app!.ok) expect(app!.error.message).toContain('Content-Encoding "compress" cannot be decoded, only gzip, deflate and br can');
  });

  it('a body that does not decode is refused by both, in the same words, as its coding broken', async () => {
    for (const [path, coding] of [
      ['/broken/rgb.png', 'gzip'],
      ['/broken-br/rgb.png', 'br'],
    ] as const) {
      const [app, sandbox] = await Promise.all(ADAPTERS.map(([, fetch]) => check(fetch, 'image', path)));
      expect(verdict(app!), path).toEqual(verdict(sandbox!));
      expect(app, path).toMatchObject({ ok: false, error: { code: 'invalid_input', field: 'image.link' } });
      if (!app!.ok) expect(app!.error.message, path).toContain(`its ${coding} coding (Content-Encoding) does not decode`);
    }
  });

  it('the size limit counts the decoded bytes: a small gzip of a large file is cut off at the limit by both', async () => {
    for (const [adapter, fetch] of ADAPTERS) {
      const result = await check(fetch, 'image', '/bomb/rgb.png');
      expect(result, adapter).toMatchObject({ ok: false, error: { code: 'invalid_input' } });
      if (!result.ok) expect(result.error.message, adapter).toBe('image.link: the file is larger than the 5 MB allowed for an image: the server sent more than 5 MB without saying its size, and was stopped there');
    }
  });
});

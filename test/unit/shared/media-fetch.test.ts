// A media file by link, fetched and judged on its bytes (gateway-spec.md 2.3), against a real HTTP
// server on 127.0.0.1 that serves the media corpus the ways real servers do: Range honoured,
// shortened and ignored, sizes said and unsaid, redirects, dead links, signed links, slow, stalled
// and endless bodies; and large files of each kind, of which only the ranges their readers need
// are read. The fetch is the sandbox's (Node's fetch); the app's (undici) is tested in
// test/unit/core/media-link-check.test.ts.
import { execFile } from 'node:child_process';
import { mkdir, readFile, rename, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nodeByteFetch } from '../../../sandbox/media-judge';
import { checkMediaFile, extensionOf, isPrivateHost, type ByteFetch, type ByteResponse, type MediaInspector } from '../../../shared/media-fetch';
import { headBytesFor, inspectMedia, type MediaSample } from '../../../shared/media-inspect';
import { MB, type MediaType } from '../../../shared/messages';
import { jpegWithComments, mp4WithBigMoov, pdfWithStream } from '../../fixtures/big-media';
import { mediaCorpus, type CorpusFile } from '../../fixtures/media-corpus';
import { ooxmlPackage } from '../../fixtures/zip-writer';
import {
  cutOff,
  dribble,
  endlessStream,
  file,
  neverEnding,
  redirect,
  silent,
  startMediaFileServer,
  statusOnly,
  type MediaFileServer,
  type Route,
} from '../../support/media-file-server';

const OOXML_DOC = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';
const MB_OF_TEXT = new Uint8Array(MB).fill(0x61);
/** The secret part of a signed link. */
const SIGNATURE = 'X-Amz-Signature=5ecret0f0a51gned1ink';

let server: MediaFileServer;
let base: string;
let corpus: Awaited<ReturnType<typeof mediaCorpus>>;
const bytesOf = new Map<string, Uint8Array>();
/** A moov-at-end MP4 larger than the video head, and the same file made faststart. */
let longVideo: { moovAtEnd: Uint8Array; faststart: Uint8Array };
/** Large files of each kind whose readers need a few parts of them (test/fixtures/big-media.ts). */
let big: { pdf: Uint8Array; docx: Uint8Array; middleDocx: Uint8Array; jpeg: Uint8Array; faststart: Uint8Array };

/** The real inspection, recording the sample it was given. */
function recordingInspector(): { inspect: MediaInspector; samples: MediaSample[] } {
  const samples: MediaSample[] = [];
  return {
    samples,
    inspect: (type, sample, declared) => {
      samples.push(sample);
      return inspectMedia(type, sample, declared);
    },
  };
}

const check = (type: MediaType, url: string, options: Partial<Parameters<typeof checkMediaFile>[2]> = {}) => checkMediaFile(type, url, { fetch: nodeByteFetch, ...options });

async function refused(type: MediaType, url: string, options: Partial<Parameters<typeof checkMediaFile>[2]> = {}) {
  const result = await check(type, url, options);
  if (result.ok) throw new Error(`accepted ${url}`);
  expect(result.error.field).toBe(options.field ?? 'link');
  expect(result.error.message.startsWith(`${options.field ?? 'link'}: `)).toBe(true);
  return result.error;
}

const run = promisify(execFile);

/** ffmpeg makes a video long enough that its moov sits past the head; cached in the temp directory. */
async function makeLongVideo(): Promise<{ moovAtEnd: Uint8Array; faststart: Uint8Array }> {
  const dir = join(tmpdir(), 'softphone-media-fetch-v1');
  await mkdir(dir, { recursive: true });
  const paths = { moovAtEnd: join(dir, 'long-moov-at-end.mp4'), faststart: join(dir, 'long-faststart.mp4') };
  const exists = async (p: string) => (await stat(p).catch(() => undefined))?.isFile() ?? false;
  if (!(await exists(paths.moovAtEnd)) || !(await exists(paths.faststart))) {
    const tmp = `${paths.moovAtEnd}.${process.pid}.tmp.mp4`;
    const fast = `${paths.faststart}.${process.pid}.tmp.mp4`;
    // Noise does not compress: 4 s of it at 320×240 is a few megabytes, past any sensible head.
    const ffmpeg = ['-hide_banner', '-loglevel', 'error', '-y', '-threads', '1'];
    await run('ffmpeg', [
      ...ffmpeg,
      '-f', 'lavfi', '-i', 'nullsrc=size=320x240:rate=25:duration=4,geq=random(1)*255:128:128',
      '-f', 'lavfi', '-i', 'sine=frequency=440:duration=4',
      '-c:v', 'libx264', '-preset', 'ultrafast', '-profile:v', 'baseline', '-pix_fmt', 'yuv420p', '-b:v', '6M',
      '-c:a', 'aac', '-shortest', tmp,
    ]);
    await run('ffmpeg', [...ffmpeg, '-i', tmp, '-c', 'copy', '-movflags', '+faststart', fast]);
    // Renamed into place whole, so a second test process never reads half a file.
    await rename(tmp, paths.moovAtEnd);
    await rename(fast, paths.faststart);
  }
  return { moovAtEnd: new Uint8Array(await readFile(paths.moovAtEnd)), faststart: new Uint8Array(await readFile(paths.faststart)) };
}

/** Bytes that do not compress: a picture's worth of noise. */
function noise(length: number): Uint8Array {
  const bytes = new Uint8Array(length);
  for (let i = 0, x = 0x1234567; i < length; i++) {
    x = (Math.imul(x, 1103515245) + 12345) >>> 0;
    bytes[i] = x >>> 24;
  }
  return bytes;
}

/** The ranges asked for `path` since request `from`, and how many bytes of a file of `size` they cover (a request without a range: all of them). */
function rangesAsked(path: string, from: number, size: number): { ranges: (string | undefined)[]; bytes: number } {
  const ranges = server.requestsFor(path, from).map((r) => r.range);
  const bytes = ranges.reduce((n, range) => {
    const match = /^bytes=(\d+)-(\d+)$/.exec(range ?? '');
    return n + (match ? Math.min(Number(match[2]), size - 1) - Number(match[1]) + 1 : size);
  }, 0);
  return { ranges, bytes };
}

/** Where a faststart MP4's moov box ends. */
function moovEnd(mp4: Uint8Array): number {
  const view = new DataView(mp4.buffer, mp4.byteOffset, mp4.byteLength);
  for (let at = 0; at + 8 <= mp4.length; at += view.getUint32(at)) {
    if (Buffer.from(mp4.subarray(at + 4, at + 8)).toString('latin1') === 'moov') return at + view.getUint32(at);
  }
  throw new Error('no moov box');
}

/** Each answer held back by `ms`: a server that is slow at every request, not at any one. */
const delayed =
  (route: Route, ms: number): Route =>
  (req, res) => {
    setTimeout(() => route(req, res), ms);
  };

beforeAll(async () => {
  corpus = await mediaCorpus();
  for (const f of corpus.files) bytesOf.set(f.name, new Uint8Array(await readFile(f.path)));
  longVideo = await makeLongVideo();
  const bytes = (name: string) => bytesOf.get(name)!;
  const media = [{ name: 'word/media/image1.bin', data: noise(3 * MB) }, { name: 'word/media/image2.bin', data: noise(3 * MB) }];
  big = {
    pdf: pdfWithStream(bytes('doc.pdf'), 20 * MB),
    docx: ooxmlPackage('docx', { media, deflate: true, dataDescriptors: true, contentTypes: 'last' }),
    middleDocx: ooxmlPackage('docx', { media, contentTypes: { afterMedia: 1 } }),
    jpeg: jpegWithComments(bytes('rgb.jpg'), 6, 50),
    faststart: mp4WithBigMoov(longVideo.faststart, 1.5 * MB),
  };
  const routes: Record<string, Route> = {
    '/photo.png': file(bytes('rgb.png'), { contentType: 'image/png' }),
    '/photo.jpg': file(bytes('rgb.jpg'), { contentType: 'image/jpeg' }),
    '/plain/photo.png': file(bytes('rgb.png'), { contentType: 'image/png', ranges: false }),
    '/chunked/photo.png': file(bytes('rgb.png'), { contentType: 'image/png', ranges: false, length: false }),
    '/notes.txt': file(bytes('plain.txt'), { contentType: 'text/plain; charset=utf-8' }),
    '/report.docx': file(bytes('doc.docx'), { contentType: OOXML_DOC }),
    '/page.png': file(bytes('rgb.png'), { contentType: 'text/html; charset=utf-8' }),
    '/untyped.png': file(bytes('rgb.png'), { contentType: undefined }),
    '/mismatch.png': file(bytes('rgb.jpg'), { contentType: 'image/jpeg' }),
    '/files/8c1f2a': file(bytes('doc.pdf'), { contentType: 'application/pdf' }),
    '/signed.pdf': file(bytes('doc.pdf'), { contentType: 'application/pdf', refuseHead: 403 }),
    '/empty.pdf': file(new Uint8Array(0), { contentType: 'application/pdf' }),
    '/empty-plain.pdf': file(new Uint8Array(0), { contentType: 'application/pdf', ranges: false }),
    // Sizes said up front, bodies that never end: refused by the size, or the test times out.
    '/big.mp4': neverEnding({ 'Content-Type': 'video/mp4', 'Content-Length': String(16 * MB + 1) }),
    '/huge.pdf': neverEnding({ 'Content-Type': 'application/pdf', 'Content-Length': String(25 * MB + 1) }),
    '/big-range.mp4': (req, res) => {
      const end = Number(/^bytes=0-(\d+)$/.exec(req.headers.range ?? '')?.[1] ?? '0');
      neverEnding({ 'Content-Type': 'video/mp4', 'Content-Range': `bytes 0-${end}/${16 * MB + 1}` }, 206)(req, res);
    },
    '/endless.png': endlessStream('image/png'),
    '/missing.png': statusOnly(404, { 'Content-Type': 'text/html' }),
    '/broken.png': statusOnly(503),
    '/slow.png': silent,
    '/trickle.png': neverEnding({ 'Content-Type': 'image/png' }),
    '/cut.png': cutOff({ 'Content-Type': 'image/png' }, 100),
    '/moved.png': redirect('/photo.png', 301),
    '/relative/short': redirect('../photo.png', 307),
    '/loop-a.png': redirect('/loop-b.png'),
    '/loop-b.png': redirect('/loop-a.png'),
    '/to-ftp.png': redirect('ftp://127.0.0.1/photo.png'),
    '/no-location.png': statusOnly(302),
    // A 206 for a range that was not asked for: read plainly instead.
    '/odd-range.png': (req, res) => {
      const png = bytes('rgb.png');
      if (req.headers.range) {
        res.writeHead(206, { 'Content-Type': 'image/png', 'Content-Range': `bytes 5-9/${png.length}`, 'Content-Length': '5' }).end(png.subarray(5, 10));
        return;
      }
      res.writeHead(200, { 'Content-Type': 'image/png', 'Content-Length': String(png.length) }).end(png);
    },
    '/long-moov-at-end.mp4': file(longVideo.moovAtEnd, { contentType: 'video/mp4' }),
    '/plain/long-moov-at-end.mp4': file(longVideo.moovAtEnd, { contentType: 'video/mp4', ranges: false }),
    '/long-faststart.mp4': file(longVideo.faststart, { contentType: 'video/mp4' }),
    '/slow-ranges/long-moov-at-end.mp4': delayed(file(longVideo.moovAtEnd, { contentType: 'video/mp4' }), 250),
    '/short-ranges/long-moov-at-end.mp4': file(longVideo.moovAtEnd, { contentType: 'video/mp4', maxRangeBytes: 256 * 1024 }),
    '/short-ranges/doc.pdf': file(bytes('doc.pdf'), { contentType: 'application/pdf', maxRangeBytes: 500 }),
    // 1 MB of text, 64 KB every 40 ms: about 0.7 s, well past the 300 ms the tests give before any byte.
    '/steady/notes.txt': dribble(MB_OF_TEXT, { contentType: 'text/plain', chunkBytes: 64 * 1024, everyMs: 40 }),
    '/steady-unsaid/notes.txt': dribble(MB_OF_TEXT, { contentType: 'text/plain', chunkBytes: 64 * 1024, everyMs: 40, ranges: false, length: false }),
    '/crawl/notes.txt': dribble(MB_OF_TEXT, { contentType: 'text/plain', chunkBytes: 64 * 1024, everyMs: 100 }),
    '/stalled/notes.txt': dribble(MB_OF_TEXT, { contentType: 'text/plain', chunkBytes: 64 * 1024, everyMs: 20, stallAfter: 128 * 1024 }),
    '/signed-loop-a.png': redirect(`/signed-loop-b.png?${SIGNATURE}#${SIGNATURE}`),
    '/signed-loop-b.png': redirect(`/signed-loop-a.png?${SIGNATURE}`),
    '/signed-to-ftp.png': redirect(`ftp://agent:5ecret-password@127.0.0.1/photo.png?${SIGNATURE}`),
  };
  // Plain text is a document up to 25 MB: exactly at the limit it fits, one byte more does not.
  const atLimit = new Uint8Array(25 * MB).fill(0x61);
  const overLimit = new Uint8Array(25 * MB + 1).fill(0x61);
  routes['/at-limit.txt'] = file(atLimit, { contentType: 'text/plain' });
  routes['/plain/at-limit.txt'] = file(atLimit, { contentType: 'text/plain', ranges: false, length: false });
  routes['/plain/over-limit.txt'] = file(overLimit, { contentType: 'text/plain', ranges: false, length: false });
  routes['/over-limit.txt'] = file(overLimit, { contentType: 'text/plain' });
  const bigRoutes: [string, Uint8Array, string][] = [
    ['report.pdf', big.pdf, 'application/pdf'],
    ['report.docx', big.docx, OOXML_DOC],
    ['middle.docx', big.middleDocx, OOXML_DOC],
    ['photo.jpg', big.jpeg, 'image/jpeg'],
    ['faststart.mp4', big.faststart, 'video/mp4'],
  ];
  for (const [name, content, contentType] of bigRoutes) {
    routes[`/big/${name}`] = file(content, { contentType });
    routes[`/plain/big/${name}`] = file(content, { contentType, ranges: false });
  }
  for (let i = 0; i < 8; i++) routes[`/hop${i}.png`] = redirect(`/hop${i + 1}.png`);
  routes['/hop8.png'] = file(bytes('rgb.png'), { contentType: 'image/png' });
  for (const f of corpus.files) {
    routes[`/corpus/${f.name}`] = file(bytes(f.name), { contentType: f.mimeType });
    routes[`/corpus-plain/${f.name}`] = file(bytes(f.name), { contentType: f.mimeType, ranges: false, length: false });
  }
  server = await startMediaFileServer(routes);
  base = server.url;
}, 120_000);

afterAll(async () => {
  await server?.close();
});

describe('files that fit', () => {
  it('an image by one range request, the whole file as the sample, its size from Content-Range', async () => {
    const png = bytesOf.get('rgb.png')!;
    const { inspect, samples } = recordingInspector();
    const before = server.seen.length;
    const result = await check('image', `${base}/photo.png`, { inspect });
    expect(result).toMatchObject({ ok: true, value: { contentType: 'image/png', mimeType: 'image/png', size: png.length, finalUrl: `${base}/photo.png`, warnings: [] } });
    const requests = server.seen.slice(before);
    expect(requests).toHaveLength(1);
    expect(requests[0]).toMatchObject({ method: 'GET', path: '/photo.png' });
    expect(requests[0]!.range).toMatch(/^bytes=0-\d+$/);
    expect(samples).toHaveLength(1);
    expect(samples[0]!.size).toBe(png.length);
    expect(Buffer.from(samples[0]!.head).equals(Buffer.from(png))).toBe(true);
    expect(samples[0]!.tail).toBeUndefined();
  });

  it('a server that ignores Range: the body read whole, with or without a Content-Length', async () => {
    const png = bytesOf.get('rgb.png')!;
    for (const path of ['/plain/photo.png', '/chunked/photo.png']) {
      const { inspect, samples } = recordingInspector();
      const result = await check('image', `${base}${path}`, { inspect });
      expect(result).toMatchObject({ ok: true, value: { size: png.length } });
      expect(Buffer.from(samples[0]!.head).equals(Buffer.from(png))).toBe(true);
    }
  });

  it('.jpg as .jpeg, Content-Type parameters ignored, Office Open XML, plain text', async () => {
    expect(await check('image', `${base}/photo.jpg`)).toMatchObject({ ok: true, value: { contentType: 'image/jpeg' } });
    expect(await check('document', `${base}/notes.txt`)).toMatchObject({ ok: true, value: { contentType: 'text/plain' } });
    expect(await check('document', `${base}/report.docx`)).toMatchObject({ ok: true, value: { contentType: OOXML_DOC } });
  });

  it('follows redirects, relative ones too, and reports where the file is', async () => {
    expect(await check('image', `${base}/moved.png`)).toMatchObject({ ok: true, value: { finalUrl: `${base}/photo.png` } });
    expect(await check('image', `${base}/relative/short`)).toMatchObject({ ok: true, value: { finalUrl: `${base}/photo.png` } });
    expect((await check('image', `${base}/hop0.png`, { maxRedirects: 10 })).ok).toBe(true);
  });

  it('never asks with HEAD, so links signed for GET only work', async () => {
    const before = server.seen.length;
    expect(await check('document', `${base}/signed.pdf`)).toMatchObject({ ok: true, value: { contentType: 'application/pdf', size: bytesOf.get('doc.pdf')!.length } });
    expect(server.seen.slice(before).map((r) => r.method)).toEqual(['GET']);
  });

  it('a 206 for a range it was not asked for: the file is read plainly instead', async () => {
    const before = server.seen.length;
    expect(await check('image', `${base}/odd-range.png`)).toMatchObject({ ok: true, value: { size: bytesOf.get('rgb.png')!.length } });
    const requests = server.seen.slice(before);
    expect(requests).toHaveLength(2);
    expect(requests[0]!.range).toMatch(/^bytes=0-/);
    expect(requests[1]!.range).toBeUndefined();
  });

  it('notes a path without extension and a link the gateway cannot reach, without asking to confirm', async () => {
    const result = await check('document', `${base}/files/8c1f2a`);
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.value.warnings).toEqual([]);
    expect(result.value.notes.join(' ')).toContain('no file extension');
    expect(result.value.notes.join(' ')).toContain('private network');
  });
});

describe('an MP4 whose moov sits after its mdat', () => {
  it('is read as a head and a tail range, not whole, and warned about', async () => {
    const size = longVideo.moovAtEnd.length;
    expect(size).toBeGreaterThan(headBytesFor('video', size));
    const { inspect, samples } = recordingInspector();
    const before = server.seen.length;
    const result = await check('video', `${base}/long-moov-at-end.mp4`, { inspect });
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.value.size).toBe(size);
    expect(result.value.warnings.map((w) => w.rule)).toContain('video.moov-after-mdat');
    expect(result.value.warnings.find((w) => w.rule === 'video.moov-after-mdat')!.message).toContain('-movflags +faststart');
    const ranges = server.seen.slice(before).map((r) => r.range);
    expect(ranges[0]).toMatch(/^bytes=0-\d+$/);
    const last = /^bytes=(\d+)-(\d+)$/.exec(ranges.at(-1) ?? '');
    expect(last).not.toBeNull();
    expect(Number(last![2])).toBe(size - 1);
    // What was read is far less than the file: the mdat in between was skipped.
    const sample = samples.at(-1)!;
    expect(sample.tail).toBeDefined();
    expect(sample.head.length + sample.tail!.length).toBeLessThan(size);
    expect(Buffer.from(sample.tail!).equals(Buffer.from(longVideo.moovAtEnd.subarray(size - sample.tail!.length)))).toBe(true);
    expect(Buffer.from(sample.head).equals(Buffer.from(longVideo.moovAtEnd.subarray(0, sample.head.length)))).toBe(true);
  });

  it('from a server that ignores Range, read whole: the same verdict', async () => {
    const { inspect, samples } = recordingInspector();
    const result = await check('video', `${base}/plain/long-moov-at-end.mp4`, { inspect });
    expect(result.ok).toBe(true);
    if (result.ok) expect(result.value.warnings.map((w) => w.rule)).toContain('video.moov-after-mdat');
    expect(samples.at(-1)!.head.length).toBe(longVideo.moovAtEnd.length);
  });

  it('the same file made faststart needs its head only, and passes', async () => {
    const size = longVideo.faststart.length;
    const before = server.seen.length;
    const result = await check('video', `${base}/long-faststart.mp4`);
    expect(result).toMatchObject({ ok: true, value: { size, warnings: [] } });
    for (const r of server.seen.slice(before)) {
      const range = /^bytes=(\d+)-(\d+)$/.exec(r.range ?? '');
      expect(range).not.toBeNull();
      expect(Number(range![2])).toBeLessThan(size - 1);
    }
  });

  it('one deadline for the whole check: slow answers add up even when each is quick enough', async () => {
    const result = await check('video', `${base}/slow-ranges/long-moov-at-end.mp4`, { timeoutMs: 400, msPerMb: 0 });
    expect(result.ok).toBe(false);
    if (!result.ok) {
      expect(result.error.code).toBe('timeout');
      expect(result.error.message).toContain('400 ms');
    }
  });
});

describe('the corpus: every file judged as the gateway judges it', () => {
  const verdicts = (mode: 'corpus' | 'corpus-plain') => async () => {
    for (const f of corpus.files) await expectVerdict(f, `${base}/${mode}/${f.name}`);
  };
  it('served with Range', verdicts('corpus'), 60_000);
  it('served whole, chunked, Range ignored', verdicts('corpus-plain'), 60_000);

  async function expectVerdict(f: CorpusFile, url: string): Promise<void> {
    const result = await check(f.type, url);
    const what = `${f.name} (${f.verdict}${f.rule ? ` ${f.rule}` : ''})`;
    if (f.verdict === 'refuse') {
      expect(result.ok, what).toBe(false);
      if (result.ok) return;
      expect(result.error.code, what).toBe('invalid_input');
      expect(result.error.field, what).toBe('link');
      if (f.rule) expect(result.error.detail, what).toBe(f.rule);
      return;
    }
    expect(result.ok, `${what}: ${result.ok ? '' : result.error.message}`).toBe(true);
    if (!result.ok) return;
    expect(result.value.size, what).toBe(bytesOf.get(f.name)!.length);
    expect(result.value.mimeType, what).toBe(f.mimeType);
    if (f.verdict === 'pass') expect(result.value.warnings, what).toEqual([]);
    else expect(result.value.warnings.map((w) => w.rule), what).toContain(f.rule);
  }

  it('a refusal names the field, what the file is and the rule, as the inspection words it', async () => {
    const f = corpus.file('rgb16.png');
    const inspected = await inspectMedia('image', { head: bytesOf.get(f.name)!, size: bytesOf.get(f.name)!.length }, { extension: '.png', mimeType: 'image/png' });
    expect(inspected.ok).toBe(false);
    if (inspected.ok) return;
    const error = await refused('image', `${base}/corpus/rgb16.png`, { field: 'image.link' });
    expect(error.message).toBe(`image.link: ${inspected.error.message}`);
    expect(error.detail).toBe(f.rule);
  });
});

describe('a server that sends shorter ranges than asked', () => {
  it('is asked for the rest in turn: a head and a tail read piece by piece, the same verdict', async () => {
    const size = longVideo.moovAtEnd.length;
    const { inspect, samples } = recordingInspector();
    const before = server.seen.length;
    const result = await check('video', `${base}/short-ranges/long-moov-at-end.mp4`, { inspect });
    expect(result.ok, result.ok ? '' : result.error.message).toBe(true);
    if (!result.ok) return;
    expect(result.value.size).toBe(size);
    expect(result.value.warnings.map((w) => w.rule)).toContain('video.moov-after-mdat');
    const sample = samples.at(-1)!;
    expect(sample.head.length).toBe(headBytesFor('video', size));
    expect(Buffer.from(sample.head).equals(Buffer.from(longVideo.moovAtEnd.subarray(0, sample.head.length)))).toBe(true);
    expect(Buffer.from(sample.tail!).equals(Buffer.from(longVideo.moovAtEnd.subarray(size - sample.tail!.length)))).toBe(true);
    const requests = server.seen.slice(before);
    expect(requests.length).toBeGreaterThan(4);
    for (const r of requests) expect(r.range).toMatch(/^bytes=\d+-\d+$/);
  });

  it('a small document in pieces of 500 bytes', async () => {
    const pdf = bytesOf.get('doc.pdf')!;
    const before = server.seen.length;
    expect(await check('document', `${base}/short-ranges/doc.pdf`)).toMatchObject({ ok: true, value: { size: pdf.length, mimeType: 'application/pdf' } });
    expect(server.seen.length - before).toBe(Math.ceil(pdf.length / 500));
  });
});

describe('only what the format needs, where the server allows ranges', () => {
  const KB = 1024;

  it('a 20 MB PDF: its head and its last 1024 bytes', async () => {
    const size = big.pdf.length;
    const before = server.seen.length;
    expect(await check('document', `${base}/big/report.pdf`)).toMatchObject({ ok: true, value: { mimeType: 'application/pdf', description: 'PDF 1.4', size } });
    const { ranges, bytes } = rangesAsked('/big/report.pdf', before, size);
    expect(ranges).toEqual([`bytes=0-${64 * KB - 1}`, `bytes=${size - 1024}-${size - 1}`]);
    expect(bytes).toBe(65 * KB);
  });

  it('a large .docx: its head, the end of its ZIP, and its [Content_Types].xml entry where that lies between', async () => {
    for (const [path, content, requests] of [['/big/report.docx', big.docx, 2], ['/big/middle.docx', big.middleDocx, 3]] as const) {
      const size = content.length;
      expect(size, path).toBeGreaterThan(6 * MB);
      const before = server.seen.length;
      expect(await check('document', `${base}${path}`), path).toMatchObject({ ok: true, value: { mimeType: OOXML_DOC, size } });
      const { ranges, bytes } = rangesAsked(path, before, size);
      expect(ranges, path).toHaveLength(requests);
      expect(ranges.slice(0, 2), path).toEqual([`bytes=0-${64 * KB - 1}`, `bytes=${size - 22 - 0xffff}-${size - 1}`]);
      expect(bytes, path).toBeLessThan(200 * KB);
    }
  });

  it('a large JPEG: up to its frame header, past 400 KB of comments', async () => {
    const size = big.jpeg.length;
    expect(size).toBeGreaterThan(3 * MB);
    const before = server.seen.length;
    expect(await check('image', `${base}/big/photo.jpg`)).toMatchObject({ ok: true, value: { mimeType: 'image/jpeg', description: '8-bit RGB JPEG', size } });
    const { ranges, bytes } = rangesAsked('/big/photo.jpg', before, size);
    expect(ranges[0]).toBe(`bytes=0-${256 * KB - 1}`);
    expect(ranges).toHaveLength(2);
    expect(bytes).toBeLessThan(MB);
  });

  it('a faststart MP4 whose moov box is longer than the head: up to the end of the moov box, not of the file', async () => {
    const size = big.faststart.length;
    const end = moovEnd(big.faststart);
    expect(end).toBeGreaterThan(MB);
    expect(end).toBeLessThan(size - MB);
    const before = server.seen.length;
    expect(await check('video', `${base}/big/faststart.mp4`)).toMatchObject({ ok: true, value: { mimeType: 'video/mp4', warnings: [], size } });
    const { ranges, bytes } = rangesAsked('/big/faststart.mp4', before, size);
    expect(ranges).toEqual([`bytes=0-${MB - 1}`, `bytes=${MB}-${end - 1}`]);
    expect(bytes).toBe(end);
  });

  it('from a server that ignores Range: the same verdicts, the body stopped once the reader has what it needs', async () => {
    const cases = [
      // A PDF's end and a ZIP's directory are at the end of the file: read through to it.
      { path: 'report.pdf', type: 'document', content: big.pdf, read: big.pdf.length },
      { path: 'report.docx', type: 'document', content: big.docx, read: big.docx.length },
      { path: 'photo.jpg', type: 'image', content: big.jpeg, read: undefined },
      { path: 'faststart.mp4', type: 'video', content: big.faststart, read: moovEnd(big.faststart) },
    ] as const;
    for (const { path, type, content, read } of cases) {
      const { inspect, samples } = recordingInspector();
      const result = await check(type, `${base}/plain/big/${path}`, { inspect });
      expect(result.ok, `${path}: ${result.ok ? '' : result.error.message}`).toBe(true);
      expect(result.ok && result.value.size, path).toBe(content.length);
      const sample = samples.at(-1)!;
      if (read !== undefined) expect(sample.head.length, path).toBe(read);
      else expect(sample.head.length, path).toBeLessThan(MB);
      expect(Buffer.from(sample.head).equals(Buffer.from(content.subarray(0, sample.head.length))), path).toBe(true);
    }
  });
});

describe('a deadline that grows with what must be read', () => {
  it('a large file that arrives steadily is judged: the time allowed grows with the MB it must read', async () => {
    for (const path of ['/steady/notes.txt', '/steady-unsaid/notes.txt']) {
      const started = Date.now();
      const result = await check('document', `${base}${path}`, { timeoutMs: 300, msPerMb: 3_000 });
      expect(result, path).toMatchObject({ ok: true, value: { size: MB, mimeType: 'text/plain' } });
      // Longer than the 300 ms before any byte: a fixed deadline would have refused it.
      expect(Date.now() - started, path).toBeGreaterThan(300);
    }
  });

  it('the same file against a fixed deadline is refused, naming how much arrived', async () => {
    const result = await check('document', `${base}/steady/notes.txt`, { timeoutMs: 300, msPerMb: 0 });
    expect(result).toMatchObject({ ok: false, error: { code: 'timeout', field: 'link' } });
    if (!result.ok) expect(result.error.message).toMatch(/^link: the file did not arrive within 300 ms \(\d+ KB of 1 MB read\)$/);
  });

  it('a file slower than its allowance is refused, with the time allowed and how it was reckoned', async () => {
    // 1 MB at 64 KB every 100 ms takes 1.6 s; 300 ms and 500 ms for the MB allow 800 ms.
    const result = await check('document', `${base}/crawl/notes.txt`, { timeoutMs: 300, msPerMb: 500 });
    expect(result).toMatchObject({ ok: false, error: { code: 'timeout' } });
    if (!result.ok) {
      expect(result.error.message).toMatch(/^link: the file did not arrive within 800 ms \(\d+ KB of 1 MB read; the check allows 300 ms and 500 ms more for each MB\)$/);
    }
  });

  it('a server that stops sending is timed out after the base time, however long the size allowed', async () => {
    const started = Date.now();
    const result = await check('document', `${base}/stalled/notes.txt`, { timeoutMs: 300, msPerMb: 60_000 });
    expect(result).toMatchObject({ ok: false, error: { code: 'timeout', field: 'link' } });
    // The head of a document (64 KB) arrives whole; the range after it stops after 128 KB.
    const sent = (headBytesFor('document', MB) + 128 * 1024) / 1024;
    if (!result.ok) expect(result.error.message).toBe(`link: the server stopped sending the file: nothing arrived for 300 ms after ${sent} KB`);
    expect(Date.now() - started).toBeLessThan(5_000);
  });
});

describe('signed links', () => {
  const secretIn = (text: string | undefined) => text !== undefined && /5ecret/.test(text);

  it('are fetched with their query; the result carries no part of it', async () => {
    const before = server.seen.length;
    expect(await check('image', `${base}/photo.png?${SIGNATURE}#${SIGNATURE}`)).toMatchObject({ ok: true });
    expect(server.seen.slice(before).map((r) => r.query)).toEqual([`?${SIGNATURE}`]);
  });

  it('a refusal names the link by scheme, host and path only', async () => {
    const missing = await refused('image', `${base}/missing.png?${SIGNATURE}`);
    expect(missing.message).toContain('HTTP 404');
    const loop = await refused('image', `${base}/signed-loop-a.png?${SIGNATURE}`);
    expect(loop.message).toBe(`link: the link redirects in a loop (back to ${base}/signed-loop-a.png)`);
    const ftp = await refused('image', `${base}/signed-to-ftp.png?${SIGNATURE}`);
    expect(ftp.message).toBe('link: the link redirects to a "ftp:" address, which is not an http:// or https:// address');
    const timedOut = await check('image', `${base}/slow.png?${SIGNATURE}`, { timeoutMs: 100 });
    expect(timedOut.ok).toBe(false);
    for (const error of [missing, loop, ftp, timedOut.ok ? undefined : timedOut.error]) {
      expect(secretIn(error?.message), error?.message).toBe(false);
      expect(secretIn(error?.detail), error?.detail).toBe(false);
    }
  });

  it('an error text that quotes the link whole is cut to scheme, host and path, credentials gone', async () => {
    const link = `https://agent:5ecret-password@media.example.com/files/photo.png?${SIGNATURE}#${SIGNATURE}`;
    const quoting: ByteFetch = async (url) => {
      throw new TypeError(`request to ${url} failed, reason: socket hang up`);
    };
    const result = await checkMediaFile('image', link, { fetch: quoting });
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.error.message).toBe('link: the link could not be reached (request to https://media.example.com/files/photo.png failed, reason: socket hang up)');
    expect(result.error.detail).toBe('request to https://media.example.com/files/photo.png failed, reason: socket hang up');
  });
});

describe('files that do not fit, refused with the field', () => {
  it('only http and https', async () => {
    for (const link of ['ftp://127.0.0.1/photo.png', 'file:///tmp/photo.png', 'photo.png', '']) {
      const error = await refused('image', link);
      expect(error.code).toBe('invalid_input');
      expect(error.message).toContain('http:// or https://');
    }
  });

  it('the wrong extension, before any request', async () => {
    const before = server.seen.length;
    const error = await refused('image', `${base}/animation.gif`);
    expect(error.message).toContain('".gif"');
    expect(error.message).toContain('.jpeg, .jpg or .png');
    expect(server.seen.length).toBe(before);
    expect((await refused('audio', `${base}/photo.png`)).message).toContain('.aac, .amr, .mp3, .m4a or .ogg');
  });

  it('the wrong type, a missing type, and an extension that disagrees with the type', async () => {
    const html = await refused('image', `${base}/page.png`);
    expect(html.message).toContain('text/html');
    expect(html.message).toContain('image/jpeg or image/png');
    expect((await refused('image', `${base}/untyped.png`)).message).toContain('no Content-Type');
    const mismatch = await refused('image', `${base}/mismatch.png`);
    expect(mismatch.message).toContain('".png"');
    expect(mismatch.message).toContain('image/jpeg');
    expect((await refused('video', `${base}/photo.png`)).message).toContain('".png"');
  });

  it('an oversize file by its Content-Length or Content-Range, naming its size and the limit, without reading the body', async () => {
    // The bodies never end: reading them whole would end in a timeout, not in these refusals.
    const video = await refused('video', `${base}/big.mp4`, { timeoutMs: 5_000 });
    expect(video.code).toBe('invalid_input');
    expect(video.message).toBe(`link: the file is 16.0 MB (${16 * MB + 1} bytes), larger than the 16 MB allowed for a video`);
    const ranged = await refused('video', `${base}/big-range.mp4`, { timeoutMs: 5_000 });
    expect(ranged.message).toBe(video.message);
    const pdf = await refused('document', `${base}/huge.pdf`, { timeoutMs: 5_000 });
    expect(pdf.message).toContain(`${25 * MB + 1} bytes`);
    expect(pdf.message).toContain('larger than the 25 MB allowed for a document');
  });

  it('exactly at the limit fits; one byte more is refused, by range or by a body of unsaid size', async () => {
    expect(await check('document', `${base}/at-limit.txt`, { timeoutMs: 20_000 })).toMatchObject({ ok: true, value: { size: 25 * MB, mimeType: 'text/plain' } });
    expect(await check('document', `${base}/plain/at-limit.txt`, { timeoutMs: 20_000 })).toMatchObject({ ok: true, value: { size: 25 * MB } });
    const ranged = await refused('document', `${base}/over-limit.txt`, { timeoutMs: 20_000 });
    expect(ranged.message).toBe(`link: the file is 25.0 MB (${25 * MB + 1} bytes), larger than the 25 MB allowed for a document`);
    const streamed = await refused('document', `${base}/plain/over-limit.txt`, { timeoutMs: 20_000 });
    expect(streamed.message).toContain('larger than the 25 MB allowed for a document');
  });

  it('a body of unsaid size is stopped once it passes the limit', async () => {
    const error = await refused('image', `${base}/endless.png`, { timeoutMs: 10_000 });
    expect(error.code).toBe('invalid_input');
    expect(error.message).toContain('larger than the 5 MB allowed for an image');
    expect(error.message).toContain('without saying its size');
  });

  it('an empty file, whether the server takes ranges or not', async () => {
    expect((await refused('document', `${base}/empty.pdf`)).message).toContain('empty');
    expect((await refused('document', `${base}/empty-plain.pdf`)).message).toContain('empty');
  });

  it('a 404 and a 503 with their status', async () => {
    const missing = await refused('image', `${base}/missing.png`);
    expect(missing).toMatchObject({ httpStatus: 404 });
    expect(missing.message).toContain('HTTP 404 (Not Found)');
    expect(missing.message).toContain('no file at this address');
    const broken = await refused('image', `${base}/broken.png`);
    expect(broken).toMatchObject({ httpStatus: 503 });
    expect(broken.message).toContain('the server failed');
  });

  it('a link that does not answer, and a file that does not arrive, in time', async () => {
    const silentLink = await check('image', `${base}/slow.png`, { timeoutMs: 200 });
    expect(silentLink).toMatchObject({ ok: false, error: { code: 'timeout', field: 'link' } });
    if (!silentLink.ok) expect(silentLink.error.message).toContain('did not answer within 200 ms');
    const trickle = await check('image', `${base}/trickle.png`, { timeoutMs: 300, msPerMb: 0 });
    expect(trickle).toMatchObject({ ok: false, error: { code: 'timeout' } });
    if (!trickle.ok) expect(trickle.error.message).toBe('link: the file did not arrive within 300 ms (1 KB read)');
  });

  it('a connection cut in the middle of the file', async () => {
    const error = await refused('image', `${base}/cut.png`);
    expect(error.code).toBe('invalid_input');
    expect(error.message).toContain('could not be read to its end');
  });

  it('a redirect loop, too many redirects, a redirect away from http, one without Location', async () => {
    expect((await refused('image', `${base}/loop-a.png`)).message).toContain('redirects in a loop');
    expect((await refused('image', `${base}/hop0.png`)).message).toContain('more than 5 times');
    expect((await refused('image', `${base}/to-ftp.png`)).message).toContain('not an http:// or https:// address');
    expect((await refused('image', `${base}/no-location.png`)).message).toContain('without a usable Location');
  });

  it('an unreachable server', async () => {
    const closed = await startMediaFileServer();
    await closed.close();
    const error = await refused('image', `${closed.url}/photo.png`);
    expect(error.code).toBe('invalid_input');
    expect(error.message).toContain('could not be reached');
    expect(error.message).toContain('ECONNREFUSED');
  });

  it('names another field when told to', async () => {
    const result = await check('image', 'nope', { field: 'interactive.header.image.link' });
    expect(result).toMatchObject({ ok: false, error: { field: 'interactive.header.image.link' } });
  });
});

describe('a fetch that misbehaves', () => {
  it('one that ignores its signal still ends at the timeout', async () => {
    const deaf: ByteFetch = () => new Promise<ByteResponse>(() => undefined);
    const started = Date.now();
    const result = await checkMediaFile('image', 'https://media.example.com/photo.png', { fetch: deaf, timeoutMs: 150 });
    expect(result).toMatchObject({ ok: false, error: { code: 'timeout' } });
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('one whose body never yields still ends at the timeout, and its body is cancelled', async () => {
    let cancelled = false;
    const stuck: ByteFetch = async () => ({
      status: 200,
      headers: new Headers({ 'content-type': 'image/png' }),
      body: { [Symbol.asyncIterator]: () => ({ next: () => new Promise<IteratorResult<Uint8Array>>(() => undefined) }) },
      cancel: async () => {
        cancelled = true;
      },
    });
    const result = await checkMediaFile('image', 'https://media.example.com/photo.png', { fetch: stuck, timeoutMs: 150 });
    expect(result).toMatchObject({ ok: false, error: { code: 'timeout' } });
    if (!result.ok) expect(result.error.message).toContain('did not arrive within 150 ms');
    expect(cancelled).toBe(true);
  });

  it('one that throws becomes a refusal naming the reason', async () => {
    const broken: ByteFetch = async () => {
      throw Object.assign(new Error('getaddrinfo ENOTFOUND media.example.invalid'), { code: 'ENOTFOUND' });
    };
    const result = await checkMediaFile('image', 'https://media.example.invalid/photo.png', { fetch: broken });
    expect(result).toMatchObject({ ok: false, error: { code: 'invalid_input', field: 'link' } });
    if (!result.ok) expect(result.error.message).toContain('host name was not found');
  });
});

describe('extensions and hosts', () => {
  it('extensions from the last path segment, lower case, query and escapes aside', () => {
    expect(extensionOf('https://x.example/a/Photo.PNG?sig=abc#frag')).toBe('.png');
    expect(extensionOf('https://x.example/a/my%20file.pdf')).toBe('.pdf');
    expect(extensionOf('https://x.example/a.b/file')).toBeUndefined();
    expect(extensionOf('https://x.example/')).toBeUndefined();
  });

  it('private hosts: loopback, private ranges, link-local, .local; not public ones', () => {
    for (const host of ['localhost', '127.0.0.1:8080', '10.1.2.3', '192.168.0.10', '172.16.0.1', '172.31.255.255', '169.254.1.1', '[::1]', 'printer.local', '[fd12:3456::1]']) {
      expect(isPrivateHost(host), host).toBe(true);
    }
    for (const host of ['media.example.com', '8.8.8.8', '172.32.0.1', '[2001:db8::1]']) expect(isPrivateHost(host), host).toBe(false);
  });
});

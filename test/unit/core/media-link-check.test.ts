// Media links checked before sending (gateway-spec.md 2.3) against a real HTTP server on 127.0.0.1:
// right and wrong types, extensions, sizes, missing lengths, dead links, timeouts, redirect loops.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkMediaLink, extensionOf, type FetchLike } from '../../../electron/core/media-link-check';
import { MB } from '../../../shared/messages';

interface Seen {
  method: string;
  path: string;
  range?: string;
}

let server: Server;
let base: string;
const seen: Seen[] = [];
const hanging = new Set<ServerResponse>();

type Route = (req: IncomingMessage, res: ServerResponse) => void;
const file = (contentType: string | undefined, length: number | undefined): Route => (_req, res) => {
  const headers: Record<string, string> = {};
  if (contentType !== undefined) headers['Content-Type'] = contentType;
  if (length !== undefined) headers['Content-Length'] = String(length);
  res.writeHead(200, headers);
  res.end();
};
const redirect = (to: string, status = 302): Route => (_req, res) => {
  res.writeHead(status, { Location: to });
  res.end();
};

const ROUTES: Record<string, Route> = {
  '/photo.png': file('image/png', 1000),
  '/photo.jpg': file('image/jpeg', 2000),
  '/at-limit.jpeg': file('image/jpeg', 5 * MB),
  '/page.png': file('text/html; charset=utf-8', 500),
  '/untyped.png': file(undefined, 500),
  '/mismatch.png': file('image/jpeg', 500),
  '/big.mp4': file('video/mp4', 16 * MB + 1),
  '/huge.pdf': file('application/pdf', 25 * MB + 1),
  '/empty.pdf': file('application/pdf', 0),
  '/nolength.pdf': (_req, res) => {
    res.writeHead(200, { 'Content-Type': 'application/pdf' });
    res.end();
  },
  '/notes.txt': file('text/plain; charset=utf-8', 120),
  '/report.docx': file('application/vnd.openxmlformats-officedocument.wordprocessingml.document', 40_000),
  '/voice.ogg': file('audio/ogg', 30_000),
  '/files/8c1f2a': file('application/pdf', 3000),
  '/missing.png': (_req, res) => {
    res.writeHead(404, { 'Content-Type': 'text/html' });
    res.end();
  },
  '/broken.png': (_req, res) => {
    res.writeHead(503);
    res.end();
  },
  '/slow.png': (_req, res) => {
    hanging.add(res);
  },
  '/moved.png': redirect('/photo.png', 301),
  '/relative/short': redirect('../photo.png', 307),
  '/loop-a.png': redirect('/loop-b.png'),
  '/loop-b.png': redirect('/loop-a.png'),
  '/to-ftp.png': redirect('ftp://127.0.0.1/photo.png'),
  '/no-location.png': (_req, res) => {
    res.writeHead(302);
    res.end();
  },
  // Signed storage links are often signed for GET only: HEAD is refused, a one-byte GET works.
  '/signed.pdf': (req, res) => {
    if (req.method === 'HEAD') {
      res.writeHead(403);
      res.end();
      return;
    }
    res.writeHead(206, { 'Content-Type': 'application/pdf', 'Content-Range': 'bytes 0-0/2048', 'Content-Length': '1' });
    res.end('%');
  },
};
for (let i = 0; i < 8; i++) ROUTES[`/hop${i}.png`] = redirect(`/hop${i + 1}.png`);
ROUTES['/hop8.png'] = file('image/png', 10);

beforeAll(async () => {
  server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    seen.push({ method: req.method ?? '', path, ...(typeof req.headers.range === 'string' ? { range: req.headers.range } : {}) });
    const route = ROUTES[path];
    if (route) route(req, res);
    else {
      res.writeHead(404);
      res.end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  for (const res of hanging) res.destroy();
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

async function refused(...args: Parameters<typeof checkMediaLink>) {
  const result = await checkMediaLink(...args);
  expect(result.ok).toBe(false);
  if (result.ok) throw new Error('accepted');
  expect(result.error.field).toBe('link');
  return result.error;
}

describe('links that fit', () => {
  it('an image of the right type and size, by HEAD, without reading a body', async () => {
    const before = seen.length;
    const result = await checkMediaLink('image', `${base}/photo.png`);
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.value).toMatchObject({ contentType: 'image/png', contentLength: 1000, finalUrl: `${base}/photo.png` });
    expect(seen.slice(before)).toEqual([{ method: 'HEAD', path: '/photo.png' }]);
  });

  it('.jpg as .jpeg, exactly at the limit, Content-Type parameters ignored, Office Open XML types', async () => {
    expect((await checkMediaLink('image', `${base}/photo.jpg`)).ok).toBe(true);
    expect(await checkMediaLink('image', `${base}/at-limit.jpeg`)).toMatchObject({ ok: true, value: { contentLength: 5 * MB } });
    expect(await checkMediaLink('document', `${base}/notes.txt`)).toMatchObject({ ok: true, value: { contentType: 'text/plain' } });
    expect((await checkMediaLink('document', `${base}/report.docx`)).ok).toBe(true);
  });

  it('follows redirects, relative ones too, and reports where the file is', async () => {
    expect(await checkMediaLink('image', `${base}/moved.png`)).toMatchObject({ ok: true, value: { finalUrl: `${base}/photo.png` } });
    expect(await checkMediaLink('image', `${base}/relative/short`)).toMatchObject({ ok: true, value: { finalUrl: `${base}/photo.png` } });
  });

  it('asks again with a one-byte GET when HEAD is refused, and reads the size from Content-Range', async () => {
    const before = seen.length;
    const result = await checkMediaLink('document', `${base}/signed.pdf`);
    expect(result).toMatchObject({ ok: true, value: { contentType: 'application/pdf', contentLength: 2048 } });
    expect(seen.slice(before)).toEqual([
      { method: 'HEAD', path: '/signed.pdf' },
      { method: 'GET', path: '/signed.pdf', range: 'bytes=0-0' },
    ]);
  });

  it('a missing length is allowed, reported as an unknown size', async () => {
    const result = await checkMediaLink('document', `${base}/nolength.pdf`);
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.value.contentLength).toBeUndefined();
    expect(result.value.warnings.join(' ')).toContain('Unknown size');
    expect(result.value.warnings.join(' ')).toContain('25 MB');
  });

  it('warns about a path without extension, Opus-only ogg, and a link the gateway cannot reach', async () => {
    const plain = await checkMediaLink('document', `${base}/files/8c1f2a`);
    expect(plain.ok).toBe(true);
    if (plain.ok) {
      expect(plain.value.warnings.join(' ')).toContain('no file extension');
      expect(plain.value.warnings.join(' ')).toContain('private network');
    }
    const ogg = await checkMediaLink('audio', `${base}/voice.ogg`);
    expect(ogg.ok).toBe(true);
    if (ogg.ok) expect(ogg.value.warnings.join(' ')).toContain('Opus');
  });

  it('uses the fetch it is given', async () => {
    const calls: string[] = [];
    const fetchImpl: FetchLike = async (url, init) => {
      calls.push(`${init.method} ${url}`);
      return { status: 200, headers: new Headers({ 'content-type': 'video/mp4', 'content-length': '1234' }), body: null };
    };
    const result = await checkMediaLink('video', 'https://media.example.com/clip.mp4', { fetchImpl });
    expect(result).toMatchObject({ ok: true, value: { contentType: 'video/mp4', contentLength: 1234 } });
    expect(calls).toEqual(['HEAD https://media.example.com/clip.mp4']);
  });
});

describe('links that do not fit, refused with the field "link"', () => {
  it('only http and https', async () => {
    for (const link of ['ftp://127.0.0.1/photo.png', 'file:///tmp/photo.png', 'photo.png', '']) {
      const error = await refused('image', link);
      expect(error.code).toBe('invalid_input');
      expect(error.message).toContain('http:// or https://');
    }
  });

  it('the wrong extension, before any request', async () => {
    const before = seen.length;
    const error = await refused('image', `${base}/animation.gif`);
    expect(error.message).toContain('".gif"');
    expect(error.message).toContain('.jpeg, .jpg or .png');
    expect(seen.length).toBe(before);
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

  it('an oversize file, naming its size and the limit; an empty one', async () => {
    const video = await refused('video', `${base}/big.mp4`);
    expect(video.message).toContain('larger than the 16 MB allowed for a video');
    const pdf = await refused('document', `${base}/huge.pdf`);
    expect(pdf.message).toContain('25 MB');
    expect((await refused('document', `${base}/empty.pdf`)).message).toContain('empty');
  });

  it('a 404 and a 503 with their status', async () => {
    const missing = await refused('image', `${base}/missing.png`);
    expect(missing).toMatchObject({ httpStatus: 404 });
    expect(missing.message).toContain('HTTP 404');
    expect(missing.message).toContain('no file at this address');
    const broken = await refused('image', `${base}/broken.png`);
    expect(broken).toMatchObject({ httpStatus: 503 });
    expect(broken.message).toContain('the server failed');
  });

  it('a timeout', async () => {
    const error = await refused('image', `${base}/slow.png`, { timeoutMs: 200 });
    expect(error.code).toBe('timeout');
    expect(error.message).toContain('did not answer within 200 ms');
  });

  it('a redirect loop, too many redirects, a redirect away from http, one without Location', async () => {
    expect((await refused('image', `${base}/loop-a.png`)).message).toContain('redirects in a loop');
    expect((await refused('image', `${base}/hop0.png`)).message).toContain('more than 5 times');
    expect((await checkMediaLink('image', `${base}/hop0.png`, { maxRedirects: 10 })).ok).toBe(true);
    expect((await refused('image', `${base}/to-ftp.png`)).message).toContain('not an http:// or https:// address');
    expect((await refused('image', `${base}/no-location.png`)).message).toContain('without a usable Location');
  });

  it('an unreachable server', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', () => resolve()));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const error = await refused('image', `http://127.0.0.1:${port}/photo.png`);
    expect(error.code).toBe('invalid_input');
    expect(error.message).toContain('could not be reached');
    expect(error.message).toContain('ECONNREFUSED');
  });

  it('names another field when told to', async () => {
    const result = await checkMediaLink('image', 'nope', { field: 'interactive.header.image.link' });
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.error.field).toBe('interactive.header.image.link');
  });
});

describe('extensions', () => {
  it('from the last path segment, lower case, query and escapes aside', () => {
    expect(extensionOf('https://x.example/a/Photo.PNG?sig=abc#frag')).toBe('.png');
    expect(extensionOf('https://x.example/a/my%20file.pdf')).toBe('.pdf');
    expect(extensionOf('https://x.example/a.b/file')).toBeUndefined();
    expect(extensionOf('https://x.example/')).toBeUndefined();
  });
});

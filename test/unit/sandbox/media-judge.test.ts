// The sandbox judges a replymessage's media as the service does (gateway-spec.md 2.3): a link is
// fetched from a real HTTP server on 127.0.0.1 and judged on its bytes with the app's rules; a
// refused file is HTTP 400, code 131053, the rule in error_data.details in the app's own words (every
// file of the media corpus is sent and compared with the app's check of the same link); warnings are
// accepted; an id must be one of the account's media library, which the README lists word for word.
import { createHash } from 'node:crypto';
import { copyFile, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { undiciByteFetch } from '../../../electron/core/media-link-check';
import { defaultMediaDir, MediaLibrary, SANDBOX_MEDIA } from '../../../sandbox/media-library';
import type { SandboxServer } from '../../../sandbox/server';
import { checkMediaFile, type MediaFileCheck } from '../../../shared/media-fetch';
import { inspectMedia } from '../../../shared/media-inspect';
import { MB, mediaMembers, parseFreeFormMessage, type MediaType } from '../../../shared/messages';
import type { Result } from '../../../shared/result';
import type { SandboxMedia, SandboxMessageReport } from '../../../shared/sandbox';
import { mediaCorpus } from '../../fixtures/media-corpus';
import { dribble, file, neverEnding, redirect, silent, startMediaFileServer, type MediaFileServer, type Route } from '../../support/media-file-server';
import { API_KEY, control, eventually, startTestSandbox, startWebhookReceiver, type WebhookReceiver } from './harness';

const ADA = '12025550101';
const GRACE = '442079460101';
const MEDIA_TIMEOUT_MS = 400;
const SIGNATURE = 'X-Amz-Signature=5ecret0f0a51gned1ink';

let relay: WebhookReceiver;
let sandbox: SandboxServer;
let files: MediaFileServer;
let corpus: Awaited<ReturnType<typeof mediaCorpus>>;

beforeAll(async () => {
  corpus = await mediaCorpus();
  const routes: Parameters<typeof startMediaFileServer>[0] = {
    '/slow.png': silent,
    '/big.png': neverEnding({ 'Content-Type': 'image/png', 'Content-Length': String(5 * MB + 1) }),
    // 1 MB of text, 64 KB every 40 ms: about 0.7 s, longer than the 400 ms before any byte is due.
    '/steady.txt': dribble(new Uint8Array(MB).fill(0x61), { contentType: 'text/plain', chunkBytes: 64 * 1024, everyMs: 40 }),
    '/signed-loop-a.png': redirect(`/signed-loop-b.png?${SIGNATURE}`),
    '/signed-loop-b.png': redirect(`/signed-loop-a.png?${SIGNATURE}#${SIGNATURE}`),
  };
  for (const f of corpus.files) {
    const bytes = new Uint8Array(await readFile(f.path));
    routes[`/${f.name}`] = file(bytes, { contentType: f.mimeType });
    routes[`/gzip/${f.name}`] = gzipWhateverIsAsked(bytes, f.mimeType);
  }
  files = await startMediaFileServer(routes);
  relay = await startWebhookReceiver();
  sandbox = await startTestSandbox(relay, { media: { timeoutMs: MEDIA_TIMEOUT_MS } });
  // Free-form needs the customer's window open (gateway-spec.md 3.1); Grace's stays closed.
  expect((await control(sandbox, '/control/inbound', { number: ADA, text: 'Send me the photo' })).status).toBe(200);
}, 120_000);

afterAll(async () => {
  await sandbox?.close();
  await relay?.close();
  await files?.close();
});

interface GraphAnswer {
  status: number;
  body: { error?: { message: string; code: number; type: string; error_data?: { details: string } }; messages?: { id: string }[] };
}

async function reply(message: Record<string, unknown>, to = ADA): Promise<GraphAnswer> {
  const res = await fetch(`${sandbox.gatewayUrl}/chatapp/replymessage`, {
    method: 'POST',
    headers: { 'API-KEY': API_KEY, 'Content-Type': 'application/json' },
    body: JSON.stringify({ messaging_product: 'chatapp', recipient_type: 'individual', to, ...message }),
  });
  return { status: res.status, body: (await res.json()) as GraphAnswer['body'] };
}

const media = (type: MediaType, source: { link: string } | { id: string }) => ({ type, [type]: source });
const link = (name: string) => ({ link: `${files.url}/${name}` });

/** A server that gzips the file whatever the request's Accept-Encoding says, and ignores Range. */
function gzipWhateverIsAsked(bytes: Uint8Array, contentType: string): Route {
  const coded = gzipSync(bytes);
  return (_req, res) => {
    res.writeHead(200, { 'Content-Type': contentType, 'Content-Encoding': 'gzip', 'Content-Length': String(coded.length) }).end(coded);
  };
}

/** The app's check of the same link (undici, electron/core/media-link-check.ts), naming `field`. */
const appCheck = (type: MediaType, path: string, field: string): Promise<Result<MediaFileCheck>> =>
  checkMediaFile(type, `${files.url}/${path}`, { fetch: undiciByteFetch, field });

/** What the app's check says about a link it refuses: the sandbox's details must be these words. */
async function refusalOf(path: string, field: string, type: MediaType = corpus.file(path.slice(path.lastIndexOf('/') + 1)).type): Promise<string> {
  const checked = await appCheck(type, path, field);
  if (checked.ok) throw new Error(`the app's check accepts ${path}`);
  return checked.error.message;
}

function expectMediaError(answer: GraphAnswer, details: string | RegExp): void {
  expect(answer.status).toBe(400);
  expect(answer.body.error).toMatchObject({ code: 131053, message: '(#131053) Media upload error', type: 'OAuthException' });
  if (typeof details === 'string') expect(answer.body.error?.error_data?.details).toBe(details);
  else expect(answer.body.error?.error_data?.details).toMatch(details);
}

describe('media by link', () => {
  test("every file of the corpus: a refusal is 400, 131053 and the app's words for the rule; passes and warnings are accepted", async () => {
    const verdicts = new Set<string>();
    for (const f of corpus.files) {
      const field = `${f.type}.link`;
      const app = await appCheck(f.type, f.name, field);
      const answer = await reply(media(f.type, link(f.name)));
      verdicts.add(f.verdict);
      if (f.verdict === 'refuse') {
        // The app refuses it for the rule the corpus names, and the sandbox in the same words.
        expect(app.ok ? 'accepted' : app.error.detail, f.name).toBe(f.rule);
        expect(answer.status, f.name).toBe(400);
        expect(answer.body.error, f.name).toMatchObject({ code: 131053, message: '(#131053) Media upload error', type: 'OAuthException' });
        expect(answer.body.error?.error_data?.details, f.name).toBe(app.ok ? 'accepted by the app' : app.error.message);
        expect(answer.body.error?.error_data?.details, f.name).toMatch(new RegExp(`^${f.type}\\.link: `));
      } else {
        expect(app.ok ? app.value.warnings.map((w) => w.rule) : app.error.message, f.name).toEqual(f.verdict === 'warn' ? [f.rule] : []);
        expect(answer.status, `${f.name}: ${answer.body.error?.error_data?.details ?? ''}`).toBe(200);
        expect(answer.body.messages?.[0]?.id, f.name).toMatch(/^wamid\./);
      }
    }
    expect(verdicts).toEqual(new Set(['pass', 'warn', 'refuse']));
  }, 180_000);

  test('a server that gzips whatever is asked: the sandbox judges the decoded file, as the app does', async () => {
    for (const name of ['rgb16.png', 'truncated.pdf']) {
      const f = corpus.file(name);
      const details = await refusalOf(`gzip/${name}`, `${f.type}.link`);
      expect(details).toBe(await refusalOf(name, `${f.type}.link`));
      expectMediaError(await reply(media(f.type, link(`gzip/${name}`))), details);
    }
    for (const name of ['rgb.png', 'moov-at-end.mp4', 'plain.txt']) {
      const f = corpus.file(name);
      expect((await appCheck(f.type, `gzip/${name}`, `${f.type}.link`)).ok, name).toBe(true);
      expect((await reply(media(f.type, link(`gzip/${name}`)))).status, name).toBe(200);
    }
  });

  test('files that pass are accepted and fetched by range', async () => {
    const before = files.seen.length;
    for (const [type, name] of [
      ['image', 'rgb.jpg'],
      ['audio', 'audio.amr'],
      ['video', 'baseline.mp4'],
      ['document', 'sheet.xlsx'],
    ] as const) {
      expect((await reply(media(type, link(name)))).status, name).toBe(200);
    }
    const asked = files.seen.slice(before);
    expect(asked.map((r) => r.path)).toEqual(expect.arrayContaining(['/rgb.jpg', '/audio.amr', '/baseline.mp4', '/sheet.xlsx']));
    for (const r of asked) {
      expect(r.method).toBe('GET');
      expect(r.range).toMatch(/^bytes=\d+-\d+$/);
    }
  });

  test("an interactive header's media is judged too, named by its path", async () => {
    const button = (header: Record<string, unknown>) => ({
      type: 'interactive',
      interactive: {
        type: 'button',
        header,
        body: { text: 'Is this your parcel?' },
        action: { buttons: [{ type: 'reply', reply: { id: 'yes', title: 'Yes' } }] },
      },
    });
    expectMediaError(await reply(button({ type: 'image', image: link('cmyk.jpg') })), await refusalOf('cmyk.jpg', 'interactive.header.image.link'));
    expect((await reply(button({ type: 'image', image: link('rgba.png') }))).status).toBe(200);
    expectMediaError(await reply(button({ type: 'video', video: { id: '42' } })), 'interactive.header.video.id: unknown media id "42": the account has no uploaded media with this id');
  });

  test('the type from the server and the link must agree with the message type', async () => {
    expectMediaError(await reply(media('image', link('doc.pdf'))), /^image\.link: the link ends in "\.pdf", which is not an image file/);
  });

  test('the same limits as the app: oversize by Content-Length, and a link that never answers', async () => {
    expectMediaError(await reply(media('image', link('big.png'))), `image.link: the file is 5.0 MB (${5 * MB + 1} bytes), larger than the 5 MB allowed for an image`);
    const started = Date.now();
    expectMediaError(await reply(media('image', link('slow.png'))), `image.link: the link did not answer within ${MEDIA_TIMEOUT_MS} ms`);
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  test('a large file on a slow link is judged: the deadline grows with the MB to read, as in the app', async () => {
    expect((await reply({ type: 'document', document: { ...link('steady.txt'), filename: 'notes.txt' } })).status).toBe(200);
    const fixed = await startTestSandbox(relay, { media: { timeoutMs: MEDIA_TIMEOUT_MS, msPerMb: 0 } });
    try {
      expect((await control(fixed, '/control/inbound', { number: ADA, text: 'hello' })).status).toBe(200);
      const res = await fetch(`${fixed.gatewayUrl}/chatapp/replymessage`, {
        method: 'POST',
        headers: { 'API-KEY': API_KEY, 'Content-Type': 'application/json' },
        body: JSON.stringify({ messaging_product: 'chatapp', recipient_type: 'individual', to: ADA, type: 'document', document: { ...link('steady.txt'), filename: 'notes.txt' } }),
      });
      expectMediaError({ status: res.status, body: (await res.json()) as GraphAnswer['body'] }, /^document\.link: the file did not arrive within 400 ms \(\d+ KB of 1 MB read\)$/);
    } finally {
      await fixed.close();
    }
  });

  test("a signed link's query is in neither the answer nor the message report", async () => {
    const answer = await reply(media('image', { link: `${files.url}/signed-loop-a.png?${SIGNATURE}` }));
    expectMediaError(answer, `image.link: the link redirects in a loop (back to ${files.url}/signed-loop-a.png)`);
    const reports = (await control<SandboxMessageReport[]>(sandbox, '/control/messages')).body;
    expect(JSON.stringify(reports.at(-1)?.error)).not.toContain('5ecret');
  });

  test('closing the sandbox stops a fetch under way', async () => {
    let closed = false;
    files.routes.set('/held.png', (req) => {
      req.socket.on('close', () => {
        closed = true;
      });
    });
    const other = await startTestSandbox(relay, { media: { timeoutMs: 60_000 } });
    expect((await control(other, '/control/inbound', { number: ADA, text: 'hello' })).status).toBe(200);
    const before = files.seen.length;
    const answer = fetch(`${other.gatewayUrl}/chatapp/replymessage`, {
      method: 'POST',
      headers: { 'API-KEY': API_KEY, 'Content-Type': 'application/json' },
      body: JSON.stringify({ messaging_product: 'chatapp', recipient_type: 'individual', to: ADA, ...media('image', link('held.png')) }),
    }).catch(() => undefined);
    await eventually('the sandbox to ask for the file', () => files.requestsFor('/held.png', before).length > 0);
    await other.close();
    await answer;
    await eventually('the file request to be dropped', () => closed, 5_000);
  });

  test('the window is checked first: a closed one is 131047 and nothing is fetched', async () => {
    const before = files.seen.length;
    const answer = await reply(media('image', link('rgb16.png')), GRACE);
    expect(answer.status).toBe(400);
    expect(answer.body.error?.code).toBe(131047);
    expect(files.seen.length).toBe(before);
  });

  test('refused messages are in the message report with their error', async () => {
    await reply(media('audio', link('vorbis.ogg')));
    const reports = (await control<SandboxMessageReport[]>(sandbox, '/control/messages')).body;
    const refused = reports.filter((r) => r.status === 'refused' && r.type === 'audio');
    expect(refused.at(-1)).toMatchObject({ number: ADA, error: { code: 131053, message: '(#131053) Media upload error' } });
  });
});

describe('media by id: the media library', () => {
  test('GET /control/media lists every id with the true size and hash of its file', async () => {
    const listed = (await control<SandboxMedia[]>(sandbox, '/control/media')).body;
    expect(listed.map((m) => m.id)).toEqual(SANDBOX_MEDIA.map((m) => m.id));
    expect(new Set(listed.map((m) => m.type))).toEqual(new Set(['image', 'audio', 'video', 'document']));
    for (const m of listed) {
      const bytes = await readFile(join(defaultMediaDir(), m.fileName));
      expect(m.size, m.id).toBe(bytes.length);
      expect(m.sha256, m.id).toBe(createHash('sha256').update(bytes).digest('hex'));
    }
  });

  test('every file in the library is real and passes every media rule as its type', async () => {
    for (const m of (await control<SandboxMedia[]>(sandbox, '/control/media')).body) {
      const bytes = new Uint8Array(await readFile(join(defaultMediaDir(), m.fileName)));
      const inspected = await inspectMedia(m.type, { head: bytes, size: bytes.length }, { extension: m.fileName.slice(m.fileName.lastIndexOf('.')), mimeType: m.mimeType });
      expect(inspected, m.fileName).toMatchObject({ ok: true, value: { mimeType: m.mimeType, warnings: [] } });
    }
  });

  test('a known id of each type is accepted', async () => {
    for (const m of SANDBOX_MEDIA) expect((await reply(media(m.type, { id: m.id }))).status, m.id).toBe(200);
  });

  test('an unknown id, and an id whose file is not of the message type, are refused with 131053', async () => {
    expectMediaError(await reply(media('image', { id: '1234567890' })), 'image.id: unknown media id "1234567890": the account has no uploaded media with this id');
    const video = SANDBOX_MEDIA.find((m) => m.type === 'video')!;
    expectMediaError(await reply(media('image', { id: video.id })), `image.id: media "${video.id}" is video/mp4 (${video.fileName}), which cannot be sent as an image`);
  });

  test("the library's files are served by id, and a link to them is accepted", async () => {
    const image = SANDBOX_MEDIA.find((m) => m.type === 'image')!;
    const res = await fetch(`${sandbox.url}/control/media/${image.id}`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe(image.mimeType);
    expect(Buffer.from(await res.arrayBuffer()).equals(await readFile(join(defaultMediaDir(), image.fileName)))).toBe(true);
    expect((await reply(media('image', { link: `${sandbox.url}/control/media/${image.id}` }))).status).toBe(200);
    expect((await fetch(`${sandbox.url}/control/media/nope`)).status).toBe(404);
  });

  test('the library is read from the folder the sandbox is given (a packaged app passes its own)', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'sandbox-media-'));
    const image = SANDBOX_MEDIA.find((m) => m.type === 'image')!;
    await copyFile(join(defaultMediaDir(), image.fileName), join(dir, image.fileName));
    const other = await startTestSandbox(relay, { media: { dir } });
    try {
      expect((await control<SandboxMedia[]>(other, '/control/media')).body.map((m) => m.id)).toEqual([image.id]);
    } finally {
      await other.close();
      await rm(dir, { recursive: true, force: true });
    }
  });

  test("the README's media library table lists exactly the library's ids, types, files and descriptions", async () => {
    const readme = await readFile(fileURLToPath(new URL('../../../sandbox/README.md', import.meta.url)), 'utf8');
    const rows = readme
      .split('\n')
      .filter((line) => /^\|\s*\d{16}\s*\|/.test(line))
      .map((line) => line.split('|').slice(1, -1).map((cell) => cell.trim()));
    expect(rows).toEqual(SANDBOX_MEDIA.map((m) => [m.id, m.type, `${m.fileName} (${m.mimeType})`, m.description]));
  });

  test('a file that cannot be read leaves its id out, named as a problem', () => {
    const { library, problems } = MediaLibrary.load('/nonexistent-media-dir', SANDBOX_MEDIA.slice(0, 1));
    expect(library.list()).toEqual([]);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toContain(SANDBOX_MEDIA[0]!.fileName);
    expect(library.lookup(SANDBOX_MEDIA[0]!.id, 'image')).toEqual({ kind: 'unknown' });
  });
});

describe('mediaMembers (shared/messages.ts): the media the sandbox judges', () => {
  test('own media, header media by link or id, and none for text', () => {
    const parse = (body: Record<string, unknown>) => {
      const parsed = parseFreeFormMessage({ messaging_product: 'chatapp', recipient_type: 'individual', to: ADA, ...body });
      if (!parsed.ok) throw new Error(parsed.error.message);
      return parsed.value;
    };
    expect(mediaMembers(parse({ type: 'document', document: { link: 'https://x.example/a.pdf', filename: 'a.pdf' } }))).toEqual([
      { type: 'document', field: 'document.link', source: { link: 'https://x.example/a.pdf' } },
    ]);
    expect(mediaMembers(parse({ type: 'audio', audio: { id: '77' } }))).toEqual([{ type: 'audio', field: 'audio.id', source: { id: '77' } }]);
    expect(
      mediaMembers(
        parse({
          type: 'interactive',
          interactive: {
            type: 'cta_url',
            header: { type: 'video', video: { link: 'https://x.example/v.mp4' } },
            body: { text: 'Watch' },
            action: { name: 'cta_url', parameters: { display_text: 'Open', url: 'https://x.example' } },
          },
        }),
      ),
    ).toEqual([{ type: 'video', field: 'interactive.header.video.link', source: { link: 'https://x.example/v.mp4' } }]);
    expect(mediaMembers(parse({ type: 'text', text: { body: 'hi' } }))).toEqual([]);
    const buttons = (header: Record<string, unknown>) =>
      parse({ type: 'interactive', interactive: { type: 'button', header, body: { text: 'Yes?' }, action: { buttons: [{ type: 'reply', reply: { id: 'y', title: 'Yes' } }] } } });
    expect(mediaMembers(buttons({ type: 'image', image: { id: '1900000000000001' } }))).toEqual([{ type: 'image', field: 'interactive.header.image.id', source: { id: '1900000000000001' } }]);
    expect(mediaMembers(buttons({ type: 'text', text: 'Your parcel' }))).toEqual([]);
  });
});

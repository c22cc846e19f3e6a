// The media link check's findings in the agent's language (renderer/i18n/rule-text.ts): every
// refusal, warning, note and description that shared/media-inspect makes of the media corpus (each
// file as it is, declared by nothing, sent as every other type, cut short) and that
// shared/media-fetch makes of a real server on 127.0.0.1, said in Spanish and in Arabic with no word
// of the English catalogue left: what stays is names (MIME types, extensions, codecs, containers),
// numbers, units and what a server or a library said in its own words.
import { readFile } from 'node:fs/promises';
import { STATUS_CODES } from 'node:http';
import { extname } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import { nodeByteFetch } from '../../../sandbox/media-judge';
import english from '../../../shared/i18n/locales/en/rules.json';
import arabic from '../../../shared/i18n/locales/ar/rules.json';
import spanish from '../../../shared/i18n/locales/es/rules.json';
import { checkMediaFile } from '../../../shared/media-fetch';
import { inspectMedia, type MediaInspection } from '../../../shared/media-inspect';
import { MEDIA_TYPES, type MediaType } from '../../../shared/messages';
import type { Result } from '../../../shared/result';
import { setUiLanguage } from '../../../renderer/i18n/i18n';
import { translateRuleText } from '../../../renderer/i18n/rule-text';
import { mediaCorpus, type MediaCorpus } from '../../fixtures/media-corpus';
import { file, redirect, silent, startMediaFileServer, statusOnly, type MediaFileServer } from '../../support/media-file-server';

type Tree = { [key: string]: string | Tree };
const textsOf = (tree: Tree): string[] => Object.values(tree).flatMap((v) => (typeof v === 'string' ? [v] : textsOf(v)));
/**
 * The words of a text: a name such as "1Table", "text/html" or "H.264" is one; a template's {{values}}
 * are not its words. Case counts: "Workbook", a stream's name, is not the catalogue's "workbook".
 */
const wordsOf = (text: string): string[] =>
  [...text.replace(/\{\{\w+\}\}/g, ' ').matchAll(/[\p{L}\p{N}][\p{L}\p{M}\p{N}'’\-/.+]*/gu)].map((m) => m[0].replace(/[.'’/+-]+$/, ''));

/**
 * The words of the English catalogue that a language's own catalogue never uses: what must not be
 * left in a message said in that language. Names the translation keeps (PNG, moov, ffmpeg, High,
 * Opus) and words both languages share (audio, video, no) are not among them.
 */
function englishOnly(translation: Tree): Set<string> {
  const own = new Set(textsOf(translation).flatMap(wordsOf));
  return new Set(textsOf(english as Tree).flatMap(wordsOf).filter((word) => !own.has(word)));
}

const ISOLATES = /[\u2066-\u2069]/g;
/** Units stay as they are written: "16 KB", "44.1 kHz", "300 ms", "1 s". */
const UNITS: ReadonlySet<string> = new Set(['s', 'ms', 'KB', 'MB', 'kHz', 'kbit/s']);
/** A server's reason phrase ("Not Found") is its own words, not the catalogue's. */
const withoutReasonPhrases = (text: string): string =>
  Object.values(STATUS_CODES).reduce<string>((t, phrase) => (phrase === undefined ? t : t.replaceAll(`(${phrase})`, '()')), text);
const escape = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
/** The media templates that take others' words: a library's or the system's `reason`, what mp4box `said`. */
const QUOTING = textsOf({ media: english.media, mediaFetch: english.mediaFetch } as Tree)
  .filter((template) => /\{\{(reason|said)\}\}/.test(template))
  .map((template) => {
    const names = [...template.matchAll(/\{\{(\w+)\}\}/g)].map((m) => m[1]!);
    return { names, regex: new RegExp(`${template.split(/\{\{\w+\}\}/).map(escape).join('(.*?)')}$`, 's') };
  });
/** Every English template as a pattern, to tell the catalogue's own words from others'. */
const TEMPLATES = textsOf(english as Tree).map((template) => new RegExp(`^${template.split(/\{\{\w+\}\}/).map(escape).join('(.*?)')}$`, 's'));
/** What others said inside an English finding, which stays in their words; a reason the catalogue made ("the host name was not found") is not among them. */
function othersWords(message: string): string[] {
  return QUOTING.flatMap(({ names, regex }) => {
    const m = regex.exec(message);
    return m === null ? [] : names.flatMap((name, i) => (name === 'reason' || name === 'said' ? [m[i + 1] ?? ''] : []));
  }).filter((quoted) => !TEMPLATES.some((template) => template.test(quoted)));
}
/** The field a refusal names first ("link: …", "content.image.link: …") is a path, not words. */
const withoutField = (text: string): string => text.replace(/^[\w$.[\]]+: /, '');
/** The catalogue's English words left in `said`, the translation of `message`. */
const englishLeft = (said: string, message: string, forbidden: ReadonlySet<string>): string[] => {
  const own = othersWords(message).reduce((text, quoted) => (quoted === '' ? text : text.replaceAll(quoted, ' ')), withoutReasonPhrases(withoutField(said.replace(ISOLATES, ''))));
  return wordsOf(own).filter((w) => forbidden.has(w) && !UNITS.has(w));
};

let corpus: MediaCorpus;
let server: MediaFileServer;
/** Every English text the media check made, by where it came from. */
const findings = new Map<string, string>();

/** A text, with the first place that made it. */
const found = (message: string, where: string): void => {
  if (!findings.has(message)) findings.set(message, where);
};

const addInspection = (where: string, result: Result<MediaInspection>): void => {
  if (!result.ok) {
    found(result.error.message, where);
    return;
  }
  found(result.value.description, `${where} (description)`);
  for (const w of result.value.warnings) found(w.message, `${where} (warning ${w.rule})`);
};

beforeAll(async () => {
  corpus = await mediaCorpus();
  for (const f of corpus.files) {
    const bytes = new Uint8Array(await readFile(f.path));
    const whole = { head: bytes, size: bytes.length };
    addInspection(f.name, await inspectMedia(f.type, whole, { extension: extname(f.name), mimeType: f.mimeType }));
    addInspection(`${f.name} undeclared`, await inspectMedia(f.type, whole, {}));
    for (const other of MEDIA_TYPES.filter((t) => t !== f.type)) addInspection(`${f.name} as ${other}`, await inspectMedia(other, whole, {}));
    for (const length of [Math.floor(bytes.length / 2), bytes.length - 8]) {
      if (length > 0) addInspection(`${f.name} cut to ${length}`, await inspectMedia(f.type, { head: bytes.subarray(0, length), size: length }, {}));
    }
  }

  const png = new Uint8Array(await readFile(corpus.file('rgb.png').path));
  server = await startMediaFileServer({
    '/gone.png': statusOnly(410),
    '/broken.png': statusOnly(500),
    '/moved.png': statusOnly(304),
    '/page.png': file(new TextEncoder().encode('<!doctype html><p>Sign in'), { contentType: 'text/html' }),
    '/untyped.png': file(png, { contentType: undefined }),
    '/mislabelled.png': file(png, { contentType: 'image/jpeg' }),
    '/loop-a.png': redirect('/loop-b.png'),
    '/loop-b.png': redirect('/loop-a.png'),
    '/to-ftp.png': redirect('ftp://files.example.com/photo.png'),
    '/no-location.png': statusOnly(302),
    '/huge.mp4': file(new Uint8Array(17 * 1024 * 1024), { contentType: 'video/mp4' }),
    '/empty.pdf': file(new Uint8Array(0), { contentType: 'application/pdf' }),
    '/photo': file(png, { contentType: 'image/png' }),
    '/silent.png': silent,
  });
  const links: [MediaType, string][] = [
    ['image', '/photo.gif'],
    ['audio', '/photo.png'],
    ['image', '/gone.png'],
    ['image', '/broken.png'],
    ['image', '/moved.png'],
    ['image', '/page.png'],
    ['image', '/untyped.png'],
    ['image', '/mislabelled.png'],
    ['image', '/loop-a.png'],
    ['image', '/to-ftp.png'],
    ['image', '/no-location.png'],
    ['video', '/huge.mp4'],
    ['document', '/empty.pdf'],
    ['image', '/photo'],
    ['image', '/silent.png'],
  ];
  for (const [type, path] of links) {
    const checked = await checkMediaFile(type, `${server.url}${path}`, { fetch: nodeByteFetch, timeoutMs: path === '/silent.png' ? 300 : 5_000 });
    if (!checked.ok) found(checked.error.message, path);
    else for (const note of checked.value.notes) found(note, `${path} (note)`);
  }
  const closed = await startMediaFileServer();
  await closed.close();
  const unreachable = await checkMediaFile('image', `${closed.url}/photo.png`, { fetch: nodeByteFetch });
  if (!unreachable.ok) found(unreachable.error.message, 'a closed port');
}, 180_000);

afterAll(async () => {
  await server?.close();
});

afterEach(async () => {
  await setUiLanguage('en', undefined);
});

describe('every finding of the media check', () => {
  test('is many: refusals, warnings, notes and descriptions of every kind', () => {
    const kinds = [...findings.values()].join('\n');
    expect(findings.size).toBeGreaterThan(80);
    for (const kind of ['(description)', '(warning video.b-frames)', '(warning video.moov-after-mdat)', '(warning document.text-encoding)', '(note)', 'cut to', 'a closed port']) {
      expect(kinds).toContain(kind);
    }
  });

  for (const [language, translation] of [['es', spanish], ['ar', arabic]] as const) {
    test(`is said in ${language} with no English word of the catalogue left`, async () => {
      const forbidden = englishOnly(translation as Tree);
      // The words the check must catch are there to catch.
      for (const word of ['file', 'the', 'cannot', 'read', 'must', 'link', 'server', 'B-frames', 'stream', 'grayscale']) expect(forbidden, word).toContain(word);
      await setUiLanguage(language, undefined);
      for (const [message, where] of findings) {
        const said = translateRuleText(message);
        expect(englishLeft(said, message, forbidden), `${where}: "${message}" → "${said}"`).toEqual([]);
        if (englishLeft(message, message, forbidden).length > 0) expect(said, where).not.toBe(message);
      }
    });
  }
});

describe('real findings, word for word', () => {
  const said = (message: string): string => translateRuleText(message).replace(ISOLATES, '');
  const messageOf = (where: string): string => {
    const found = [...findings].find(([, w]) => w === where);
    if (found === undefined) throw new Error(`no finding from ${where}`);
    return found[0];
  };

  test('in Spanish: what the file is, what it should be, and why', async () => {
    await setUiLanguage('es', undefined);
    expect(said(messageOf('gif-as.png'))).toBe('el archivo es una imagen GIF, no una imagen PNG');
    expect(said(messageOf('gray.png'))).toBe('PNG de 8 bits en escala de grises: las imágenes deben ser RGB o RGBA de 8 bits');
    expect(said(messageOf('looping-fat.doc'))).toBe('el archivo parece un documento de Word (.doc), pero no se puede leer: la cadena de sectores de su flujo WordDocument forma un bucle');
    expect(said(messageOf('two-audio.mp4'))).toBe('MP4 con 2 pistas de audio: los videos pueden tener una pista de audio o ninguna');
    expect(said('MP4: H.264 High with B-frames, AAC')).toBe('MP4: H.264 High con fotogramas B, AAC');
    expect(said('MP4: H.264 Baseline, no audio')).toBe('MP4: H.264 Baseline, sin audio');
    expect(said(messageOf('/page.png'))).toBe('link: el servidor dice que el archivo es text/html, no una imagen: una imagen debe ser image/jpeg o image/png');
    expect(said(messageOf('/photo.gif'))).toBe('link: el enlace termina en ".gif", que no es un archivo de imagen: usa .jpeg, .jpg o .png');
  });

  test('in Arabic: the same words, names and numbers kept left to right', async () => {
    await setUiLanguage('ar', undefined);
    const gif = translateRuleText(messageOf('gif-as.png'));
    expect(gif).toBe('الملف صورة \u2066GIF\u2069، لا صورة \u2066PNG\u2069');
    expect(said(messageOf('gray.png'))).toBe('PNG بعمق 8 بت (تدرّج رمادي): يجب أن تكون الصور RGB أو RGBA بعمق 8 بت');
    expect(translateRuleText(messageOf('gray.png'))).toContain('\u20668\u2069');
    expect(said(messageOf('vorbis.ogg'))).toBe('صوت Vorbis في Ogg: يجب أن يكون صوت Ogg بترميز Opus وأحادي القناة');
    expect(said('MP3, 44.1 kHz, mono, 64 kbit/s')).toBe('MP3, 44.1 kHz, أحادي, 64 kbit/s');
    const mislabelled = translateRuleText(messageOf('/mislabelled.png'));
    expect(mislabelled).toContain('\u2066image/jpeg\u2069');
    expect(mislabelled).toContain('\u2066image/jpeg\u2069 هو \u2066.jpeg\u2069 أو \u2066.jpg\u2069)');
  });
});

describe('lists and what only looks like one', () => {
  test('a list of names and catalogue words is said item by item; a sentence with a comma or an "or" in it is left as it came', async () => {
    await setUiLanguage('es', undefined);
    expect(translateRuleText('MP3, 44.1 kHz, stereo, 128 kbit/s')).toBe('MP3, 44.1 kHz, estéreo, 128 kbit/s');
    expect(translateRuleText('M4A: MPEG-4 audio of object type 36, 44.1 kHz')).toBe('M4A: audio MPEG-4 de tipo de objeto 36, 44.1 kHz');
    expect(translateRuleText('MP4: H.264 High (B-frames unknown) + VP9, 2 audio streams (AAC, MP3)')).toBe('MP4: H.264 High (fotogramas B desconocidos) + VP9, 2 pistas de audio (AAC, MP3)');
    for (const message of ['Call failed or rejected', 'Invalid parameter, mono', 'the gateway said no, mono', 'a broken, file', 'Mute, then stereo']) {
      expect(translateRuleText(message)).toBe(message);
    }
  });
});

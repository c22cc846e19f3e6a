// The media link check's findings in the agent's language (renderer/i18n/texts.ts): every refusal,
// warning, note and description that shared/media-inspect makes of the media corpus (each file as it
// is, declared by nothing, sent as every other type, cut short) and that shared/media-fetch makes of
// a real server on 127.0.0.1, each as its codes and values, said in Spanish and in Arabic with no
// word of the English catalogue left: what stays is data (names: MIME types, extensions, codecs,
// containers; numbers, units) and what a server or a library said in its own words. Every finding
// renders in English as the English message the check gave beside it. And in the composer, against
// the real service in sandbox mode: the hint on a checked link and the warnings that wait for "Send
// anyway", kept as codes and values and drawn in Spanish, while "Send anyway" sends back the English
// the service gave.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { extname, join } from 'node:path';
import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import { startEmbeddedEnvironment } from '../../../electron/embedded';
import type { EmbeddedEnvironment } from '../../../electron/core/embedded-environment';
import { MemorySecretStore } from '../../../electron/core/secret-store';
import { createSoftphoneService, type SoftphoneService } from '../../../electron/core/softphone-service';
import { nodeByteFetch } from '../../../sandbox/media-judge';
import { commandSchemas, type CommandParams } from '../../../shared/api';
import english from '../../../shared/i18n/locales/en/rules.json';
import arabic from '../../../shared/i18n/locales/ar/rules.json';
import spanish from '../../../shared/i18n/locales/es/rules.json';
import arabicMessages from '../../../shared/i18n/locales/ar/messages.json';
import englishMessages from '../../../shared/i18n/locales/en/messages.json';
import spanishMessages from '../../../shared/i18n/locales/es/messages.json';
import { configureLogging } from '../../../shared/log';
import { english as inEnglish, isRuleText, isTermRef, isTextList, list, term, text, type TextValue } from '../../../shared/i18n/text';
import { checkMediaFile } from '../../../shared/media-fetch';
import { inspectMedia, type MediaInspection } from '../../../shared/media-inspect';
import { MEDIA_TYPES, type MediaType } from '../../../shared/messages';
import type { Result } from '../../../shared/result';
import { idleMediaControls } from './fixtures';
import { ControllersContext } from '../../../renderer/app/controllers-context';
import { createControllers } from '../../../renderer/app/controllers';
import { MessagingActions, type MessagingActionsDeps } from '../../../renderer/app/messaging-actions';
import { permanentLink } from '../../../renderer/bridge/host-link';
import { Composer } from '../../../renderer/components/Composer';
import { setUiLanguage } from '../../../renderer/i18n/i18n';
import { sayText } from '../../../renderer/i18n/texts';
import { emptyMedia, linkCheckHint, type ComposerDraft } from '../../../renderer/store/composer';
import { appStore, composerFor, resetStore } from '../../../renderer/store/store';
import { mediaCorpus, type MediaCorpus } from '../../fixtures/media-corpus';
import { file, redirect, silent, startMediaFileServer, statusOnly, type MediaFileServer } from '../../support/media-file-server';
import { fakeApi } from './fake-api';

type Tree = { [key: string]: string | Tree };
const textsOf = (tree: Tree): string[] => Object.values(tree).flatMap((v) => (typeof v === 'string' ? [v] : textsOf(v)));
/**
 * The words of a text: a name such as "1Table", "text/html" or "H.264" is one; a template's {{values}}
 * are not its words. Case counts: "Workbook", a stream's name, is not the catalogue's "workbook".
 */
const wordsOf = (text: string): string[] =>
  [...text.replace(/\{\{\w+\}\}/g, ' ').matchAll(/[\p{L}\p{N}][\p{L}\p{M}\p{N}'’\-/.+]*/gu)].map((m) => m[0].replace(/[.'’/+-]+$/, ''));

/**
 * The words of the English catalogue (the rules', unless another is given) that a language's own
 * catalogue never uses: what must not be left in a message said in that language. Names the
 * translation keeps (PNG, moov, ffmpeg, High, Opus) and words both languages share (audio, video,
 * no) are not among them.
 */
function englishOnly(translation: Tree, source: Tree = english as Tree): Set<string> {
  const own = new Set(textsOf(translation).flatMap(wordsOf));
  return new Set(textsOf(source).flatMap(wordsOf).filter((word) => !own.has(word)));
}

const ISOLATES = /[\u2066-\u2069]/g;
/** Units stay as they are written: "16 KB", "44.1 kHz", "300 ms", "1 s". */
const UNITS: ReadonlySet<string> = new Set(['s', 'ms', 'KB', 'MB', 'kHz', 'kbit/s']);
/**
 * The slots whose value is others' words when it is a plain string: a library's or the system's
 * `reason` (a network failure the catalogue has no words for keeps its code), what mp4box `said`, a
 * server's reason phrase. A reason the catalogue words (a refused connection, a host not found) is
 * a text like any other, said in the language.
 */
const OTHERS_SLOTS: ReadonlySet<string> = new Set(['reason', 'said', 'statusText']);

/**
 * The data of a text: its strings, each a name (a format, a codec, a type, a number with its unit)
 * or, in the slots of OTHERS_SLOTS, others' words. A field's path before its rule is neither.
 */
function dataOf(value: TextValue, slot = '', out: { names: string[]; others: string[] } = { names: [], others: [] }): { names: string[]; others: string[] } {
  if (typeof value === 'string') (OTHERS_SLOTS.has(slot) ? out.others : out.names).push(value);
  else if (typeof value === 'number' || isTermRef(value)) return out;
  else if (isTextList(value)) for (const item of value.list) dataOf(item, slot, out);
  else if (isRuleText(value)) for (const [name, inner] of Object.entries(value.values ?? {})) if (!(value.code === 'common.fieldRule' && name === 'field')) dataOf(inner, name, out);
  return out;
}
/** The field a refusal names first ("link: …", "content.image.link: …") is a path, not words. */
const withoutField = (said: string): string => said.replace(/^[\w$.[\]]+: /, '');
/** `said` without `data` where it stands as itself: "RGB" is taken out of "RGB or RGBA", not out of "RGBA". */
const withoutData = (said: string, data: string): string =>
  said.replace(new RegExp(`(?<![\\p{L}\\p{N}])${data.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(?![\\p{L}\\p{N}])`, 'gu'), ' ');
/** The catalogue's English words left in `said`, the rendering of `values`, once their data is taken out; and any in the names themselves. */
const englishLeft = (said: string, values: TextValue | readonly TextValue[], forbidden: ReadonlySet<string>): string[] => {
  const { names, others } = dataOf(list(Array.isArray(values) ? values : [values as TextValue]));
  const rest = [...others, ...names].reduce((left, data) => (data === '' ? left : withoutData(left, data)), withoutField(said.replace(ISOLATES, '')));
  return [...wordsOf(rest), ...names.flatMap(wordsOf)].filter((w) => forbidden.has(w) && !UNITS.has(w));
};

let corpus: MediaCorpus;
let server: MediaFileServer;
/** Every finding the media check made, as its codes and values, by its English (once each) with the first place that made it. */
const findings = new Map<string, { value: TextValue; where: string }>();

/** A finding, with the English the check gave beside it: the two must say the same. */
const found = (value: TextValue | undefined, message: string, where: string): void => {
  if (value === undefined) throw new Error(`${where}: "${message}" came without its codes and values`);
  expect(inEnglish(value), where).toBe(message);
  if (!findings.has(message)) findings.set(message, { value, where });
};

const addInspection = (where: string, result: Result<MediaInspection>): void => {
  if (!result.ok) {
    found(result.error.text, result.error.message, where);
    return;
  }
  found(result.value.descriptionText, result.value.description, `${where} (description)`);
  for (const w of result.value.warnings) found(w.text, w.message, `${where} (warning ${w.rule})`);
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
    if (!checked.ok) found(checked.error.text, checked.error.message, path);
    else checked.value.notes.forEach((note, i) => found(checked.value.noteTexts[i], note, `${path} (note)`));
  }
  const closed = await startMediaFileServer();
  await closed.close();
  const unreachable = await checkMediaFile('image', `${closed.url}/photo.png`, { fetch: nodeByteFetch });
  if (!unreachable.ok) found(unreachable.error.text, unreachable.error.message, 'a closed port');
}, 180_000);

afterAll(async () => {
  await server?.close();
});

afterEach(async () => {
  await setUiLanguage('en', undefined);
});

describe('every finding of the media check', () => {
  test('is many: refusals, warnings, notes and descriptions of every kind', () => {
    const kinds = [...findings.values()].map((f) => f.where).join('\n');
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
      for (const [message, { value, where }] of findings) {
        const said = sayText(value);
        expect(englishLeft(said, value, forbidden), `${where}: "${message}" → "${said}"`).toEqual([]);
        if (englishLeft(message, value, forbidden).length > 0) expect(said, where).not.toBe(message);
      }
    });
  }
});

/** "MP4: H.264 High with B-frames, AAC" as the check describes such a file. */
const tracks = (video: TextValue, audio: TextValue): TextValue => text('mediaFile.tracks', { container: 'MP4', tracks: list([video, audio]) });
const HIGH = tracks(text('mediaFile.withBFrames', { video: 'H.264 High' }), 'AAC');
const BASELINE = tracks('H.264 Baseline', text('mediaFile.noAudio'));

describe('real findings, word for word', () => {
  const said = (value: TextValue): string => sayText(value).replace(ISOLATES, '');
  const messageOf = (where: string): TextValue => {
    const found = [...findings.values()].find((f) => f.where === where);
    if (found === undefined) throw new Error(`no finding from ${where}`);
    return found.value;
  };

  test('in Spanish: what the file is, what it should be, and why', async () => {
    await setUiLanguage('es', undefined);
    expect(said(messageOf('gif-as.png'))).toBe('el archivo es una imagen GIF, no una imagen PNG');
    expect(said(messageOf('gray.png'))).toBe('PNG de 8 bits en escala de grises: las imágenes deben ser RGB o RGBA de 8 bits');
    expect(said(messageOf('looping-fat.doc'))).toBe('el archivo parece un documento de Word (.doc), pero no se puede leer: la cadena de sectores de su flujo WordDocument forma un bucle');
    expect(said(messageOf('two-audio.mp4'))).toBe('MP4 con 2 pistas de audio: los videos pueden tener una pista de audio o ninguna');
    expect(inEnglish(HIGH)).toBe('MP4: H.264 High with B-frames, AAC');
    expect(said(HIGH)).toBe('MP4: H.264 High con fotogramas B, AAC');
    expect(inEnglish(BASELINE)).toBe('MP4: H.264 Baseline, no audio');
    expect(said(BASELINE)).toBe('MP4: H.264 Baseline, sin audio');
    expect(said(messageOf('/page.png'))).toBe('link: el servidor dice que el archivo es text/html, no una imagen: una imagen debe ser image/jpeg o image/png');
    expect(said(messageOf('/photo.gif'))).toBe('link: el enlace termina en ".gif", que no es un archivo de imagen: usa .jpeg, .jpg o .png');
  });

  test('in Arabic: the same words, names and numbers kept left to right', async () => {
    await setUiLanguage('ar', undefined);
    const gif = sayText(messageOf('gif-as.png'));
    expect(gif).toBe('الملف صورة \u2066GIF\u2069، لا صورة \u2066PNG\u2069');
    expect(said(messageOf('gray.png'))).toBe('PNG بعمق 8 بت (تدرّج رمادي): يجب أن تكون الصور RGB أو RGBA بعمق 8 بت');
    expect(sayText(messageOf('gray.png'))).toContain('\u20668\u2069');
    expect(said(messageOf('vorbis.ogg'))).toBe('صوت Vorbis في Ogg: يجب أن يكون صوت Ogg بترميز Opus وأحادي القناة');
    const mp3 = list(['MP3', '44.1 kHz', term('mono'), '64 kbit/s']);
    expect(inEnglish(mp3)).toBe('MP3, 44.1 kHz, mono, 64 kbit/s');
    expect(said(mp3)).toBe('MP3, 44.1 kHz, أحادي, 64 kbit/s');
    const mislabelled = sayText(messageOf('/mislabelled.png'));
    expect(mislabelled).toContain('\u2066image/jpeg\u2069');
    expect(mislabelled).toContain('\u2066image/jpeg\u2069 هو \u2066.jpeg\u2069 أو \u2066.jpg\u2069)');
  });
});

describe('lists', () => {
  test('a description of names and catalogue words is said item by item; words of no catalogue are left as they came', async () => {
    await setUiLanguage('es', undefined);
    expect(sayText(list(['MP3', '44.1 kHz', term('stereo'), '128 kbit/s']))).toBe('MP3, 44.1 kHz, estéreo, 128 kbit/s');
    const m4a = text('mediaFile.tracks', { container: 'M4A', tracks: list([text('mediaFile.mpeg4AudioType', { digits: 36 }), '44.1 kHz']) });
    expect(inEnglish(m4a)).toBe('M4A: MPEG-4 audio of object type 36, 44.1 kHz');
    expect(sayText(m4a)).toBe('M4A: audio MPEG-4 de tipo de objeto 36, 44.1 kHz');
    const twoVideos = text('mediaFile.tracks', {
      container: 'MP4',
      tracks: list([list([text('mediaFile.bFramesUnknown', { video: 'H.264 High' }), 'VP9'], 'plus'), text('mediaFile.audioStreams', { count: 2, codecs: list(['AAC', 'MP3']) })]),
    });
    expect(inEnglish(twoVideos)).toBe('MP4: H.264 High (B-frames unknown) + VP9, 2 audio streams (AAC, MP3)');
    expect(sayText(twoVideos)).toBe('MP4: H.264 High (fotogramas B desconocidos) + VP9, 2 pistas de audio (AAC, MP3)');
    for (const words of ['Call failed or rejected', 'Invalid parameter, mono', 'the gateway said no, mono', 'a broken, file', 'Mute, then stereo']) {
      expect(sayText(words)).toBe(words);
    }
  });
});

describe('in the composer, against the real service', () => {
  const CONTACT = '12025550123';
  let env: EmbeddedEnvironment | undefined;
  let dataDir: string | undefined;
  let service: SoftphoneService | undefined;
  let clips: MediaFileServer | undefined;

  beforeAll(async () => {
    configureLogging({ sink: () => undefined });
    env = await startEmbeddedEnvironment();
    dataDir = await mkdtemp(join(tmpdir(), 'composer-text-'));
    const sandbox = env;
    service = await createSoftphoneService({ dataDir, secrets: new MemorySecretStore(), embedded: async () => ({ ...sandbox, close: async () => undefined }) });
    // A link without an extension, on this computer: two notes besides the B-frames warning.
    clips = await startMediaFileServer({ '/clip': file(new Uint8Array(await readFile(corpus.file('high-bframes.mp4').path)), { contentType: 'video/mp4' }) });
  }, 60_000);
  afterAll(async () => {
    await service?.close();
    await env?.close();
    await clips?.close();
    if (dataDir !== undefined) await rm(dataDir, { recursive: true, force: true });
  });

  /** The messaging commands, checked with the bridge's schemas as each host checks them, then handled by the service. */
  const serviceCommands = (s: SoftphoneService, sent: CommandParams<'sendMessage'>[]): MessagingActionsDeps['api'] => ({
    getConversation: (p) => s.handle('getConversation', commandSchemas.getConversation.parse(p)),
    checkMediaLink: (p) => s.handle('checkMediaLink', commandSchemas.checkMediaLink.parse(p)),
    sendMessage: (p) => {
      sent.push(p);
      return s.handle('sendMessage', commandSchemas.sendMessage.parse(p));
    },
    sendCallButton: (p) => s.handle('sendCallButton', commandSchemas.sendCallButton.parse(p)),
    sendTemplate: (p) => s.handle('sendTemplate', commandSchemas.sendTemplate.parse(p)),
    parseTemplate: (p) => s.handle('parseTemplate', commandSchemas.parseTemplate.parse(p)),
    requestCallPermission: (p) => s.handle('requestCallPermission', commandSchemas.requestCallPermission.parse(p)),
  });
  const engine = idleMediaControls();

  /** The text a person reads in a piece of markup. */
  const textOf = (html: string): string =>
    html
      .replace(/<[^>]*>/g, '')
      .replaceAll('&quot;', '"')
      .replaceAll('&#x27;', "'")
      .replaceAll('&lt;', '<')
      .replaceAll('&gt;', '>')
      .replaceAll('&amp;', '&');
  /** The inner markup of the element with this id. */
  const elementById = (html: string, id: string): string => {
    const m = new RegExp(`<(\\w+)[^>]* id="${id}"[^>]*>(.*?)</\\1>`, 's').exec(html);
    if (m === null) throw new Error(`no element #${id} in ${html}`);
    return m[2]!;
  };
  const listItems = (html: string): string[] => [...html.matchAll(/<li>(.*?)<\/li>/gs)].map((m) => m[1]!);

  test('the hint on a checked link and the warnings to confirm are said in Spanish; "Send anyway" sends the English and the video goes out', async () => {
    const s = service!;
    expect(await s.handle('simulateInboundMessage', { number: CONTACT, text: 'Could you send me the video?' })).toMatchObject({ ok: true });
    resetStore();
    const sent: CommandParams<'sendMessage'>[] = [];
    const messaging = new MessagingActions({ api: serviceCommands(s, sent), store: appStore });
    // The customer wrote: the window opens once the service hears of it through the relay.
    for (let tries = 0; appStore.getState().conversations[CONTACT]?.window.open !== true; tries++) {
      expect(tries, 'the window to open').toBeLessThan(400);
      await new Promise((resolve) => setTimeout(resolve, 25));
      await messaging.loadConversation(CONTACT);
    }
    const link = `${clips!.url}/clip`;
    messaging.editComposer(CONTACT, (d) => ({ ...d, tab: 'media', media: { ...emptyMedia('video', 'link'), link } }), 'video.link');
    await messaging.checkMediaLink(CONTACT);
    await messaging.send(CONTACT);
    const draft = (): ComposerDraft => composerFor(appStore.getState(), CONTACT);

    // What the service found, kept as its codes and values; the warnings' English beside them, for "Send anyway".
    const hint = draft().linkCheck!;
    expect(hint).toMatchObject({ link, type: 'video', state: 'confirm', found: { what: HIGH, notes: [{ code: 'mediaFetch.noExtension' }, { code: 'mediaFetch.privateNetwork' }], toConfirm: 1 } });
    const hintInEnglish = linkCheckHint(hint);
    expect(hintInEnglish).toMatch(/^MP4: H\.264 High with B-frames, AAC, [\d,.]+ (bytes|KB|MB): the gateway takes it, with a warning for you to confirm when you send it\. The link has no file extension; .*\. The link points to this computer/);
    const { warnings, texts } = draft().confirmation!;
    expect(warnings).toEqual([expect.stringMatching(/^H\.264 High profile with B-frames does not play on Android/)]);
    expect(texts).toEqual([text('media.bFrames')]);
    expect(texts.map(inEnglish)).toEqual(warnings);
    expect(sent).toHaveLength(1);

    const { controllers } = createControllers({ api: fakeApi({}).api, link: permanentLink(), store: appStore, engine });
    const render = (): string =>
      renderToStaticMarkup(
        createElement(
          ControllersContext.Provider,
          { value: { ...controllers, messaging } },
          createElement(Composer, { contact: CONTACT, draft: draft(), windowOpen: true, conversationWindow: appStore.getState().conversations[CONTACT]?.window }),
        ),
      );
    const hintId = `composer-${CONTACT}-media-link-hint`;
    const alertId = `composer-${CONTACT}-confirm`;

    await setUiLanguage('es', undefined);
    const es = render();
    const saidHint = textOf(elementById(es, hintId));
    const saidAlert = textOf(elementById(es, alertId));
    const forbidden = new Set([...englishOnly(spanish as Tree), ...englishOnly(spanishMessages as Tree, englishMessages as Tree)]);
    for (const word of ['gateway', 'takes', 'warning', 'confirm', 'link', 'file', 'extension', 'private', 'B-frames', 'play']) expect(forbidden, word).toContain(word);
    const hintValues = hint.state === 'confirm' ? [hint.found.what, ...hint.found.notes] : [];
    expect(englishLeft(saidHint, hintValues, forbidden), saidHint).toEqual([]);
    expect(englishLeft(saidAlert, texts, forbidden), saidAlert).toEqual([]);
    expect(saidHint).toMatch(/^MP4: H\.264 High con fotogramas B, AAC, [\d.,]+ (bytes|KB|MB): la pasarela lo acepta, con una advertencia que debes confirmar al enviarlo\. El enlace no tiene extensión de archivo; /);
    expect(listItems(elementById(es, alertId)).map(textOf)).toEqual(texts.map(sayText));
    expect(saidAlert).toContain('vuelve a codificarlo con el perfil Main o Baseline sin fotogramas B');

    // In Arabic the names keep their order inside the right-to-left sentences.
    await setUiLanguage('ar', undefined);
    const ar = render();
    expect(textOf(elementById(ar, hintId))).toContain('\u2066H.264 High\u2069 مع إطارات B');
    expect(listItems(elementById(ar, alertId)).map(textOf)).toEqual(texts.map(sayText));
    const arabicForbidden = new Set([...englishOnly(arabic as Tree), ...englishOnly(arabicMessages as Tree, englishMessages as Tree)]);
    expect(englishLeft(textOf(elementById(ar, hintId)), hintValues, arabicForbidden)).toEqual([]);
    expect(englishLeft(textOf(elementById(ar, alertId)), texts, arabicForbidden)).toEqual([]);

    // Back in English: the words the service gave, word for word.
    await setUiLanguage('en', undefined);
    const en = render();
    expect(textOf(elementById(en, hintId))).toBe(hintInEnglish);
    expect(listItems(elementById(en, alertId)).map(textOf)).toEqual(warnings);

    // "Send anyway" confirms the warnings it lists: the English texts, which the service takes.
    await setUiLanguage('es', undefined);
    expect(draft().confirmation!.warnings).toEqual(warnings);
    await messaging.send(CONTACT, { confirmed: draft().confirmation!.warnings });
    expect(sent.at(-1)?.confirmed).toEqual(warnings);
    expect(draft()).toMatchObject({ confirmation: null, error: null, busy: false, linkCheck: null });
    await messaging.loadConversation(CONTACT);
    expect(appStore.getState().conversations[CONTACT]?.messages.at(-1)).toMatchObject({ direction: 'outbound', summary: 'Video: clip' });
  }, 60_000);
});

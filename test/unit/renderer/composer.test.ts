// The composer's forms make messages that pass the shared schemas, and every broken rule lands on
// the field that broke it, as the agent types.
import { afterEach, describe, expect, it } from 'vitest';
import { messageContentSchema } from '../../../shared/api';
import { english, list, term, text, type RuleText } from '../../../shared/i18n/text';
import { checkPhoneNumber } from '../../../shared/phone';
import { parseTemplatePayload } from '../../../shared/templates';
import { fieldError, parseWith } from '../../../shared/validation';
import { setUiLanguage } from '../../../renderer/i18n/i18n';
import {
  afterSend,
  afterSendOf,
  callButtonInput,
  checkComposer,
  confirmationFrom,
  confirmationSubject,
  confirmedWarnings,
  emptyComposer,
  emptyInteractive,
  emptyMedia,
  focusAfterConfirmedSend,
  formatSize,
  interactiveContent,
  linkCheckHint,
  linkCheckOutcome,
  MEDIA_BYS,
  mediaByLabel,
  mediaContent,
  mediaFieldLabel,
  otherErrors,
  serverErrorsFrom,
  tabLabel,
  templateFieldLabel,
  templateValuesFor,
  visibleError,
  withoutStaleConfirmation,
  type ComposerDraft,
  type InteractiveDraft,
  type InteractiveVariant,
  type LinkCheckState,
  type MediaDraft,
} from '../../../renderer/store/composer';
import type { MediaType } from '../../../shared/messages';
import type { AppError } from '../../../shared/result';

const TO = '447700900123';
const draft = (patch: Partial<ComposerDraft>): ComposerDraft => ({ ...emptyComposer('text', TO), ...patch });
const interactive = (variant: InteractiveVariant, patch: Partial<InteractiveDraft>): ComposerDraft => draft({ tab: 'interactive', interactive: { ...emptyInteractive(variant), ...patch } });
type LinkFound = Parameters<typeof linkCheckOutcome>[0];
/** The store's state after a link check that found this. */
const checked = (type: MediaType, found: LinkFound): LinkCheckState => ({ link: 'https://e.com/file', type, ...linkCheckOutcome(found) });
/** Notes as the main process gives them: in English, and as codes and values. */
const noted = (...notes: RuleText[]): Pick<LinkFound, 'warnings' | 'warningTexts'> => ({ warnings: notes.map(english), warningTexts: notes });
/** The link field's hint as the composer draws it, for a check that found this. */
const hintOf = (type: MediaType, found: LinkFound): string => linkCheckHint(checked(type, found));

describe('text and media', () => {
  it('an empty or overlong text names text.body with the rule', () => {
    expect(checkComposer(draft({ text: '' }), TO).errors).toEqual({ 'text.body': 'must not be empty' });
    expect(checkComposer(draft({ text: 'x'.repeat(4097) }), TO).errors).toEqual({ 'text.body': 'must be at most 4096 characters' });
    expect(checkComposer(draft({ text: 'Hello' }), TO)).toEqual({ value: { type: 'text', text: { body: 'Hello' } }, errors: {} });
  });

  it('media: caption only where allowed, filename only for documents, the link checked for its form', () => {
    const media = (type: 'image' | 'audio' | 'document', link: string) => draft({ tab: 'media', media: { type, by: 'link', link, id: '', caption: 'A caption', filename: 'file.pdf' } });
    expect(mediaContent(media('audio', 'https://e.com/a.mp3').media)).toEqual({ type: 'audio', audio: { link: 'https://e.com/a.mp3' } });
    expect(mediaContent(media('image', ' https://e.com/a.png ').media)).toEqual({ type: 'image', image: { link: 'https://e.com/a.png', caption: 'A caption' } });
    expect(mediaContent(media('document', 'https://e.com/a.pdf').media)).toEqual({ type: 'document', document: { link: 'https://e.com/a.pdf', caption: 'A caption', filename: 'file.pdf' } });
    expect(checkComposer(media('image', 'e.com/a.png'), TO).errors).toEqual({ 'image.link': 'must be an http:// or https:// address' });
  });
});

describe('media by id or by link', () => {
  const byId = (patch: Partial<MediaDraft>): ComposerDraft => draft({ tab: 'media', media: { ...emptyMedia('image', 'id'), link: 'https://e.com/kept.png', ...patch } });

  it('sends exactly one of the two: the id when chosen, the link kept aside untouched', () => {
    const d = byId({ id: ' 1037543291543636 ', caption: 'Your parcel' });
    expect(checkComposer(d, TO)).toEqual({ value: { type: 'image', image: { id: '1037543291543636', caption: 'Your parcel' } }, errors: {} });
    expect(d.media.link).toBe('https://e.com/kept.png');
    const back = { ...d, media: { ...d.media, by: 'link' as const } };
    expect(checkComposer(back, TO).value).toEqual({ type: 'image', image: { link: 'https://e.com/kept.png', caption: 'Your parcel' } });
    expect(messageContentSchema.safeParse(checkComposer(d, TO).value).success).toBe(true);
  });

  it('names the id field and its rule: empty, a link in the id field, spaces', () => {
    expect(checkComposer(byId({ id: '  ' }), TO).errors).toEqual({ 'image.id': 'must not be empty' });
    expect(checkComposer(byId({ type: 'video', id: 'https://e.com/clip.mp4' }), TO).errors).toEqual({
      'video.id': 'is a link: choose "By link" to send a link, or enter the id the upload returned',
    });
    expect(checkComposer(byId({ id: '1037 5432' }), TO).errors).toEqual({ 'image.id': 'must not contain spaces: it is the id the upload returned' });
    // The link's rules do not apply to a message by id.
    expect(checkComposer(byId({ id: 'm-1', link: 'not a link' }), TO).errors).toEqual({});
  });

  it('the radios and the textboxes have names of their own', () => {
    expect(MEDIA_BYS.map(mediaByLabel)).toEqual(['By link', 'By media id']);
    expect(MEDIA_BYS.map(mediaFieldLabel)).toEqual(['Media link', 'Media id']);
    const names = [...MEDIA_BYS.map(mediaByLabel), ...MEDIA_BYS.map(mediaFieldLabel)];
    expect(new Set(names).size).toBe(names.length);
  });

  it('the gateway refusing an id, as the main process places it, is the id field\u2019s error', () => {
    const rule = 'unknown media id "1900000000000099": the account has no uploaded media with this id';
    const refused = fieldError('gateway_error', 'content.image.id', rule);
    expect(!refused.ok && refused.error.message).toBe(`content.image.id: ${rule}`);
    if (!refused.ok) expect(serverErrorsFrom(refused.error)).toEqual({ 'image.id': rule });
  });

  it('a cleared form keeps the way the media is given', () => {
    expect(afterSend(byId({ id: 'm-1', caption: 'x' })).media).toEqual(emptyMedia('image', 'id'));
  });
});

describe('warnings that wait for "Send anyway"', () => {
  const video = (patch: Partial<MediaDraft> = {}): ComposerDraft => draft({ tab: 'media', media: { ...emptyMedia('video', 'link'), link: 'https://e.com/clip.mp4', ...patch } });
  const WARNING = 'MP4: H.264 High with B-frames: does not play on Android; use the Main or Baseline profile without B-frames';

  it('come from the main process’s answer, for the file that was sent', () => {
    const sent = video();
    const confirmation = confirmationFrom(sent, { confirm: [WARNING] });
    expect(confirmation).toEqual({ subject: confirmationSubject(sent), warnings: [WARNING], texts: [WARNING], changed: false, asked: 1 });
    // With their codes and values, shown from those; the English is what "Send anyway" sends back.
    const bFrames = text('media.bFrames');
    expect(confirmationFrom(sent, { confirm: [english(bFrames)], confirmTexts: [bFrames] })).toMatchObject({ warnings: [english(bFrames)], texts: [bFrames] });
    // Texts that do not match the warnings one for one are not taken: the English stands.
    expect(confirmationFrom(sent, { confirm: [WARNING, 'another'], confirmTexts: [bFrames] })).toMatchObject({ texts: [WARNING, 'another'] });
    // Asked again after the agent had confirmed: the file changed since.
    expect(confirmationFrom(sent, { confirm: [WARNING] }, ['an older warning'])).toMatchObject({ warnings: [WARNING], changed: true });
    expect(confirmationFrom(sent, { confirm: [] })).toBeNull();
    expect(confirmationFrom(sent, {})).toBeNull();
  });

  it('each answer that asks is counted, so that the same words make a new alert', () => {
    const sent = video();
    const first = confirmationFrom(sent, { confirm: [WARNING] });
    const second = confirmationFrom(sent, { confirm: [WARNING] }, [], first);
    expect(first?.asked).toBe(1);
    expect(second).toMatchObject({ warnings: [WARNING], changed: false, asked: 2 });
    expect(confirmationFrom(sent, { confirm: [WARNING] }, [WARNING], second)).toMatchObject({ changed: true, asked: 3 });
  });

  it('stay through an edit of the caption, and go with an edit of the link, the type, the way or the tab', () => {
    const sent = video();
    const waiting: ComposerDraft = { ...sent, confirmation: confirmationFrom(sent, { confirm: [WARNING] }) };
    expect(withoutStaleConfirmation({ ...waiting, media: { ...waiting.media, caption: 'Our new store' } }).confirmation).not.toBeNull();
    expect(withoutStaleConfirmation({ ...waiting, media: { ...waiting.media, link: ' https://e.com/clip.mp4 ' } }).confirmation).not.toBeNull();
    expect(withoutStaleConfirmation({ ...waiting, media: { ...waiting.media, link: 'https://e.com/other.mp4' } }).confirmation).toBeNull();
    expect(withoutStaleConfirmation({ ...waiting, media: { ...waiting.media, type: 'document' } }).confirmation).toBeNull();
    expect(withoutStaleConfirmation({ ...waiting, media: { ...waiting.media, by: 'id' } }).confirmation).toBeNull();
    expect(withoutStaleConfirmation({ ...waiting, tab: 'text' }).confirmation).toBeNull();
  });

  it('"Send anyway" confirms only the warnings still shown for the file in the form, each once', () => {
    const sent = video();
    const OTHER = 'MP4 with its moov box after the media data';
    const waiting: ComposerDraft = { ...sent, confirmation: confirmationFrom(sent, { confirm: [WARNING] }) };
    expect(confirmedWarnings(waiting, [WARNING])).toEqual([WARNING]);
    expect(confirmedWarnings(waiting, [WARNING, WARNING, OTHER])).toEqual([WARNING]);
    expect(confirmedWarnings(waiting, [])).toEqual([]);
    // Another file in the form, or nothing waiting: nothing is confirmed.
    expect(confirmedWarnings({ ...waiting, media: { ...waiting.media, link: 'https://e.com/other.mp4' } }, [WARNING])).toEqual([]);
    expect(confirmedWarnings(sent, [WARNING])).toEqual([]);
  });

  it('a link button’s media header is its subject too', () => {
    const sent = interactive('cta_url', { ctaHeaderType: 'video', ctaHeaderValue: 'https://e.com/clip.mp4', body: 'Watch' });
    const waiting: ComposerDraft = { ...sent, confirmation: confirmationFrom(sent, { confirm: [WARNING] }) };
    expect(waiting.confirmation).not.toBeNull();
    expect(withoutStaleConfirmation({ ...waiting, interactive: { ...waiting.interactive, body: 'Watch this' } }).confirmation).not.toBeNull();
    expect(withoutStaleConfirmation({ ...waiting, interactive: { ...waiting.interactive, ctaHeaderValue: 'https://e.com/b.mp4' } }).confirmation).toBeNull();
  });

  it('are gone once the message went out', () => {
    const sent = video();
    const waiting: ComposerDraft = { ...sent, busy: true, confirmation: confirmationFrom(sent, { confirm: [WARNING] }) };
    expect(afterSend(waiting).confirmation).toBeNull();
    expect(afterSendOf({ ...waiting, media: { ...waiting.media, caption: 'typed meanwhile' } }, waiting).confirmation).toBeNull();
  });
});

describe('the link check’s hint and the focus after "Send anyway"', () => {
  const WARNING = 'MP4: H.264 High with B-frames: does not play on Android; use the Main or Baseline profile without B-frames';
  const video = (patch: Partial<ComposerDraft> = {}): ComposerDraft =>
    draft({ tab: 'media', media: { ...emptyMedia('video', 'link'), link: 'https://e.com/clip.mp4' }, ...patch });
  const MEDIA_KEYS = new Set(['video.link', 'video.caption']);

  it('says what the file is and its size; the main process’s description before the served type', () => {
    const png = { contentType: 'image/png', contentLength: 120 * 1024, warnings: [] };
    const rgb = text('mediaFile.png', { depth: 8, colour: 'RGB' });
    expect(linkCheckOutcome({ ...png, description: '8-bit RGB PNG', descriptionText: rgb }).state).toBe('ok');
    expect(hintOf('image', { ...png, description: '8-bit RGB PNG', descriptionText: rgb })).toBe('8-bit RGB PNG, 120 KB: fits the image rules');
    // The main process's words alone, when it gives no codes: shown as they came.
    expect(hintOf('image', { ...png, description: '8-bit RGB PNG' })).toBe('8-bit RGB PNG, 120 KB: fits the image rules');
    expect(hintOf('image', png)).toBe('image/png, 120 KB: fits the image rules');
    expect(hintOf('image', { ...png, description: '  ' })).toBe('image/png, 120 KB: fits the image rules');
    expect(hintOf('image', { contentType: 'image/png', warnings: [], description: '8-bit RGB PNG', descriptionText: rgb })).toBe('8-bit RGB PNG: fits the image rules');
    // Notes that need nothing from the agent follow.
    expect(hintOf('image', { ...png, ...noted(text('mediaFetch.noExtension', { contentType: 'image/png' })) })).toBe(
      'image/png, 120 KB: fits the image rules. The link has no file extension; the file is taken as image/png from what the server says and what its bytes are',
    );
  });

  it('counts the warnings to confirm without repeating them: the alert beside "Send anyway" lists them', () => {
    const mp4 = { contentType: 'video/mp4', contentLength: 2 * 1024 * 1024, warnings: [], description: 'MP4, H.264 High' };
    const one = linkCheckOutcome({ ...mp4, confirm: [WARNING] });
    expect(one.state).toBe('confirm');
    expect(hintOf('video', { ...mp4, confirm: [WARNING] })).toBe('MP4, H.264 High, 2 MB: the gateway takes it, with a warning for you to confirm when you send it');
    const two = hintOf('video', { ...mp4, confirm: [WARNING, 'MP4: moov after mdat'] });
    expect(two).toBe('MP4, H.264 High, 2 MB: the gateway takes it, with 2 warnings for you to confirm when you send it');
    expect(two).not.toContain('B-frames');
    expect(linkCheckOutcome({ ...mp4, confirm: [] }).state).toBe('ok');
  });

  it('is drawn from the codes and values the store keeps: the main process’s English in English, whatever the size, the count or the notes', () => {
    const NOTE = text('mediaFetch.privateNetwork');
    const NO_EXTENSION = text('mediaFetch.noExtension', { contentType: 'video/mp4' });
    const HIGH = text('mediaFile.tracks', { container: 'MP4', tracks: list([text('mediaFile.withBFrames', { video: 'H.264 High' }), 'AAC']) });
    const MP3 = list(['MP3', '44.1 kHz', term('mono'), '64 kbit/s']);
    const described = (d: RuleText | ReturnType<typeof list>) => ({ description: english(d), descriptionText: d });
    const cases: [MediaType, LinkFound, string][] = [
      ['image', { contentType: 'image/png', warnings: [] }, 'image/png: fits the image rules'],
      ['image', { contentType: 'image/png', contentLength: 1, warnings: [], ...described(text('mediaFile.png', { depth: 8, colour: 'RGB' })) }, '8-bit RGB PNG, 1 byte: fits the image rules'],
      ['image', { contentType: 'image/png', contentLength: 1023, ...noted(NOTE) }, `image/png, 1,023 bytes: fits the image rules. ${english(NOTE)}`],
      [
        'video',
        { contentType: 'video/mp4', contentLength: 1_048_575, ...noted(NO_EXTENSION, NOTE), confirm: [WARNING], ...described(HIGH) },
        `MP4: H.264 High with B-frames, AAC, 1,024 KB: the gateway takes it, with a warning for you to confirm when you send it. ${english(NO_EXTENSION)}. ${english(NOTE)}`,
      ],
      ['video', { contentType: 'video/mp4', contentLength: 2.5 * 1024 * 1024, warnings: [], confirm: Array.from({ length: 12 }, (_, i) => `${WARNING} ${i}`) }, 'video/mp4, 2.5 MB: the gateway takes it, with 12 warnings for you to confirm when you send it'],
      ['audio', { contentType: 'audio/mpeg', contentLength: 1234.5 * 1024 * 1024, ...noted(NOTE), ...described(MP3) }, `MP3, 44.1 kHz, mono, 64 kbit/s, 1,234.5 MB: fits the audio rules. ${english(NOTE)}`],
      ['document', { contentType: 'application/pdf', contentLength: Math.round(2.96 * 1024 * 1024), warnings: [], description: 'PDF 1.4', descriptionText: 'PDF 1.4' }, 'PDF 1.4, 3.0 MB: fits the document rules'],
    ];
    for (const [type, found, hint] of cases) expect(hintOf(type, found)).toBe(hint);
    // Notes the catalogue did not make are shown as they came; while the check runs, its own words.
    expect(hintOf('image', { contentType: 'image/png', warnings: ['Fine by the gateway'] })).toBe('image/png: fits the image rules. Fine by the gateway');
    expect(linkCheckHint({ link: 'https://e.com/a.png', type: 'image', state: 'checking' })).toBe('Checking the link…');
  });

  it('is kept as codes and values and said in the language of the moment it is drawn', async () => {
    const NOTE = text('mediaFetch.privateNetwork');
    const HIGH = text('mediaFile.tracks', { container: 'MP4', tracks: list([text('mediaFile.withBFrames', { video: 'H.264 High' }), 'AAC']) });
    try {
      await setUiLanguage('es', undefined);
      // Checked while the window speaks Spanish: the store holds the codes and values.
      const check = checked('video', { contentType: 'video/mp4', contentLength: 2.5 * 1024 * 1024, ...noted(NOTE), confirm: [WARNING], description: english(HIGH), descriptionText: HIGH });
      expect(check).toMatchObject({ state: 'confirm', found: { what: HIGH, notes: [NOTE], toConfirm: 1, size: 2.5 * 1024 * 1024 } });
      expect(linkCheckHint(check)).toBe(
        'MP4: H.264 High con fotogramas B, AAC, 2,5 MB: la pasarela lo acepta, con una advertencia que debes confirmar al enviarlo. ' +
          'El enlace apunta a esta computadora o a una red privada: la pasarela descarga los enlaces por sí misma y no puede llegar a él (el sandbox sí)',
      );
      expect(linkCheckHint({ link: check.link, type: check.type, state: 'checking' })).toBe('Comprobando el enlace…');
      await setUiLanguage('ar', undefined);
      const arabic = linkCheckHint(check);
      expect(arabic).toContain('\u2066H.264 High\u2069 مع إطارات B');
      expect(arabic).toContain('2.5 ميغابايت: تقبله البوابة');
      expect(arabic).not.toMatch(/with|gateway|private/);
      await setUiLanguage('en', undefined);
      expect(linkCheckHint(check)).toBe(`MP4: H.264 High with B-frames, AAC, 2.5 MB: the gateway takes it, with a warning for you to confirm when you send it. ${english(NOTE)}`);
    } finally {
      await setUiLanguage('en', undefined);
    }
  });

  it('focus waits for the answer, then goes to "Send anyway" when asked again, to the field in error on a refusal, else to the form', () => {
    const asking = confirmationFrom(video(), { confirm: [WARNING] });
    expect(focusAfterConfirmedSend(video({ busy: true, confirmation: asking }), MEDIA_KEYS)).toBeNull();
    expect(focusAfterConfirmedSend(video({ confirmation: asking }), MEDIA_KEYS)).toBe('send-anyway');
    // Sent: the button is gone, the form is ready for the next file.
    expect(focusAfterConfirmedSend(afterSend(video({ busy: true, confirmation: asking })), MEDIA_KEYS)).toBe('first-field');
    expect(focusAfterConfirmedSend(video({ notice: [text('mediaFetch.noExtension', { contentType: 'video/mp4' })] }), MEDIA_KEYS)).toBe('first-field');
    // Refused on the link field, or a rule broken as the agent typed meanwhile.
    expect(focusAfterConfirmedSend(video({ error: 'Not sent: 16-bit PNG', serverErrors: { 'video.link': '16-bit PNG' } }), MEDIA_KEYS)).toBe('field-in-error');
    expect(focusAfterConfirmedSend(video({ error: 'Not sent: check the highlighted fields.', showAllErrors: true }), MEDIA_KEYS)).toBe('field-in-error');
    // Refused with no field to blame (the gateway unreachable, a field no input shows): Send tries again.
    expect(focusAfterConfirmedSend(video({ error: 'Not sent. The gateway cannot be reached.' }), MEDIA_KEYS)).toBe('send');
    expect(focusAfterConfirmedSend(video({ error: 'Not sent: bad number', serverErrors: { to: 'bad number' } }), MEDIA_KEYS)).toBe('send');
  });
});

describe('interactive forms', () => {
  it('reply buttons: titles are checked one by one, ids are made for the agent', () => {
    const d = interactive('button', { body: 'Which day suits you?', buttons: ['Monday', 'A title far too long for it'] });
    expect(checkComposer(d, TO).errors).toEqual({ 'interactive.action.buttons[1].reply.title': 'must be at most 20 characters' });
    const ok = interactive('button', { body: 'Which day?', buttons: ['Monday', 'Tuesday'], footer: 'Reply any time' });
    const content = checkComposer(ok, TO).value as { interactive: { action: { buttons: { reply: { id: string } }[] }; footer: unknown } };
    expect(content.interactive.action.buttons.map((b) => b.reply.id)).toEqual(['button-1', 'button-2']);
    expect(content.interactive.footer).toEqual({ text: 'Reply any time' });
    expect(checkComposer(interactive('button', { body: 'x', buttons: [] }), TO).errors).toEqual({ 'interactive.action.buttons': 'must have at least one button' });
  });

  it('a list with several sections and rows; the rows limit across sections is one list-wide rule', () => {
    const sections = [
      { title: 'Mornings', rows: [{ title: '9:00', description: 'Room 1' }, { title: '10:00', description: '' }] },
      { title: 'Afternoons', rows: [{ title: '14:00', description: '' }] },
    ];
    const ok = interactive('list', { body: 'Pick a slot', listButton: 'Slots', sections });
    const value = checkComposer(ok, TO).value as { interactive: { action: { sections: { rows: { id: string; description?: string }[] }[] } } };
    expect(value.interactive.action.sections.map((s) => s.rows.map((r) => r.id))).toEqual([['row-1-1', 'row-1-2'], ['row-2-1']]);
    expect(value.interactive.action.sections[0]!.rows[1]!.description).toBeUndefined();

    const many = Array.from({ length: 3 }, (_, i) => ({ title: `S${i}`, rows: Array.from({ length: 4 }, (_, j) => ({ title: `R${j}`, description: '' })) }));
    const tooMany = interactive('list', { body: 'Pick', listButton: 'Slots', sections: many });
    const errors = checkComposer(tooMany, TO).errors;
    expect(errors['interactive.action.sections']).toBe('must have at most 10 rows in all (has 12)');
    // Not a field of its own: listed apart once a send was tried.
    const shown = new Set(['interactive.body.text']);
    expect(otherErrors({ ...tooMany, showAllErrors: true }, errors, shown)).toEqual(['Sections: must have at most 10 rows in all (has 12)']);
    expect(otherErrors(tooMany, errors, shown)).toEqual([]);
  });

  it('cta_url: a header is exactly one kind; a media header carries a link', () => {
    const base = { body: 'Pay your invoice', ctaDisplayText: 'Pay now', ctaUrl: 'https://pay.example.com/42' };
    expect(checkComposer(interactive('cta_url', base), TO).errors).toEqual({});
    const image = interactive('cta_url', { ...base, ctaHeaderType: 'image', ctaHeaderValue: 'https://e.com/h.png' });
    expect(interactiveContent(image.interactive)).toMatchObject({ interactive: { header: { type: 'image', image: { link: 'https://e.com/h.png' } } } });
    expect(checkComposer(interactive('cta_url', { ...base, ctaHeaderType: 'video', ctaHeaderValue: 'not a link' }), TO).errors).toEqual({
      'interactive.header.video.link': 'must be an http:// or https:// address',
    });
    expect(checkComposer(interactive('cta_url', { ...base, ctaUrl: 'pay.example.com' }), TO).errors).toEqual({ 'interactive.action.parameters.url': 'must be an http:// or https:// address' });
  });

  it('flow: by name or by id, never both; a version such as "3"', () => {
    const byName = interactive('flow', { body: 'Book a visit', flowBy: 'name', flowRef: 'booking', flowCta: 'Book' });
    expect(checkComposer(byName, TO).errors).toEqual({});
    expect((interactiveContent(byName.interactive) as { interactive: { action: { parameters: object } } }).interactive.action.parameters).toEqual({
      flow_message_version: '3',
      flow_name: 'booking',
      flow_cta: 'Book',
    });
    const byId = interactive('flow', { body: 'Book', flowBy: 'id', flowRef: '', flowCta: 'Book', flowVersion: 'three' });
    expect(checkComposer(byId, TO).errors).toEqual({
      'interactive.action.parameters.flow_id': 'must not be empty',
      'interactive.action.parameters.flow_message_version': 'must be a version such as "3"',
    });
  });

  it('address_message: a two-letter country in capitals', () => {
    expect(checkComposer(interactive('address_message', { body: 'Where should we deliver?', country: 'IN' }), TO).errors).toEqual({});
    expect(checkComposer(interactive('address_message', { body: 'Where?', country: 'India' }), TO).errors).toEqual({
      'interactive.action.parameters.country': 'must be a two-letter country code in capitals, e.g. "IN"',
    });
  });

  it('call button: sendCallButton\u2019s own input, its rules named by its fields', () => {
    const d = interactive('voice_call', { body: 'Tap to talk to us', callDisplayText: 'Call us', callTtlMinutes: '90' });
    expect(checkComposer(d, TO)).toEqual({ value: { to: TO, bodyText: 'Tap to talk to us', displayText: 'Call us', ttlMinutes: 90 }, errors: {} });
    expect(checkComposer(interactive('voice_call', { callTtlMinutes: '0' }), TO).errors).toEqual({ ttlMinutes: 'must be at least 1 minute' });
    expect(checkComposer(interactive('voice_call', { callTtlMinutes: '50000' }), TO).errors).toEqual({ ttlMinutes: 'must be at most 43200 minutes (30 days)' });
    expect(checkComposer(interactive('voice_call', { callTtlMinutes: 'soon' }), TO).errors).toEqual({ ttlMinutes: 'must be a whole number of minutes' });
    expect(checkComposer(interactive('voice_call', { callDisplayText: 'Call our friendly team' }), TO).errors).toEqual({ displayText: 'must be at most 20 characters' });
    expect(callButtonInput(TO, { ...emptyInteractive('voice_call'), callDisplayText: '', callTtlMinutes: '' })).toEqual({ to: TO });
  });

  it('every variant the form can make is a message the shared schema accepts', () => {
    const filled: Record<Exclude<InteractiveVariant, 'voice_call'>, Partial<InteractiveDraft>> = {
      button: { body: 'b', buttons: ['One'] },
      list: { body: 'b', listButton: 'Open', sections: [{ title: 'S', rows: [{ title: 'R', description: 'D' }] }] },
      cta_url: { body: 'b', ctaHeaderType: 'text', ctaHeaderValue: 'Hi', ctaDisplayText: 'Go', ctaUrl: 'https://e.com' },
      flow: { body: 'b', headerText: 'H', footer: 'F', flowBy: 'id', flowRef: '123', flowCta: 'Go' },
      address_message: { body: 'b', country: 'GB' },
    };
    for (const [variant, patch] of Object.entries(filled)) {
      expect(messageContentSchema.safeParse(interactiveContent({ ...emptyInteractive(variant as InteractiveVariant), ...patch })).success).toBe(true);
    }
  });
});

describe('showing errors', () => {
  it('shows a field\u2019s rule once it was typed in, or after a send was tried; the server\u2019s placement wins', () => {
    const live = { 'text.body': 'must not be empty' };
    const d = draft({});
    expect(visibleError(d, live, 'text.body')).toBeUndefined();
    expect(visibleError({ ...d, touched: { 'text.body': true } }, live, 'text.body')).toBe('must not be empty');
    expect(visibleError({ ...d, showAllErrors: true }, live, 'text.body')).toBe('must not be empty');
    expect(visibleError({ ...d, serverErrors: { 'image.link': 'the link answered HTTP 404' } }, live, 'image.link')).toBe('the link answered HTTP 404');
  });

  it('places the main process\u2019s errors by field, without "content."', () => {
    const errorOf = <T>(result: { ok: true; value: T } | { ok: false; error: AppError }): AppError => {
      if (result.ok) throw new Error('not refused');
      return result.error;
    };
    const wrongType = errorOf(fieldError('invalid_input', 'content.image.link', text('mediaFetch.wrongContentType', { contentType: 'text/plain', kind: term('mediaImage'), allowed: 'image/jpeg' })));
    expect(wrongType.message).toBe('content.image.link: the server says the file is text/plain, not an image: an image must be image/jpeg');
    expect(serverErrorsFrom(wrongType)).toEqual({ 'image.link': 'the server says the file is text/plain, not an image: an image must be image/jpeg' });
    // A rule named by the field's words, not its path, is shown whole.
    const short = errorOf(checkPhoneNumber('+44 20'));
    expect(short).toMatchObject({ field: 'to', message: 'Phone number: too short' });
    expect(serverErrorsFrom(short)).toEqual({ to: 'Phone number: too short' });
    // Several fields' rules from parseWith: the field's own.
    const both = errorOf(parseWith(messageContentSchema, { type: 'image', image: { link: 'ftp://e.com/a.png', caption: '' } }));
    expect(both.message).toBe('image.link: must be an http:// or https:// address; image.caption: must not be empty');
    expect(serverErrorsFrom({ ...both, field: 'image.link' })).toEqual({ 'image.link': 'must be an http:// or https:// address' });
    expect(serverErrorsFrom({ ...both, field: 'image.caption' })).toEqual({ 'image.caption': 'must not be empty' });
    // One refusal whose sentence holds a "; " stays whole.
    const untyped = errorOf(fieldError('invalid_input', 'content.image.link', text('mediaFetch.noContentType', { kind: term('mediaImage'), allowed: text('lists.or', { items: 'image/jpeg', last: 'image/png' }) })));
    const rule = 'the server does not say what the file is (no Content-Type); an image must be served as image/jpeg or image/png';
    expect(untyped.message).toBe(`content.image.link: ${rule}`);
    expect(serverErrorsFrom(untyped)).toEqual({ 'image.link': rule });
    expect(serverErrorsFrom({ message: 'The gateway refused' })).toEqual({});
    // An error of the main process's own words, placed on a field, is shown as it came.
    expect(serverErrorsFrom({ field: 'content.image.link', message: 'the link could not be reached' })).toEqual({ 'image.link': 'the link could not be reached' });
  });

  it('a sent message clears its words but keeps the tab and the kind of message', () => {
    const d = interactive('list', { body: 'Pick', listButton: 'Slots' });
    const after = afterSend({ ...d, busy: true, error: 'x', touched: { a: true } });
    expect(after).toMatchObject({ tab: 'interactive', busy: false, error: null, touched: {}, interactive: { variant: 'list', body: '', listButton: '' } });
    expect(afterSend(draft({ text: 'Hi' })).text).toBe('');
  });

  it('keeps what the agent typed while the send was under way', () => {
    const sent = draft({ text: 'First', busy: true });
    expect(afterSendOf(sent, sent)).toMatchObject({ text: '', busy: false });
    expect(afterSendOf({ ...sent, text: 'First, and then some' }, sent)).toMatchObject({ text: 'First, and then some', busy: false, error: null });
  });
});

describe('templates', () => {
  it('prefills sample values, leaves placeholders blank, and keeps what the agent typed', () => {
    const paste = JSON.stringify({
      to: '<USER_PHONE_NUMBER>',
      type: 'template',
      template: { name: 'reminder', language: { code: 'en' }, components: [{ type: 'body', parameters: [{ type: 'text', text: '{{1}}' }, { type: 'text', text: 'Tuesday 10:00' }] }] },
    });
    const parsed = parseTemplatePayload(paste);
    if (!parsed.ok) throw new Error(parsed.error.message);
    const [first, second] = parsed.value.fields;
    expect(templateValuesFor(parsed.value)).toEqual({ [first!.path]: '', [second!.path]: 'Tuesday 10:00' });
    expect(templateValuesFor(parsed.value, { [first!.path]: 'Ada' })).toEqual({ [first!.path]: 'Ada', [second!.path]: 'Tuesday 10:00' });
  });
});

/** A console payload with a variable of every kind a template can have, in every place. */
const EVERY_KIND = JSON.stringify({
  to: '<USER_PHONE_NUMBER>',
  type: 'template',
  template: {
    name: 'order_update',
    language: { code: 'en_US' },
    components: [
      { type: 'header', parameters: [{ type: 'image', image: { link: 'https://e.com/h.png' } }] },
      {
        type: 'body',
        parameters: [
          { type: 'text', text: '{{1}}' },
          { type: 'text', text: 'Tuesday', parameter_name: 'day' },
          { type: 'text', text: 'A-1042' },
          { type: 'currency', currency: { fallback_value: '$10', code: 'USD', amount_1000: 10000 } },
          { type: 'date_time', date_time: { fallback_value: 'May 1' } },
        ],
      },
      { type: 'button', sub_type: 'url', index: 0, parameters: [{ type: 'text', text: 'track/42' }] },
      { type: 'button', sub_type: 'quick_reply', index: '1', parameters: [{ type: 'payload', payload: 'STOP' }] },
      { type: 'button', sub_type: 'copy_code', index: 2, parameters: [{ type: 'coupon_code', coupon_code: 'SAVE10' }] },
    ],
  },
});

describe('the composer in another language', () => {
  afterEach(async () => {
    await setUiLanguage('en', undefined);
  });

  it('names each template variable as shared/templates.ts does in English, and in the UI\u2019s language otherwise', async () => {
    const parsed = parseTemplatePayload(EVERY_KIND);
    if (!parsed.ok) throw new Error(parsed.error.message);
    const shared = parsed.value.fields.map((f) => f.label);
    expect(shared).toEqual([
      'Header image link',
      'Body {{1}}',
      'Body {{day}}',
      'Body variable 3',
      'Body variable 4 (amount)',
      'Body variable 5 (date)',
      'Button 1 URL suffix',
      'Button 2 payload',
      'Button 3 coupon code',
    ]);
    expect(parsed.value.fields.map((f) => templateFieldLabel(parsed.value, f))).toEqual(shared);
    // A place the window has no words for keeps the shared label.
    expect(templateFieldLabel(parsed.value, { path: 'template.components[9].parameters[0].text', label: 'Carousel {{1}}' })).toBe('Carousel {{1}}');

    await setUiLanguage('es', undefined);
    expect(parsed.value.fields.map((f) => templateFieldLabel(parsed.value, f))).toEqual([
      'Encabezado: enlace de imagen',
      'Cuerpo {{1}}',
      'Cuerpo {{day}}',
      'Cuerpo variable 3',
      'Cuerpo variable 4 (importe)',
      'Cuerpo variable 5 (fecha)',
      'Botón 1: sufijo de URL',
      'Botón 2: payload',
      'Botón 3: código de cupón',
    ]);
  });

  it('words labels, the window\u2019s own rules, plurals and sizes in Spanish, the shared schemas\u2019 rules too', async () => {
    await setUiLanguage('es', undefined);
    expect(tabLabel('template')).toBe('Plantilla');
    expect(MEDIA_BYS.map(mediaByLabel)).toEqual(['Por enlace', 'Por ID de archivo']);
    expect(checkComposer(interactive('voice_call', { callTtlMinutes: 'pronto' }), TO).errors).toEqual({ ttlMinutes: 'debe ser un número entero de minutos' });
    expect(checkComposer(draft({ tab: 'media', media: { ...emptyMedia('image', 'id'), id: 'https://e.com/a.png' } }), TO).errors).toEqual({
      'image.id': 'es un enlace: elige "Por enlace" para enviar un enlace, o ingresa el ID que devolvió la carga',
    });
    expect(checkComposer(draft({ text: '' }), TO).errors).toEqual({ 'text.body': 'no puede estar vacío' });
    // A new draft's call button reads in the agent's language.
    expect(emptyInteractive('voice_call').callDisplayText).toBe('Llámanos');

    // Numbers as Spanish writes them; units and plurals from the translation.
    expect(formatSize(2.5 * 1024 * 1024)).toBe('2,5 MB');
    expect(formatSize(1)).toBe('1 byte');
    expect(formatSize(512)).toBe('512 bytes');
    const video = { contentType: 'video/mp4', contentLength: 2 * 1024 * 1024, warnings: [] };
    expect(hintOf('video', { ...video, confirm: ['a'] })).toBe('video/mp4, 2 MB: la pasarela lo acepta, con una advertencia que debes confirmar al enviarlo');
    expect(hintOf('video', { ...video, confirm: ['a', 'b'] })).toBe('video/mp4, 2 MB: la pasarela lo acepta, con 2 advertencias que debes confirmar al enviarlo');
    expect(hintOf('image', { contentType: 'image/png', contentLength: 120 * 1024, warnings: [] })).toBe('image/png, 120 KB: cumple las reglas de imagen');

    const many = Array.from({ length: 3 }, (_, i) => ({ title: `S${i}`, rows: Array.from({ length: 4 }, (_, j) => ({ title: `R${j}`, description: '' })) }));
    const tooMany = interactive('list', { body: 'Pick', listButton: 'Slots', sections: many });
    expect(otherErrors({ ...tooMany, showAllErrors: true }, checkComposer(tooMany, TO).errors, new Set())).toEqual(['Secciones: debe tener como máximo 10 filas en total (tiene 12)']);

    await setUiLanguage('ar', undefined);
    expect(formatSize(2.5 * 1024 * 1024)).toBe('2.5 ميغابايت');
    // The served type keeps its order inside the right-to-left sentence.
    expect(hintOf('video', { ...video, confirm: ['a', 'b'] })).toBe('\u2066video/mp4\u2069، 2 ميغابايت: تقبله البوابة، مع تحذيرين عليك تأكيدهما عند الإرسال');
  });
});

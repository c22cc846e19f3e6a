// The composer as the agent types it: one draft per contact (so switching contacts or an error
// loses nothing), the message each form makes, and live validation with the same schemas the main
// process and the sandbox use (shared/api.ts messageContentSchema, commandSchemas.sendCallButton).
// Every form field is keyed by its path in the message (`interactive.action.buttons[0].reply.title`),
// so a rule broken anywhere lands next to the field that broke it.
//
// Words are made with renderer/i18n's `t` when asked for: labels and the window's own rules at
// render time; a send's outcome when it arrives. The shared schemas' rules come in English and are
// said in the UI's language (i18n/rule-text.ts) when they are checked. What the media link check
// found is kept in English, as the main process gave it, and said in the UI's language when drawn
// (`linkCheckHint`, and the "Send anyway" list): the English is what a confirmation sends back.
import type { z } from 'zod';
import { commandSchemas, messageContentSchema, type MediaLinkCheckResult } from '../../shared/api';
import { directionOf } from '../../shared/i18n/languages';
import englishMessages from '../../shared/i18n/locales/en/messages.json';
import { MB, MESSAGE_LIMITS, type MediaType, type MessageContent } from '../../shared/messages';
import { formatPhoneNumber } from '../../shared/phone';
import type { TemplateDraft, TemplateField } from '../../shared/templates';
import { fieldPath } from '../../shared/validation';
import { formatNumber, isolateLtr } from '../i18n/format';
import { currentLanguage, i18n, intlLocale } from '../i18n/i18n';
import { translateRuleText } from '../i18n/rule-text';

/** The messages namespace's words, in the UI's language at the time of the call. */
const t = i18n.getFixedT(null, 'messages');
/** The same words in English: the link check's hint as the store keeps it. */
const english = i18n.getFixedT('en', 'messages');
type Words = typeof t;

export const COMPOSER_TABS = ['text', 'media', 'interactive', 'template'] as const;
export type ComposerTab = (typeof COMPOSER_TABS)[number];
/** A tab's name: "Text", "Media", "Interactive", "Template". */
export const tabLabel = (tab: ComposerTab): string => t(`composer.tabs.${tab}`);

export const INTERACTIVE_VARIANTS = ['button', 'list', 'cta_url', 'flow', 'address_message', 'voice_call'] as const;
export type InteractiveVariant = (typeof INTERACTIVE_VARIANTS)[number];
/** "Reply buttons", "List", "Link button", "Form (flow)", "Address request", "Call button". */
export const variantLabel = (variant: InteractiveVariant): string => t(`interactive.variants.${variant}`);

export type CtaHeaderType = 'none' | 'text' | 'image' | 'video' | 'document';

export interface ListSectionDraft {
  title: string;
  rows: { title: string; description: string }[];
}

export interface InteractiveDraft {
  variant: InteractiveVariant;
  headerText: string;
  body: string;
  footer: string;
  buttons: string[];
  listButton: string;
  sections: ListSectionDraft[];
  ctaHeaderType: CtaHeaderType;
  ctaHeaderValue: string;
  ctaDisplayText: string;
  ctaUrl: string;
  flowBy: 'name' | 'id';
  flowRef: string;
  flowCta: string;
  flowVersion: string;
  country: string;
  callDisplayText: string;
  callTtlMinutes: string;
}

/** gateway-spec.md 2.3: a media object carries exactly one of an uploaded media's id and a link. */
export type MediaBy = 'link' | 'id';
export const MEDIA_BYS: readonly MediaBy[] = ['link', 'id'];
/** The choice's radios; their words differ from the fields' so that no radio and textbox share a name. */
export const mediaByLabel = (by: MediaBy): string => t(`media.by.${by}`);
/** The textbox each choice shows. */
export const mediaFieldLabel = (by: MediaBy): string => t(`media.fields.${by}`);
/** "Image", "Audio", "Video", "Document". */
export const mediaTypeLabel = (type: MediaType): string => t(`media.types.${type}`);

/**
 * A file's size as shared/messages.ts formatBytes gives it ("2.4 MB", "812 KB", "96 bytes"), with
 * the number in the UI's language and the unit translated.
 */
export const formatSize = (bytes: number): string => sizeText(sizeOf(bytes), t, intlLocale());

/** A size in the unit it is said in: MB with one decimal unless whole, KB rounded, or bytes. */
interface Size {
  unit: 'mb' | 'kb' | 'bytes';
  value: number;
  /** Decimals shown. */
  digits: 0 | 1;
}

function sizeOf(bytes: number): Size {
  if (bytes >= MB) return { unit: 'mb', value: bytes / MB, digits: Number.isInteger(bytes / MB) ? 0 : 1 };
  if (bytes >= 1024) return { unit: 'kb', value: Math.round(bytes / 1024), digits: 0 };
  return { unit: 'bytes', value: bytes, digits: 0 };
}

function sizeText({ unit, value, digits }: Size, words: Words, locale: string): string {
  const size = formatNumber(value, { minimumFractionDigits: digits, maximumFractionDigits: digits }, locale);
  switch (unit) {
    case 'mb':
      return words('size.mb', { size });
    case 'kb':
      return words('size.kb', { size });
    case 'bytes':
      return words('size.bytes', { count: value, size });
  }
}

export interface MediaDraft {
  type: MediaType;
  /** Which of the two is sent; both are kept, so switching back loses nothing typed. */
  by: MediaBy;
  link: string;
  id: string;
  caption: string;
  filename: string;
}

export interface LinkCheckState {
  /** The link and type this result is for: a later edit makes it stale. */
  link: string;
  type: MediaType;
  /** `confirm`: the gateway takes the file, but Send will ask the agent to confirm its warnings. */
  state: 'checking' | 'ok' | 'confirm' | 'failed';
  /**
   * `ok` and `confirm`: the hint in English (`linkCheckOutcome`), drawn with `linkCheckHint`;
   * `failed`: the refusal, worded when it arrived.
   */
  text: string;
}

/** What a finished check says about the file: the parts of its hint. */
interface LinkFindings {
  /** The main process's words for the file ("8-bit RGB PNG"), or the served type. */
  what: string;
  size?: Size | undefined;
  /** How many warnings wait for "Send anyway" (listed beside it, not here). */
  toConfirm: number;
  /** The check's notes, which need nothing from the agent. */
  notes: readonly string[];
}

/** "8-bit RGB PNG, 120 KB: fits the image rules. <note>": one sentence for the file, then each note. */
function hintText(type: MediaType, found: LinkFindings, words: Words, locale: string): string {
  const file = found.size !== undefined ? words('media.fileWithSize', { what: found.what, size: sizeText(found.size, words, locale) }) : found.what;
  const verdict = found.toConfirm > 0 ? words('media.toConfirm', { file, count: found.toConfirm }) : words(`media.fits.${type}`, { file });
  return [verdict, ...found.notes].join('. ');
}

/**
 * What the check on leaving the link field found, as the field's hint: what the file is ("8-bit RGB
 * PNG, 120 KB") and whether it fits the type's rules. Warnings to confirm are only counted here: the
 * alert beside "Send anyway" lists them, so that each is shown (and read out) once. `description` is
 * the main process's words for the file, when it gives them; the served type stands in otherwise.
 * The text is English, like the description and the notes in it: `linkCheckHint` says it in the
 * UI's language each time it is drawn.
 */
export function linkCheckOutcome(
  type: MediaType,
  check: Pick<MediaLinkCheckResult, 'contentType' | 'contentLength' | 'warnings' | 'confirm' | 'description'>,
): { state: 'ok' | 'confirm'; text: string } {
  const toConfirm = check.confirm?.length ?? 0;
  const size = check.contentLength !== undefined ? sizeOf(check.contentLength) : undefined;
  const found = { what: check.description?.trim() || check.contentType, size, toConfirm, notes: check.warnings };
  return { state: toConfirm > 0 ? 'confirm' : 'ok', text: hintText(type, found, english, intlLocale('en')) };
}

const escapeRegex = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
/**
 * An English template as a pattern's source: each {{value}} a group named after it (or, with
 * `named` false, a bare group) of its shape; by default, the shortest text.
 */
const templateSource = (template: string, shapes: Readonly<Record<string, string>> = {}, named = true): string =>
  template
    .split(/\{\{(\w+)\}\}/)
    .map((part, i) => (i % 2 === 1 ? `(${named ? `?<${part}>` : '?:'}${shapes[part] ?? '.+?'})` : escapeRegex(part)))
    .join('');

/** A number as English writes it: "2.5", "1,024". */
const ENGLISH_NUMBER = '\\d{1,3}(?:,\\d{3})*(?:\\.\\d+)?';
/** A size as `sizeText` writes it in English ("2.5 MB", "1,024 KB", "1 byte"), by its unit. */
const SIZE_TEMPLATES: readonly { template: string; unit: Size['unit'] }[] = [
  { template: englishMessages.size.mb, unit: 'mb' },
  { template: englishMessages.size.kb, unit: 'kb' },
  { template: englishMessages.size.bytes_one, unit: 'bytes' },
  { template: englishMessages.size.bytes_other, unit: 'bytes' },
];
const SIZES = SIZE_TEMPLATES.map(({ template, unit }) => ({ regex: new RegExp(`^${templateSource(template, { size: ENGLISH_NUMBER })}$`), unit }));
const FILE_WITH_SIZE = new RegExp(
  `^${templateSource(englishMessages.media.fileWithSize, { size: SIZE_TEMPLATES.map(({ template }) => templateSource(template, { size: ENGLISH_NUMBER }, false)).join('|') })}$`,
  's',
);

function sizeFrom(text: string): Size | undefined {
  for (const { regex, unit } of SIZES) {
    const number = regex.exec(text)?.groups?.size;
    if (number !== undefined) return { unit, value: Number(number.replaceAll(',', '')), digits: number.includes('.') ? 1 : 0 };
  }
  return undefined;
}

/** A verdict, and the notes after it, each after ". " (no note of the catalogue holds one). */
const verdictPattern = (template: string): RegExp => new RegExp(`^${templateSource(template, { count: '\\d+' })}(?:\\. (?<notes>.+))?$`, 's');
const FITS: Readonly<Record<MediaType, RegExp>> = {
  image: verdictPattern(englishMessages.media.fits.image),
  audio: verdictPattern(englishMessages.media.fits.audio),
  video: verdictPattern(englishMessages.media.fits.video),
  document: verdictPattern(englishMessages.media.fits.document),
};
const TO_CONFIRM: readonly RegExp[] = [verdictPattern(englishMessages.media.toConfirm_one), verdictPattern(englishMessages.media.toConfirm_other)];

/**
 * The parts of a hint `linkCheckOutcome` wrote; undefined for a text it did not write. A check is
 * kept as one text whatever its state; its parts are read back with the English templates, the way
 * i18n/rule-text.ts reads the rules, so that the hint can be said again in any language.
 */
function englishFindings(type: MediaType, state: 'ok' | 'confirm', text: string): LinkFindings | undefined {
  for (const verdict of state === 'ok' ? [FITS[type]] : TO_CONFIRM) {
    const groups = verdict.exec(text)?.groups;
    if (groups?.file === undefined) continue;
    const sized = FILE_WITH_SIZE.exec(groups.file)?.groups;
    const size = sized?.size === undefined ? undefined : sizeFrom(sized.size);
    return {
      what: size === undefined || sized?.what === undefined ? groups.file : sized.what,
      size,
      toConfirm: state === 'ok' ? 0 : groups.count === undefined ? 1 : Number(groups.count),
      notes: groups.notes?.split('. ') ?? [],
    };
  }
  return undefined;
}

/** The file's description in the UI's language; a name no template made (a served type, "PDF") kept left to right. */
function whatText(what: string): string {
  const said = translateRuleText(what);
  return said === what && directionOf(currentLanguage()) === 'rtl' ? isolateLtr(what) : said;
}

/**
 * The link field's hint in the UI's language now: "Checking the link…", or the finished check's
 * English hint said again, its description and notes through the rules catalogue
 * (i18n/rule-text.ts), so that a change of language re-words it. A refusal is the field's error,
 * worded when it arrived.
 */
export function linkCheckHint(check: LinkCheckState): string {
  switch (check.state) {
    case 'checking':
      return t('media.checking');
    case 'failed':
      return check.text;
    case 'ok':
    case 'confirm': {
      const found = englishFindings(check.type, check.state, check.text);
      if (found === undefined) return check.text;
      return hintText(check.type, { ...found, what: whatText(found.what), notes: found.notes.map(translateRuleText) }, t, intlLocale());
    }
  }
}

/**
 * Warnings about the file that the agent confirms before it goes out ("Send anyway"). They hold for
 * the file they were found for: any edit of the link, the id or the type clears them.
 */
export interface SendConfirmation {
  /** What they are about (`confirmationSubject`). */
  subject: string;
  /** Exactly as the main process gave them: "Send anyway" sends these texts back as `confirmed`. */
  warnings: string[];
  /** The agent had confirmed other warnings for this send: the file changed since they were shown. */
  changed: boolean;
  /**
   * How many answers in a row asked for a confirmation (1 for the first). The alert is drawn anew
   * for each (this is its key), so that a screen reader announces a second Send's answer too,
   * even when its words are the same.
   */
  asked: number;
}

export interface TemplateComposerDraft {
  pasted: string;
  draft: TemplateDraft | null;
  parseError: string | null;
  /** One value per variable, keyed by the field's path. */
  values: Record<string, string>;
  /** The recipient as shown in the form; the contact's number unless the agent changed it. */
  to: string;
}

export interface ComposerDraft {
  tab: ComposerTab;
  text: string;
  media: MediaDraft;
  interactive: InteractiveDraft;
  template: TemplateComposerDraft;
  /** Fields the agent has typed in: their errors show live. */
  touched: Record<string, true>;
  /** After a send was tried: every error shows. */
  showAllErrors: boolean;
  busy: boolean;
  /** The last send's error (the form keeps everything typed). */
  error: string | null;
  /** Where the main process placed its error, by field key. */
  serverErrors: Record<string, string>;
  /** What the last send noted (warnings), or null. */
  notice: string | null;
  linkCheck: LinkCheckState | null;
  /** Set when the last send waits for "Send anyway". */
  confirmation: SendConfirmation | null;
}

export function emptyInteractive(variant: InteractiveVariant = 'button'): InteractiveDraft {
  return {
    variant,
    headerText: '',
    body: '',
    footer: '',
    buttons: ['', ''],
    listButton: '',
    sections: [{ title: '', rows: [{ title: '', description: '' }] }],
    ctaHeaderType: 'none',
    ctaHeaderValue: '',
    ctaDisplayText: '',
    ctaUrl: '',
    flowBy: 'name',
    flowRef: '',
    flowCta: '',
    flowVersion: '3',
    country: '',
    // The customer reads these words on the button: the agent's language, for the agent to change.
    callDisplayText: t('interactive.callDisplayTextDefault'),
    callTtlMinutes: '60',
  };
}

/** `contact` in gateway digits; the template's recipient starts as that number, formatted as people read it. */
export function emptyComposer(tab: ComposerTab = 'text', contact = ''): ComposerDraft {
  const to = contact === '' ? '' : formatPhoneNumber(contact);
  return {
    tab,
    text: '',
    media: emptyMedia('image', 'link'),
    interactive: emptyInteractive(),
    template: { pasted: '', draft: null, parseError: null, values: {}, to },
    touched: {},
    showAllErrors: false,
    busy: false,
    error: null,
    serverErrors: {},
    notice: null,
    linkCheck: null,
    confirmation: null,
  };
}

export function emptyMedia(type: MediaType, by: MediaBy): MediaDraft {
  return { type, by, link: '', id: '', caption: '', filename: '' };
}

// ---------------------------------------------------------------------------------------------
// What each form makes

const blank = (s: string) => s.trim() === '';

export function textContent(text: string): unknown {
  return { type: 'text', text: { body: text } };
}

export function mediaContent(media: MediaDraft): unknown {
  const object: Record<string, string> = media.by === 'id' ? { id: media.id.trim() } : { link: media.link.trim() };
  if (media.type !== 'audio' && !blank(media.caption)) object.caption = media.caption;
  if (media.type === 'document' && !blank(media.filename)) object.filename = media.filename.trim();
  return { type: media.type, [media.type]: object };
}

/** Stable ids the customer's choice comes back with; the agent only types what the customer reads. */
export const buttonId = (i: number) => `button-${i + 1}`;
export const rowId = (section: number, row: number) => `row-${section + 1}-${row + 1}`;

/** The interactive message of the form (every variant but voice_call, which is sendCallButton). */
export function interactiveContent(d: InteractiveDraft): unknown {
  const body = { text: d.body };
  const footer = blank(d.footer) ? {} : { footer: { text: d.footer } };
  const textHeader = blank(d.headerText) ? {} : { header: { type: 'text', text: d.headerText } };
  switch (d.variant) {
    case 'button':
      return {
        type: 'interactive',
        interactive: {
          type: 'button',
          ...textHeader,
          body,
          ...footer,
          action: { buttons: d.buttons.map((title, i) => ({ type: 'reply', reply: { id: buttonId(i), title } })) },
        },
      };
    case 'list':
      return {
        type: 'interactive',
        interactive: {
          type: 'list',
          ...textHeader,
          body,
          ...footer,
          action: {
            button: d.listButton,
            sections: d.sections.map((s, si) => ({
              title: s.title,
              rows: s.rows.map((r, ri) => ({ id: rowId(si, ri), title: r.title, ...(blank(r.description) ? {} : { description: r.description }) })),
            })),
          },
        },
      };
    case 'cta_url': {
      const value = d.ctaHeaderValue.trim();
      const header =
        d.ctaHeaderType === 'none'
          ? {}
          : d.ctaHeaderType === 'text'
            ? { header: { type: 'text', text: d.ctaHeaderValue } }
            : { header: { type: d.ctaHeaderType, [d.ctaHeaderType]: { link: value } } };
      return {
        type: 'interactive',
        interactive: { type: 'cta_url', ...header, body, ...footer, action: { name: 'cta_url', parameters: { display_text: d.ctaDisplayText, url: d.ctaUrl.trim() } } },
      };
    }
    case 'flow':
      return {
        type: 'interactive',
        interactive: {
          type: 'flow',
          ...textHeader,
          body,
          ...footer,
          action: {
            name: 'flow',
            parameters: {
              flow_message_version: d.flowVersion.trim(),
              ...(d.flowBy === 'name' ? { flow_name: d.flowRef.trim() } : { flow_id: d.flowRef.trim() }),
              flow_cta: d.flowCta,
            },
          },
        },
      };
    case 'address_message':
      return { type: 'interactive', interactive: { type: 'address_message', body, action: { name: 'address_message', parameters: { country: d.country.trim() } } } };
    case 'voice_call':
      return undefined;
  }
}

export interface CallButtonInput {
  to: string;
  bodyText?: string;
  displayText?: string;
  ttlMinutes?: number;
}

/** The Interactive tab's "Call button" variant: sendCallButton's own input (its payload is the service's). */
export function callButtonInput(to: string, d: InteractiveDraft): CallButtonInput | { invalidTtl: string } {
  const ttl = d.callTtlMinutes.trim();
  if (ttl !== '' && !/^-?\d+(\.\d+)?$/.test(ttl)) return { invalidTtl: ttl };
  return {
    to,
    ...(blank(d.body) ? {} : { bodyText: d.body }),
    ...(blank(d.callDisplayText) ? {} : { displayText: d.callDisplayText }),
    ...(ttl === '' ? {} : { ttlMinutes: Number(ttl) }),
  };
}

// ---------------------------------------------------------------------------------------------
// Validation

export interface Checked<T> {
  value?: T;
  /** The rule each field breaks, keyed like the form's fields. */
  errors: Record<string, string>;
}

function issuesToErrors(issues: readonly z.core.$ZodIssue[], prefix = ''): Record<string, string> {
  const errors: Record<string, string> = {};
  for (const issue of issues) {
    const path = fieldPath(issue.path);
    const key = prefix !== '' && path.startsWith(prefix) ? path.slice(prefix.length) : path;
    if (errors[key] === undefined) errors[key] = translateRuleText(issue.message);
  }
  return errors;
}

export function checkContent(content: unknown): Checked<MessageContent> {
  const parsed = messageContentSchema.safeParse(content);
  return parsed.success ? { value: parsed.data as MessageContent, errors: {} } : { errors: issuesToErrors(parsed.error.issues) };
}

export function checkCallButton(to: string, d: InteractiveDraft): Checked<CallButtonInput> {
  const input = callButtonInput(to, d);
  if ('invalidTtl' in input) return { errors: { ttlMinutes: t('interactive.wholeMinutes') } };
  const parsed = commandSchemas.sendCallButton.safeParse(input);
  return parsed.success ? { value: input, errors: {} } : { errors: issuesToErrors(parsed.error.issues) };
}

/** The message the active tab makes, checked. Template sends are checked by the main process (fillTemplate). */
export function checkComposer(draft: ComposerDraft, to: string): Checked<MessageContent | CallButtonInput> {
  switch (draft.tab) {
    case 'text':
      return checkContent(textContent(draft.text));
    case 'media':
      return checkMedia(draft.media);
    case 'interactive':
      return draft.interactive.variant === 'voice_call' ? checkCallButton(to, draft.interactive) : checkContent(interactiveContent(draft.interactive));
    case 'template':
      return { errors: {} };
  }
}

/**
 * The media form: the shared schema, and for an id what the schema cannot tell (any non-empty text
 * is an id to it): a link pasted into the id field, or an id with spaces, which no upload returns.
 */
export function checkMedia(media: MediaDraft): Checked<MessageContent> {
  const checked = checkContent(mediaContent(media));
  if (media.by !== 'id') return checked;
  const key = `${media.type}.id`;
  const id = media.id.trim();
  const rule = /^[a-z][a-z0-9+.-]*:\/\//i.test(id)
    ? t('media.idIsLink', { byLink: mediaByLabel('link') })
    : /\s/.test(id)
      ? t('media.idHasSpaces')
      : undefined;
  if (rule === undefined || checked.errors[key] !== undefined) return checked;
  return { errors: { ...checked.errors, [key]: rule } };
}

/**
 * What a confirmation is about: the tab, and for media the type and the link or id; for an
 * interactive message its media header. Anything else (a caption, the body) leaves it standing.
 */
export function confirmationSubject(draft: ComposerDraft): string {
  switch (draft.tab) {
    case 'media': {
      const { type, by, link, id } = draft.media;
      return JSON.stringify(['media', type, by, by === 'id' ? id.trim() : link.trim()]);
    }
    case 'interactive': {
      const d = draft.interactive;
      return JSON.stringify(['interactive', d.variant, d.ctaHeaderType, d.ctaHeaderValue.trim()]);
    }
    case 'text':
    case 'template':
      return JSON.stringify([draft.tab]);
  }
}

/** The draft without a confirmation that no longer fits what it would send. */
export function withoutStaleConfirmation(draft: ComposerDraft): ComposerDraft {
  if (draft.confirmation === null || draft.confirmation.subject === confirmationSubject(draft)) return draft;
  return { ...draft, confirmation: null };
}

/**
 * The confirmation a needs_confirmation answer asks for; null when it lists nothing. `confirmed`:
 * what the send that got this answer had confirmed; `shown`: the confirmation the form shows now,
 * which this answer follows.
 */
export function confirmationFrom(
  sent: ComposerDraft,
  error: { confirm?: string[] },
  confirmed: readonly string[] = [],
  shown: SendConfirmation | null = null,
): SendConfirmation | null {
  const warnings = error.confirm ?? [];
  if (warnings.length === 0) return null;
  return { subject: confirmationSubject(sent), warnings, changed: confirmed.length > 0, asked: (shown?.asked ?? 0) + 1 };
}

/** Of the texts "Send anyway" was given, those the form still shows for the file in it: nothing else is confirmed. */
export function confirmedWarnings(draft: ComposerDraft, shown: readonly string[]): string[] {
  const confirmation = draft.confirmation;
  if (confirmation === null || confirmation.subject !== confirmationSubject(draft)) return [];
  return shown.filter((w, i) => confirmation.warnings.includes(w) && shown.indexOf(w) === i);
}

/**
 * Where focus goes once a "Send anyway" is answered, since its button is gone unless the answer asks
 * again: the button itself when it does; the field in error after a refusal (`shownKeys`: the keys a
 * rendered field shows), or the Send button when no field is to blame; after the message went out,
 * the form's first text box, for the next one. null while the send is under way.
 */
export type SendFocus = 'send-anyway' | 'field-in-error' | 'send' | 'first-field';

export function focusAfterConfirmedSend(draft: ComposerDraft, shownKeys: ReadonlySet<string>): SendFocus | null {
  if (draft.busy) return null;
  if (draft.confirmation !== null) return 'send-anyway';
  if (draft.error === null) return 'first-field';
  return draft.showAllErrors || Object.keys(draft.serverErrors).some((key) => shownKeys.has(key)) ? 'field-in-error' : 'send';
}

/** A rule next to its field starts a sentence. */
export const sentence = (text: string): string => (text === '' ? text : text[0]!.toUpperCase() + text.slice(1));

/** The error to show for a field now: the server's, or the live rule once the field was typed in (or a send tried). */
export function visibleError(draft: ComposerDraft, live: Readonly<Record<string, string>>, key: string): string | undefined {
  const server = draft.serverErrors[key];
  if (server !== undefined) return server;
  if (!draft.showAllErrors && !draft.touched[key]) return undefined;
  return live[key];
}

/** Live errors that no rendered field shows (a list-wide rule, a member that must be unique), each named by its field. */
export function otherErrors(draft: ComposerDraft, live: Readonly<Record<string, string>>, shownKeys: ReadonlySet<string>): string[] {
  if (!draft.showAllErrors) return [];
  return Object.entries(live)
    .filter(([key]) => !shownKeys.has(key))
    .map(([key, rule]) => t('field.otherError', { field: collectionLabel(key), rule }));
}

/**
 * The form's words for a rule about a whole list rather than one field (`interactive.action.buttons`,
 * `interactive.action.sections`, a section's rows); any other path is named as it is.
 */
function collectionLabel(key: string): string {
  if (key === 'interactive.action.buttons') return t('interactive.buttons');
  if (key === 'interactive.action.sections') return t('interactive.sections');
  const rows = /^interactive\.action\.sections\[(\d+)\]\.rows$/.exec(key);
  if (rows) return t('interactive.sectionRows', { n: formatNumber(Number(rows[1]) + 1) });
  return key;
}

/**
 * Where a sendMessage error goes: the main process names fields like `content.image.link` (its own
 * schema) or `to`; the composer's keys are the same paths without `content.`.
 */
export function serverErrorsFrom(error: { field?: string; message: string }): Record<string, string> {
  if (!error.field) return {};
  const key = error.field.replace(/^content\./, '');
  const prefix = `${error.field}: `;
  // parseWith joins the rules of several fields with "; "; a refusal's own sentence may hold one too.
  const first = error.message.split(/; (?=[\w$.[\]()]+: )/)[0] ?? error.message;
  return { [key]: translateRuleText(first.startsWith(prefix) ? first.slice(prefix.length) : first) };
}

/** Limits worth showing as the agent types (a counter beside the field). */
export const FIELD_LIMITS = {
  text: MESSAGE_LIMITS.textBody,
  caption: MESSAGE_LIMITS.caption,
  body: MESSAGE_LIMITS.interactiveBody,
  buttonTitle: MESSAGE_LIMITS.replyButtonTitle,
  rowTitle: MESSAGE_LIMITS.rowTitle,
  rowDescription: MESSAGE_LIMITS.rowDescription,
  sectionTitle: MESSAGE_LIMITS.sectionTitle,
  header: MESSAGE_LIMITS.headerText,
  footer: MESSAGE_LIMITS.footerText,
  listButton: MESSAGE_LIMITS.listButton,
  ctaDisplayText: MESSAGE_LIMITS.ctaDisplayText,
  flowCta: MESSAGE_LIMITS.flowCta,
  callDisplayText: MESSAGE_LIMITS.voiceCallDisplayText,
  replyButtons: MESSAGE_LIMITS.replyButtons,
  listSections: MESSAGE_LIMITS.listSections,
  listRows: MESSAGE_LIMITS.listRows,
} as const;

/**
 * A template variable's label in the UI's language: shared/templates.ts names each field in
 * English ("Body {{1}}", "Header image link", "Button 1 URL suffix", "Body variable 2 (amount)");
 * this names it the same way from the pasted template, word for word in English. A field whose
 * place is not one of those keeps the shared label.
 */
export function templateFieldLabel(draft: Pick<TemplateDraft, 'template'>, field: Pick<TemplateField, 'path' | 'label'>): string {
  const at = /^template\.components\[(\d+)\]\.parameters\[(\d+)\]\.(.+)$/.exec(field.path);
  const component = at ? draft.template.components?.[Number(at[1])] : undefined;
  const parameters = component?.parameters ?? [];
  const pi = Number(at?.[2]);
  const raw = parameters[pi];
  if (!at || !component || !raw) return field.label;
  const where = templatePlace(component);
  if (where === undefined) return field.label;
  const named = typeof raw.parameter_name === 'string' && raw.parameter_name !== '' ? raw.parameter_name : undefined;
  const ordinal = parameters.slice(0, pi + 1).filter((p) => p.type === 'text' || p.type === 'currency' || p.type === 'date_time').length;
  const variable = () => t('template.variable', { n: formatNumber(ordinal) });
  switch (raw.type) {
    case 'text': {
      if (component.type === 'button') return t(component.sub_type === 'url' ? 'template.label.buttonUrl' : 'template.label.buttonText', { where });
      const braces = /^\{\{\s*([^{}]+?)\s*\}\}$/.exec(typeof raw.text === 'string' ? raw.text.trim() : '');
      const tag = named ? `{{${named}}}` : braces ? `{{${braces[1]}}}` : variable();
      return t('template.label.text', { where, tag });
    }
    case 'currency':
    case 'date_time':
      return t(raw.type === 'currency' ? 'template.label.amount' : 'template.label.date', { where, tag: named ? `{{${named}}}` : variable() });
    case 'image':
      return t('template.label.imageLink', { where });
    case 'video':
      return t('template.label.videoLink', { where });
    case 'document':
      return t('template.label.documentLink', { where });
    case 'payload':
      return t('template.label.payload', { where });
    case 'coupon_code':
      return t('template.label.couponCode', { where });
    default:
      return field.label;
  }
}

function templatePlace(component: NonNullable<TemplateDraft['template']['components']>[number]): string | undefined {
  switch (component.type) {
    case 'header':
      return t('template.where.header');
    case 'body':
      return t('template.where.body');
    case 'button': {
      const index = Number(component.index);
      return Number.isInteger(index) ? t('template.where.buttonAt', { n: formatNumber(index + 1) }) : t('template.where.button');
    }
    default:
      return undefined;
  }
}

/** Template fields prefilled with a sample value (not a placeholder), the rest blank. */
export function templateValuesFor(draft: TemplateDraft, previous: Readonly<Record<string, string>> = {}): Record<string, string> {
  const values: Record<string, string> = {};
  for (const field of draft.fields) values[field.path] = previous[field.path] ?? (field.placeholder ? '' : field.sample);
  return values;
}

/** The part of a draft a send took: what must not have changed for the form to be cleared. */
function sentPart(draft: ComposerDraft): unknown {
  switch (draft.tab) {
    case 'text':
      return draft.text;
    case 'media':
      return draft.media;
    case 'interactive':
      return draft.interactive;
    case 'template':
      return [draft.template.draft, draft.template.to, draft.template.values];
  }
}

/**
 * After a successful send: the form is cleared only when it still holds what was sent. The form
 * stays usable while a send is under way, so the agent may already be typing the next words, and
 * those are kept.
 */
export function afterSendOf(current: ComposerDraft, sent: ComposerDraft): ComposerDraft {
  if (current.tab === sent.tab && JSON.stringify(sentPart(current)) === JSON.stringify(sentPart(sent))) return afterSend(current);
  return { ...current, busy: false, error: null, serverErrors: {}, confirmation: null };
}

/** What a cleared form keeps after a successful send: the tab and the kind of message, not its words. */
export function afterSend(draft: ComposerDraft): ComposerDraft {
  const base = { ...draft, touched: {}, showAllErrors: false, busy: false, error: null, serverErrors: {}, linkCheck: null, confirmation: null };
  switch (draft.tab) {
    case 'text':
      return { ...base, text: '' };
    case 'media':
      return { ...base, media: emptyMedia(draft.media.type, draft.media.by) };
    case 'interactive':
      return { ...base, interactive: emptyInteractive(draft.interactive.variant) };
    case 'template':
      return { ...base, template: { ...draft.template, values: draft.template.draft ? templateValuesFor(draft.template.draft) : {} } };
  }
}

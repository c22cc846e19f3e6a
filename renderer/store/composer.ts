// The composer as the agent types it: one draft per contact (so switching contacts or an error
// loses nothing), the message each form makes, and live validation with the same schemas the main
// process and the sandbox use (shared/api.ts messageContentSchema, commandSchemas.sendCallButton).
// Every form field is keyed by its path in the message (`interactive.action.buttons[0].reply.title`),
// so a rule broken anywhere lands next to the field that broke it.
//
// Words are made with renderer/i18n's `t` when asked for: labels and the window's own rules at
// render time; a send's outcome when it arrives. The shared schemas' rules come as codes and values
// and are said in the UI's language (i18n/texts.ts) when they are checked. What the media link check
// found (what the file is, its notes, the warnings to confirm) is kept as the main process's codes
// and values, and said in the UI's language when drawn (`linkCheckHint`, the "Send anyway" list,
// the notes after a send); "Send anyway" sends back the English texts the main process gave.
import type { z } from 'zod';
import { commandSchemas, messageContentSchema, type MediaLinkCheckResult } from '../../shared/api';
import type { SendReceipt } from '../../shared/conversation';
import { directionOf } from '../../shared/i18n/languages';
import { ruleTextSchema, textValueSchema, type TextValue } from '../../shared/i18n/text';
import { MB, MESSAGE_LIMITS, type MediaType, type MessageContent } from '../../shared/messages';
import { formatPhoneNumber } from '../../shared/phone';
import type { AppError } from '../../shared/result';
import type { TemplateDraft, TemplateField } from '../../shared/templates';
import { fieldPath, issueText } from '../../shared/validation';
import { formatNumber, isolateLtr } from '../i18n/format';
import { currentLanguage, i18n, intlLocale } from '../i18n/i18n';
import { sayText, sentence } from '../i18n/texts';

export { sentence };

/** The messages namespace's words, in the UI's language at the time of the call. */
const t = i18n.getFixedT(null, 'messages');

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
export const formatSize = (bytes: number): string => sizeText(sizeOf(bytes), intlLocale());

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

function sizeText({ unit, value, digits }: Size, locale: string): string {
  const size = formatNumber(value, { minimumFractionDigits: digits, maximumFractionDigits: digits }, locale);
  switch (unit) {
    case 'mb':
      return t('size.mb', { size });
    case 'kb':
      return t('size.kb', { size });
    case 'bytes':
      return t('size.bytes', { count: value, size });
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

/** What a finished check says about the file: the parts of its hint, as the main process gave them. */
export interface LinkFindings {
  /** What the file is ("8-bit RGB PNG"), as the main process's codes and values; the served type when it gave none. */
  what: TextValue;
  /** The file's size in bytes. */
  size?: number;
  /** How many warnings wait for "Send anyway" (listed beside it, not here). */
  toConfirm: number;
  /** The check's notes, which need nothing from the agent. */
  notes: readonly TextValue[];
}

export type LinkCheckState = {
  /** The link and type this result is for: a later edit makes it stale. */
  link: string;
  type: MediaType;
} & (
  | { state: 'checking' }
  /** `confirm`: the gateway takes the file, but Send will ask the agent to confirm its warnings. */
  | { state: 'ok' | 'confirm'; found: LinkFindings }
  /** The check refused the file: its rule (said when drawn), or the window's words for another error. */
  | { state: 'failed'; refusal: TextValue }
);

/**
 * Texts from the host, each checked (a text this window cannot read stands as its English, which
 * comes beside it): the notes, the warnings to confirm.
 */
export function textsOr(texts: readonly unknown[] | undefined, english: readonly string[]): TextValue[] {
  if (texts === undefined || texts.length !== english.length) return [...english];
  return english.map((words, i) => {
    const parsed = ruleTextSchema.safeParse(texts[i]);
    return parsed.success ? parsed.data : words;
  });
}

/**
 * What the check on leaving the link field found, kept for the field's hint: what the file is, its
 * size, its notes, and how many warnings wait for "Send anyway". `descriptionText` is the main
 * process's words for the file, when it gives them; the served type stands in otherwise.
 */
export function linkCheckOutcome(
  check: Pick<MediaLinkCheckResult, 'contentType' | 'contentLength' | 'warnings' | 'warningTexts' | 'confirm' | 'description' | 'descriptionText'>,
): { state: 'ok' | 'confirm'; found: LinkFindings } {
  const toConfirm = check.confirm?.length ?? 0;
  const described = check.descriptionText === undefined ? undefined : textValueSchema.safeParse(check.descriptionText);
  const what = described?.success === true ? described.data : check.description?.trim() || check.contentType;
  const found: LinkFindings = { what, toConfirm, notes: textsOr(check.warningTexts, check.warnings), ...(check.contentLength !== undefined ? { size: check.contentLength } : {}) };
  return { state: toConfirm > 0 ? 'confirm' : 'ok', found };
}

/** The file's description in the UI's language; a name of no catalogue (a served type, "PDF") kept left to right. */
function whatText(what: TextValue): string {
  if (typeof what !== 'string') return sayText(what);
  return directionOf(currentLanguage()) === 'rtl' ? isolateLtr(what) : what;
}

/** "8-bit RGB PNG, 120 KB: fits the image rules. <note>": one sentence for the file, then each note. */
function hintText(type: MediaType, found: LinkFindings): string {
  const what = whatText(found.what);
  const file = found.size !== undefined ? t('media.fileWithSize', { what, size: sizeText(sizeOf(found.size), intlLocale()) }) : what;
  const verdict = found.toConfirm > 0 ? t('media.toConfirm', { file, count: found.toConfirm }) : t(`media.fits.${type}`, { file });
  return [verdict, ...found.notes.map(sayText)].join('. ');
}

/**
 * The link field's hint in the UI's language now: "Checking the link…", or what the finished check
 * found (what the file is, whether it fits the type's rules, its notes), so that a change of
 * language re-words it. Warnings to confirm are only counted here: the alert beside "Send anyway"
 * lists them, so that each is shown (and read out) once. A refusal is the field's error
 * (`linkCheckRefusal`).
 */
export function linkCheckHint(check: LinkCheckState): string {
  switch (check.state) {
    case 'checking':
      return t('media.checking');
    case 'failed':
      return linkCheckRefusal(check);
    case 'ok':
    case 'confirm':
      return hintText(check.type, check.found);
  }
}

/** The refusal of a failed check, in the UI's language now. */
export const linkCheckRefusal = (check: Extract<LinkCheckState, { state: 'failed' }>): string => sayText(check.refusal);

/** The notes a send came back with, in the UI's language now: "Sent, with warnings: …". */
export const sendNoticeText = (notes: readonly TextValue[]): string => t('composer.sentWithWarnings', { warnings: notes.map(sayText).join('. ') });

/** The notes of a send's receipt, as texts. */
export const receiptNotes = (receipt: Pick<SendReceipt, 'warnings' | 'warningTexts'>): TextValue[] => textsOr(receipt.warningTexts, receipt.warnings);

/**
 * Warnings about the file that the agent confirms before it goes out ("Send anyway"). They hold for
 * the file they were found for: any edit of the link, the id or the type clears them.
 */
export interface SendConfirmation {
  /** What they are about (`confirmationSubject`). */
  subject: string;
  /** Exactly as the main process gave them, in English: "Send anyway" sends these texts back as `confirmed`. */
  warnings: string[];
  /** The same warnings as codes and values, in the same order: what the alert shows, in the UI's language. */
  texts: TextValue[];
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
  /** What the last send noted (the media check's notes, said when drawn: `sendNoticeText`), or null. */
  notice: readonly TextValue[] | null;
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
    if (errors[key] === undefined) errors[key] = sayText(issueText(issue));
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
  error: Pick<AppError, 'confirm' | 'confirmTexts'>,
  confirmed: readonly string[] = [],
  shown: SendConfirmation | null = null,
): SendConfirmation | null {
  const warnings = error.confirm ?? [];
  if (warnings.length === 0) return null;
  return { subject: confirmationSubject(sent), warnings, texts: textsOr(error.confirmTexts, warnings), changed: confirmed.length > 0, asked: (shown?.asked ?? 0) + 1 };
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
 * The rule an error names for its field: its issue there (shared/validation.ts), else the error's
 * own text or words; undefined for an error that names no field.
 */
export function fieldRuleOf(error: Pick<AppError, 'field' | 'message' | 'text' | 'issues'>): TextValue | undefined {
  if (!error.field) return undefined;
  // A rule named by the field's words rather than its path ("Phone number: too short") is shown whole.
  const named = error.text?.code === 'common.fieldRule' && error.text.values?.field !== error.field;
  const issue = named ? undefined : error.issues?.find((i) => i.field === error.field);
  return issue?.text ?? error.text ?? error.message;
}

/**
 * Where a sendMessage error goes: the main process names fields like `content.image.link` (its own
 * schema) or `to`; the composer's keys are the same paths without `content.`.
 */
export function serverErrorsFrom(error: Pick<AppError, 'field' | 'message' | 'text' | 'issues'>): Record<string, string> {
  const rule = fieldRuleOf(error);
  if (!error.field || rule === undefined) return {};
  return { [error.field.replace(/^content\./, '')]: sayText(rule) };
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

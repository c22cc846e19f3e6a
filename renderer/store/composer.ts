// The composer as the agent types it: one draft per contact (so switching contacts or an error
// loses nothing), the message each form makes, and live validation with the same schemas the main
// process and the sandbox use (shared/api.ts messageContentSchema, commandSchemas.sendCallButton).
// Every form field is keyed by its path in the message (`interactive.action.buttons[0].reply.title`),
// so a rule broken anywhere lands next to the field that broke it.
import type { z } from 'zod';
import { commandSchemas, messageContentSchema } from '../../shared/api';
import { MESSAGE_LIMITS, type MediaType, type MessageContent } from '../../shared/messages';
import { formatPhoneNumber } from '../../shared/phone';
import type { TemplateDraft } from '../../shared/templates';
import { fieldPath } from '../../shared/validation';

export const COMPOSER_TABS = ['text', 'media', 'interactive', 'template'] as const;
export type ComposerTab = (typeof COMPOSER_TABS)[number];
export const TAB_LABELS: Readonly<Record<ComposerTab, string>> = { text: 'Text', media: 'Media', interactive: 'Interactive', template: 'Template' };

export const INTERACTIVE_VARIANTS = ['button', 'list', 'cta_url', 'flow', 'address_message', 'voice_call'] as const;
export type InteractiveVariant = (typeof INTERACTIVE_VARIANTS)[number];
export const VARIANT_LABELS: Readonly<Record<InteractiveVariant, string>> = {
  button: 'Reply buttons',
  list: 'List',
  cta_url: 'Link button',
  flow: 'Form (flow)',
  address_message: 'Address request',
  voice_call: 'Call button',
};

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

export interface MediaDraft {
  type: MediaType;
  link: string;
  caption: string;
  filename: string;
}

export interface LinkCheckState {
  /** The link and type this result is for: a later edit makes it stale. */
  link: string;
  type: MediaType;
  state: 'checking' | 'ok' | 'failed';
  text: string;
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
    callDisplayText: 'Call us',
    callTtlMinutes: '60',
  };
}

/** `contact` in gateway digits; the template's recipient starts as that number, formatted as people read it. */
export function emptyComposer(tab: ComposerTab = 'text', contact = ''): ComposerDraft {
  const to = contact === '' ? '' : formatPhoneNumber(contact);
  return {
    tab,
    text: '',
    media: { type: 'image', link: '', caption: '', filename: '' },
    interactive: emptyInteractive(),
    template: { pasted: '', draft: null, parseError: null, values: {}, to },
    touched: {},
    showAllErrors: false,
    busy: false,
    error: null,
    serverErrors: {},
    notice: null,
    linkCheck: null,
  };
}

// ---------------------------------------------------------------------------------------------
// What each form makes

const blank = (s: string) => s.trim() === '';

export function textContent(text: string): unknown {
  return { type: 'text', text: { body: text } };
}

export function mediaContent(media: MediaDraft): unknown {
  const object: Record<string, string> = { link: media.link.trim() };
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
    if (errors[key] === undefined) errors[key] = issue.message;
  }
  return errors;
}

export function checkContent(content: unknown): Checked<MessageContent> {
  const parsed = messageContentSchema.safeParse(content);
  return parsed.success ? { value: parsed.data as MessageContent, errors: {} } : { errors: issuesToErrors(parsed.error.issues) };
}

export function checkCallButton(to: string, d: InteractiveDraft): Checked<CallButtonInput> {
  const input = callButtonInput(to, d);
  if ('invalidTtl' in input) return { errors: { ttlMinutes: 'must be a whole number of minutes' } };
  const parsed = commandSchemas.sendCallButton.safeParse(input);
  return parsed.success ? { value: input, errors: {} } : { errors: issuesToErrors(parsed.error.issues) };
}

/** The message the active tab makes, checked. Template sends are checked by the main process (fillTemplate). */
export function checkComposer(draft: ComposerDraft, to: string): Checked<MessageContent | CallButtonInput> {
  switch (draft.tab) {
    case 'text':
      return checkContent(textContent(draft.text));
    case 'media':
      return checkContent(mediaContent(draft.media));
    case 'interactive':
      return draft.interactive.variant === 'voice_call' ? checkCallButton(to, draft.interactive) : checkContent(interactiveContent(draft.interactive));
    case 'template':
      return { errors: {} };
  }
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

/** Live errors that no rendered field shows (a list-wide rule, a member that must be unique). */
export function otherErrors(draft: ComposerDraft, live: Readonly<Record<string, string>>, shownKeys: ReadonlySet<string>): string[] {
  if (!draft.showAllErrors) return [];
  return Object.entries(live)
    .filter(([key]) => !shownKeys.has(key))
    .map(([key, rule]) => `${key}: ${rule}`);
}

/**
 * Where a sendMessage error goes: the main process names fields like `content.image.link` (its own
 * schema) or `to`; the composer's keys are the same paths without `content.`.
 */
export function serverErrorsFrom(error: { field?: string; message: string }): Record<string, string> {
  if (!error.field) return {};
  const key = error.field.replace(/^content\./, '');
  const prefix = `${error.field}: `;
  const first = error.message.split('; ')[0] ?? error.message;
  return { [key]: first.startsWith(prefix) ? first.slice(prefix.length) : first };
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
  return { ...current, busy: false, error: null, serverErrors: {} };
}

/** What a cleared form keeps after a successful send: the tab and the kind of message, not its words. */
export function afterSend(draft: ComposerDraft): ComposerDraft {
  const base = { ...draft, touched: {}, showAllErrors: false, busy: false, error: null, serverErrors: {}, linkCheck: null };
  switch (draft.tab) {
    case 'text':
      return { ...base, text: '' };
    case 'media':
      return { ...base, media: { type: draft.media.type, link: '', caption: '', filename: '' } };
    case 'interactive':
      return { ...base, interactive: emptyInteractive(draft.interactive.variant) };
    case 'template':
      return { ...base, template: { ...draft.template, values: draft.template.draft ? templateValuesFor(draft.template.draft) : {} } };
  }
}

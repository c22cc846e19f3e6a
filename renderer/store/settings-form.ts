// The settings form as the agent types it, and how errors find their fields. Nothing the agent
// typed is lost on an error: the draft lives in the store until a save succeeds. And SettingsText,
// the way Settings' domains keep words in their own state.
import type { ParseKeys } from 'i18next';
import { DEFAULT_PRODUCT } from '../../shared/gateway';
import { fieldRule, type TextValue } from '../../shared/i18n/text';
import type { AppError } from '../../shared/result';
import { accountSettingsInputSchema, type AccountSettingsInput, type PublicSettings } from '../../shared/settings';
import { fieldPath, issueText } from '../../shared/validation';
import { directionOf } from '../../shared/i18n/languages';
import { formatNumber, isolateLtr } from '../i18n/format';
import { currentLanguage, i18n } from '../i18n/i18n';
import { sayError, sayText, sentence } from '../i18n/texts';

/**
 * Words of the settings namespace kept as a key and its values, worded when shown (`settingsText`),
 * so that what is on screen follows a change of language. A value is data (a device's label, an
 * error's own words), a number (written the language's way then) or words itself. (The store's
 * statuses and form errors are plain strings, worded when they happen.)
 */
export interface SettingsText {
  key: ParseKeys<'settings'>;
  values?: Readonly<Record<string, SettingsWords | number>>;
}
/** A device's own label, a message from elsewhere, or words of ours. */
export type SettingsWords = string | SettingsText;

export const words = (key: ParseKeys<'settings'>, values?: SettingsText['values']): SettingsText => (values ? { key, values } : { key });

// The keys are checked where the words are made (`words`); here they are only looked up.
const translate = i18n.getFixedT(null, 'settings') as unknown as (key: string, values?: Record<string, string>) => string;

/**
 * Code, a flag or a file name set inside a sentence: in a right-to-left language it keeps its own
 * order (a left-to-right isolate, as components/Ltr.tsx gives an element); a left-to-right sentence
 * needs nothing and keeps its text as written. One text node either way, so a sentence is never split.
 */
export const ltrInText = (code: string): string => (directionOf(currentLanguage()) === 'rtl' ? isolateLtr(code) : code);

/** The words in the UI's language now. */
export function settingsText(text: SettingsWords): string {
  if (typeof text === 'string') return text;
  const values: Record<string, string> = {};
  for (const [name, value] of Object.entries(text.values ?? {})) values[name] = typeof value === 'number' ? formatNumber(value, { maximumFractionDigits: 1 }) : settingsText(value);
  return translate(text.key, values);
}

export const SETTINGS_FIELDS = ['gatewayUrl', 'apiKey', 'productSegment', 'relayUrl', 'agentToken', 'defaultCountry'] as const;
export type SettingsField = (typeof SETTINGS_FIELDS)[number];
export type SettingsDraft = Record<SettingsField, string>;
export type SettingsErrors = Partial<Record<SettingsField, string>>;

/** Secrets start blank: blank means "keep the stored one" (shared/settings.ts). */
export function draftFromSettings(settings: PublicSettings | null): SettingsDraft {
  return {
    gatewayUrl: settings?.gatewayUrl ?? '',
    apiKey: '',
    productSegment: settings?.productSegment || DEFAULT_PRODUCT,
    relayUrl: settings?.relayUrl ?? '',
    agentToken: '',
    defaultCountry: settings?.defaultCountry ?? '',
  };
}

/**
 * Schema rules read "must be …" (shared/'s codes and values, the main process's too): said in the
 * UI's language, and next to a field they start a sentence.
 */
const ruleSentence = (rule: TextValue): string => sentence(sayText(rule));

const isSettingsField = (key: string): key is SettingsField => (SETTINGS_FIELDS as readonly string[]).includes(key);

/** "settings.gatewayUrl" or "gatewayUrl" → "gatewayUrl"; anything else → undefined. */
export function settingsFieldOf(path: string | undefined): SettingsField | undefined {
  if (!path) return undefined;
  const last = path.split('.').pop() ?? '';
  return isSettingsField(last) ? last : undefined;
}

export function draftToInput(draft: SettingsDraft): AccountSettingsInput {
  return {
    gatewayUrl: draft.gatewayUrl.trim(),
    apiKey: draft.apiKey.trim(),
    productSegment: draft.productSegment.trim() || DEFAULT_PRODUCT,
    relayUrl: draft.relayUrl.trim(),
    agentToken: draft.agentToken.trim(),
    defaultCountry: draft.defaultCountry.trim().toUpperCase(),
  };
}

/** Checks the draft with the same schema the main process uses, reporting every field at once. */
export function validateDraft(draft: SettingsDraft): { ok: true; input: AccountSettingsInput } | { ok: false; errors: SettingsErrors } {
  const input = draftToInput(draft);
  const parsed = accountSettingsInputSchema.safeParse(input);
  if (parsed.success) return { ok: true, input };
  const errors: SettingsErrors = {};
  for (const issue of parsed.error.issues) {
    const field = settingsFieldOf(fieldPath(issue.path));
    if (field && errors[field] === undefined) errors[field] = ruleSentence(issueText(issue));
  }
  return { ok: false, errors };
}

/**
 * Where a saveSettings error goes: each broken rule (`issues`, shared/validation.ts) next to the
 * field it names; the rest above the form, or next to the field the error names.
 */
export function settingsErrorsFrom(error: Pick<AppError, 'field' | 'message' | 'text' | 'issues'>): { fields: SettingsErrors; form: string | null } {
  const fields: SettingsErrors = {};
  const rest: string[] = [];
  for (const issue of error.issues ?? []) {
    const field = settingsFieldOf(issue.field);
    if (field === undefined) rest.push(sayText(fieldRule(issue.field, issue.text)));
    else if (fields[field] === undefined) fields[field] = ruleSentence(issue.text);
  }
  if (error.issues === undefined) rest.push(sayError(error));
  const named = settingsFieldOf(error.field);
  if (named && fields[named] === undefined) {
    fields[named] = rest.length > 0 ? rest.join('; ') : sayError(error);
    return { fields, form: null };
  }
  return { fields, form: rest.length > 0 ? rest.join('; ') : null };
}

// Settings → "Recording and transcription" as the agent fills it: the two boxes, the purpose and the
// notice's language. It is checked with the main process's own schema (shared/service-capture.ts)
// before it goes out, and every error names its field ("Purpose is required").
import { fieldRule, type TextValue } from '../../shared/i18n/text';
import type { AppError } from '../../shared/result';
import { DEFAULT_SERVICE_CAPTURE, serviceCaptureSettingsSchema, type AnnouncementLanguage, type ServiceCaptureSettings } from '../../shared/service-capture';
import { fieldPath, issueText } from '../../shared/validation';
import { PSEUDO_LANGUAGE } from '../../shared/i18n/languages';
import { currentLanguage, i18n, intlLocale } from '../i18n/i18n';
import { pseudoLocalize } from '../i18n/pseudo';
import { sayError, sayText, sentence } from '../i18n/texts';

const t = i18n.getFixedT(null, 'settings');

export const CAPTURE_FIELDS = ['record', 'transcribe', 'purpose', 'language'] as const;
export type CaptureField = (typeof CAPTURE_FIELDS)[number];
export type CaptureDraft = ServiceCaptureSettings;
export type CaptureErrors = Partial<Record<CaptureField, string>>;

export function draftFromCapture(saved: ServiceCaptureSettings | null | undefined): CaptureDraft {
  return { ...(saved ?? DEFAULT_SERVICE_CAPTURE) };
}

const isCaptureField = (key: unknown): key is CaptureField => typeof key === 'string' && (CAPTURE_FIELDS as readonly string[]).includes(key);

/** "serviceCapture.purpose" or "purpose" → "purpose"; anything else → undefined. */
export function captureFieldOf(path: string | undefined): CaptureField | undefined {
  const last = path?.split('.').pop();
  return isCaptureField(last) ? last : undefined;
}

/** The field's name as its label says it, for an error that names it. */
const fieldLabel = (field: CaptureField): string => t(`serviceCapture.${field}.label`);

/** "Purpose is required", "Purpose must be at most 250 characters": the rule with its field's name. */
export const fieldError = (field: CaptureField, rule: TextValue): string => t('serviceCapture.fieldError', { label: fieldLabel(field), rule: sayText(rule) });

/** Checks the draft with the schema the main process uses, every field at once. */
export function validateCaptureDraft(draft: CaptureDraft): { ok: true; input: ServiceCaptureSettings } | { ok: false; errors: CaptureErrors } {
  const parsed = serviceCaptureSettingsSchema.safeParse(draft);
  if (parsed.success) return { ok: true, input: parsed.data };
  const errors: CaptureErrors = {};
  for (const issue of parsed.error.issues) {
    const field = captureFieldOf(fieldPath(issue.path));
    if (field && errors[field] === undefined) errors[field] = fieldError(field, issueText(issue));
  }
  return { ok: false, errors };
}

/**
 * Where a saveServiceCapture error goes: each broken rule (`issues`) next to the field it names;
 * the rest above the button, or next to the field the error names.
 */
export function captureErrorsFrom(error: Pick<AppError, 'field' | 'message' | 'text' | 'issues'>): { fields: CaptureErrors; form: string | null } {
  const fields: CaptureErrors = {};
  const rest: string[] = [];
  for (const issue of error.issues ?? []) {
    const field = captureFieldOf(issue.field);
    if (field === undefined) rest.push(sayText(fieldRule(issue.field, issue.text)));
    else if (fields[field] === undefined) fields[field] = fieldError(field, issue.text);
  }
  if (error.issues === undefined) rest.push(sayError(error));
  const named = captureFieldOf(error.field);
  if (named && fields[named] === undefined) {
    fields[named] = sentence(rest.length > 0 ? rest.join('; ') : sayError(error));
    return { fields, form: null };
  }
  return { fields, form: rest.length > 0 ? rest.join('; ') : null };
}

/**
 * A notice language by name in the window's language ("British English"), from Intl; its code where
 * Intl has no name. The pseudo-locale's names are English marked as its words are, so that its
 * check of untranslated text sees them as the window's language's.
 */
export function announcementLanguageName(language: AnnouncementLanguage, locale = intlLocale()): string {
  const tag = language.replace('_', '-');
  let name: string;
  try {
    name = new Intl.DisplayNames([locale], { type: 'language' }).of(tag) ?? tag;
  } catch {
    name = tag;
  }
  return currentLanguage() === PSEUDO_LANGUAGE ? pseudoLocalize(name) : name;
}

// A call's wrap-up as the agent types it ("Disposition", "Notes"), and how errors find their
// fields. Nothing typed is lost: a draft lives in the store, by the call's localId, until a save
// succeeds, whichever form (after-call work, recent calls) shows it and however often it closes.
import type { AppError } from '../../shared/result';
import type { HistoryEntry, WrapUp } from '../../shared/history';
import { text, type TextValue } from '../../shared/i18n/text';
import { WRAP_UP_EDITABLE_MS, WRAP_UP_NOTES_MAX, type TeamSettings } from '../../shared/team-settings';
import type { CommandParams } from '../../shared/api';
import { sayText, sentence } from '../i18n/texts';

export const WRAP_UP_FIELDS = ['disposition', 'notes'] as const;
export type WrapUpField = (typeof WRAP_UP_FIELDS)[number];

/** The select's value: a disposition, or '' for none. */
export interface WrapUpDraft {
  disposition: string;
  notes: string;
}
export type WrapUpErrors = Partial<Record<WrapUpField, string>>;

export interface WrapUpFormState {
  draft: WrapUpDraft;
  /** Edited since the last save: the saved wrap-up of the entry no longer refills it. */
  dirty: boolean;
  errors: WrapUpErrors;
  /** A refusal that names neither field. */
  formError: string | null;
  busy: boolean;
  /** The last save went through (said once, until the next edit). */
  saved: boolean;
}

export const draftFromWrapUp = (wrapUp: WrapUp | undefined): WrapUpDraft => ({ disposition: wrapUp?.disposition ?? '', notes: wrapUp?.notes ?? '' });

export const freshWrapUpForm = (wrapUp: WrapUp | undefined): WrapUpFormState => ({
  draft: draftFromWrapUp(wrapUp),
  dirty: false,
  errors: {},
  formError: null,
  busy: false,
  saved: false,
});

/** The form of a call: its draft while edited, else what was saved last. */
export function wrapUpFormOf(form: WrapUpFormState | undefined, wrapUp: WrapUp | undefined): WrapUpFormState {
  if (!form) return freshWrapUpForm(wrapUp);
  return form.dirty ? form : { ...form, draft: draftFromWrapUp(wrapUp) };
}

/** A call the agent talked in: one that connected and then ended, was handed on, or failed during the talk. */
export function wasAnswered(entry: Pick<HistoryEntry, 'outcome' | 'durationSec'>): boolean {
  return entry.outcome === 'completed' || entry.outcome === 'transferred' || (entry.outcome === 'failed' && entry.durationSec > 0);
}

/** Whether the agent may still write or change the call's wrap-up (the relay takes it for 24 hours after the call). */
export function wrapUpEditable(entry: Pick<HistoryEntry, 'outcome' | 'durationSec' | 'endedAt'>, now: number): boolean {
  return wasAnswered(entry) && now - entry.endedAt < WRAP_UP_EDITABLE_MS;
}

const fieldSentence = (rule: TextValue): string => sentence(sayText(rule));

/** Checks the draft against the team's rules before it goes: every broken rule at its field. */
export function validateWrapUp(
  localId: string,
  draft: WrapUpDraft,
  settings: Pick<TeamSettings, 'dispositionRequired'>,
): { ok: true; params: CommandParams<'saveWrapUp'> } | { ok: false; errors: WrapUpErrors } {
  const errors: WrapUpErrors = {};
  if (draft.disposition === '' && settings.dispositionRequired) errors.disposition = fieldSentence(text('team.dispositionRequired'));
  if (draft.notes.length > WRAP_UP_NOTES_MAX) errors.notes = fieldSentence(text('common.atMostCharacters', { count: WRAP_UP_NOTES_MAX }));
  if (Object.keys(errors).length > 0) return { ok: false, errors };
  return { ok: true, params: { localId, disposition: draft.disposition === '' ? null : draft.disposition, notes: draft.notes } };
}

const isWrapUpField = (key: string): key is WrapUpField => (WRAP_UP_FIELDS as readonly string[]).includes(key);

/** "disposition", "wrapUp.notes" → the field; anything else → undefined. */
function wrapUpFieldOf(path: string | undefined): WrapUpField | undefined {
  const last = path?.split('.').pop() ?? '';
  return isWrapUpField(last) ? last : undefined;
}

/**
 * The rule alone of an error that names its field: its issue there, else its text without the
 * "field:" the main process puts before it, else its English message.
 */
function ruleOf(error: Pick<AppError, 'field' | 'message' | 'text' | 'issues'>, field: string): TextValue {
  const issue = error.issues?.find((i) => i.field === field);
  if (issue) return issue.text;
  const said = error.text;
  if (said?.code === 'common.fieldRule' && said.values?.field === field && said.values.rule !== undefined) return said.values.rule;
  if (said) return said;
  const prefix = `${field}: `;
  return error.message.startsWith(prefix) ? error.message.slice(prefix.length) : error.message;
}

/** Where a saveWrapUp refusal goes: each broken rule next to its field; the rest (said in `message`) above the button. */
export function wrapUpErrorsFrom(error: Pick<AppError, 'field' | 'message' | 'text' | 'issues'>, message: string): { fields: WrapUpErrors; form: string | null } {
  const fields: WrapUpErrors = {};
  for (const issue of error.issues ?? []) {
    const field = wrapUpFieldOf(issue.field);
    if (field && fields[field] === undefined) fields[field] = fieldSentence(issue.text);
  }
  const named = wrapUpFieldOf(error.field);
  if (named && error.field !== undefined && fields[named] === undefined) fields[named] = fieldSentence(ruleOf(error, error.field));
  return { fields, form: Object.keys(fields).length > 0 ? null : message };
}

export const firstWrapUpField = (errors: WrapUpErrors): WrapUpField | null => WRAP_UP_FIELDS.find((f) => errors[f] !== undefined) ?? null;

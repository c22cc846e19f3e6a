// What the media engine has to say (a failure's reason, a notice for the call's panel) travels as a
// value: a rule of the catalogue's `callMedia` group with its values (shared/i18n/text.ts, style.md
// 19), or words another part gave already worded (a library's, the network settings' own). The
// window words it where it shows it (`mediaText`: the notice the store shows, the error under the
// dialer); the reason `reportMedia` carries goes as the text itself beside its English
// (`reportedReason`), so that the ended call and its history entry are said in the language of
// whichever window shows them, whenever it does.
import type rules from '../../shared/i18n/locales/en/rules.json';
import { english, text, type RuleText, type TextValues } from '../../shared/i18n/text';
import { sayText } from '../i18n/texts';

export type MediaTextKey = keyof (typeof rules)['callMedia'];

/** A rule of the catalogue, or words that came worded from elsewhere (shown as they came, never taken apart). */
export type MediaText = RuleText | string;

export const mediaProblem = (key: MediaTextKey, values?: TextValues): RuleText => text(`callMedia.${key}`, values);

/** The words of a media text in the UI's language of this moment. */
export const mediaText = (said: MediaText): string => sayText(said);

/** How long a reason's English may be in `reportMedia` (shared/api.ts). */
const MOST_REASON_CHARACTERS = 500;

/** A failure's reason as `reportMedia` carries it: its English, and its code and values when the catalogue made it. */
export function reportedReason(reason: MediaText): { reason: string; reasonText?: RuleText } {
  const inEnglish = english(reason).slice(0, MOST_REASON_CHARACTERS);
  return typeof reason === 'string' ? { reason: inEnglish } : { reason: inEnglish, reasonText: reason };
}

/** A failure whose reason is meant for the agent (and for the media fact's reason). */
export class MediaSetupError extends Error {
  constructor(readonly problem: MediaText) {
    super(english(problem));
  }
}

/** The reason of anything a call's preparation threw: its own words, else `fallback` with the problem. */
export const setupProblem = (e: unknown, fallback: MediaTextKey, problem: string): MediaText =>
  e instanceof MediaSetupError ? e.problem : mediaProblem(fallback, { problem });

/** What the engine answers a question that may fail (the answer to hand over, the offer to send). */
export type MediaOutcome<T> = { ok: true; value: T } | { ok: false; error: MediaError };

export interface MediaError {
  code: 'media_failed' | 'invalid_state';
  problem: MediaText;
}

export const mediaFailure = <T = never>(code: MediaError['code'], problem: MediaText): MediaOutcome<T> => ({ ok: false, error: { code, problem } });

// What the media engine has to say (a failure's reason, a notice for the call's panel) travels inside
// the window as a value: a key of the `calls` namespace's `media` entries and its values (style.md 19).
// It is worded once, by `mediaText`, where it leaves the media layer: the notice the store shows, the
// reason `reportMedia` carries, the error under the dialer.
import type english from '../../shared/i18n/locales/en/calls.json';
import { i18n } from '../i18n/i18n';

export type MediaTextKey = keyof (typeof english)['media'];

/** A value of a media text: plain words or figures, or another media text said inside it. */
export type MediaTextValue = string | number | MediaText;

export type MediaText =
  | { key: MediaTextKey; values?: Readonly<Record<string, MediaTextValue>> }
  /**
   * Words that came worded from another part (the network settings' own sentence, IceConfigSource):
   * shown as they came, never taken apart.
   */
  | { said: string };

const t = i18n.getFixedT(null, 'calls') as unknown as (key: `media.${MediaTextKey}`, values?: Record<string, string | number>) => string;

export const mediaProblem = (key: MediaTextKey, values?: Readonly<Record<string, MediaTextValue>>): MediaText => (values ? { key, values } : { key });

/** The words of a media text in the UI's language of this moment. */
export function mediaText(text: MediaText): string {
  if ('said' in text) return text.said;
  if (!text.values) return t(`media.${text.key}`);
  const values: Record<string, string | number> = {};
  for (const [name, value] of Object.entries(text.values)) values[name] = typeof value === 'object' ? mediaText(value) : value;
  return t(`media.${text.key}`, values);
}

/** A failure whose reason is meant for the agent (and for the media fact's reason). */
export class MediaSetupError extends Error {
  constructor(readonly problem: MediaText) {
    super('key' in problem ? `media.${problem.key}` : problem.said);
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

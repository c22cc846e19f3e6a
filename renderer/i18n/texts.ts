// shared/'s rule messages in the UI's language: a text travels as its code and values
// (shared/i18n/text.ts) and is rendered here, with the window's `rules` namespace in the language it
// speaks now, its data kept left to right in Arabic. The main process's own dialogs render the same
// texts the same way (electron/desktop/desktop-texts.ts).
import { directionOf } from '../../shared/i18n/languages';
import { renderText, type RuleText, type TextLookup, type TextValue } from '../../shared/i18n/text';
import type { AppError } from '../../shared/result';
import { isolateLtr } from './format';
import { currentLanguage, i18n } from './i18n';

// The keys are the texts' codes, checked where a text is made; here they are only looked up. A
// fixed t with no language follows the window's language at each call.
const lookup = i18n.getFixedT(null, 'rules') as unknown as TextLookup;

/**
 * A text in the UI's language now: `{ code: 'settings.versionSegment', values: { example } }` →
 * "debe terminar en el segmento de versión, p. ej., …". A plain string is words of no catalogue (a
 * server's, a library's) and comes as it is.
 */
export function sayText(value: TextValue): string {
  return renderText(value, lookup, { isolate: directionOf(currentLanguage()) === 'rtl' ? isolateLtr : undefined });
}

/**
 * Words that came in English with, when the catalogue made them, their code and values beside (a
 * connection's last error, a message's failure): the text in the UI's language, else the English.
 */
export const sayEither = (said: RuleText | undefined, english: string): string => (said !== undefined ? sayText(said) : english);

/** An error's own words in the UI's language: its text when the catalogue made it, else its English message. */
export const sayError = (error: Pick<AppError, 'message' | 'text'>): string => sayEither(error.text, error.message);

/** A rule next to its field starts a sentence. */
export const sentence = (said: string): string => (said === '' ? said : said[0]!.toUpperCase() + said.slice(1));

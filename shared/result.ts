// Errors cross process boundaries as values (ARCHITECTURE.md, style.md 4). Codes are a closed union
// that the UI maps to human messages (renderer/error-texts.ts); a rule's refusal carries its own
// code and values too (`text`, `issues`), which each language renders (style.md 19).
import { english, type RuleText, type TextValue } from './i18n/text';

export type ErrorCode =
  | 'invalid_input' // a field broke a rule; `field` names it
  | 'invalid_phone_number'
  | 'not_found' // no such call
  | 'invalid_state' // the command does not fit the call's phase
  | 'no_call_permission' // gateway 138006
  | 'customer_busy' // gateway 138003
  | 'window_closed' // gateway 131047
  | 'gateway_error' // any other Graph error; `gatewayCode` carries its code
  | 'gateway_unreachable' // network error or non-Graph body; `detail` keeps the body for diagnostics
  | 'timeout'
  | 'unauthorized'
  | 'media_failed'
  | 'not_configured'
  | 'not_available' // e.g. a sandbox-only command in account mode
  | 'answered_elsewhere'
  | 'needs_confirmation' // nothing broke a rule, but `confirm` lists warnings the agent accepts first ("Send anyway": sendMessage's `confirmed`)
  | 'internal';

/** One field's broken rule: its path and the rule, as a catalogue's text or, from a library, its own words. */
export interface FieldIssue {
  field: string;
  text: TextValue;
}

export interface AppError {
  code: ErrorCode;
  /** The English rendering: what logs, HTTP bodies and English windows show. */
  message: string;
  /**
   * `message` as its code and values, when shared/'s catalogue made it (every rule's refusal); the
   * window says it in the agent's language. Absent for words the catalogue does not hold (a
   * gateway's, a library's, the main process's own sentences): `message` is then all there is.
   */
  text?: RuleText;
  /** For invalid_input: each field's broken rule (`message` lists them, "path: rule; path: rule"). */
  issues?: FieldIssue[];
  /**
   * Dotted path of the offending field: for invalid_input, for needs_confirmation (the file the
   * warnings are about), and for a gateway refusal whose details name a field of the request.
   */
  field?: string;
  /** The gateway's numeric error code (Graph envelope), when there was one. */
  gatewayCode?: number;
  /** HTTP status of the gateway's answer, when there was one. */
  httpStatus?: number;
  /** Raw diagnostic text (an opaque error body), never shown as the main message. */
  detail?: string;
  /**
   * For needs_confirmation: every warning the check finds now. The agent confirms them by sending the
   * same request with these exact texts in `confirmed`; it goes out only while they still cover all.
   */
  confirm?: string[];
  /** The same warnings as `confirm`, in its order, as codes and values: what the window shows (`confirm` is what it sends back). */
  confirmTexts?: RuleText[];
}

export type Result<T> = { ok: true; value: T } | { ok: false; error: AppError };

export const ok = <T>(value: T): Result<T> => ({ ok: true, value });
export const err = <T = never>(code: ErrorCode, message: string, extra: Omit<AppError, 'code' | 'message'> = {}): Result<T> => ({
  ok: false,
  error: { code, message, ...extra },
});

/**
 * The error as it goes into an HTTP body or a file that others read: without the texts, which are
 * for a window of ours (the English `message` says the same).
 */
export function withoutTexts(error: AppError): AppError {
  const { text: _text, issues: _issues, confirmTexts: _confirmTexts, ...rest } = error;
  return rest;
}

/** An error whose message is a text of the catalogue: `message` is its English, `text` the text itself. */
export const errText = <T = never>(code: ErrorCode, text: RuleText, extra: Omit<AppError, 'code' | 'message' | 'text'> = {}): Result<T> =>
  err(code, english(text), { ...extra, text });

/** A thrown error that carries a text of the catalogue: its message is the English, `text` the text. */
export class TextError extends Error {
  constructor(readonly text: RuleText) {
    super(english(text));
    this.name = 'TextError';
  }
}

export function assertNever(x: never, what = 'value'): never {
  throw new Error(`Unexpected ${what}: ${JSON.stringify(x)}`);
}

/** The text of anything thrown: an Error's message, else the value as a string. */
export const errorText = (e: unknown): string => (e instanceof Error ? e.message : String(e));

// Human text for every error code (shared/result.ts) and every way a call can end
// (shared/call-state.ts EndReason), in the UI's language (the `errors` namespace). Each function
// words its answer when it is called, so a re-render after a language change gives the new words.
// The keys are typed by the closed unions, so a new code or end kind is a compile error here until
// errors.json has words for it.
import type { EndKind, EndReason } from '../shared/call-state';
import type { MessageFailure } from '../shared/conversation';
import { GATEWAY_ERROR_TEXT } from '../shared/gateway';
import type { HistoryEntry } from '../shared/history';
import { MESSAGE_ERROR_TEXT } from '../shared/messages';
import type { RuleText } from '../shared/i18n/text';
import { assertNever, type AppError, type ErrorCode } from '../shared/result';
import english from '../shared/i18n/locales/en/errors.json';
import { i18n } from './i18n/i18n';
import { sayError, sayText } from './i18n/texts';
import type { SnapshotProblem } from './store/store';

// The instance's own t takes keys of every namespace ("errors:…"), checked against the English JSON.
const t = i18n.t.bind(i18n);

/** Every error code, in the order errors.json words them. */
export const ERROR_CODES = Object.keys(english.code satisfies Record<ErrorCode, string>) as ErrorCode[];
export const isErrorCode = (code: string): code is ErrorCode => Object.hasOwn(english.code, code);

/** The fixed sentence for an error code. */
export const errorCodeText = (code: ErrorCode): string => t(`errors:code.${code}`);

type GatewayCodeKey = keyof typeof english.gateway;
type MessageCodeKey = keyof typeof english.message;

/**
 * The words for a gateway error code of a call or a call button (shared/gateway.ts
 * GATEWAY_ERROR_TEXT, which the main process writes in English): the translation when errors.json
 * has one, else the shared English text; undefined for a code neither knows.
 */
function gatewayCodeText(code: number): string | undefined {
  const key = String(code);
  if (Object.hasOwn(english.gateway, key)) return t(`errors:gateway.${key as GatewayCodeKey}`);
  return GATEWAY_ERROR_TEXT[code];
}

/** The same for a message send's gateway codes (shared/messages.ts MESSAGE_ERROR_TEXT). */
function messageCodeText(code: number): string | undefined {
  const key = String(code);
  if (Object.hasOwn(english.message, key)) return t(`errors:message.${key as MessageCodeKey}`);
  return MESSAGE_ERROR_TEXT[code];
}

/** A gateway code's words end without a full stop; said alone they make a sentence. */
const sentence = (text: string): string => t('errors:sentence', { text });

// For these the main process's own message is the more precise one ("Phone number: too short",
// "gatewayUrl: must end in the version segment…"); the fixed text is the fallback. One that carries
// its rule's code and values (`text`) is said in the UI's language; any other stays as it came.
const PREFER_DETAIL: ReadonlySet<ErrorCode> = new Set(['invalid_input', 'invalid_phone_number', 'invalid_state', 'not_available', 'media_failed']);

/** The sentence to show for an error that crossed the bridge. */
export function errorMessage(error: Pick<AppError, 'code' | 'message' | 'gatewayCode' | 'text'>): string {
  if (error.code === 'no_call_permission' || error.gatewayCode === 138006) return errorCodeText('no_call_permission');
  if (error.gatewayCode !== undefined) {
    const known = gatewayCodeText(error.gatewayCode);
    if (known) return sentence(known);
  }
  if (!isErrorCode(error.code)) return error.message || errorCodeText('internal');
  if (error.code === 'gateway_error') return error.message ? t('errors:gatewayRefused', { reason: error.message }) : errorCodeText('gateway_error');
  if (PREFER_DETAIL.has(error.code) && error.message) return sayError(error);
  return errorCodeText(error.code);
}

// Refusals about something other than a call: their own words for these codes, since the fixed texts
// speak of a call ("This call no longer exists").
const OWN_WORDS: ReadonlySet<ErrorCode> = new Set(['not_found', 'invalid_state', 'invalid_input']);

/**
 * The sentence for a refusal about a voicemail or a callback request: the words the catalogue made
 * for it (`text`: "Taken by Maya Chen") or, for a missing or taken one, the main process's own; any
 * other error as errorMessage says it.
 */
export const refusalText = (error: Pick<AppError, 'code' | 'message' | 'gatewayCode' | 'text'>): string =>
  error.text !== undefined || (OWN_WORDS.has(error.code) && error.message !== '') ? sayError(error) : errorMessage(error);

/** Why the state could not be loaded (the banner's reason), in the UI's language. */
export function snapshotProblemText(problem: SnapshotProblem): string {
  switch (problem.kind) {
    case 'refused':
      return errorMessage(problem.error);
    case 'unreadable':
      return t('snapshot.unreadable');
    case 'startFailed':
      return t('snapshot.startFailed', { reason: problem.reason });
    default:
      return assertNever(problem, 'snapshot problem');
  }
}

/**
 * The sentence for an error of a message send. Unlike a call, a send must never be repeated on a
 * guess: a timeout or an unreadable acceptance may mean the message went out, and the main
 * process's own words say so (electron/core/gateway-client.ts), so they are kept.
 */
export function messageErrorText(error: Pick<AppError, 'code' | 'message' | 'gatewayCode' | 'httpStatus' | 'text'>): string {
  if (error.gatewayCode !== undefined) {
    const known = messageCodeText(error.gatewayCode);
    if (known) return sentence(known);
  }
  switch (error.code) {
    case 'window_closed':
      return errorCodeText('window_closed');
    case 'timeout':
      return error.message ? sayError(error) : errorCodeText('timeout');
    case 'gateway_unreachable':
      // A 2xx whose body could not be read: the message may have gone out.
      return error.httpStatus !== undefined && error.httpStatus >= 200 && error.httpStatus < 300 && error.message ? sayError(error) : errorCodeText('gateway_unreachable');
    case 'gateway_error':
      return error.message ? t('errors:messageRefusedBecause', { reason: error.message }) : t('errors:messageRefused');
    case 'not_found':
    case 'not_configured':
      return error.message ? sayError(error) : errorCodeText(error.code);
    default:
      return errorMessage(error);
  }
}

/**
 * Why a sent message failed, as its timeline shows it: the catalogue's words (`text`), the app's own
 * words for the gateway's code (shared/messages.ts MESSAGE_ERROR_TEXT) in the UI's language, or the
 * gateway's own words as they came.
 */
export function messageFailureText(failure: MessageFailure): string {
  if (failure.text !== undefined) return sayText(failure.text);
  if (failure.code !== undefined && failure.message === MESSAGE_ERROR_TEXT[failure.code]) return messageCodeText(failure.code) ?? failure.message;
  return failure.message;
}

/**
 * Why a call failed, from the code the call carries: a gateway code ("138006"), an app error code
 * ("no_call_permission", "media_failed"), or anything else with its own message. `text` is the
 * message as its code and values when the catalogue made it (a media failure's reason): said in
 * the UI's language of now, whatever language the window that reported it spoke.
 */
export function failureText(code: string | undefined, message: string | undefined, text?: RuleText): string {
  if (code !== undefined && /^\d+$/.test(code)) {
    const gatewayCode = Number(code);
    if (gatewayCode === 138006) return errorCodeText('no_call_permission');
    const known = gatewayCodeText(gatewayCode);
    if (known) return known;
  }
  if (code !== undefined && isErrorCode(code)) return errorMessage({ code, message: message ?? '', ...(text !== undefined ? { text } : {}) });
  if (text !== undefined) return sayText(text);
  return message && message.trim() !== '' ? message : t('errors:callFailed');
}

type Outcome = Exclude<EndKind, 'failed' | 'completed' | 'transferred'>;
const outcomeText = (kind: Outcome): string => t(`errors:end.${kind}`);

/** "Transferred to NAME": the colleague who took the customer; an entry that did not keep the name says only that it was. */
const transferredText = (to: string | undefined): string => (to !== undefined && to.trim() !== '' ? t('errors:end.transferred', { name: to }) : t('errors:end.transferredAway'));

/** The outcome shown on the call panel as a call ends. */
export function endReasonText(end: EndReason): string {
  switch (end.kind) {
    case 'completed':
      return end.by === 'agent' ? t('errors:end.endedByAgent') : t('errors:end.endedByCustomer');
    case 'failed':
      return t('errors:failed', { reason: failureText(end.code, end.message, end.text) });
    case 'transferred':
      return transferredText(end.to);
    default:
      return outcomeText(end.kind);
  }
}

/** The outcome in the recent-calls list (who hung up is not kept there). */
export function historyOutcomeText(entry: Pick<HistoryEntry, 'outcome' | 'failureCode' | 'failureMessage' | 'failureText' | 'transferredTo'>): string {
  switch (entry.outcome) {
    case 'completed':
      return t('errors:end.completed');
    case 'failed':
      return t('errors:failed', { reason: failureText(entry.failureCode, entry.failureMessage, entry.failureText) });
    case 'transferred':
      return transferredText(entry.transferredTo);
    default:
      return outcomeText(entry.outcome);
  }
}

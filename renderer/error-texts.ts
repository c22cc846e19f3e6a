// Human text for every error code (shared/result.ts) and every way a call can end
// (shared/call-state.ts EndReason). The records are typed by the closed unions, so a new code or
// end kind is a compile error here until it has words.
import type { EndKind, EndReason } from '../shared/call-state';
import { GATEWAY_ERROR_TEXT } from '../shared/gateway';
import type { HistoryEntry } from '../shared/history';
import { MESSAGE_ERROR_TEXT } from '../shared/messages';
import type { AppError, ErrorCode } from '../shared/result';

export const NO_CALL_PERMISSION_TEXT =
  'The customer has not allowed business calls. Send them a call-permission request, and call once they accept.';

export const ERROR_TEXT: Readonly<Record<ErrorCode, string>> = {
  invalid_input: 'Please check the highlighted field.',
  invalid_phone_number: 'This phone number is not valid.',
  not_found: 'This call no longer exists.',
  invalid_state: 'That is not possible at this point of the call.',
  no_call_permission: NO_CALL_PERMISSION_TEXT,
  customer_busy: 'A call with this customer is already in progress.',
  window_closed: 'The 24-hour conversation window is closed: send a template message instead.',
  gateway_error: 'The calling service refused the request.',
  gateway_unreachable: 'Cannot reach the calling service. Check the network connection and try again.',
  timeout: 'The calling service did not answer in time. Try again.',
  unauthorized: 'The calling service refused the API key. Check it in Settings.',
  media_failed: 'The audio connection failed.',
  not_configured: 'No account is set up yet. Open Settings, or use the sandbox.',
  not_available: 'This is not available in the current mode.',
  answered_elsewhere: 'Answered by another agent.',
  needs_confirmation: 'Not sent yet: confirm the warnings to send it anyway.',
  internal: 'Something went wrong inside the app. Try again.',
};

export const ERROR_CODES = Object.keys(ERROR_TEXT) as ErrorCode[];
export const isErrorCode = (code: string): code is ErrorCode => Object.hasOwn(ERROR_TEXT, code);

// For these the main process's own message is the more precise one ("Phone number: too short",
// "gatewayUrl: must end in the version segment…"); the fixed text is the fallback.
const PREFER_DETAIL: ReadonlySet<ErrorCode> = new Set(['invalid_input', 'invalid_phone_number', 'invalid_state', 'not_available', 'media_failed']);

/** The sentence to show for an error that crossed the bridge. */
export function errorMessage(error: Pick<AppError, 'code' | 'message' | 'gatewayCode'>): string {
  if (error.code === 'no_call_permission' || error.gatewayCode === 138006) return NO_CALL_PERMISSION_TEXT;
  if (error.gatewayCode !== undefined) {
    const known = GATEWAY_ERROR_TEXT[error.gatewayCode];
    if (known) return `${known}.`;
  }
  if (!isErrorCode(error.code)) return error.message || ERROR_TEXT.internal;
  if (error.code === 'gateway_error') return error.message ? `${ERROR_TEXT.gateway_error} ${error.message}` : ERROR_TEXT.gateway_error;
  if (PREFER_DETAIL.has(error.code) && error.message) return error.message;
  return ERROR_TEXT[error.code];
}

/**
 * The sentence for an error of a message send. Unlike a call, a send must never be repeated on a
 * guess: a timeout or an unreadable acceptance may mean the message went out, and the main
 * process's own words say so (electron/core/gateway-client.ts), so they are kept.
 */
export function messageErrorText(error: Pick<AppError, 'code' | 'message' | 'gatewayCode' | 'httpStatus'>): string {
  if (error.gatewayCode !== undefined && MESSAGE_ERROR_TEXT[error.gatewayCode]) return `${MESSAGE_ERROR_TEXT[error.gatewayCode]}.`;
  switch (error.code) {
    case 'window_closed':
      return ERROR_TEXT.window_closed;
    case 'timeout':
      return error.message || ERROR_TEXT.timeout;
    case 'gateway_unreachable':
      // A 2xx whose body could not be read: the message may have gone out.
      return error.httpStatus !== undefined && error.httpStatus >= 200 && error.httpStatus < 300 && error.message ? error.message : ERROR_TEXT.gateway_unreachable;
    case 'gateway_error':
      return error.message ? `The gateway refused the message: ${error.message}` : 'The gateway refused the message.';
    case 'not_found':
    case 'not_configured':
      return error.message || ERROR_TEXT[error.code];
    default:
      return errorMessage(error);
  }
}

/**
 * Why a call failed, from the code the call carries: a gateway code ("138006"), an app error code
 * ("no_call_permission", "media_failed"), or anything else with its own message.
 */
export function failureText(code: string | undefined, message: string | undefined): string {
  if (code !== undefined && /^\d+$/.test(code)) {
    const gatewayCode = Number(code);
    if (gatewayCode === 138006) return NO_CALL_PERMISSION_TEXT;
    const known = GATEWAY_ERROR_TEXT[gatewayCode];
    if (known) return known;
  }
  if (code !== undefined && isErrorCode(code)) return errorMessage({ code, message: message ?? '' });
  return message && message.trim() !== '' ? message : 'The call failed';
}

const OUTCOME_TEXT: Readonly<Record<Exclude<EndKind, 'failed' | 'completed'>, string>> = {
  declined: 'Declined',
  missed: 'Missed',
  cancelled: 'Cancelled',
  no_answer: 'No answer',
  rejected: 'Customer declined',
  answered_elsewhere: 'Answered by another agent',
};

/** The outcome shown on the call panel as a call ends. */
export function endReasonText(end: EndReason): string {
  switch (end.kind) {
    case 'completed':
      return end.by === 'agent' ? 'Call ended' : 'Call ended by the customer';
    case 'failed':
      return `Failed: ${failureText(end.code, end.message)}`;
    default:
      return OUTCOME_TEXT[end.kind];
  }
}

/** The outcome in the recent-calls list (who hung up is not kept there). */
export function historyOutcomeText(entry: Pick<HistoryEntry, 'outcome' | 'failureCode' | 'failureMessage'>): string {
  switch (entry.outcome) {
    case 'completed':
      return 'Completed';
    case 'failed':
      return `Failed: ${failureText(entry.failureCode, entry.failureMessage)}`;
    default:
      return OUTCOME_TEXT[entry.outcome];
  }
}

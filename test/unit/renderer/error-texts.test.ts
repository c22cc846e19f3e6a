import { describe, expect, it } from 'vitest';
import type { EndReason } from '../../../shared/call-state';
import { GATEWAY_ERROR_TEXT } from '../../../shared/gateway';
import type { ErrorCode } from '../../../shared/result';
import { ERROR_CODES, ERROR_TEXT, endReasonText, errorMessage, failureText, historyOutcomeText, isErrorCode } from '../../../renderer/error-texts';

// Every code of shared/result.ts ErrorCode, spelled out: if the union grows, this list and
// ERROR_TEXT must both learn the new code.
const ALL_CODES: ErrorCode[] = [
  'invalid_input',
  'invalid_phone_number',
  'not_found',
  'invalid_state',
  'no_call_permission',
  'customer_busy',
  'window_closed',
  'gateway_error',
  'gateway_unreachable',
  'timeout',
  'unauthorized',
  'media_failed',
  'not_configured',
  'not_available',
  'answered_elsewhere',
  'needs_confirmation',
  'internal',
];

describe('errorMessage', () => {
  it('has its own sentence for every error code', () => {
    expect([...ERROR_CODES].sort()).toEqual([...ALL_CODES].sort());
    const texts = ALL_CODES.map((code) => ERROR_TEXT[code]);
    for (const text of texts) expect(text).toMatch(/^[A-Z].{10,}[.!]$/);
    expect(new Set(texts).size).toBe(texts.length);
  });

  it('says what 138006 means and what to do about it', () => {
    const byCode = errorMessage({ code: 'no_call_permission', message: '(#138006) Business initiated call permission not granted' });
    expect(byCode).toContain('The customer has not allowed business calls');
    expect(byCode).toMatch(/call-permission request/);
    expect(errorMessage({ code: 'gateway_error', message: 'whatever', gatewayCode: 138006 })).toBe(byCode);
  });

  it('uses the text of known gateway codes and keeps the message of unknown ones', () => {
    expect(errorMessage({ code: 'gateway_error', message: 'x', gatewayCode: 138005 })).toBe(`${GATEWAY_ERROR_TEXT[138005]}.`);
    expect(errorMessage({ code: 'gateway_error', message: 'Unsupported post request', gatewayCode: 100001 })).toBe(
      'The calling service refused the request. Unsupported post request',
    );
  });

  it('prefers the precise message for field errors, and the fixed text for the rest', () => {
    expect(errorMessage({ code: 'invalid_phone_number', message: 'Phone number: too short' })).toBe('Phone number: too short');
    expect(errorMessage({ code: 'invalid_input', message: '' })).toBe(ERROR_TEXT.invalid_input);
    expect(errorMessage({ code: 'unauthorized', message: 'HTTP 401' })).toBe(ERROR_TEXT.unauthorized);
    expect(errorMessage({ code: 'gateway_unreachable', message: 'ECONNREFUSED' })).toBe(ERROR_TEXT.gateway_unreachable);
  });

  it('copes with a code it does not know', () => {
    expect(isErrorCode('teapot')).toBe(false);
    expect(errorMessage({ code: 'teapot' as ErrorCode, message: 'I am a teapot' })).toBe('I am a teapot');
    expect(errorMessage({ code: 'teapot' as ErrorCode, message: '' })).toBe(ERROR_TEXT.internal);
  });
});

describe('endReasonText', () => {
  const cases: [EndReason, string][] = [
    [{ kind: 'completed', by: 'agent' }, 'Call ended'],
    [{ kind: 'completed', by: 'customer' }, 'Call ended by the customer'],
    [{ kind: 'declined' }, 'Declined'],
    [{ kind: 'missed' }, 'Missed'],
    [{ kind: 'cancelled' }, 'Cancelled'],
    [{ kind: 'no_answer' }, 'No answer'],
    [{ kind: 'rejected' }, 'Customer declined'],
    [{ kind: 'answered_elsewhere' }, 'Answered by another agent'],
    [{ kind: 'failed', code: 'media_failed', message: 'No network path to the customer (ICE failed).' }, 'Failed: No network path to the customer (ICE failed).'],
    [{ kind: 'failed', code: '138021', message: 'Media receive timeout' }, `Failed: ${GATEWAY_ERROR_TEXT[138021]}`],
    [{ kind: 'failed', code: 'FAILED', message: 'The call failed' }, 'Failed: The call failed'],
  ];
  it.each(cases)('%j → %s', (end, text) => {
    expect(endReasonText(end)).toBe(text);
  });

  it('explains a call that failed for lack of permission, by gateway code or by app code', () => {
    expect(endReasonText({ kind: 'failed', code: '138006', message: 'x' })).toMatch(/^Failed: The customer has not allowed business calls/);
    expect(endReasonText({ kind: 'failed', code: 'no_call_permission', message: 'x' })).toMatch(/^Failed: The customer has not allowed business calls/);
  });
});

describe('historyOutcomeText', () => {
  it('words every outcome of the recent-calls list', () => {
    expect(historyOutcomeText({ outcome: 'completed' })).toBe('Completed');
    expect(historyOutcomeText({ outcome: 'missed' })).toBe('Missed');
    expect(historyOutcomeText({ outcome: 'rejected' })).toBe('Customer declined');
    expect(historyOutcomeText({ outcome: 'failed', failureCode: '138003', failureMessage: 'busy' })).toBe(`Failed: ${GATEWAY_ERROR_TEXT[138003]}`);
    expect(historyOutcomeText({ outcome: 'failed' })).toBe('Failed: The call failed');
  });

  it('falls back to the message for codes it has no words for', () => {
    expect(failureText('999999', 'Something odd')).toBe('Something odd');
    expect(failureText(undefined, '  ')).toBe('The call failed');
  });
});

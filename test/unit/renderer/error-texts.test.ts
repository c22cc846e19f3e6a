import { afterEach, describe, expect, it } from 'vitest';
import type { EndReason } from '../../../shared/call-state';
import { GATEWAY_ERROR_TEXT } from '../../../shared/gateway';
import { MESSAGE_ERROR_TEXT } from '../../../shared/messages';
import type { ErrorCode } from '../../../shared/result';
import english from '../../../shared/i18n/locales/en/errors.json';
import { fieldRule, term, text } from '../../../shared/i18n/text';
import { ERROR_CODES, endReasonText, errorCodeText, errorMessage, failureText, historyOutcomeText, isErrorCode, messageErrorText, messageFailureText } from '../../../renderer/error-texts';
import { setUiLanguage } from '../../../renderer/i18n/i18n';

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
    const texts = ALL_CODES.map((code) => errorCodeText(code));
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
    expect(errorMessage({ code: 'invalid_input', message: '' })).toBe(errorCodeText('invalid_input'));
    expect(errorMessage({ code: 'unauthorized', message: 'HTTP 401' })).toBe('The calling service refused the API key. Check it in Settings.');
    expect(errorMessage({ code: 'gateway_unreachable', message: 'ECONNREFUSED' })).toBe(errorCodeText('gateway_unreachable'));
  });

  it('copes with a code it does not know', () => {
    expect(isErrorCode('teapot')).toBe(false);
    expect(errorMessage({ code: 'teapot' as ErrorCode, message: 'I am a teapot' })).toBe('I am a teapot');
    expect(errorMessage({ code: 'teapot' as ErrorCode, message: '' })).toBe(errorCodeText('internal'));
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

describe('the gateway’s codes', () => {
  it('are worded in English exactly as the main process words them (shared/gateway.ts, shared/messages.ts)', () => {
    const asStrings = (table: Readonly<Record<number, string>>) => Object.fromEntries(Object.entries(table).map(([code, text]) => [String(code), text]));
    expect(english.gateway).toEqual(asStrings(GATEWAY_ERROR_TEXT));
    expect(english.message).toEqual(asStrings(MESSAGE_ERROR_TEXT));
  });

  it('of a message send have their own words, of a call theirs', () => {
    expect(messageErrorText({ code: 'gateway_error', message: 'x', gatewayCode: 131053 })).toBe(`${MESSAGE_ERROR_TEXT[131053]}.`);
    expect(messageErrorText({ code: 'gateway_error', message: 'Bad things' })).toBe('The gateway refused the message: Bad things');
    expect(messageErrorText({ code: 'gateway_error', message: '' })).toBe('The gateway refused the message.');
  });
});

describe('in the agent’s language', () => {
  afterEach(async () => {
    await setUiLanguage('en', undefined);
  });

  it('words codes, gateway codes and outcomes in Spanish, the main process’s rules in Spanish and any other detail as it came', async () => {
    await setUiLanguage('es', undefined);
    expect(errorMessage({ code: 'timeout', message: 'HTTP timeout' })).toBe('El servicio de llamadas no respondió a tiempo. Vuelve a intentarlo.');
    expect(errorMessage({ code: 'gateway_error', message: 'x', gatewayCode: 138005 })).toBe('Demasiadas llamadas en poco tiempo: vuelve a intentarlo más tarde.');
    expect(errorMessage({ code: 'gateway_error', message: 'Unsupported post request', gatewayCode: 100001 })).toBe(
      'El servicio de llamadas rechazó la solicitud. Unsupported post request',
    );
    // The main process's rules carry their codes and values; its other words come as they are.
    const short = fieldRule(term('phoneNumber'), text('phone.tooShort'));
    expect(errorMessage({ code: 'invalid_phone_number', message: 'Phone number: too short', text: short })).toBe('Número de teléfono: demasiado corto');
    expect(errorMessage({ code: 'invalid_input', message: 'gatewayUrl: is required', text: fieldRule('gatewayUrl', text('common.required')) })).toBe('gatewayUrl: es obligatorio');
    expect(errorMessage({ code: 'invalid_input', message: 'The relay refused the agent token' })).toBe('The relay refused the agent token');
    expect(errorMessage({ code: 'invalid_phone_number', message: 'Phone number: too short' })).toBe('Phone number: too short');
    expect(endReasonText({ kind: 'failed', code: '138006', message: 'x' })).toMatch(/^Falló: El cliente no ha permitido las llamadas de empresas\./);
    expect(endReasonText({ kind: 'completed', by: 'customer' })).toBe('El cliente finalizó la llamada');
    expect(historyOutcomeText({ outcome: 'failed' })).toBe('Falló: La llamada falló');
    expect(messageErrorText({ code: 'window_closed', message: '', gatewayCode: 131047 })).toMatch(/^La ventana de conversación de 24 horas está cerrada: el cliente/);
  });

  it('words why a sent message failed: the catalogue’s words and the app’s words for a code in Spanish, the gateway’s own as they came', async () => {
    await setUiLanguage('es', undefined);
    expect(messageFailureText({ message: 'The message could not be delivered', text: text('messaging.notDelivered') })).toBe('No se pudo entregar el mensaje');
    expect(messageFailureText({ code: 131026, message: MESSAGE_ERROR_TEXT[131026]! })).toBe('No se pudo entregar el mensaje a este cliente');
    expect(messageFailureText({ code: 131026, message: 'Receiver is incapable of receiving this message' })).toBe('Receiver is incapable of receiving this message');
    expect(messageFailureText({ code: 999_999, message: 'Something else' })).toBe('Something else');
  });

  it('ends a gateway code’s words as the language ends a sentence', async () => {
    await setUiLanguage('hi', undefined);
    expect(errorMessage({ code: 'gateway_error', message: 'x', gatewayCode: 138004 })).toBe('कॉल कनेक्ट नहीं हो सकी।');
    await setUiLanguage('ar', undefined);
    expect(historyOutcomeText({ outcome: 'missed' })).toBe('فائتة');
  });

  it('follows a change of language at the next call, with nothing cached', async () => {
    expect(errorCodeText('media_failed')).toBe('The audio connection failed.');
    await setUiLanguage('pt-BR', undefined);
    expect(errorCodeText('media_failed')).toBe('A conexão de áudio falhou.');
    await setUiLanguage('id', undefined);
    expect(errorCodeText('media_failed')).toBe('Koneksi audio gagal.');
  });
});

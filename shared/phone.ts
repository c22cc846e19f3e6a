// Phone numbers in the gateway's form: digits with country code, no "+" (gateway-spec.md 2.1).
import { parsePhoneNumberFromString, validatePhoneNumberLength, type CountryCode } from 'libphonenumber-js/max';
import { GATEWAY_NUMBER } from './gateway';
import type { RuleId } from './i18n/rules';
import { english, fieldRule, term, text, type RuleText, type TextValue } from './i18n/text';
import { ok, type Result } from './result';
import { fieldError } from './validation';

/** "Phone number: too short": the dialer shows the field's name with the rule. */
export const phoneNumberRefused = <T = never>(rule: TextValue): Result<T> => fieldError('invalid_phone_number', 'to', rule, { label: term('phoneNumber') });
const refused = (id: RuleId) => phoneNumberRefused(text(id));

/**
 * A number that can be dialled: its gateway digits, and whether the numbering-plan metadata lists it
 * as valid. The metadata lags behind real number plans, so a number of the right length that it does
 * not list (`verified: false`) may still be real: the agent may call it anyway, and the gateway judges.
 */
export interface CheckedPhoneNumber {
  digits: string;
  verified: boolean;
}

/** Accepts what people type: "+44 20 7946 0958", "0044 20…", "(020) 7946 0958" with a default country. */
export function checkPhoneNumber(input: string, defaultCountry?: string): Result<CheckedPhoneNumber> {
  const raw = input.trim();
  if (raw === '') return refused('phone.enterNumber');
  if (!/^[+0-9()\-.\s/]+$/.test(raw)) {
    return refused('phone.characters');
  }
  const international = raw.startsWith('00') ? `+${raw.slice(2)}` : raw;
  const country = defaultCountry as CountryCode | undefined;
  if (!international.startsWith('+') && !country) {
    return refused('phone.startWithPlus');
  }
  const lengthProblem = validatePhoneNumberLength(international, country);
  if (lengthProblem === 'TOO_SHORT' || lengthProblem === 'NOT_A_NUMBER') {
    return refused('phone.tooShort');
  }
  if (lengthProblem === 'TOO_LONG') return refused('phone.tooLong');
  if (lengthProblem === 'INVALID_COUNTRY') return refused('phone.unknownCountry');
  const parsed = parsePhoneNumberFromString(international, country);
  const digits = parsed?.number.slice(1) ?? '';
  // Some plans list very short numbers as valid (+49 1680, +49 100): the gateway takes 7 to 15 digits
  // whatever the plan says.
  if (parsed && !GATEWAY_NUMBER.test(digits)) {
    return refused('phone.notValid');
  }
  if (parsed?.isValid()) return ok({ digits, verified: true });
  if (!parsed || !parsed.isPossible()) {
    return refused('phone.notValid');
  }
  return ok({ digits, verified: false });
}

/** Only numbers the metadata lists as valid: for messages, templates and links, where nobody is asked. */
export function normalisePhoneNumber(input: string, defaultCountry?: string): Result<string> {
  const checked = checkPhoneNumber(input, defaultCountry);
  if (!checked.ok) return checked;
  if (!checked.value.verified) return refused('phone.notValid');
  return ok(checked.value.digits);
}

/** Why a number of the right length is not called without the agent's word (the dialer and main say the same). */
export const unverifiedNumber = (digits: string): RuleText => fieldRule(term('phoneNumber'), text('phone.unverified', { number: formatPhoneNumber(digits) }));

/** The same in English. */
export const unverifiedNumberText = (digits: string): string => english(unverifiedNumber(digits));

/** The same as the error main answers a call to such a number with, unless the agent said "Call anyway". */
export const unverifiedNumberError = <T = never>(digits: string): Result<T> => phoneNumberRefused(text('phone.unverified', { number: formatPhoneNumber(digits) }));

/** A customer called from this number: it can always be called back, whatever the metadata says. */
export function isCallerNumber(digits: string, calls: Iterable<{ direction: 'incoming' | 'outgoing'; number?: string | undefined }>): boolean {
  for (const call of calls) if (call.direction === 'incoming' && call.number === digits) return true;
  return false;
}

/** "+44 20 7946 0958" for display; the digits themselves when they do not parse. */
export function formatPhoneNumber(digits: string): string {
  const parsed = parsePhoneNumberFromString(`+${digits}`);
  return parsed ? parsed.formatInternational() : digits;
}

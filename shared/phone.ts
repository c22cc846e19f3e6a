// Phone numbers in the gateway's form: digits with country code, no "+" (gateway-spec.md 2.1).
import { parsePhoneNumberFromString, validatePhoneNumberLength, type CountryCode } from 'libphonenumber-js/max';
import { err, ok, type Result } from './result';

const FIELD = 'Phone number';

/** Accepts what people type: "+44 20 7946 0958", "0044 20…", "(020) 7946 0958" with a default country. */
export function normalisePhoneNumber(input: string, defaultCountry?: string): Result<string> {
  const raw = input.trim();
  if (raw === '') return err('invalid_phone_number', `${FIELD}: enter a number`, { field: 'to' });
  if (!/^[+0-9()\-.\s/]+$/.test(raw)) {
    return err('invalid_phone_number', `${FIELD}: only digits, spaces, "+", "-", "." and brackets are allowed`, { field: 'to' });
  }
  const international = raw.startsWith('00') ? `+${raw.slice(2)}` : raw;
  const country = defaultCountry as CountryCode | undefined;
  if (!international.startsWith('+') && !country) {
    return err('invalid_phone_number', `${FIELD}: start with "+" and the country code, e.g. +44 20 7946 0958`, { field: 'to' });
  }
  const lengthProblem = validatePhoneNumberLength(international, country);
  if (lengthProblem === 'TOO_SHORT' || lengthProblem === 'NOT_A_NUMBER') {
    return err('invalid_phone_number', `${FIELD}: too short`, { field: 'to' });
  }
  if (lengthProblem === 'TOO_LONG') return err('invalid_phone_number', `${FIELD}: too long`, { field: 'to' });
  if (lengthProblem === 'INVALID_COUNTRY') return err('invalid_phone_number', `${FIELD}: unknown country code`, { field: 'to' });
  const parsed = parsePhoneNumberFromString(international, country);
  if (!parsed || !parsed.isValid()) {
    return err('invalid_phone_number', `${FIELD}: not a valid number for its country`, { field: 'to' });
  }
  return ok(parsed.number.slice(1));
}

/** "+44 20 7946 0958" for display; the digits themselves when they do not parse. */
export function formatPhoneNumber(digits: string): string {
  const parsed = parsePhoneNumberFromString(`+${digits}`);
  return parsed ? parsed.formatInternational() : digits;
}

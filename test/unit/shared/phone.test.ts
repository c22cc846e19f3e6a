import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { GATEWAY_NUMBER } from '../../../shared/gateway';
import { checkPhoneNumber, formatPhoneNumber, isCallerNumber, normalisePhoneNumber, unverifiedNumberText } from '../../../shared/phone';

describe('normalisePhoneNumber: what people type becomes the gateway form', () => {
  it.each([
    // international, as written in the UK, the US and elsewhere
    ['+44 20 7946 0958', undefined, '442079460958'],
    ['+442079460958', undefined, '442079460958'],
    ['+44 (0) 20 7946 0958', undefined, '442079460958'], // the UK habit of a bracketed trunk 0
    ['+44 7911 123456', undefined, '447911123456'],
    ['+44.20.7946.0958', undefined, '442079460958'],
    ['+44/20/7946/0958', undefined, '442079460958'],
    ['  +44 20 7946 0958  ', undefined, '442079460958'],
    ['+1 (202) 555-0143', undefined, '12025550143'],
    ['+1 202-555-0143', undefined, '12025550143'],
    ['+1 800 555 0199', undefined, '18005550199'],
    ['+49 30 901820', undefined, '4930901820'],
    ['+33 1 42 68 53 00', undefined, '33142685300'],
    ['+91 98765 43210', undefined, '919876543210'],
    ['+61 2 9374 4000', undefined, '61293744000'],
    // the 00 international prefix
    ['0044 20 7946 0958', undefined, '442079460958'],
    ['00 1 202 555 0143', undefined, '12025550143'],
    // national formats with the account's default country
    ['020 7946 0958', 'GB', '442079460958'],
    ['(020) 7946 0958', 'GB', '442079460958'],
    ['07911 123456', 'GB', '447911123456'],
    ['(202) 555-0143', 'US', '12025550143'],
    ['202-555-0143', 'US', '12025550143'],
    ['011 44 20 7946 0958', 'US', '442079460958'], // the US international prefix
    // an international number ignores the default country
    ['+44 20 7946 0958', 'US', '442079460958'],
    ['0044 20 7946 0958', 'US', '442079460958'],
  ] as [string, string | undefined, string][])('%j (default %s) → %s', (input, country, expected) => {
    const result = normalisePhoneNumber(input, country);
    expect(result).toEqual({ ok: true, value: expected });
    expect(GATEWAY_NUMBER.test(expected)).toBe(true);
  });
});

describe('normalisePhoneNumber: refusals name the field "to" and say what is wrong', () => {
  it.each([
    ['', undefined, 'enter a number'],
    ['   ', undefined, 'enter a number'],
    ['1-800-FLOWERS', undefined, 'only digits, spaces, "+", "-", "." and brackets are allowed'],
    ['+44 20 7946 095A', undefined, 'only digits'],
    ['tel:+442079460958', undefined, 'only digits'],
    ['+44 20 7946 0958 ext. 12', undefined, 'only digits'],
    ['020 7946 0958', undefined, 'start with "+" and the country code'], // national without a default country
    ['(202) 555-0143', undefined, 'start with "+" and the country code'],
    ['+44 20', undefined, 'too short'],
    ['+', undefined, 'too short'],
    ['12', 'US', 'too short'],
    ['1680', 'DE', 'not a valid number for its country'], // the plan lists +49 1680; the gateway takes 7 to 15 digits
    ['+49 1680', undefined, 'not a valid number for its country'],
    ['+44 20 7946 0958 1234 5678', undefined, 'too long'],
    ['+1 202 555 0143 0143 0143', undefined, 'too long'],
    ['+999 1234567', undefined, 'unknown country code'],
    ['+0 123 456 789', undefined, 'unknown country code'],
    ['020 7946 0958', 'ZZ', 'unknown country code'], // a default country nobody has
    ['+1 202 055 0143', undefined, 'not a valid number for its country'], // US area codes never start with 0
  ] as [string, string | undefined, string][])('%j (default %s): %s', (input, country, rule) => {
    const result = normalisePhoneNumber(input, country);
    expect(result.ok).toBe(false);
    if (!result.ok) {
      expect(result.error.code).toBe('invalid_phone_number');
      expect(result.error.field).toBe('to');
      expect(result.error.message).toMatch(/^Phone number: /);
      expect(result.error.message).toContain(rule);
    }
  });

  it('never throws, and what it accepts is always in the gateway form and stable', () => {
    const typed = fc.stringMatching(/^[+0-9()\-. /a-z]{0,24}$/);
    const country = fc.constantFrom(undefined, 'GB', 'US', 'DE', 'IN', 'ZZ', '');
    fc.assert(
      fc.property(fc.oneof(typed, fc.string({ maxLength: 30 })), country, (input, c) => {
        const result = normalisePhoneNumber(input, c);
        if (result.ok) {
          expect(result.value).toMatch(GATEWAY_NUMBER);
          // Normalising the result again changes nothing.
          expect(normalisePhoneNumber(`+${result.value}`)).toEqual(result);
        } else {
          expect(result.error.field).toBe('to');
        }
      }),
      { numRuns: 2_000 },
    );
  });
});

describe('formatPhoneNumber', () => {
  it.each([
    ['442079460958', '+44 20 7946 0958'],
    ['447911123456', '+44 7911 123456'],
    ['12025550143', '+1 202 555 0143'],
    ['33142685300', '+33 1 42 68 53 00'],
  ])('%s → %s', (digits, shown) => {
    expect(formatPhoneNumber(digits)).toBe(shown);
  });

  it.each(['12', 'abc', '', '999123456'])('shows %j as it is when it does not parse', (digits) => {
    expect(formatPhoneNumber(digits)).toBe(digits);
  });

  it('formats what normalisePhoneNumber produced back into the international form', () => {
    const result = normalisePhoneNumber('(020) 7946 0958', 'GB');
    expect(result.ok && formatPhoneNumber(result.value)).toBe('+44 20 7946 0958');
  });
});

// London's 020 5 range is not allocated: the metadata knows its length but lists no number in it.
const UNLISTED_LONDON = '+44 20 5946 0958';

describe('checkPhoneNumber: possible but not listed is not the same as invalid', () => {
  it.each([
    ['+44 20 7946 0958', undefined, '442079460958'],
    ['020 7946 0958', 'GB', '442079460958'],
    ['(202) 555-0143', 'US', '12025550143'],
  ] as [string, string | undefined, string][])('%j (default %s) is verified: %s', (input, country, digits) => {
    expect(checkPhoneNumber(input, country)).toEqual({ ok: true, value: { digits, verified: true } });
  });

  it.each([
    [UNLISTED_LONDON, undefined, '442059460958'],
    ['020 5946 0958', 'GB', '442059460958'],
    ['0044 20 5946 0958', 'US', '442059460958'],
    ['+44 1999 123456', undefined, '441999123456'],
    ['+1 202 055 0143', undefined, '12020550143'],
  ] as [string, string | undefined, string][])('%j (default %s) is possible but not verified: %s', (input, country, digits) => {
    expect(checkPhoneNumber(input, country)).toEqual({ ok: true, value: { digits, verified: false } });
  });

  it('refuses a number its plan allows but the gateway cannot take (fewer than 7 digits)', () => {
    const short = checkPhoneNumber('0100', 'DE');
    expect(short).toMatchObject({ ok: false, error: { code: 'invalid_phone_number', field: 'to', message: 'Phone number: not a valid number for its country' } });
  });

  it('normalisePhoneNumber still refuses what checkPhoneNumber leaves unverified, with the same rule as before', () => {
    const refused = normalisePhoneNumber(UNLISTED_LONDON);
    expect(refused).toEqual({
      ok: false,
      error: {
        code: 'invalid_phone_number',
        message: 'Phone number: not a valid number for its country',
        field: 'to',
        text: { code: 'common.fieldRule', values: { field: { term: 'phoneNumber' }, rule: { code: 'phone.notValid' } } },
        issues: [{ field: 'to', text: { code: 'phone.notValid' } }],
      },
    });
  });

  it.each([
    ['', 'enter a number'],
    ['+44 20 5946 095A', 'only digits'],
    ['020 5946 0958', 'start with "+" and the country code'],
    ['+44 20 5946', 'too short'],
    ['+44 20 5946 0958 1234 5678', 'too long'],
    ['+999 1234567', 'unknown country code'],
  ])('%j is refused outright, naming the field and the rule: %s', (input, rule) => {
    const result = checkPhoneNumber(input);
    expect(result.ok).toBe(false);
    if (!result.ok) {
      expect(result.error).toMatchObject({ code: 'invalid_phone_number', field: 'to' });
      expect(result.error.message).toMatch(/^Phone number: /);
      expect(result.error.message).toContain(rule);
    }
  });

  it('agrees with normalisePhoneNumber on every number it verifies, and never throws', () => {
    const typed = fc.stringMatching(/^[+0-9()\-. /]{0,24}$/);
    const country = fc.constantFrom(undefined, 'GB', 'US', 'DE', 'ZZ');
    fc.assert(
      fc.property(typed, country, (input, c) => {
        const checked = checkPhoneNumber(input, c);
        const normalised = normalisePhoneNumber(input, c);
        if (checked.ok && checked.value.verified) expect(normalised).toEqual({ ok: true, value: checked.value.digits });
        else expect(normalised.ok).toBe(false);
        if (!checked.ok) expect(normalised).toEqual(checked);
        if (checked.ok) expect(checked.value.digits).toMatch(GATEWAY_NUMBER);
      }),
      { numRuns: 2_000 },
    );
  });

  it('the warning names the number as people read it and says it can be called anyway', () => {
    expect(unverifiedNumberText('442059460958')).toBe('Phone number: +44 20 5946 0958 is not listed as a valid number for its country. Check it, or call anyway.');
  });
});

describe('isCallerNumber: a number a customer called from', () => {
  const calls = [
    { direction: 'outgoing' as const, number: '442059460958' },
    { direction: 'incoming' as const },
    { direction: 'incoming' as const, number: '441999123456' },
  ];
  it('is one an incoming call came from', () => {
    expect(isCallerNumber('441999123456', calls)).toBe(true);
  });
  it('is not one the agent only called, nor one never seen', () => {
    expect(isCallerNumber('442059460958', calls)).toBe(false);
    expect(isCallerNumber('12020550143', calls)).toBe(false);
    expect(isCallerNumber('441999123456', [])).toBe(false);
  });
});

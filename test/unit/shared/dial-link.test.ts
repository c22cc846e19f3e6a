import { describe, expect, it } from 'vitest';
import { numberFromDialLink } from '../../../shared/dial-link';

describe('numberFromDialLink', () => {
  it.each([
    ['tel:+44-20-7946-0958', '442079460958'],
    ['tel:+44%2020%207946%200958', '442079460958'],
    ['callto://+442079460958', '442079460958'],
    ['callto:+44 20 7946 0958', '442079460958'],
    ['TEL:+12025550101;ext=12', '12025550101'],
    ['+44 20 7946 0958', '442079460958'],
  ])('%s → %s', (link, digits) => {
    expect(numberFromDialLink(link)).toEqual({ ok: true, value: { digits, verified: true } });
  });

  it('uses the default country for a national number', () => {
    expect(numberFromDialLink('tel:020%207946%200958', 'GB')).toEqual({ ok: true, value: { digits: '442079460958', verified: true } });
  });

  it('passes on a possible number the numbering plan does not list, marked unverified', () => {
    expect(numberFromDialLink('tel:+442059460958')).toEqual({ ok: true, value: { digits: '442059460958', verified: false } });
  });

  it.each([
    ['', 'the link has no number'],
    ['mailto:someone@example.com', '"mailto:" links are not phone numbers'],
    ['tel:%E0%A4%A', 'not validly encoded'],
    ['tel:+4412', 'too short'],
    ['tel:12', 'start with "+"'],
    ['tel:abc', 'only digits'],
  ])('refuses %j with the reason', (link, reason) => {
    const result = numberFromDialLink(link);
    expect(result).toMatchObject({ ok: false, error: { code: 'invalid_phone_number', field: 'to' } });
    if (!result.ok) expect(result.error.message).toContain(reason);
  });
});

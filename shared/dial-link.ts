// tel: and callto: links (RFC 3966 and the older callto:) and plain numbers, as links and the
// browser host's GET /dial hand them over: the number inside, checked like a typed one.
import { text } from './i18n/text';
import { checkPhoneNumber, phoneNumberRefused, type CheckedPhoneNumber } from './phone';
import type { Result } from './result';

/**
 * "tel:+44-20-7946-0958", "callto://+442079460958", "tel:020%207946%200958" or "+44 20 7946 0958" →
 * gateway digits, and whether the numbering plan lists the number as valid (the dialer warns and
 * offers "Call anyway" when it does not; such a number is never dialled at once).
 */
export function numberFromDialLink(link: string, defaultCountry?: string): Result<CheckedPhoneNumber> {
  const raw = link.trim();
  if (raw === '') return phoneNumberRefused(text('phone.linkNoNumber'));
  if (raw.length > 512) return phoneNumberRefused(text('phone.linkTooLong', { count: 512 }));
  const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(raw)?.[1]?.toLowerCase();
  let number = raw;
  if (scheme !== undefined) {
    if (scheme !== 'tel' && scheme !== 'callto') {
      return phoneNumberRefused(text('phone.linkScheme', { scheme }));
    }
    number = raw.slice(scheme.length + 1).replace(/^\/\//, '');
    try {
      number = decodeURIComponent(number);
    } catch {
      return phoneNumberRefused(text('phone.linkEncoding'));
    }
    // RFC 3966 parameters (";ext=", ";phone-context=") and a query are not part of the number.
    number = number.split(/[;?]/)[0] ?? '';
  }
  return checkPhoneNumber(number, defaultCountry);
}

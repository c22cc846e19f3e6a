// Numbers, clocks, durations, dates and times, through Intl in the UI's language. Every function
// takes the locale last (intlLocale() of the current language by default), so tests can pin one.
import { intlLocale } from './i18n';

const cache = new Map<string, Intl.NumberFormat | Intl.DateTimeFormat>();
function numberFormat(locale: string, options: Intl.NumberFormatOptions): Intl.NumberFormat {
  const key = `n|${locale}|${JSON.stringify(options)}`;
  let f = cache.get(key) as Intl.NumberFormat | undefined;
  if (!f) cache.set(key, (f = new Intl.NumberFormat(locale, options)));
  return f;
}
function dateFormat(locale: string, options: Intl.DateTimeFormatOptions): Intl.DateTimeFormat {
  const key = `d|${locale}|${JSON.stringify(options)}`;
  let f = cache.get(key) as Intl.DateTimeFormat | undefined;
  if (!f) cache.set(key, (f = new Intl.DateTimeFormat(locale, options)));
  return f;
}

/**
 * Unicode's left-to-right isolate marks, for plain text with no element to carry dir="ltr" (the
 * tab's title): a number or a clock keeps its order inside right-to-left text.
 */
const LTR_ISOLATE = '\u2066';
const POP_ISOLATE = '\u2069';
export const isolateLtr = (text: string): string => `${LTR_ISOLATE}${text}${POP_ISOLATE}`;

export const formatNumber = (value: number, options: Intl.NumberFormatOptions = {}, locale = intlLocale()): string => numberFormat(locale, options).format(value);

/** 0:07 → "00:07"; an hour and more → "1:02:03". On screen it goes in an <Ltr> (components/Ltr.tsx). */
export function formatClock(totalSeconds: number, locale = intlLocale()): string {
  const s = Math.max(0, Math.floor(totalSeconds));
  const hours = Math.floor(s / 3600);
  const two = numberFormat(locale, { minimumIntegerDigits: 2, useGrouping: false });
  const mm = two.format(Math.floor((s % 3600) / 60));
  const ss = two.format(s % 60);
  return hours > 0 ? `${numberFormat(locale, { useGrouping: false }).format(hours)}:${mm}:${ss}` : `${mm}:${ss}`;
}

/** A countdown or a span in words: "29 s", "2 min 5 s", "1 h 3 min" (Intl's unit names, narrow to short). */
export function formatDuration(totalSeconds: number, locale = intlLocale()): string {
  const s = Math.max(0, Math.round(totalSeconds));
  const unit = (value: number, u: 'hour' | 'minute' | 'second') => numberFormat(locale, { style: 'unit', unit: u, unitDisplay: 'short' }).format(value);
  const hours = Math.floor(s / 3600);
  const minutes = Math.floor((s % 3600) / 60);
  const seconds = s % 60;
  const parts: string[] = [];
  if (hours > 0) parts.push(unit(hours, 'hour'));
  if (minutes > 0) parts.push(unit(minutes, 'minute'));
  if (hours === 0 && (seconds > 0 || parts.length === 0)) parts.push(unit(seconds, 'second'));
  return parts.join(' ');
}

/** "6 %" in the language's way of writing a percentage (value in percent, not a fraction). */
export const formatPercent = (percent: number, maximumFractionDigits = 0, locale = intlLocale()): string =>
  numberFormat(locale, { style: 'percent', maximumFractionDigits }).format(percent / 100);

/** The time of day: "14:05" or "2:05 PM", as the language writes it. */
export const formatTime = (at: number, locale = intlLocale()): string => dateFormat(locale, { hour: '2-digit', minute: '2-digit' }).format(at);

/** "14:05" today, "Mon 14:05" this week, "3 Mar 14:05" before. */
export function formatCallTime(at: number, now: number, locale = intlLocale()): string {
  const date = new Date(at);
  const today = new Date(now);
  if (date.toDateString() === today.toDateString()) return formatTime(at, locale);
  const ageDays = (now - at) / 86_400_000;
  if (ageDays >= 0 && ageDays < 6) return dateFormat(locale, { weekday: 'short', hour: '2-digit', minute: '2-digit' }).format(at);
  return dateFormat(locale, { day: 'numeric', month: 'short', hour: '2-digit', minute: '2-digit' }).format(at);
}

/** A full date and time, for a message's or a call's detail. */
export const formatDateTime = (at: number, locale = intlLocale()): string => dateFormat(locale, { dateStyle: 'medium', timeStyle: 'short' }).format(at);

/** "0:27", "12:05": minutes, then two-digit seconds (an hour and more counts in minutes). */
export function formatMinutesSeconds(totalSeconds: number, locale = intlLocale()): string {
  const s = Math.max(0, Math.floor(totalSeconds));
  return `${formatNumber(Math.floor(s / 60), { useGrouping: false }, locale)}:${formatNumber(s % 60, { minimumIntegerDigits: 2, useGrouping: false }, locale)}`;
}

/** The time of day in a named time zone, on a 24-hour clock ("00:00" at midnight); the UTC time when the zone is not one Intl knows. */
export function formatTimeIn(at: number, timeZone: string, locale = intlLocale()): string {
  const options: Intl.DateTimeFormatOptions = { hour: '2-digit', minute: '2-digit', hourCycle: 'h23' };
  try {
    return dateFormat(locale, { ...options, timeZone }).format(at);
  } catch {
    return dateFormat(locale, { ...options, timeZone: 'UTC' }).format(at);
  }
}

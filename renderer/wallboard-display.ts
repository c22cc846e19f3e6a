// How the Team view's wallboard reads (shared/wallboard.ts): an agent's state in words, the agents in
// the order they are listed, the clocks and figures in the language's numbers, and how long a
// callback request has left.
import { callbackTimeLeftMs, type CallbackRequest } from '../shared/callbacks';
import { assertNever } from '../shared/result';
import type { BoardAgent } from './bridge/payload-schemas';
import { formatMinutesSeconds, formatNumber, formatPercent, formatTimeIn } from './i18n/format';
import { intlLocale, t } from './i18n/i18n';

/** What a tile or a cell shows when there is nothing to count. */
export const NO_FIGURE = '—';

/** "Available", "On a call", "Break — Lunch", …; nothing for a state this window does not know. */
export function agentStateText(agent: Pick<BoardAgent, 'presence' | 'reason'>): string {
  switch (agent.presence) {
    case 'available':
      return t('common:presence.available');
    case 'on_call':
      return t('common:presence.onCall');
    case 'dnd':
      return t('common:presence.dnd');
    case 'break':
      return agent.reason ? t('common:presence.break', { reason: agent.reason }) : t('common:presence.breakNoReason');
    case 'after_call_work':
      return t('common:presence.afterCallWork');
    case 'offline':
      return t('common:presence.offline');
    case 'unknown':
      return NO_FIGURE;
    default:
      return assertNever(agent.presence, 'wallboard state');
  }
}

/** By name as the language sorts it; the same name by agent id, so the rows never swap between reads. */
export function sortedAgents(agents: readonly BoardAgent[], locale: string = intlLocale()): BoardAgent[] {
  const collator = new Intl.Collator(locale, { sensitivity: 'base', numeric: true });
  return [...agents].sort((a, b) => collator.compare(a.name, b.name) || (a.agentId < b.agentId ? -1 : a.agentId > b.agentId ? 1 : 0));
}

/** A span on the wallboard: "0:07", "12:05" (m:ss), from an hour "1:02:03". */
export function elapsedText(ms: number, locale: string = intlLocale()): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  if (s < 3600) return formatMinutesSeconds(s, locale);
  const two = (n: number) => formatNumber(n, { minimumIntegerDigits: 2, useGrouping: false }, locale);
  return `${formatNumber(Math.floor(s / 3600), { useGrouping: false }, locale)}:${two(Math.floor((s % 3600) / 60))}:${two(s % 60)}`;
}

/** "92%": a ratio of 0..1 as a whole percent. */
export const ratioText = (ratio: number, locale: string = intlLocale()): string => formatPercent(ratio * 100, 0, locale);

/** The epoch: midnight on the UTC clock. */
const A_MIDNIGHT = 0;

/**
 * "Today since 00:00 Europe/London": where the day's figures start, on the team's clock. Before a
 * board has said when the team's day began (`dayStartedAt`), midnight as the language writes it.
 */
export function todayText(timezone: string, dayStartedAt: number | undefined, locale: string = intlLocale()): string {
  const time = dayStartedAt === undefined ? formatTimeIn(A_MIDNIGHT, 'UTC', locale) : formatTimeIn(dayStartedAt, timezone, locale);
  return t('common:team.today', { time, timezone });
}

/** A count in the language's digits. */
export const countText = (n: number, locale: string = intlLocale()): string => formatNumber(n, {}, locale);

const MINUTE_MS = 60_000;
const HOUR_MS = 60 * MINUTE_MS;
const DAY_MS = 24 * HOUR_MS;

/**
 * A callback request's time left, counted down to the minute: "6 days 23 h left", "5 h 12 min left",
 * "12 min left"; "Permanent" for a permanent permission; "Expired" once it has run out (the relay
 * drops it at its next read).
 */
export function callbackTimeLeftText(request: Pick<CallbackRequest, 'expiresAt' | 'permanent'>, now: number, locale: string = intlLocale()): string {
  const left = callbackTimeLeftMs(request, now);
  if (left === undefined) return t('common:team.permanent');
  if (left <= 0) return t('common:team.expired');
  const n = (value: number) => formatNumber(value, {}, locale);
  const days = Math.floor(left / DAY_MS);
  const hours = Math.floor((left % DAY_MS) / HOUR_MS);
  const minutes = Math.floor((left % HOUR_MS) / MINUTE_MS);
  if (days > 0) return t('common:team.leftDays', { count: days, days: n(days), hours: n(hours) });
  if (hours > 0) return t('common:team.leftHours', { hours: n(hours), minutes: n(minutes) });
  // The last minute still counts as one: "0 min left" would read as gone.
  return t('common:team.leftMinutes', { minutes: n(Math.max(1, minutes)) });
}

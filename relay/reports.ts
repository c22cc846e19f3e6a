// The team's reports (relay/REFERENCE.md "Reports"): every call, and every agent state, between two
// days of the team's calendar, as CSV for a spreadsheet. Written a row at a time as the records are
// read a page at a time, with the socket's backpressure respected: a year of calls never sits in
// memory, and a reader that stops reading stops the query.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { TeamSettings } from '../shared/team-settings';
import { sendError } from './http-io';
import type { AgentStateInterval } from './records/agent-states';
import type { CallRecord } from './records/call-record';
import type { SqlRunner } from './records/database';
import { callsBetween, stateIntervals, zonedDayStart } from './records/records-queries';

export const REPORT_PATHS = { calls: '/reports/calls.csv', states: '/reports/states.csv' } as const;
export type ReportKind = keyof typeof REPORT_PATHS;

export const CALLS_CSV_COLUMNS = ['call_id', 'direction', 'customer', 'agent', 'ringing_at', 'answered_at', 'ended_at', 'wait_seconds', 'talk_seconds', 'hold_seconds', 'outcome', 'disposition', 'notes'] as const;
export const STATES_CSV_COLUMNS = ['agent', 'state', 'reason', 'started_at', 'ended_at', 'seconds'] as const;

/** `from` and `to` as the query gives them: calendar days, YYYY-MM-DD. */
const DAY = /^(\d{4})-(\d{2})-(\d{2})$/;

export interface ReportOptions {
  /** The records' database once open; undefined when the relay keeps no records. */
  database: (() => Promise<SqlRunner>) | undefined;
  settings: () => TeamSettings;
  now?: () => number;
}

export type DayRange = { ok: true; from: Date; to: Date } | { ok: false; field: 'from' | 'to'; message: string };

/** A calendar day, checked: 2026-02-30 is no day. */
function dayOf(value: string | null): { year: number; month: number; day: number } | undefined {
  const match = value === null ? null : DAY.exec(value);
  if (match === null) return undefined;
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  const date = new Date(Date.UTC(year, month - 1, day));
  if (date.getUTCFullYear() !== year || date.getUTCMonth() !== month - 1 || date.getUTCDate() !== day) return undefined;
  return { year, month, day };
}

/** `from` and `to`, inclusive days in the team's time zone, as the instants that bound them. */
export function dayRange(params: URLSearchParams, timeZone: string): DayRange {
  const from = dayOf(params.get('from'));
  if (from === undefined) return { ok: false, field: 'from', message: 'from: must be a day as YYYY-MM-DD (e.g. 2026-11-01)' };
  const to = dayOf(params.get('to'));
  if (to === undefined) return { ok: false, field: 'to', message: 'to: must be a day as YYYY-MM-DD (e.g. 2026-11-30)' };
  const start = zonedDayStart(from.year, from.month, from.day, timeZone);
  // The day after `to` starts where the range ends: `to` is inclusive.
  const end = zonedDayStart(to.year, to.month, to.day + 1, timeZone);
  if (end <= start) return { ok: false, field: 'to', message: 'to: must not be before from' };
  return { ok: true, from: start, to: end };
}

/**
 * A CSV field (RFC 4180): quoted when it holds a comma, a quote or a line break. A text the agent
 * typed that a spreadsheet would take for a formula (=, +, -, @ first) starts with an apostrophe.
 */
export function csvField(value: string | number | undefined, typed = false): string {
  if (value === undefined) return '';
  let text = String(value);
  if (typed && /^[=+\-@\t\r]/.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

const iso = (ms: number | undefined): string | undefined => (ms === undefined ? undefined : new Date(ms).toISOString());
const seconds = (ms: number | undefined): string | undefined => (ms === undefined ? undefined : (Math.round(ms / 100) / 10).toString());

/** The agent who had the customer last: the colleague a transfer handed the call to, else the one who answered or placed it. */
export function lastAgentOf(call: CallRecord): string | undefined {
  const handedOn = [...call.transfers].sort((a, b) => a.at - b.at).filter((t) => t.result === 'transferred' && t.answeredBy !== undefined);
  return handedOn.at(-1)?.answeredBy ?? call.agentId;
}

export function callRow(call: CallRecord): string {
  return [
    csvField(call.callId),
    csvField(call.direction),
    csvField(call.customer),
    csvField(lastAgentOf(call)),
    csvField(iso(call.rangAt ?? call.startedAt)),
    csvField(iso(call.answeredAt)),
    csvField(iso(call.endedAt)),
    csvField(seconds(call.waitMs)),
    csvField(seconds(call.talkMs)),
    csvField(seconds(call.holdMs)),
    csvField(call.outcome),
    csvField(call.disposition, true),
    csvField(call.notes, true),
  ].join(',');
}

/** One state interval; one still open runs to `now` in `seconds`, with no `ended_at`. */
export function stateRow(interval: AgentStateInterval, now: number): string {
  return [
    csvField(interval.agentId),
    csvField(interval.state),
    csvField(interval.reason, true),
    csvField(iso(interval.startedAt)),
    csvField(iso(interval.endedAt)),
    csvField(seconds((interval.endedAt ?? now) - interval.startedAt)),
  ].join(',');
}

/** Writes a line, waiting for the socket to drain when its buffer is full. False when the reader went. */
async function writeLine(res: ServerResponse, line: string): Promise<boolean> {
  if (res.destroyed) return false;
  if (res.write(`${line}\r\n`)) return true;
  return new Promise<boolean>((resolve) => {
    const done = (ok: boolean) => {
      res.off('drain', drained);
      res.off('close', closed);
      resolve(ok);
    };
    const drained = () => done(true);
    const closed = () => done(false);
    res.once('drain', drained);
    res.once('close', closed);
  });
}

/** GET /reports/calls.csv or /reports/states.csv for an agent the caller has already found to be a supervisor. */
export async function sendReport(req: IncomingMessage, res: ServerResponse, kind: ReportKind, options: ReportOptions): Promise<void> {
  const url = new URL(req.url ?? '/', 'http://relay');
  const settings = options.settings();
  const range = dayRange(url.searchParams, settings.timezone);
  if (!range.ok) return sendError(res, 400, 'invalid_input', range.message, { field: range.field });
  if (options.database === undefined) return sendError(res, 503, 'unavailable', 'this relay keeps no call records');
  let db: SqlRunner;
  try {
    db = await options.database();
  } catch {
    return sendError(res, 503, 'unavailable', 'the call records cannot be read now: the database does not answer');
  }
  const name = `${kind}-${url.searchParams.get('from')}-to-${url.searchParams.get('to')}.csv`;
  const rows: AsyncGenerator<string> =
    kind === 'calls'
      ? mapRows(callsBetween(db, { from: range.from, to: range.to }), callRow)
      : mapRows(stateIntervals(db, { from: range.from, to: range.to }), (interval) => stateRow(interval, (options.now ?? Date.now)()));
  // The first page is read before the head goes: a database that fails at once still gets a 503.
  let first: IteratorResult<string>;
  try {
    first = await rows.next();
  } catch {
    return sendError(res, 503, 'unavailable', 'the call records cannot be read now: the database does not answer');
  }
  res.writeHead(200, { 'Content-Type': 'text/csv; charset=utf-8', 'Content-Disposition': `attachment; filename="${name}"`, 'Cache-Control': 'no-store' });
  if (!(await writeLine(res, (kind === 'calls' ? CALLS_CSV_COLUMNS : STATES_CSV_COLUMNS).join(',')))) return void rows.return(undefined);
  try {
    for (let next = first; next.done !== true; next = await rows.next()) {
      if (!(await writeLine(res, next.value))) return void rows.return(undefined);
    }
    res.end();
  } catch {
    // Half a report must not pass for a whole one: the reader sees the transfer cut.
    res.destroy();
  }
}

async function* mapRows<T>(items: AsyncGenerator<T>, row: (item: T) => string): AsyncGenerator<string> {
  for await (const item of items) yield row(item);
}

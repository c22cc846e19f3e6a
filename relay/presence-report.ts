// `PUT /presence`'s body (relay/REFERENCE.md "Presence"): a status, a break's reason (one of the
// team's break reasons in force), and the call an after-call work follows. Each broken rule names
// its field, in English and as the rule's text for the app to render in the agent's language.
import { english, fieldRule, list, text, type RuleText } from '../shared/i18n/text';
import type { TeamSettings } from '../shared/team-settings';
import { isRecord } from '../shared/validation';
import { PRESENCES, type Presence, type ReportedPresence } from './backend/types';

export const PRESENCE_RULE = `must be one of ${PRESENCES.join(', ')}`;
/** The longest call id a report may name (as the paths' call ids). */
const CALL_ID_MAX = 512;

/** A broken rule of the body: the field, its message ("field: rule") and the same as a text. */
export interface PresenceReportProblem {
  field: 'status' | 'reason' | 'callId';
  message: string;
  text?: RuleText;
}

export type PresenceReportParse = { ok: true; value: ReportedPresence } | { ok: false; problem: PresenceReportProblem };

const isPresence = (value: unknown): value is Presence => typeof value === 'string' && (PRESENCES as readonly string[]).includes(value);

function ruleProblem(field: 'reason', rule: RuleText): PresenceReportParse {
  const whole = fieldRule(field, rule);
  return { ok: false, problem: { field, message: english(whole), text: whole } };
}

/**
 * The report a body makes, against the team's settings in force. The state's reason is a break's
 * reason, or for `after_call_work` its `callId` when given; a `callId` with any other status is
 * ignored, a `reason` refused.
 */
export function parsePresenceReport(json: unknown, settings: Pick<TeamSettings, 'breakReasons'>): PresenceReportParse {
  const body = isRecord(json) ? json : {};
  const { status, reason, callId } = body;
  if (!isPresence(status)) return { ok: false, problem: { field: 'status', message: `status: ${PRESENCE_RULE}` } };
  if (status === 'break') {
    if (reason === undefined) return ruleProblem('reason', text('common.required'));
    if (typeof reason !== 'string' || !settings.breakReasons.includes(reason)) {
      return ruleProblem('reason', text('team.breakReason', { values: list(settings.breakReasons) }));
    }
    return { ok: true, value: { presence: status, reason } };
  }
  if (reason !== undefined) return ruleProblem('reason', text('team.onlyBreakReason'));
  if (status === 'after_call_work' && callId !== undefined) {
    if (typeof callId !== 'string' || callId.length < 1 || callId.length > CALL_ID_MAX) {
      return { ok: false, problem: { field: 'callId', message: `callId: must be 1 to ${CALL_ID_MAX} characters` } };
    }
    return { ok: true, value: { presence: status, reason: callId } };
  }
  return { ok: true, value: { presence: status } };
}

// The team's settings (relay/REFERENCE.md "Team settings"): one file the relay reads with
// `--team-config` and again on SIGHUP, and hands to every agent's app (GET /team/settings). The
// break reasons of the "Presence" select, the after-call work after each answered call, the wrap-up's
// dispositions, and what the wallboard counts. Every field may be left out: its default applies.
import { z } from 'zod';
import { list } from './i18n/text';
import type { Result } from './result';
import { parseWith, ruleMessage } from './validation';

export interface TeamSettings {
  /** The reasons an agent may give for a break, each offered as "Break — REASON". */
  breakReasons: string[];
  /** After-call work after every answered call that leaves no other call live; 0: none. */
  afterCallWorkSeconds: number;
  /** The codes a wrap-up's "Disposition" offers. */
  dispositions: string[];
  /** Whether after-call work lasts until the wrap-up is saved ("Ready" waits for it). */
  dispositionRequired: boolean;
  /** Incoming calls answered within this many seconds count toward the service level. */
  serviceLevelSeconds: number;
  /** The IANA time zone whose midnight starts the team's day (the wallboard's "today", the reports' days). */
  timezone: string;
}

export const DEFAULT_TEAM_SETTINGS: Readonly<TeamSettings> = Object.freeze({
  breakReasons: ['Lunch', 'Short break', 'Meeting', 'Training'],
  // None unless the team asks for it: a team without a settings file rings its agents as before.
  afterCallWorkSeconds: 0,
  dispositions: ['Resolved', 'Follow-up needed', 'Sale', 'No sale', 'Wrong number'],
  dispositionRequired: false,
  serviceLevelSeconds: 20,
  timezone: 'UTC',
});

export const TEAM_SETTINGS_LIMITS = {
  /** A break reason or a disposition: short enough for a select. */
  labelCharacters: 60,
  breakReasons: 20,
  dispositions: 50,
  afterCallWorkSeconds: 3600,
  serviceLevelSeconds: 3600,
} as const;

/** A wrap-up's notes at most. */
export const WRAP_UP_NOTES_MAX = 2000;
/** How long after a call ends its agent may still change the wrap-up. */
export const WRAP_UP_EDITABLE_MS = 24 * 60 * 60 * 1000;

/** Whether the runtime knows `zone` as an IANA time zone (Intl throws on an unknown one). */
export function isTimeZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

const label = z
  .string({ error: ruleMessage('common.mustBeString') })
  .trim()
  .min(1, ruleMessage('common.notEmpty'))
  .max(TEAM_SETTINGS_LIMITS.labelCharacters, ruleMessage('common.atMostCharacters', { count: TEAM_SETTINGS_LIMITS.labelCharacters }));

const labels = (max: number) =>
  z
    .array(label, { error: ruleMessage('team.labelList') })
    .min(1, ruleMessage('team.atLeastOne'))
    .max(max, ruleMessage('team.atMostItems', { count: max }))
    .superRefine((items, ctx) => {
      const seen = new Set<string>();
      items.forEach((item, index) => {
        if (seen.has(item)) ctx.addIssue({ code: 'custom', path: [index], message: ruleMessage('common.mustBeUnique', { id: item }) });
        seen.add(item);
      });
    });

const seconds = (min: number, max: number) =>
  z
    .number({ error: ruleMessage('bridgeNodes.wholeNumber', { min, max }) })
    .int(ruleMessage('bridgeNodes.wholeNumber', { min, max }))
    .min(min, ruleMessage('bridgeNodes.wholeNumber', { min, max }))
    .max(max, ruleMessage('bridgeNodes.wholeNumber', { min, max }));

const TEAM_SETTING_NAMES = Object.keys(DEFAULT_TEAM_SETTINGS) as Array<keyof TeamSettings>;

export const teamSettingsSchema = z.strictObject(
  {
    breakReasons: labels(TEAM_SETTINGS_LIMITS.breakReasons).default(() => [...DEFAULT_TEAM_SETTINGS.breakReasons]),
    afterCallWorkSeconds: seconds(0, TEAM_SETTINGS_LIMITS.afterCallWorkSeconds).default(DEFAULT_TEAM_SETTINGS.afterCallWorkSeconds),
    dispositions: labels(TEAM_SETTINGS_LIMITS.dispositions).default(() => [...DEFAULT_TEAM_SETTINGS.dispositions]),
    dispositionRequired: z.boolean({ error: ruleMessage('common.mustBeBoolean') }).default(DEFAULT_TEAM_SETTINGS.dispositionRequired),
    serviceLevelSeconds: seconds(1, TEAM_SETTINGS_LIMITS.serviceLevelSeconds).default(DEFAULT_TEAM_SETTINGS.serviceLevelSeconds),
    timezone: z
      .string({ error: ruleMessage('team.timezone') })
      .refine(isTimeZone, ruleMessage('team.timezone'))
      .default(DEFAULT_TEAM_SETTINGS.timezone),
  },
  { error: ruleMessage('team.settingsObject', { values: list(TEAM_SETTING_NAMES) }) },
);

/** The settings as the relay tells them: a field a newer relay adds is left out, not refused. */
export const teamSettingsReplySchema = z.object(teamSettingsSchema.shape);

/** The team's settings from a parsed file or answer: each rule broken names its field. */
export function parseTeamSettings(json: unknown): Result<TeamSettings> {
  return parseWith(teamSettingsSchema, json);
}

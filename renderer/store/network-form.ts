// Settings → Network as the agent types it: the servers one per line, the TURN username and
// password (blank keeps the stored one), "Relay only". It is checked with the main process's own
// schema (shared/ice-servers.ts) before it goes out, and a server's error names its line, counted as
// the agent sees the box, blank lines included.
import { isTurnUrl, networkSettingsInputSchema, type NetworkSettingsInput, type PublicNetworkSettings, type RelayTurnStatus } from '../../shared/ice-servers';
import { fieldRule, type TextValue } from '../../shared/i18n/text';
import type { AppError } from '../../shared/result';
import { issueText } from '../../shared/validation';
import { i18n } from '../i18n/i18n';
import { sayError, sayText, sentence } from '../i18n/texts';

const t = i18n.getFixedT(null, 'settings');

export const NETWORK_FIELDS = ['servers', 'turnUsername', 'turnPassword', 'relayOnly'] as const;
export type NetworkField = (typeof NETWORK_FIELDS)[number];

export interface NetworkDraft {
  /** The textarea's text: one URL per line. */
  servers: string;
  turnUsername: string;
  /** Blank means "keep the stored one"; never filled from the host, which does not have it to give. */
  turnPassword: string;
  relayOnly: boolean;
}
export type NetworkErrors = Partial<Record<NetworkField, string>>;


export function draftFromNetwork(network: PublicNetworkSettings | null | undefined): NetworkDraft {
  return {
    servers: network?.servers.join('\n') ?? '',
    turnUsername: network?.turnUsername ?? '',
    turnPassword: '',
    relayOnly: network?.relayOnly ?? false,
  };
}

/** The lines that hold something, trimmed, with their line numbers (from 1) in the box. */
export function serverLines(text: string): { line: number; url: string }[] {
  return text
    .split(/\r\n|\r|\n/)
    .map((raw, i) => ({ line: i + 1, url: raw.trim() }))
    .filter((l) => l.url !== '');
}

export interface CheckedNetwork {
  input: NetworkSettingsInput;
  /** The box's line number of each server sent, so that a refusal of `servers[i]` can name it. */
  lines: number[];
}

export function draftToNetworkInput(draft: NetworkDraft): CheckedNetwork {
  const lines = serverLines(draft.servers);
  return {
    input: {
      servers: lines.map((l) => l.url),
      turnUsername: draft.turnUsername.trim(),
      // Only spaces count as blank ("keep the stored one"); anything else goes as typed.
      turnPassword: draft.turnPassword.trim() === '' ? '' : draft.turnPassword,
      relayOnly: draft.relayOnly,
    },
    lines: lines.map((l) => l.line),
  };
}

// The errors are worded when the form is checked (the rules come as codes and values from the shared
// schemas and are said in the UI's language here); an edit of the field clears them.
const lineRule = (lines: readonly number[], index: number, rule: TextValue): string => t('network.servers.line', { line: lines[index] ?? index + 1, rule: sayText(rule) });
/** A rule next to its field, in the UI's language, as a sentence. */
const ruleSentence = (rule: TextValue): string => sentence(sayText(rule));
const joinRules = (rules: readonly string[]): string => rules.join(t('network.servers.separator'));

/**
 * Checks the draft with the schema the main process uses, every field at once, and the TURN
 * credentials a turn: server needs. `saved` says whether a password is stored already; with the
 * command line's settings in force that is the main process's to judge.
 */
export function validateNetworkDraft(
  draft: NetworkDraft,
  saved: PublicNetworkSettings | null | undefined,
): ({ ok: true } & CheckedNetwork) | { ok: false; errors: NetworkErrors } {
  const checked = draftToNetworkInput(draft);
  const errors: NetworkErrors = {};
  const serverRules: string[] = [];
  const parsed = networkSettingsInputSchema.safeParse(checked.input);
  if (!parsed.success) {
    for (const issue of parsed.error.issues) {
      const [field, index] = issue.path;
      if (field === 'servers' && typeof index === 'number') serverRules.push(lineRule(checked.lines, index, issueText(issue)));
      else if (isNetworkField(field) && errors[field] === undefined) errors[field] = ruleSentence(issueText(issue));
    }
  }
  if (serverRules.length > 0) errors.servers = joinRules(serverRules);
  // The same rules the main process applies on save (electron/core/network-settings.ts), checked here
  // too so that every field's problem shows at once.
  if (checked.input.servers.some(isTurnUrl)) {
    if (checked.input.turnUsername === '' && errors.turnUsername === undefined) errors.turnUsername = t('network.turnUsername.required');
    if (checked.input.turnPassword === '' && errors.turnPassword === undefined && saved?.hasTurnPassword !== true && saved?.fromCommandLine !== true) {
      errors.turnPassword = t('network.turnPassword.required');
    }
  }
  return Object.keys(errors).length > 0 ? { ok: false, errors } : { ok: true, ...checked };
}

const isNetworkField = (key: unknown): key is NetworkField => typeof key === 'string' && (NETWORK_FIELDS as readonly string[]).includes(key);

/** "network.servers[1]", "servers[1]", "turnUsername" → the field and, for a server, its index. */
function networkPlace(path: string | undefined): { field: NetworkField; index?: number } | undefined {
  const m = path === undefined ? null : /^(?:network\.)?(\w+)(?:\[(\d+)\])?$/.exec(path);
  if (!m || !isNetworkField(m[1])) return undefined;
  return m[2] === undefined ? { field: m[1] } : { field: m[1], index: Number(m[2]) };
}

/**
 * Where a saveNetworkSettings error goes: each broken rule (`issues`, shared/validation.ts) next to
 * the field it names (a server's names its line); the rest above the form, or next to the field the
 * error names. `lines` are those of the draft that was sent.
 */
export function networkErrorsFrom(error: Pick<AppError, 'field' | 'message' | 'text' | 'issues'>, lines: readonly number[]): { fields: NetworkErrors; form: string | null } {
  const fields: NetworkErrors = {};
  const serverRules: string[] = [];
  const rest: string[] = [];
  for (const issue of error.issues ?? []) {
    const place = networkPlace(issue.field);
    if (!place) rest.push(sayText(fieldRule(issue.field, issue.text)));
    else if (place.field === 'servers' && place.index !== undefined) serverRules.push(lineRule(lines, place.index, issue.text));
    else if (fields[place.field] === undefined) fields[place.field] = ruleSentence(issue.text);
  }
  if (error.issues === undefined) rest.push(sayError(error));
  if (serverRules.length > 0 && fields.servers === undefined) fields.servers = joinRules(serverRules);
  const named = networkPlace(error.field)?.field;
  if (named && fields[named] === undefined) {
    fields[named] = sentence(rest.length > 0 ? rest.join('; ') : sayError(error));
    return { fields, form: null };
  }
  return { fields, form: rest.length > 0 ? rest.join('; ') : null };
}

/** "Relay only" with no TURN server to relay through: calls would gather no candidate at all. */
export function relayOnlyWarning(draft: NetworkDraft, relayTurn: RelayTurnStatus | undefined): string | null {
  if (!draft.relayOnly || relayTurn === 'available') return null;
  return serverLines(draft.servers).some((l) => isTurnUrl(l.url)) ? null : t('network.relayOnly.warning');
}

/** Where calls get TURN from besides the servers listed: the relay's short-lived credentials, when it hands them out. */
export function relayTurnNote(relayTurn: RelayTurnStatus | undefined): { text: string; tone: 'info' | 'quiet' | 'warning' } | null {
  switch (relayTurn) {
    case 'available':
      return { text: t('network.relayTurn.available'), tone: 'info' };
    case 'not_offered':
      return { text: t('network.relayTurn.notOffered'), tone: 'quiet' };
    case 'unreachable':
      return { text: t('network.relayTurn.unreachable'), tone: 'warning' };
    case 'unknown':
    case undefined:
      return null;
  }
}

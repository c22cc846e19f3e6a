// The agent's desk preferences: audio devices, what the window and links do, keyboard shortcuts and
// how far the missed calls have been looked at. Kept by the main process (one file in the data
// directory) so that both hosts and every window share them, and the Electron host can act on them
// (tray, login item, global shortcuts) without a window.
import { z } from 'zod';
import type { HistoryEntry } from './history';
import { LANGUAGE_SETTINGS, type LanguageSetting } from './i18n/languages';
import { list, term, text, type RuleText, type TermRef, type TextValue } from './i18n/text';
import { errText, ok, type Result } from './result';
import { fieldError, ruleMessage } from './validation';

/** A chosen audio device: its id and, because ids change between sessions, its label. null: the system default. */
export interface DeviceChoice {
  id: string;
  label: string;
}

export type AudioRole = 'microphone' | 'speaker' | 'ringer';
export const AUDIO_ROLES: readonly AudioRole[] = ['microphone', 'speaker', 'ringer'];

export type ShortcutAction = 'answer' | 'decline' | 'hangUp' | 'mute';
export const SHORTCUT_ACTIONS: readonly ShortcutAction[] = ['answer', 'decline', 'hangUp', 'mute'];
/** Each action's name, the catalogue's word for its button. */
export const SHORTCUT_LABELS: Readonly<Record<ShortcutAction, TermRef>> = { answer: term('answer'), decline: term('decline'), hangUp: term('hangUp'), mute: term('mute') };
export const DEFAULT_SHORTCUTS: Readonly<Record<ShortcutAction, string>> = {
  answer: 'Ctrl+Shift+A',
  decline: 'Ctrl+Shift+D',
  hangUp: 'Ctrl+Shift+H',
  mute: 'Ctrl+Shift+M',
};

export interface Preferences {
  audio: Record<AudioRole, DeviceChoice | null>;
  /** Electron: closing the window quits (otherwise it hides to the tray and keeps ringing). */
  quitOnClose: boolean;
  /** Electron: the app starts when the agent logs in. */
  startAtLogin: boolean;
  /** A tel: or callto: link dials at once instead of filling the dialer. */
  dialLinksAtOnce: boolean;
  /** "Ring me during a call": on one call, a new call still rings (call waiting), with a short tone. */
  ringDuringCall: boolean;
  /** Electron: the shortcuts work while another application has the focus. */
  globalShortcuts: boolean;
  shortcuts: Record<ShortcutAction, string>;
  /** Missed calls that ended up to this time (unix ms) have been seen in the recent calls. */
  missedSeenAt: number;
  /** The UI's language; 'auto' follows the operating system's (the browser's in a tab). */
  language: LanguageSetting;
}

export const DEFAULT_PREFERENCES: Preferences = {
  audio: { microphone: null, speaker: null, ringer: null },
  quitOnClose: false,
  startAtLogin: false,
  dialLinksAtOnce: false,
  ringDuringCall: false,
  globalShortcuts: false,
  shortcuts: { ...DEFAULT_SHORTCUTS },
  missedSeenAt: 0,
  language: 'auto',
};

// ---- shortcuts ----

const MODIFIER_ORDER = ['Ctrl', 'Alt', 'Shift', 'Meta'] as const;
type Modifier = (typeof MODIFIER_ORDER)[number];
const MODIFIER_ALIASES: Readonly<Record<string, Modifier>> = {
  ctrl: 'Ctrl',
  control: 'Ctrl',
  alt: 'Alt',
  option: 'Alt',
  shift: 'Shift',
  meta: 'Meta',
  cmd: 'Meta',
  command: 'Meta',
  super: 'Meta',
};
const KEY_PATTERN = /^(?:[A-Z0-9]|F(?:[1-9]|1[0-9]|2[0-4]))$/;

/**
 * "ctrl + shift + a" → "Ctrl+Shift+A". A shortcut is one letter, digit or F-key with Ctrl, Alt or
 * Meta among its modifiers: Shift alone would take a character from whatever the agent types.
 */
export function parseShortcut(typed: string): Result<string> {
  const parts = typed
    .split('+')
    .map((p) => p.trim())
    .filter((p) => p !== '');
  if (parts.length === 0) return errText('invalid_input', text('shortcuts.empty'));
  const modifiers = new Set<Modifier>();
  let key: string | undefined;
  for (const part of parts) {
    const modifier = MODIFIER_ALIASES[part.toLowerCase()];
    if (modifier) {
      modifiers.add(modifier);
      continue;
    }
    if (key !== undefined) return errText('invalid_input', text('shortcuts.twoKeys', { first: key, second: part.toUpperCase() }));
    key = part.toUpperCase();
  }
  if (key === undefined) return errText('invalid_input', text('shortcuts.noKey'));
  if (!KEY_PATTERN.test(key)) return errText('invalid_input', text('shortcuts.badKey', { key }));
  if (!modifiers.has('Ctrl') && !modifiers.has('Alt') && !modifiers.has('Meta') && !key.startsWith('F')) {
    return errText('invalid_input', text('shortcuts.needsModifier'));
  }
  return ok([...MODIFIER_ORDER.filter((m) => modifiers.has(m)), key].join('+'));
}

/** The shortcut a key press makes, in parseShortcut's form; undefined for a press that cannot be one. */
export function shortcutOfKeyEvent(ev: { key?: string | undefined; code?: string | undefined; ctrlKey: boolean; altKey: boolean; shiftKey: boolean; metaKey: boolean }): string | undefined {
  // Either may be missing: Chrome's autofill sends keydown events with neither key nor code.
  const code = typeof ev.code === 'string' ? ev.code : '';
  const pressed = typeof ev.key === 'string' ? ev.key : '';
  // The physical key: Shift or a layout would otherwise turn "A" into "a" or "Ä".
  const fromCode = /^Key([A-Z])$/.exec(code)?.[1];
  const digit = /^Digit([0-9])$/.exec(code)?.[1];
  const fkey = /^F(?:[1-9]|1[0-9]|2[0-4])$/.test(pressed) ? pressed : undefined;
  const key = fromCode || digit || fkey || (pressed.length === 1 ? pressed.toUpperCase() : undefined);
  if (!key) return undefined;
  const combination = [ev.ctrlKey && 'Ctrl', ev.altKey && 'Alt', ev.shiftKey && 'Shift', ev.metaKey && 'Meta', key].filter(Boolean).join('+');
  const parsed = parseShortcut(combination);
  return parsed.ok ? parsed.value : undefined;
}

/** Combinations the system or the window keeps for itself. */
const RESERVED: Readonly<Record<string, TermRef>> = {
  'Ctrl+Shift+I': term('developerTools'),
  'Ctrl+Shift+J': term('developerTools'),
  'Ctrl+Shift+C': term('developerTools'),
  'Ctrl+Shift+R': term('reloading'),
  'Ctrl+Shift+N': term('newWindow'),
  'Ctrl+Shift+T': term('reopeningTab'),
  'Ctrl+Shift+Q': term('quitting'),
  'Ctrl+Shift+W': term('closingWindow'),
  'Alt+F4': term('closingWindow'),
  F5: term('reloading'),
  F11: term('fullScreen'),
  F12: term('developerTools'),
};

const languageField = z.enum(LANGUAGE_SETTINGS as [LanguageSetting, ...LanguageSetting[]], { error: ruleMessage('common.oneOf', { values: list(LANGUAGE_SETTINGS) }) });
const shortcutField = z.string({ error: ruleMessage('shortcuts.string') }).max(64, ruleMessage('common.tooLong'));
const deviceChoiceSchema = z
  .strictObject({
    id: z.string().max(512, ruleMessage('common.tooLong')),
    label: z.string().max(512, ruleMessage('common.tooLong')),
  })
  .nullable();

/** What a window may change: any part; the rest stays as it is. */
export const preferencesPatchSchema = z.strictObject({
  audio: z.strictObject({ microphone: deviceChoiceSchema.optional(), speaker: deviceChoiceSchema.optional(), ringer: deviceChoiceSchema.optional() }).optional(),
  quitOnClose: z.boolean({ error: ruleMessage('common.mustBeBoolean') }).optional(),
  startAtLogin: z.boolean({ error: ruleMessage('common.mustBeBoolean') }).optional(),
  dialLinksAtOnce: z.boolean({ error: ruleMessage('common.mustBeBoolean') }).optional(),
  ringDuringCall: z.boolean({ error: ruleMessage('common.mustBeBoolean') }).optional(),
  globalShortcuts: z.boolean({ error: ruleMessage('common.mustBeBoolean') }).optional(),
  shortcuts: z.strictObject({ answer: shortcutField.optional(), decline: shortcutField.optional(), hangUp: shortcutField.optional(), mute: shortcutField.optional() }).optional(),
  missedSeenAt: z.number({ error: ruleMessage('shortcuts.unixMs') }).int().nonnegative().optional(),
  language: languageField.optional(),
});
export type PreferencesPatch = z.input<typeof preferencesPatchSchema>;

/** The preferences file (and a push): every part present. */
export const preferencesSchema = z.object({
  audio: z.object({ microphone: deviceChoiceSchema, speaker: deviceChoiceSchema, ringer: deviceChoiceSchema }),
  quitOnClose: z.boolean(),
  startAtLogin: z.boolean(),
  dialLinksAtOnce: z.boolean(),
  ringDuringCall: z.boolean(),
  globalShortcuts: z.boolean(),
  shortcuts: z.object({ answer: z.string(), decline: z.string(), hangUp: z.string(), mute: z.string() }),
  missedSeenAt: z.number().nonnegative(),
  language: languageField,
}) satisfies z.ZodType<Preferences>;

/**
 * Applies a patch: shortcuts are normalised and must be valid, not reserved and not another
 * action's. The error names the field ("shortcuts.mute") and the rule.
 */
export function applyPreferencesPatch(current: Preferences, patch: z.output<typeof preferencesPatchSchema>): Result<Preferences> {
  const shortcuts = { ...current.shortcuts };
  for (const action of SHORTCUT_ACTIONS) {
    const typed = patch.shortcuts?.[action];
    if (typed === undefined) continue;
    const parsed = parseShortcut(typed);
    if (!parsed.ok) return shortcutRefused(action, parsed.error.text ?? parsed.error.message);
    shortcuts[action] = parsed.value;
  }
  for (const action of SHORTCUT_ACTIONS) {
    const combo = shortcuts[action];
    const reserved = RESERVED[combo];
    if (reserved !== undefined && patch.shortcuts?.[action] !== undefined) {
      return shortcutRefused(action, text('shortcuts.reserved', { combo, purpose: reserved }));
    }
    const other = SHORTCUT_ACTIONS.find((a) => a !== action && shortcuts[a] === combo);
    if (other !== undefined) {
      const changed = patch.shortcuts?.[action] !== undefined ? action : other;
      const kept = changed === action ? other : action;
      return shortcutRefused(changed, text('shortcuts.taken', { combo, action: SHORTCUT_LABELS[kept] }));
    }
  }
  const next: Preferences = {
    audio: {
      microphone: patch.audio?.microphone !== undefined ? patch.audio.microphone : current.audio.microphone,
      speaker: patch.audio?.speaker !== undefined ? patch.audio.speaker : current.audio.speaker,
      ringer: patch.audio?.ringer !== undefined ? patch.audio.ringer : current.audio.ringer,
    },
    quitOnClose: patch.quitOnClose ?? current.quitOnClose,
    startAtLogin: patch.startAtLogin ?? current.startAtLogin,
    dialLinksAtOnce: patch.dialLinksAtOnce ?? current.dialLinksAtOnce,
    ringDuringCall: patch.ringDuringCall ?? current.ringDuringCall,
    globalShortcuts: patch.globalShortcuts ?? current.globalShortcuts,
    shortcuts,
    // Seen stays seen: a late or stale window cannot bring old missed calls back.
    missedSeenAt: Math.max(current.missedSeenAt, patch.missedSeenAt ?? 0),
    language: patch.language ?? current.language,
  };
  return ok(next);
}

/**
 * A shortcut's refusal, named by its field and its action: "shortcuts.mute (Mute): …". The
 * Electron host refuses a combination another application holds the same way.
 */
export function shortcutRefused<T = never>(action: ShortcutAction, rule: TextValue): Result<T> {
  const field = `shortcuts.${action}`;
  return fieldError('invalid_input', field, rule, { label: shortcutPlace(action) });
}

/** "shortcuts.mute (Mute)": the field's path and the action's name. */
const shortcutPlace = (action: ShortcutAction): RuleText => text('common.namedField', { field: `shortcuts.${action}`, name: SHORTCUT_LABELS[action] });

// ---- missed calls ----

/** "1 missed call", "3 missed calls": the header's button, the tray menu and the window's overlay say the same. */
export function missedCallsText(count: number): string {
  return count === 1 ? '1 missed call' : `${count} missed calls`;
}

/** Incoming calls nobody answered that ended after the agent last looked at the recent calls. */
export function missedCalls(history: readonly HistoryEntry[], seenAt: number): HistoryEntry[] {
  return history.filter((h) => h.direction === 'incoming' && h.outcome === 'missed' && h.endedAt > seenAt);
}

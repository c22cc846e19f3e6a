// What the tray menu says for a state: pure, so it is tested (and rendered for the README) without
// Electron. tray.ts hands it to Electron. Worded by the texts given (desktop-texts.ts), in the
// agent's language.
import type { PresenceChoice, PresenceStatus } from '../../shared/api';
import type { ShortcutAction } from '../../shared/preferences';
import type { DesktopKey, DesktopTexts } from './desktop-texts';

/** What the tray shows: 'disconnected' wins over the presence, since nobody can reach the agent then. */
export type TrayStatus = Exclude<PresenceStatus, 'call_waiting'> | 'disconnected';

/** The tray's status for a presence: waiting for a second call is still being on a call. */
export const trayStatusOf = (status: PresenceStatus): TrayStatus => (status === 'call_waiting' ? 'on_call' : status);

export interface RefusedShortcut {
  action: ShortcutAction;
  accelerator: string;
}

export interface TrayState {
  status: TrayStatus;
  /** The presence the agent chose (the radio items); the status may say "on a call" over it. */
  choice: PresenceChoice;
  missedCount: number;
  windowVisible: boolean;
  /** Global shortcuts another application already holds. */
  refusedShortcuts: readonly RefusedShortcut[];
}

export type TrayMenuItem =
  | { kind: 'info'; label: string }
  | { kind: 'missed'; label: string }
  | { kind: 'show'; label: string }
  | { kind: 'presence'; label: string; choice: PresenceChoice; checked: boolean }
  | { kind: 'quit'; label: string }
  | { kind: 'separator' };

export interface TrayMenuModel {
  tooltip: string;
  items: TrayMenuItem[];
}

const STATUS_KEYS: Readonly<Record<TrayStatus, DesktopKey>> = {
  available: 'tray.statuses.available',
  on_call: 'tray.statuses.onCall',
  dnd: 'tray.statuses.dnd',
  break: 'tray.statuses.break',
  after_call_work: 'tray.statuses.afterCallWork',
  disconnected: 'tray.statuses.disconnected',
};

const SHORTCUT_ACTION_KEYS: Readonly<Record<ShortcutAction, DesktopKey>> = {
  answer: 'shortcutActions.answer',
  decline: 'shortcutActions.decline',
  hangUp: 'shortcutActions.hangUp',
  mute: 'shortcutActions.mute',
};

// A break needs one of the team's reasons: it is chosen in the window's "Presence" select.
const PRESENCE_CHOICES: readonly PresenceChoice[] = ['available', 'dnd'];

export function trayMenuModel(state: TrayState, texts: DesktopTexts): TrayMenuModel {
  const { t } = texts;
  const status = t(STATUS_KEYS[state.status]);
  const missed = t('missedCalls', { count: state.missedCount });
  const items: TrayMenuItem[] = [{ kind: 'info', label: t('tray.status', { status }) }];
  if (state.missedCount > 0) items.push({ kind: 'missed', label: missed });
  for (const refused of state.refusedShortcuts) {
    items.push({ kind: 'info', label: t('tray.shortcutTaken', { accelerator: texts.ltr(refused.accelerator), action: t(SHORTCUT_ACTION_KEYS[refused.action]) }) });
  }
  items.push({ kind: 'separator' }, { kind: 'show', label: t('tray.show') }, { kind: 'separator' });
  for (const choice of PRESENCE_CHOICES) items.push({ kind: 'presence', label: t(STATUS_KEYS[choice]), choice, checked: state.choice === choice });
  items.push({ kind: 'separator' }, { kind: 'quit', label: t('tray.quit') });

  const parts = [status];
  if (state.missedCount > 0) parts.push(missed);
  // Hovering the icon is how an agent checks that a closed window still takes calls.
  if (!state.windowVisible) parts.push(t('tray.windowHidden'));
  return { tooltip: t('tray.tooltip', { details: parts.join(t('tray.tooltipSeparator')) }), items };
}

// What the tray menu says for a state: pure, so it is tested (and rendered for the README) without
// Electron. tray.ts hands it to Electron.
import type { PresenceChoice, PresenceStatus } from '../../shared/api';
import { missedCallsText, SHORTCUT_LABELS, type ShortcutAction } from '../../shared/preferences';

/** What the tray shows: 'disconnected' wins over the presence, since nobody can reach the agent then. */
export type TrayStatus = PresenceStatus | 'disconnected';

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
  | { kind: 'show'; label: 'Show' }
  | { kind: 'presence'; label: string; choice: PresenceChoice; checked: boolean }
  | { kind: 'quit'; label: 'Quit' }
  | { kind: 'separator' };

export interface TrayMenuModel {
  tooltip: string;
  items: TrayMenuItem[];
}

export const TRAY_STATUS_LABELS: Readonly<Record<TrayStatus, string>> = {
  available: 'Available',
  on_call: 'On a call',
  dnd: 'Do not disturb',
  disconnected: 'Disconnected',
};

const PRESENCE_CHOICES: ReadonlyArray<{ choice: PresenceChoice; label: string }> = [
  { choice: 'available', label: 'Available' },
  { choice: 'dnd', label: 'Do not disturb' },
];

export function trayMenuModel(state: TrayState): TrayMenuModel {
  const status = TRAY_STATUS_LABELS[state.status];
  const items: TrayMenuItem[] = [{ kind: 'info', label: `Status: ${status}` }];
  if (state.missedCount > 0) items.push({ kind: 'missed', label: missedCallsText(state.missedCount) });
  for (const refused of state.refusedShortcuts) {
    items.push({ kind: 'info', label: `${refused.accelerator} (${SHORTCUT_LABELS[refused.action]}) is taken by another application` });
  }
  items.push({ kind: 'separator' }, { kind: 'show', label: 'Show' }, { kind: 'separator' });
  for (const { choice, label } of PRESENCE_CHOICES) items.push({ kind: 'presence', label, choice, checked: state.choice === choice });
  items.push({ kind: 'separator' }, { kind: 'quit', label: 'Quit' });

  const parts = [status];
  if (state.missedCount > 0) parts.push(missedCallsText(state.missedCount));
  // Hovering the icon is how an agent checks that a closed window still takes calls.
  if (!state.windowVisible) parts.push('window hidden, calls still ring');
  return { tooltip: `Softphone: ${parts.join(', ')}`, items };
}

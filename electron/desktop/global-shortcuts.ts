// The four call shortcuts made global ("globalShortcuts" preference): they work while another
// application has the focus. Main cannot answer by itself (the answer's SDP is made in the window), so
// a press is handed to the window as a shortcutPressed push, exactly what the in-window key does.
// A combination another application already holds cannot be taken: it is logged and kept in
// refused() so that the tray (and whoever asks) can say which one and why it does nothing.
import { globalShortcut } from 'electron';
import { text } from '../../shared/i18n/text';
import type { Logger } from '../../shared/log';
import { SHORTCUT_ACTIONS, shortcutRefused, type Preferences, type ShortcutAction } from '../../shared/preferences';
import { ok, type Result } from '../../shared/result';
import type { RefusedShortcut } from './tray-menu';

export interface GlobalShortcutsOptions {
  pressed: (action: ShortcutAction) => void;
  logger: Logger;
}

export class GlobalShortcuts {
  /** Accelerators this app holds now. */
  private readonly held: string[] = [];
  private refusedNow: RefusedShortcut[] = [];
  /** What was last applied, so that an unrelated preference change does not re-register. */
  private applied = '[]';

  constructor(private readonly options: GlobalShortcutsOptions) {}

  /** Registers the shortcuts the preferences ask for (none when globalShortcuts is off). Returns true when that changed anything. */
  apply(preferences: Pick<Preferences, 'globalShortcuts' | 'shortcuts'>): boolean {
    const wanted = preferences.globalShortcuts ? SHORTCUT_ACTIONS.map((action) => ({ action, accelerator: preferences.shortcuts[action] })) : [];
    const key = JSON.stringify(wanted);
    if (key === this.applied) return false;
    this.applied = key;
    this.release();
    for (const { action, accelerator } of wanted) {
      let taken: boolean;
      try {
        taken = globalShortcut.register(accelerator, () => this.options.pressed(action));
      } catch (e) {
        // Electron throws on an accelerator it cannot parse; preferences are validated, so this
        // would be a gap between the two grammars: refuse it like a taken one.
        this.options.logger.warn('a global shortcut could not be registered', { action, accelerator, error: e });
        taken = false;
      }
      if (taken) {
        this.held.push(accelerator);
      } else {
        this.refusedNow.push({ action, accelerator });
        this.options.logger.warn('a global shortcut is held by another application: it works only while the softphone has the focus', { action, accelerator });
      }
    }
    return true;
  }

  refused(): readonly RefusedShortcut[] {
    return this.refusedNow;
  }

  /** Gives every shortcut back to the system (quit, or the preference turned off). */
  dispose(): void {
    this.release();
    this.applied = '[]';
  }

  private release(): void {
    for (const accelerator of this.held.splice(0)) globalShortcut.unregister(accelerator);
    this.refusedNow = [];
  }
}

/**
 * The check before global shortcuts are saved (the service's preferences guard): a combination that
 * another application holds is refused with the reason, naming the field, so Settings says so before
 * the agent relies on it. Each combination this app does not hold yet is tried and given back at once;
 * the ones it holds are its own.
 */
export function checkGlobalShortcuts(next: Pick<Preferences, 'globalShortcuts' | 'shortcuts'>): Result<void> {
  if (!next.globalShortcuts) return ok(undefined);
  for (const action of SHORTCUT_ACTIONS) {
    const accelerator = next.shortcuts[action];
    if (globalShortcut.isRegistered(accelerator)) continue;
    let free: boolean;
    try {
      free = globalShortcut.register(accelerator, () => undefined);
    } catch {
      free = false;
    }
    if (!free) {
      return shortcutRefused(action, text('shortcuts.takenElsewhere', { combo: accelerator }));
    }
    globalShortcut.unregister(accelerator);
  }
  return ok(undefined);
}

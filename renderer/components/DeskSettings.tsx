// The desk's settings: the keyboard shortcuts, what a tel: link does, and what only one host can do
// (the Electron window and login item; the browser's handling of tel: links).
import { useContext, useState, type KeyboardEvent } from 'react';
import { SHORTCUT_ACTIONS, SHORTCUT_LABELS, shortcutOfKeyEvent, type PreferencesPatch, type ShortcutAction } from '../../shared/preferences';
import { errorText, type AppError } from '../../shared/result';
import { ControllersContext, useSettingsActions } from '../app/controllers-context';
import { SHORTCUT_RECORDER_ATTRIBUTE } from '../app/shortcuts';
import { errorMessage } from '../error-texts';
import { useAppStore } from '../store/store';
import { useShortcutStatusStore, type RefusedShortcut } from '../store/shortcut-status';

/** The action a refusal is about: the error's field ("shortcuts.mute"), else the message's start, which names it too. */
export function shortcutOfError(error: Pick<AppError, 'field' | 'message'>): ShortcutAction | undefined {
  const path = error.field ?? /^(shortcuts\.[A-Za-z]+)/.exec(error.message)?.[1];
  return SHORTCUT_ACTIONS.find((a) => path === `shortcuts.${a}`);
}

/** The shortcuts that were edited, for the patch; the others are left as they are. */
export function shortcutsPatch(edits: Partial<Record<ShortcutAction, string>>): Partial<Record<ShortcutAction, string>> {
  const patch: Partial<Record<ShortcutAction, string>> = {};
  for (const action of SHORTCUT_ACTIONS) {
    const typed = edits[action];
    if (typed !== undefined) patch[action] = typed;
  }
  return patch;
}

/** Why the saved shortcut of `action` does nothing outside the softphone, when another application holds it. */
export function takenShortcutText(refused: readonly RefusedShortcut[], action: ShortcutAction, saved: string): string | undefined {
  const taken = refused.find((r) => r.action === action && r.accelerator === saved);
  return taken && `${taken.accelerator} is taken by another application: it works only while the softphone has the focus`;
}

/**
 * Electron has login items on macOS and Windows only; on Linux the setting would do nothing. The
 * page's own platform (navigator.platform, e.g. "Linux x86_64") is the host's: the window runs there.
 */
export function offersStartAtLogin(platform: string): boolean {
  return !/linux/i.test(platform);
}

type BooleanPreference = 'dialLinksAtOnce' | 'quitOnClose' | 'startAtLogin' | 'globalShortcuts';

interface ToggleSpec {
  name: BooleanPreference;
  label: string;
  hint: string;
}

const COMMON_TOGGLES: readonly ToggleSpec[] = [
  { name: 'dialLinksAtOnce', label: 'Dial links at once', hint: 'A tel: or callto: link calls straight away instead of filling the dialer.' },
];

const ELECTRON_TOGGLES: readonly ToggleSpec[] = [
  { name: 'quitOnClose', label: 'Quit when the window is closed', hint: 'Otherwise closing the window keeps the softphone in the tray, still ringing.' },
  { name: 'startAtLogin', label: 'Start at login', hint: 'The softphone opens when you log in to this computer.' },
  { name: 'globalShortcuts', label: 'Global shortcuts', hint: 'The shortcuts also work while another application has the focus.' },
];

export function DeskSettings() {
  const hostKind = useContext(ControllersContext)?.hostKind ?? 'browser';
  const electronToggles = offersStartAtLogin(navigator.platform) ? ELECTRON_TOGGLES : ELECTRON_TOGGLES.filter((t) => t.name !== 'startAtLogin');
  const toggles = hostKind === 'electron' ? [...COMMON_TOGGLES, ...electronToggles] : COMMON_TOGGLES;
  return (
    <div className="desk-settings">
      <ShortcutSettings />
      <section className="desk-section" aria-labelledby="desk-calls-title">
        <h3 id="desk-calls-title" className="desk-title">
          Calls and window
        </h3>
        <Toggles toggles={toggles} />
        {hostKind === 'browser' && <TelLinkHandler />}
      </section>
    </div>
  );
}

function ShortcutSettings() {
  const settingsActions = useSettingsActions();
  const saved = useAppStore((s) => s.preferences.shortcuts);
  const refused = useShortcutStatusStore((s) => s.refused);
  // Only what the agent changed: the rest follows the saved shortcuts (another window may change them).
  const [edits, setEdits] = useState<Partial<Record<ShortcutAction, string>>>({});
  const [refusal, setRefusal] = useState<{ action: ShortcutAction | undefined; message: string } | null>(null);
  const [status, setStatus] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const edit = (action: ShortcutAction, value: string) => {
    setEdits((e) => ({ ...e, [action]: value }));
    setStatus(null);
  };

  /** A combination pressed in the field is recorded as it is; a key press that cannot be one (letters, Backspace, Tab) types as usual. */
  const record = (action: ShortcutAction, ev: KeyboardEvent<HTMLInputElement>) => {
    const combo = shortcutOfKeyEvent(ev);
    if (combo === undefined) return;
    ev.preventDefault();
    edit(action, combo);
  };

  const save = async () => {
    const patch = shortcutsPatch(edits);
    if (Object.keys(patch).length === 0) {
      setStatus('No shortcut was changed.');
      return;
    }
    setBusy(true);
    const result = await settingsActions.savePreferences({ shortcuts: patch });
    setBusy(false);
    if (!result.ok) {
      setRefusal({ action: shortcutOfError(result.error), message: errorMessage(result.error) });
      setStatus(null);
      return;
    }
    setEdits({});
    setRefusal(null);
    setStatus('Shortcuts saved.');
  };

  return (
    <section className="desk-section" aria-labelledby="shortcuts-title">
      <h3 id="shortcuts-title" className="desk-title">
        Shortcuts
      </h3>
      <p className="hint">Press a combination in a field (or type it, e.g. Ctrl+Shift+A). They work while the softphone has the focus, in text fields too.</p>
      <form
        noValidate
        className="shortcut-grid"
        onSubmit={(e) => {
          e.preventDefault();
          void save();
        }}
      >
        {SHORTCUT_ACTIONS.map((action) => {
          const id = `shortcut-${action}`;
          const error = refusal && refusal.action === action ? refusal.message : null;
          const taken = takenShortcutText(refused, action, saved[action]);
          const describedBy = [error ? `${id}-error` : undefined, taken ? `${id}-taken` : undefined].filter(Boolean).join(' ');
          return (
            <div className="field shortcut-field" key={action}>
              <label htmlFor={id} className="field-label">
                {SHORTCUT_LABELS[action]}
              </label>
              <input
                id={id}
                className="input input-shortcut"
                type="text"
                value={edits[action] ?? saved[action]}
                autoComplete="off"
                spellCheck={false}
                maxLength={64}
                {...{ [SHORTCUT_RECORDER_ATTRIBUTE]: '' }}
                aria-invalid={error ? true : undefined}
                aria-describedby={describedBy || undefined}
                onKeyDown={(e) => record(action, e)}
                onChange={(e) => edit(action, e.target.value)}
              />
              {error && (
                <p id={`${id}-error`} role="alert" className="field-error">
                  {error}
                </p>
              )}
              {taken && (
                <p id={`${id}-taken`} className="hint field-warning">
                  {taken}
                </p>
              )}
            </div>
          );
        })}
        {refusal && refusal.action === undefined && (
          <p role="alert" className="field-error form-error">
            {refusal.message}
          </p>
        )}
        <div className="actions">
          {/* Not "Save": the account form above has that button. */}
          <button type="submit" className="btn btn-secondary" disabled={busy}>
            Apply shortcuts
          </button>
        </div>
        <p role="status" className="form-status">
          {status}
        </p>
      </form>
    </section>
  );
}

function Toggles({ toggles }: { toggles: readonly ToggleSpec[] }) {
  const settingsActions = useSettingsActions();
  const preferences = useAppStore((s) => s.preferences);
  const [error, setError] = useState<string | null>(null);
  // The click shows at once; the saved value takes over when the main process answers (a refusal puts the box back).
  const [pending, setPending] = useState<Partial<Record<BooleanPreference, boolean>>>({});

  const toggle = async (name: BooleanPreference, value: boolean) => {
    setPending((p) => ({ ...p, [name]: value }));
    const patch: PreferencesPatch = {};
    patch[name] = value;
    const result = await settingsActions.savePreferences(patch);
    setPending(({ [name]: _done, ...rest }) => rest);
    setError(result.ok ? null : errorMessage(result.error));
  };

  return (
    <div className="stack">
      {toggles.map((t) => (
        <div className="checkbox-field" key={t.name}>
          <label className="checkbox-label">
            <input type="checkbox" checked={pending[t.name] ?? preferences[t.name]} onChange={(e) => void toggle(t.name, e.target.checked)} aria-describedby={`pref-${t.name}-hint`} />
            {t.label}
          </label>
          <p id={`pref-${t.name}-hint`} className="hint">
            {t.hint}
          </p>
        </div>
      ))}
      {error && (
        <p role="alert" className="field-error">
          {error}
        </p>
      )}
    </div>
  );
}

/**
 * The browser asks the agent (from this click: browsers allow it only from a user gesture) to open
 * tel: links here, at GET /dial, which hands the number to this tab. callto: is not on the browsers'
 * list of schemes a page may handle in every browser; where it is refused, the reason is shown.
 * The registration names this origin, port included, and the browser host picks a random port
 * unless started with --port: hence the hint.
 */
function TelLinkHandler() {
  const [outcome, setOutcome] = useState<string | null>(null);
  const register = () => {
    const target = `${location.origin}/dial?to=%s`;
    const refused: string[] = [];
    for (const scheme of ['tel', 'callto']) {
      try {
        navigator.registerProtocolHandler(scheme, target);
      } catch (e) {
        refused.push(`${scheme}: (${errorText(e)})`);
      }
    }
    setOutcome(
      refused.length === 0
        ? 'Asked the browser to open tel: and callto: links here; confirm in its prompt if it shows one.'
        : `Asked the browser to open links here; it refused ${refused.join(', ')}.`,
    );
  };
  return (
    <div className="tel-handler">
      <button type="button" className="btn btn-secondary" onClick={register} aria-describedby="tel-handler-port">
        Handle tel: links
      </button>
      <p id="tel-handler-port" className="hint">
        {`Links go to port ${location.port || '80'}. They stop working if the softphone starts on another port: start it with a fixed --port (npm run start:browser -- --port ${location.port || '80'}).`}
      </p>
      <p role="status" className="hint">
        {outcome}
      </p>
    </div>
  );
}

// The desk's settings: the keyboard shortcuts, what a tel: link does, and what only one host can do
// (the Electron window and login item; the browser's handling of tel: links).
import { useContext, useState, type KeyboardEvent } from 'react';
import { useTranslation } from 'react-i18next';
import { SHORTCUT_ACTIONS, shortcutOfKeyEvent, type PreferencesPatch, type ShortcutAction } from '../../shared/preferences';
import { errorText, type AppError } from '../../shared/result';
import { ControllersContext, useSettingsActions } from '../app/controllers-context';
import { SHORTCUT_RECORDER_ATTRIBUTE } from '../app/shortcuts';
import { errorMessage } from '../error-texts';
import { i18n } from '../i18n/i18n';
import { ltrInText } from '../store/settings-form';
import { useAppStore } from '../store/store';
import { useShortcutStatusStore, type RefusedShortcut } from '../store/shortcut-status';
import { SECTION_HEADING_ID } from './settings-sections';

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
  return taken && i18n.t('desk.shortcuts.taken', { ns: 'settings', shortcut: taken.accelerator });
}

/**
 * Electron has login items on macOS and Windows only; on Linux the setting would do nothing. The
 * page's own platform (navigator.platform, e.g. "Linux x86_64") is the host's: the window runs there.
 */
export function offersStartAtLogin(platform: string): boolean {
  return !/linux/i.test(platform);
}

type BooleanPreference = 'dialLinksAtOnce' | 'ringDuringCall' | 'quitOnClose' | 'startAtLogin' | 'globalShortcuts';

/** Each one's label and hint: settings.json desk.toggles.<name>. */
const COMMON_TOGGLES: readonly BooleanPreference[] = ['ringDuringCall', 'dialLinksAtOnce'];
const ELECTRON_TOGGLES: readonly BooleanPreference[] = ['quitOnClose', 'startAtLogin', 'globalShortcuts'];

export function DeskSettings() {
  const { t } = useTranslation('settings');
  const hostKind = useContext(ControllersContext)?.hostKind ?? 'browser';
  const electronToggles = offersStartAtLogin(navigator.platform) ? ELECTRON_TOGGLES : ELECTRON_TOGGLES.filter((name) => name !== 'startAtLogin');
  const toggles = hostKind === 'electron' ? [...COMMON_TOGGLES, ...electronToggles] : COMMON_TOGGLES;
  return (
    <div className="desk-settings">
      <ShortcutSettings />
      <section className="settings-section" aria-labelledby={SECTION_HEADING_ID.calls}>
        <h3 id={SECTION_HEADING_ID.calls} className="settings-section-title" tabIndex={-1}>
          {t('desk.callsTitle')}
        </h3>
        <Toggles toggles={toggles} />
        {hostKind === 'browser' && <TelLinkHandler />}
      </section>
    </div>
  );
}

function ShortcutSettings() {
  const { t } = useTranslation('settings');
  const settingsActions = useSettingsActions();
  const saved = useAppStore((s) => s.preferences.shortcuts);
  const refused = useShortcutStatusStore((s) => s.refused);
  // Only what the agent changed: the rest follows the saved shortcuts (another window may change them).
  const [edits, setEdits] = useState<Partial<Record<ShortcutAction, string>>>({});
  // The refusal is kept as the main process gave it and worded when drawn (errorMessage says shared/'s
  // rules in the UI's language), so a change of language re-words it.
  const [refusal, setRefusal] = useState<{ action: ShortcutAction | undefined; error: AppError } | null>(null);
  const [status, setStatus] = useState<'unchanged' | 'saved' | null>(null);
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
      setStatus('unchanged');
      return;
    }
    setBusy(true);
    const result = await settingsActions.savePreferences({ shortcuts: patch });
    setBusy(false);
    if (!result.ok) {
      setRefusal({ action: shortcutOfError(result.error), error: result.error });
      setStatus(null);
      return;
    }
    setEdits({});
    setRefusal(null);
    setStatus('saved');
  };

  return (
    <section className="settings-section" aria-labelledby={SECTION_HEADING_ID.shortcuts}>
      <h3 id={SECTION_HEADING_ID.shortcuts} className="settings-section-title" tabIndex={-1}>
        {t('desk.shortcuts.title')}
      </h3>
      <p className="hint">{t('desk.shortcuts.hint')}</p>
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
          const error = refusal && refusal.action === action ? errorMessage(refusal.error) : null;
          const taken = takenShortcutText(refused, action, saved[action]);
          const describedBy = [error ? `${id}-error` : undefined, taken ? `${id}-taken` : undefined].filter(Boolean).join(' ');
          return (
            <div className="field shortcut-field" key={action}>
              <label htmlFor={id} className="field-label">
                {/* shared/preferences.ts SHORTCUT_LABELS are the main process's English names; the window says them in its language. */}
                {t(`desk.shortcuts.actions.${action}`)}
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
            {errorMessage(refusal.error)}
          </p>
        )}
        <div className="actions">
          {/* Not "Save": the account form above has that button. */}
          <button type="submit" className="btn btn-secondary" disabled={busy}>
            {t('desk.shortcuts.apply')}
          </button>
        </div>
        <p role="status" className="form-status">
          {status && t(`desk.shortcuts.${status}`)}
        </p>
      </form>
    </section>
  );
}

function Toggles({ toggles }: { toggles: readonly BooleanPreference[] }) {
  const { t } = useTranslation('settings');
  const settingsActions = useSettingsActions();
  const preferences = useAppStore((s) => s.preferences);
  const [error, setError] = useState<AppError | null>(null);
  // The click shows at once; the saved value takes over when the main process answers (a refusal puts the box back).
  const [pending, setPending] = useState<Partial<Record<BooleanPreference, boolean>>>({});

  const toggle = async (name: BooleanPreference, value: boolean) => {
    setPending((p) => ({ ...p, [name]: value }));
    const patch: PreferencesPatch = {};
    patch[name] = value;
    const result = await settingsActions.savePreferences(patch);
    setPending(({ [name]: _done, ...rest }) => rest);
    setError(result.ok ? null : result.error);
  };

  return (
    <div className="stack">
      {toggles.map((name) => (
        <div className="checkbox-field" key={name}>
          <label className="checkbox-label">
            <input type="checkbox" checked={pending[name] ?? preferences[name]} onChange={(e) => void toggle(name, e.target.checked)} aria-describedby={`pref-${name}-hint`} />
            {t(`desk.toggles.${name}.label`)}
          </label>
          <p id={`pref-${name}-hint`} className="hint">
            {t(`desk.toggles.${name}.hint`)}
          </p>
        </div>
      ))}
      {error && (
        <p role="alert" className="field-error">
          {errorMessage(error)}
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
  const { t } = useTranslation('settings');
  // The schemes the browser refused, each with its reason (the browser's words); null before the click.
  const [outcome, setOutcome] = useState<string[] | null>(null);
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
    setOutcome(refused);
  };
  const port = location.port || '80';
  return (
    <div className="tel-handler">
      <button type="button" className="btn btn-secondary" onClick={register} aria-describedby="tel-handler-port">
        {t('desk.telLinks.button')}
      </button>
      <p id="tel-handler-port" className="hint">
        {t('desk.telLinks.port', { port, flag: ltrInText('--port'), command: ltrInText(`npm run start:browser -- --port ${port}`) })}
      </p>
      <p role="status" className="hint">
        {outcome === null
          ? null
          : outcome.length === 0
            ? t('desk.telLinks.asked')
            : t('desk.telLinks.refused', { refused: outcome.join(t('desk.telLinks.separator')) })}
      </p>
    </div>
  );
}

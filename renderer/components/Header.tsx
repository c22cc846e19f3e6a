import { useTranslation } from 'react-i18next';
import type { HistoryEntry } from '../../shared/history';
import { missedCalls } from '../../shared/preferences';
import { useSettingsActions, useUpdateActions } from '../app/controllers-context';
import { offersRestart, useUpdateStatusStore } from '../store/updates';
import { connectionIndicator } from '../call-display';
import { i18n } from '../i18n/i18n';
import { useAppStore } from '../store/store';
import { PresenceControl } from './PresenceControl';
import { seenPatchFor, showRecentCalls } from './RecentCalls';

export function Header() {
  const { t } = useTranslation('common');
  const mode = useAppStore((s) => s.mode);
  const hostLink = useAppStore((s) => s.hostLink);
  const service = useAppStore((s) => s.service);
  const screen = useAppStore((s) => s.screen);
  const setScreen = useAppStore((s) => s.setScreen);
  const indicator = connectionIndicator(hostLink, service);

  return (
    <header className="app-header">
      <div className="brand">
        <svg className="brand-mark" viewBox="0 0 24 24" aria-hidden="true" focusable="false">
          <path d="M6.6 10.8a15.1 15.1 0 0 0 6.6 6.6l2.2-2.2a1 1 0 0 1 1-.25 11.4 11.4 0 0 0 3.6.57 1 1 0 0 1 1 1V20a1 1 0 0 1-1 1A17 17 0 0 1 3 4a1 1 0 0 1 1-1h3.5a1 1 0 0 1 1 1c0 1.25.2 2.45.57 3.6a1 1 0 0 1-.25 1z" />
        </svg>
        <h1>{t('app.name')}</h1>
        {mode === 'sandbox' && (
          <span className="badge badge-sandbox" title={t('header.sandboxTitle')}>
            {t('sandbox.title')}
          </span>
        )}
      </div>
      <div className="header-end">
        <RestartToUpdate />
        <MissedCallsButton />
        <PresenceControl />
        <span role="status" aria-label={t('header.connection')} className={`connection connection-${indicator.tone}`} title={indicator.detail}>
          <span className="connection-dot" aria-hidden="true" />
          {indicator.text}
        </span>
        <button type="button" className="btn btn-quiet" aria-pressed={screen === 'team'} onClick={() => setScreen(screen === 'team' ? 'phone' : 'team')}>
          {t('team.title')}
        </button>
        <button
          type="button"
          className="btn btn-quiet"
          aria-pressed={screen === 'settings'}
          onClick={() => setScreen(screen === 'settings' ? 'phone' : 'settings')}
        >
          {t('header.settings')}
        </button>
      </div>
    </header>
  );
}

/**
 * The header's missed-calls button: its words and what a click marks seen; undefined while there is
 * nothing to show. Worded here in the UI's language (shared/preferences.ts missedCallsText is the
 * tray's English).
 */
export function missedCallsButton(history: readonly HistoryEntry[], seenAt: number): { text: string; seen: { missedSeenAt: number } } | undefined {
  const missed = missedCalls(history, seenAt);
  const seen = seenPatchFor(missed);
  return seen && { text: i18n.t('header.missedCalls', { count: missed.length }), seen };
}

/** Shown until the agent looks at the recent calls: a click takes them there and marks the calls seen. */
function MissedCallsButton() {
  // Subscribes to language changes: the words are made outside, by missedCallsButton().
  useTranslation('common');
  const settingsActions = useSettingsActions();
  const history = useAppStore((s) => s.history);
  const seenAt = useAppStore((s) => s.preferences.missedSeenAt);
  const setScreen = useAppStore((s) => s.setScreen);
  // Cheap enough for every render, so a language change re-words it at once.
  const button = missedCallsButton(history, seenAt);
  if (!button) return null;
  return (
    <button
      type="button"
      className="btn btn-missed"
      onClick={() => {
        setScreen('phone');
        showRecentCalls();
        void settingsActions.savePreferences(button.seen);
      }}
    >
      {button.text}
    </button>
  );
}

/**
 * A downloaded update waits for the agent: "Restart to update" only while no call is live (a call
 * that starts hides it again; the main process refuses a restart during a call anyway).
 */
function RestartToUpdate() {
  const { t } = useTranslation('common');
  const updates = useUpdateActions();
  const status = useUpdateStatusStore((s) => s.status);
  const error = useUpdateStatusStore((s) => s.restartError);
  const callLive = useAppStore((s) => Object.values(s.calls).some((c) => c.phase !== 'ended'));
  const offered = offersRestart(status, callLive);
  if (!offered && error === null) return null;
  return (
    <>
      {offered && (
        <button type="button" className="btn btn-secondary btn-update" title={status?.kind === 'ready' ? t('header.updateReady', { version: status.version }) : undefined} onClick={() => void updates.restart()}>
          {t('header.restartToUpdate')}
        </button>
      )}
      {/* Visible, and kept after the button goes: a refusal means a call went live, a failure that the status changed. */}
      {error !== null && (
        <span role="alert" className="header-alert">
          {error}
        </span>
      )}
    </>
  );
}

import { useTranslation } from 'react-i18next';
import type { AgentPresence, PresenceChoice } from '../../shared/api';
import { useDeskActions } from '../app/controllers-context';
import { useAppStore } from '../store/store';

/** One entry of the "Presence" select. */
export interface PresenceOption {
  /** The select's value: unique per entry ("break:Lunch" for a break). */
  value: string;
  choice: PresenceChoice;
  reason?: string;
}

const BREAK_PREFIX = 'break:';
const optionValue = (choice: PresenceChoice, reason?: string): string => (choice === 'break' ? `${BREAK_PREFIX}${reason ?? ''}` : choice);

/**
 * "Available", one break per team reason, "Do not disturb". A break whose reason the team no longer
 * offers stays listed while the agent is on it, so the select never shows a state the agent is not in.
 */
export function presenceOptions(breakReasons: readonly string[], presence: Pick<AgentPresence, 'choice' | 'breakReason'> | null): PresenceOption[] {
  const reasons = [...breakReasons];
  if (presence?.choice === 'break' && !reasons.includes(presence.breakReason ?? '')) reasons.push(presence.breakReason ?? '');
  return [
    { value: 'available', choice: 'available' },
    ...reasons.map((reason): PresenceOption => ({ value: optionValue('break', reason), choice: 'break', reason })),
    { value: 'dnd', choice: 'dnd' },
  ];
}

/** The agent's choice; while a call is under way the relay is told "on a call", after it "after-call work", whatever it is. */
export function PresenceControl() {
  const { t } = useTranslation('common');
  const desk = useDeskActions();
  const presence = useAppStore((s) => s.presence);
  const error = useAppStore((s) => s.presenceError);
  const breakReasons = useAppStore((s) => s.team.settings.breakReasons);
  if (!presence) return null;
  const onCall = presence.status === 'on_call' || presence.status === 'call_waiting';
  const afterCallWork = presence.status === 'after_call_work';
  const options = presenceOptions(breakReasons, presence);
  const label = (o: PresenceOption): string => {
    if (o.choice === 'available') return t('presence.available');
    if (o.choice === 'dnd') return t('presence.dnd');
    return o.reason ? t('presence.break', { reason: o.reason }) : t('presence.breakNoReason');
  };
  return (
    <span className={`presence presence-${presence.status}`}>
      <select
        aria-label={t('presence.label')}
        value={optionValue(presence.choice, presence.breakReason)}
        title={onCall ? t('presence.onCallTitle') : afterCallWork ? t('presence.afterCallWorkTitle') : undefined}
        aria-invalid={error !== null ? true : undefined}
        onChange={(e) => {
          const chosen = options.find((o) => o.value === e.target.value);
          if (chosen) void desk.setPresence(chosen.choice, chosen.reason);
        }}
      >
        {options.map((o) => (
          <option key={o.value} value={o.value}>
            {label(o)}
          </option>
        ))}
      </select>
      {onCall && <span className="presence-note">{t('presence.onCall')}</span>}
      {afterCallWork && <span className="presence-note presence-note-acw">{t('presence.afterCallWork')}</span>}
      {error !== null && (
        <span role="alert" className="visually-hidden">
          {error}
        </span>
      )}
    </span>
  );
}

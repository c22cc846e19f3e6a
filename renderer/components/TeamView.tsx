import { useEffect, useRef, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { useWallboard } from '../app/controllers-context';
import { useNow } from '../app/use-now';
import { useAppStore } from '../store/store';
import { useWallboardStore, type FiguresView } from '../store/wallboard';
import { todayText } from '../wallboard-display';
import { TeamAgents } from './TeamAgents';
import { LiveCalls } from './LiveCalls';
import { TeamCallbacks } from './TeamCallbacks';
import { TeamVoicemails } from './TeamVoicemails';
import { WallboardFigures } from './WallboardFigures';

/**
 * The "Team" view: the team's wallboard, read while the view is open (app/wallboard-actions.ts): the
 * figures, a supervisor's live calls (LiveCalls.tsx), the customers who asked to be called back, the
 * team's voicemails, and the agents. The
 * clocks tick every second on the relay's time (the board's `at` against the window's clock); none
 * of them is live for screen readers: a polite status speaks only when the records' state changes.
 */
export function TeamView() {
  const { t } = useTranslation('common');
  const wallboard = useWallboard();
  useEffect(() => wallboard.watch(), [wallboard]);
  const board = useWallboardStore((s) => s.board);
  const figures = useWallboardStore((s) => s.figures);
  const voicemails = useWallboardStore((s) => s.voicemails);
  const error = useWallboardStore((s) => s.error);
  const teamTimezone = useAppStore((s) => s.team.settings.timezone);
  const now = useNow(1000);
  const relayNow = now + (board?.offsetMs ?? 0);
  const timezone = board?.timezone ?? teamTimezone;
  const said = useRecordsAnnouncement(figures.kind);
  const supervisor = useAppStore((s) => s.team.role === 'supervisor');
  // This agent's id: the relay says it with the team's settings; the board's `self` marks it too.
  const ownId = useAppStore((s) => s.team.agentId);
  const selfId = ownId ?? board?.agents.find((a) => a.self === true)?.agentId;

  return (
    <section className="card team-view" aria-labelledby="team-title">
      <div className="team-head">
        <h2 id="team-title" className="card-title">
          {t('team.title')}
        </h2>
        <p className="team-today">{todayText(timezone, board?.dayStartedAt)}</p>
      </div>
      <div role="status" className="visually-hidden">
        {said}
      </div>
      {error !== null && (
        <p role="alert" className="banner banner-error team-error">
          {error}
        </p>
      )}
      <WallboardFigures figures={figures} timezone={timezone} relayNow={relayNow} />
      {supervisor && <LiveCalls selfId={selfId} />}
      {board && (
        <div className="team-lists">
          <TeamCallbacks callbacks={board.callbacks} selfId={selfId} relayNow={relayNow} />
          <TeamVoicemails view={voicemails} relayNow={relayNow} />
        </div>
      )}
      {board && <TeamAgents agents={board.agents} relayNow={relayNow} />}
    </section>
  );
}

/** What the polite status says: the records' state when it changes after the first read, nothing on every read. */
function useRecordsAnnouncement(kind: FiguresView['kind']): string {
  const { t } = useTranslation('common');
  const [said, setSaid] = useState('');
  const last = useRef(kind);
  useEffect(() => {
    const before = last.current;
    last.current = kind;
    if (before === kind || before === 'loading' || kind === 'loading') return;
    setSaid(kind === 'none' ? t('team.noRecords') : kind === 'unavailable' ? t('team.recordsUnavailable') : t('team.recordsBack'));
  }, [kind, t]);
  return said;
}

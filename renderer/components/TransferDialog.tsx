import { useEffect, useId, useRef, useState, type RefObject } from 'react';
import { useTranslation } from 'react-i18next';
import { useCallActions } from '../app/controllers-context';
import { errorMessage } from '../error-texts';
import { presenceText, teamChoices, transferDialogTitle } from '../transfer-display';
import type { AppError } from '../../shared/result';
import { ANYONE_AVAILABLE, type TeamMember, type TransferKind } from '../../shared/transfer';

/** The team as the dialog has it: asked for when it opens, and again by "Try again". */
type TeamLoad = { status: 'loading' } | { status: 'failed'; error: AppError } | { status: 'loaded'; members: TeamMember[] };

/**
 * "Transfer to" / "Consult with": a modal dialog (the page behind it inert) that lists "Anyone
 * available" and every colleague with their presence. Escape and "Cancel" close it; the focus goes
 * to the first choice once the team is there, and back to the button that opened it when it closes.
 * A choice the main process refuses is said here, with the list kept for another choice.
 */
export function TransferDialog({ localId, customer, kind, onClose }: { localId: string; customer: string; kind: TransferKind; onClose: () => void }) {
  const { t } = useTranslation('calls');
  const callActions = useCallActions();
  const dialog = useRef<HTMLDialogElement>(null);
  const [team, setTeam] = useState<TeamLoad>({ status: 'loading' });
  const [attempt, setAttempt] = useState(0);
  const [sending, setSending] = useState<string | null>(null);
  const [refusal, setRefusal] = useState<AppError | null>(null);
  // The owner's latest onClose, for an answer that comes back renders later and for the close event.
  const closeRef = useRef(onClose);
  useEffect(() => {
    closeRef.current = onClose;
  }, [onClose]);

  useEffect(() => {
    const element = dialog.current;
    if (!element) return;
    element.showModal();
    // The dialog itself first: its name is read out, and the choices are not there yet.
    element.focus();
    return () => {
      // Closing a modal dialog gives the focus back to where it was before (the opener), by the
      // platform's own rule. An opener that is gone (the call moved on) leaves it to the call panel.
      if (element.open) element.close();
    };
  }, []);

  useEffect(() => {
    let current = true;
    void callActions.team().then((result) => {
      if (current) setTeam(result.ok ? { status: 'loaded', members: result.value } : { status: 'failed', error: result.error });
    });
    return () => {
      current = false;
    };
  }, [callActions, attempt]);

  const choose = async (to: string): Promise<void> => {
    if (sending !== null) return;
    setSending(to);
    setRefusal(null);
    const result = await callActions.transfer(localId, to, kind);
    if (result.ok) {
      closeRef.current();
      return;
    }
    setSending(null);
    setRefusal(result.error);
  };

  return (
    <dialog
      ref={dialog}
      className="transfer-dialog"
      aria-labelledby={`transfer-${localId}-title`}
      aria-describedby={`transfer-${localId}-customer`}
      tabIndex={-1}
      // Escape, or "Cancel" through close(): the owner unmounts the dialog, which gives the focus back.
      onClose={() => closeRef.current()}
    >
      <h2 id={`transfer-${localId}-title`} className="transfer-dialog-title">
        {transferDialogTitle(kind)}
      </h2>
      {/* Whose call goes on: the customer of the call the dialog was opened from. */}
      <p id={`transfer-${localId}-customer`} className="transfer-dialog-customer">
        <bdi>{customer}</bdi>
      </p>
      <TeamView
        team={team}
        sending={sending}
        refusal={refusal}
        dialog={dialog}
        onChoose={(to) => void choose(to)}
        onRetry={() => {
          setTeam({ status: 'loading' });
          setAttempt((n) => n + 1);
        }}
      />
      <div className="transfer-dialog-actions">
        <button type="button" className="btn btn-secondary" onClick={() => dialog.current?.close()}>
          {t('transfer.cancel')}
        </button>
      </div>
    </dialog>
  );
}

/** Whether the focus is nowhere useful in the dialog: on the dialog itself, or on nothing at all. */
function focusIsFree(dialog: HTMLDialogElement): boolean {
  const active = document.activeElement;
  return active === null || active === document.body || active === dialog || !dialog.contains(active);
}

function TeamView({
  team,
  sending,
  refusal,
  dialog,
  onChoose,
  onRetry,
}: {
  team: TeamLoad;
  sending: string | null;
  refusal: AppError | null;
  dialog: RefObject<HTMLDialogElement | null>;
  onChoose: (to: string) => void;
  onRetry: () => void;
}) {
  const { t } = useTranslation('calls');
  const first = useRef<HTMLButtonElement>(null);
  const retry = useRef<HTMLButtonElement>(null);
  const idBase = useId();

  // The team arrived (or did not): the focus goes to what the agent does next, unless it was put elsewhere.
  useEffect(() => {
    const element = dialog.current;
    if (!element || !focusIsFree(element)) return;
    if (team.status === 'loaded') first.current?.focus();
    else if (team.status === 'failed') retry.current?.focus();
  }, [team.status, dialog]);

  if (team.status === 'loading') {
    return (
      <p role="status" className="transfer-dialog-note">
        {t('transfer.loading')}
      </p>
    );
  }
  if (team.status === 'failed') {
    return (
      <div className="transfer-dialog-failed">
        <p role="alert" className="field-error">
          {t('transfer.loadFailed', { reason: errorMessage(team.error) })}
        </p>
        <button ref={retry} type="button" className="btn btn-secondary btn-small" onClick={onRetry}>
          {t('transfer.tryAgain')}
        </button>
      </div>
    );
  }

  const choices = teamChoices(team.members);
  const anyoneHint = `${idBase}-anyone`;
  return (
    <>
      {refusal && (
        <p role="alert" className="field-error transfer-refusal">
          {errorMessage(refusal)}
        </p>
      )}
      <ul className="team-list" aria-label={t('transfer.colleagues')} aria-busy={sending !== null}>
        <li className="team-row">
          <button ref={first} type="button" className="btn team-choice team-anyone" aria-describedby={anyoneHint} onClick={() => onChoose(ANYONE_AVAILABLE)}>
            {t('transfer.anyone')}
          </button>
          <span id={anyoneHint} className="team-presence team-hint">
            {t('transfer.anyoneHint')}
          </span>
        </li>
        {choices.map((choice, i) => {
          const presenceId = `${idBase}-presence-${i}`;
          return (
            <li key={choice.agentId} className={`team-row ${choice.enabled ? '' : 'is-unavailable'}`}>
              <button type="button" className="btn team-choice" disabled={!choice.enabled} aria-describedby={presenceId} onClick={() => onChoose(choice.agentId)}>
                <bdi>{choice.name}</bdi>
              </button>
              <span id={presenceId} className={`team-presence presence-${choice.presence}`}>
                <span className="presence-dot" aria-hidden="true" />
                {presenceText(choice.presence)}
              </span>
            </li>
          );
        })}
      </ul>
      {choices.length === 0 && <p className="empty transfer-dialog-note">{t('transfer.nobody')}</p>}
    </>
  );
}

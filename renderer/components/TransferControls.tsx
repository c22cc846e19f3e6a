import { useState, type ReactNode, type RefObject } from 'react';
import { useTranslation } from 'react-i18next';
import { useCallActions } from '../app/controllers-context';
import { transferStepText, type TransferStep } from '../transfer-display';
import type { TransferKind } from '../../shared/transfer';
import { TransferDialog } from './TransferDialog';

/**
 * "Transfer" and "Consult" beside Hold, and the dialog either opens. Rendered only while the call
 * offers them, so a dialog never outlives that: it closes as the call moves on.
 */
export function TransferButtons({ localId, customer }: { localId: string; customer: string }) {
  const { t } = useTranslation('calls');
  const [picking, setPicking] = useState<TransferKind | null>(null);
  return (
    <>
      <button type="button" className="btn btn-toggle" aria-haspopup="dialog" onClick={() => setPicking('transfer')}>
        {t('transfer.transfer')}
      </button>
      <button type="button" className="btn btn-toggle" aria-haspopup="dialog" onClick={() => setPicking('consult')}>
        {t('transfer.consult')}
      </button>
      {picking !== null && <TransferDialog localId={localId} customer={customer} kind={picking} onClose={() => setPicking(null)} />}
    </>
  );
}

/**
 * Where the call's transfer is, in words, with what the agent can do at that step: "Cancel transfer"
 * while it rings; "Complete transfer", "Add to call", "Cancel consult" while consulting. Not
 * answered is an alert; a transfer received here a quiet note. `firstAction` takes the step's first
 * button, where the call panel puts a focus the step's change left nowhere.
 */
export function TransferStatus({ localId, step, firstAction }: { localId: string; step: TransferStep; firstAction: RefObject<HTMLButtonElement | null> }) {
  const { t } = useTranslation('calls');
  const callActions = useCallActions();
  // One request at a time: a second click while the first is under way is not a second command.
  const [pending, setPending] = useState(false);
  const text = transferStepText(step);
  if (step.step === 'none' || text === undefined) return null;

  const act = (run: (localId: string) => Promise<void>) => () => {
    if (pending) return;
    setPending(true);
    void run(localId).finally(() => setPending(false));
  };
  const box = (actions?: ReactNode) => (
    <div className="transfer-box">
      <p role="status" className="transfer-text">
        {text}
      </p>
      {actions !== undefined && <div className="transfer-actions">{actions}</div>}
    </div>
  );

  switch (step.step) {
    case 'not_answered':
      return (
        <p role="alert" className="transfer-alert">
          {text}
        </p>
      );
    case 'received':
      return <p className="hint transfer-note">{text}</p>;
    case 'calling':
      return box(
        <button ref={firstAction} type="button" className="btn btn-secondary" aria-disabled={pending || undefined} onClick={act((id) => callActions.cancelTransfer(id))}>
          {step.transfer.kind === 'consult' ? t('transfer.cancelConsult') : t('transfer.cancelTransfer')}
        </button>,
      );
    case 'consulting':
      return box(
        <>
          <button ref={firstAction} type="button" className="btn btn-primary" aria-disabled={pending || undefined} onClick={act((id) => callActions.completeTransfer(id))}>
            {t('transfer.completeTransfer')}
          </button>
          <button type="button" className="btn btn-secondary" aria-disabled={pending || undefined} onClick={act((id) => callActions.addToCall(id))}>
            {t('transfer.addToCall')}
          </button>
          <button type="button" className="btn btn-secondary" aria-disabled={pending || undefined} onClick={act((id) => callActions.cancelTransfer(id))}>
            {t('transfer.cancelConsult')}
          </button>
        </>,
      );
    case 'consulted':
    case 'joined':
      return box();
  }
}

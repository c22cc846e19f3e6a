import { useTranslation } from 'react-i18next';
import { useWallboard } from '../app/controllers-context';
import { peerNumberText } from '../call-display';
import type { CallbackRequest } from '../../shared/callbacks';
import { useWallboardStore } from '../store/wallboard';
import { callbackTimeLeftText } from '../wallboard-display';
import { Ltr } from './Ltr';

/**
 * "Callback requested": the customers who asked to be called back, the oldest first, each with the
 * time its permission has left (on the relay's clock, like every clock of the view; in no live
 * region) and "Call back" — or who took it: "Taken by NAME" for a colleague's, "Taken by you" (with
 * "Call back" still) for this agent's.
 */
export function TeamCallbacks({ callbacks, selfId, relayNow }: { callbacks: readonly CallbackRequest[]; selfId: string | undefined; relayNow: number }) {
  const { t } = useTranslation('common');
  return (
    <section className="team-section team-callbacks" aria-labelledby="team-callbacks-title">
      <h3 id="team-callbacks-title" className="team-section-title">
        {t('team.callbacks')}
      </h3>
      {callbacks.length === 0 ? (
        <p className="team-empty">{t('team.callbacksEmpty')}</p>
      ) : (
        <ul className="team-requests" aria-label={t('team.callbacks')}>
          {callbacks.map((request) => (
            <CallbackItem key={request.id} request={request} selfId={selfId} relayNow={relayNow} />
          ))}
        </ul>
      )}
    </section>
  );
}

function CallbackItem({ request, selfId, relayNow }: { request: CallbackRequest; selfId: string | undefined; relayNow: number }) {
  const { t } = useTranslation('common');
  const { t: tCalls } = useTranslation('calls');
  const wallboard = useWallboard();
  const note = useWallboardStore((s) => s.callbackNotes[request.id]);
  const number = peerNumberText(request);
  const name = request.name?.trim();
  const left = callbackTimeLeftText(request, relayNow);
  const expired = !request.permanent && request.expiresAt !== undefined && request.expiresAt <= relayNow;
  const taker = request.takenBy;
  const mine = taker !== undefined && taker.agentId === selfId;
  const colleague = taker !== undefined && !mine;
  const refused = note?.kind === 'refused' ? note.text : undefined;
  // Only a number can be dialled: the dialer places calls to phone numbers.
  const dialable = request.number !== undefined && !expired;

  return (
    <li className="team-request">
      <div className="team-request-line">
        <span className="team-request-who">
          {name ? <bdi className="team-request-name">{name}</bdi> : <span className="team-request-name">{number ? <Ltr>{number}</Ltr> : tCalls('peer.unknown')}</span>}
          {name && number && (
            <span className="team-request-number">
              <Ltr>{number}</Ltr>
            </span>
          )}
        </span>
        <span className={`team-request-left${expired ? ' is-expired' : ''}`}>{left}</span>
        {/* A colleague's refusal says who has it already: the item says it once. */}
        {taker && !(colleague && refused !== undefined) && <span className={`team-request-taker${mine ? ' is-mine' : ''}`}>{mine ? t('team.takenByYou') : t('team.takenBy', { name: taker.name })}</span>}
        {!colleague && dialable && (
          <button
            type="button"
            className="btn btn-secondary btn-take"
            aria-disabled={note?.kind === 'taking' ? true : undefined}
            onClick={() => void wallboard.callBack(request)}
          >
            {t('team.callBack')}
          </button>
        )}
        {!colleague && request.number === undefined && <span className="team-request-note">{t('team.noNumber')}</span>}
      </div>
      {refused !== undefined && (
        <p role="alert" className="team-request-error">
          {refused}
        </p>
      )}
    </li>
  );
}

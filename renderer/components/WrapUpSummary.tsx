import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import type { WrapUp } from '../../shared/history';

/** Notes longer than this show their start, with the whole text a click away. */
export const NOTES_SHOWN = 120;

/** The start of long notes, cut at a word where one is near, with an ellipsis; short notes as they are. */
export function shortNotes(notes: string, most = NOTES_SHOWN): string {
  const flat = notes.replace(/\s+/g, ' ').trim();
  if (flat.length <= most) return flat;
  const cut = flat.slice(0, most);
  const space = cut.lastIndexOf(' ');
  return `${(space > most * 0.6 ? cut.slice(0, space) : cut).trimEnd()}…`;
}

export type WrapUpSync = 'saved' | 'pending' | 'refused';
export const wrapUpSync = (wrapUp: Pick<WrapUp, 'synced' | 'refused'>): WrapUpSync => (wrapUp.synced ? 'saved' : wrapUp.refused ? 'refused' : 'pending');

/** A saved wrap-up in recent calls: the disposition, the notes (shortened), and whether the team's records have it. */
export function WrapUpSummary({ wrapUp, idBase }: { wrapUp: WrapUp; idBase: string }) {
  const { t } = useTranslation('calls');
  const [whole, setWhole] = useState(false);
  const sync = wrapUpSync(wrapUp);
  const reason = wrapUp.syncError?.trim();
  const short = shortNotes(wrapUp.notes);
  const long = short !== wrapUp.notes.trim();
  const notesId = `${idBase}-notes`;
  const syncText =
    sync === 'saved'
      ? t('wrapUp.sync.saved')
      : sync === 'refused'
        ? reason
          ? t('wrapUp.sync.refusedBecause', { reason })
          : t('wrapUp.sync.refused')
        : reason
          ? t('wrapUp.sync.pendingBecause', { reason })
          : t('wrapUp.sync.pending');

  return (
    <div className="wrapup-summary">
      <p className="wrapup-line">
        <span className="visually-hidden">{t('wrapUp.summaryLead')}</span>
        <span className={`wrapup-disposition ${wrapUp.disposition === null ? 'is-none' : ''}`}>
          <bdi>{wrapUp.disposition ?? t('wrapUp.noDisposition')}</bdi>
        </span>
        <span className={`wrapup-sync wrapup-sync-${sync}`}>{syncText}</span>
      </p>
      {wrapUp.notes.trim() !== '' && (
        <p className="wrapup-notes">
          <span id={notesId} className={whole ? 'wrapup-notes-whole' : undefined} title={long && !whole ? wrapUp.notes : undefined}>
            <bdi>{whole || !long ? wrapUp.notes : short}</bdi>
          </span>
          {long && (
            <button type="button" className="btn-inline" aria-expanded={whole} aria-controls={notesId} onClick={() => setWhole(!whole)}>
              {whole ? t('wrapUp.showLess') : t('wrapUp.showAll')}
            </button>
          )}
        </p>
      )}
    </div>
  );
}

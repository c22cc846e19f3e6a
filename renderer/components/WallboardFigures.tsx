import { useTranslation } from 'react-i18next';
import { formatMinutesSeconds, formatTimeIn } from '../i18n/format';
import type { DayFigures, FiguresView } from '../store/wallboard';
import { countText, elapsedText, NO_FIGURE, ratioText } from '../wallboard-display';
import { Ltr } from './Ltr';

/**
 * The wallboard's tiles: the calls waiting now and the longest wait, then the day's figures. Records
 * that cannot be read keep the last figures, marked with the time they were read; a relay that keeps
 * none says so instead.
 */
export function WallboardFigures({ figures, timezone, relayNow }: { figures: FiguresView; timezone: string; relayNow: number }) {
  const { t } = useTranslation('common');
  switch (figures.kind) {
    case 'loading':
      return <p className="team-note">{t('team.loading')}</p>;
    case 'none':
      return <p className="team-note">{t('team.noRecords')}</p>;
    case 'live':
      return <Tiles figures={figures.figures} waitedUntil={relayNow} />;
    case 'unavailable':
      return (
        <>
          <p className="team-note team-note-warning">
            {t('team.recordsUnavailable')}
            {figures.kept && (
              <>
                {' '}
                <span className="team-from">{t('team.figuresFrom', { time: formatTimeIn(figures.kept.at, timezone) })}</span>
              </>
            )}
          </p>
          {/* Kept figures stand still: the longest wait is the one read then. */}
          {figures.kept && <Tiles figures={figures.kept} waitedUntil={figures.kept.at} stale />}
        </>
      );
  }
}

function Tiles({ figures, waitedUntil, stale = false }: { figures: DayFigures; waitedUntil: number; stale?: boolean }) {
  const { t } = useTranslation('common');
  const { waiting, today } = figures;
  const longest = waiting.calls > 0 && waiting.longestSince !== undefined ? elapsedText(waitedUntil - waiting.longestSince) : NO_FIGURE;
  const handle = today.averageHandleMs !== undefined ? formatMinutesSeconds(today.averageHandleMs / 1000) : NO_FIGURE;
  const level = today.serviceLevel;
  const offered = level.offered > 0 && level.ratio !== undefined;
  return (
    <div className={`team-tiles${stale ? ' is-stale' : ''}`}>
      <Tile id="calls-waiting" name={t('team.callsWaiting')} value={countText(waiting.calls)} />
      <Tile id="longest-wait" name={t('team.longestWait')} value={longest} />
      <Tile id="answered" name={t('team.answered')} value={countText(today.answered)} />
      <Tile id="missed" name={t('team.missed')} value={countText(today.missed)} />
      <Tile id="abandoned" name={t('team.abandoned')} value={countText(today.abandoned)} />
      <Tile id="handle-time" name={t('team.averageHandleTime')} value={handle} />
      <Tile
        id="service-level"
        name={t('team.serviceLevel')}
        value={offered ? ratioText(level.ratio ?? 0) : NO_FIGURE}
        detail={offered ? t('team.serviceLevelDetail', { answered: countText(level.answeredWithin), offered: countText(level.offered), seconds: countText(level.thresholdSec) }) : undefined}
      />
    </div>
  );
}

/** A labelled figure: its name, then its value (a screen reader reads "Calls waiting: 3"). */
function Tile({ id, name, value, detail }: { id: string; name: string; value: string; detail?: string | undefined }) {
  const { t } = useTranslation('common');
  const nameId = `team-tile-${id}`;
  return (
    <figure className="team-tile" aria-labelledby={nameId}>
      <figcaption id={nameId} className="team-tile-name">
        {name}
      </figcaption>
      <p className="team-tile-value">
        <span className="visually-hidden">{t('team.figureSeparator')}</span>
        <Ltr>{value}</Ltr>
      </p>
      {detail !== undefined && <p className="team-tile-detail">{detail}</p>}
    </figure>
  );
}

import { useTranslation } from 'react-i18next';
import { formatNumber } from '../i18n/format';

/** audioLevel is linear amplitude; the bar uses decibels (−60 dB … 0 dB) so speech fills it the way it sounds. */
function barFraction(level: number): number {
  if (level <= 0) return 0;
  return Math.min(1, Math.max(0, 1 + (20 * Math.log10(level)) / 60));
}

export function LevelMeter({ label, value }: { label: string; value: number }) {
  const { t } = useTranslation('calls');
  const fraction = barFraction(value);
  return (
    <div className="meter">
      <span className="meter-label" aria-hidden="true">
        {label}
      </span>
      <div
        role="meter"
        aria-label={label}
        aria-valuemin={0}
        aria-valuemax={1}
        aria-valuenow={value}
        aria-valuetext={t('meter.value', { percent: formatNumber(Math.round(value * 100)) })}
        className="meter-track"
      >
        <div className="meter-fill" style={{ transform: `scaleX(${fraction})` }} />
      </div>
    </div>
  );
}

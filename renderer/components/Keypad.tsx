import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { useCallActions } from '../app/controllers-context';
import { Ltr } from './Ltr';

const KEYS = ['1', '2', '3', '4', '5', '6', '7', '8', '9', '*', '0', '#'] as const;
type Key = (typeof KEYS)[number];

/** DTMF keys for menus on the customer's side (RFC 4733 telephone-event, protocol.md). */
export function Keypad({ localId, enabled }: { localId: string; enabled: boolean }) {
  const { t } = useTranslation('calls');
  const callActions = useCallActions();
  const [sent, setSent] = useState('');
  const [problem, setProblem] = useState(false);
  // The letters printed on a phone's keys (ITU-T E.161).
  const letters: Partial<Record<Key, string>> = {
    2: t('keypad.letters.k2'),
    3: t('keypad.letters.k3'),
    4: t('keypad.letters.k4'),
    5: t('keypad.letters.k5'),
    6: t('keypad.letters.k6'),
    7: t('keypad.letters.k7'),
    8: t('keypad.letters.k8'),
    9: t('keypad.letters.k9'),
  };

  const press = (key: string) => {
    if (callActions.sendDtmf(localId, key)) {
      setSent((s) => (s + key).slice(-24));
      setProblem(false);
    } else {
      setProblem(true);
    }
  };

  return (
    <div
      className="keypad"
      role="group"
      aria-label={t('keypad.label')}
      onKeyDown={(e) => {
        if (!enabled || e.ctrlKey || e.metaKey || e.altKey) return;
        if ((KEYS as readonly string[]).includes(e.key) && !(e.target instanceof HTMLButtonElement && e.key === ' ')) {
          e.preventDefault();
          press(e.key);
        }
      }}
    >
      <output className="keypad-sent" aria-label={t('keypad.tonesSent')}>
        {sent ? <Ltr>{sent}</Ltr> : '\u00a0'}
      </output>
      {/* A phone's keypad reads 1 2 3 from the left in every language. */}
      <div className="keypad-grid" dir="ltr">
        {KEYS.map((key) => (
          <button key={key} type="button" className="key" disabled={!enabled} onClick={() => press(key)}>
            <span className="key-digit">{key}</span>
            <span className="key-letters" aria-hidden="true">
              {letters[key] ?? '\u00a0'}
            </span>
          </button>
        ))}
      </div>
      {problem && (
        <p role="alert" className="field-error">
          {t('keypad.cannotSend')}
        </p>
      )}
    </div>
  );
}

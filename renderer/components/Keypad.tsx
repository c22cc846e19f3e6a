import { useState } from 'react';
import { useCallActions } from '../app/controllers-context';

const KEYS = ['1', '2', '3', '4', '5', '6', '7', '8', '9', '*', '0', '#'] as const;
const LETTERS: Partial<Record<(typeof KEYS)[number], string>> = { 2: 'ABC', 3: 'DEF', 4: 'GHI', 5: 'JKL', 6: 'MNO', 7: 'PQRS', 8: 'TUV', 9: 'WXYZ' };

/** DTMF keys for menus on the customer's side (RFC 4733 telephone-event, protocol.md). */
export function Keypad({ localId, enabled }: { localId: string; enabled: boolean }) {
  const callActions = useCallActions();
  const [sent, setSent] = useState('');
  const [problem, setProblem] = useState<string | null>(null);

  const press = (key: string) => {
    if (callActions.sendDtmf(localId, key)) {
      setSent((s) => (s + key).slice(-24));
      setProblem(null);
    } else {
      setProblem('Tones cannot be sent on this call right now.');
    }
  };

  return (
    <div
      className="keypad"
      role="group"
      aria-label="Keypad"
      onKeyDown={(e) => {
        if (!enabled || e.ctrlKey || e.metaKey || e.altKey) return;
        if ((KEYS as readonly string[]).includes(e.key) && !(e.target instanceof HTMLButtonElement && e.key === ' ')) {
          e.preventDefault();
          press(e.key);
        }
      }}
    >
      <output className="keypad-sent" aria-label="Tones sent">
        {sent || '\u00a0'}
      </output>
      <div className="keypad-grid">
        {KEYS.map((key) => (
          <button key={key} type="button" className="key" disabled={!enabled} onClick={() => press(key)}>
            <span className="key-digit">{key}</span>
            <span className="key-letters" aria-hidden="true">
              {LETTERS[key] ?? '\u00a0'}
            </span>
          </button>
        ))}
      </div>
      {problem && (
        <p role="alert" className="field-error">
          {problem}
        </p>
      )}
    </div>
  );
}

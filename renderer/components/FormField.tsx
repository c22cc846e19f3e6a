import type { KeyboardEvent, ReactNode } from 'react';
import { useTranslation } from 'react-i18next';
import { formatNumber } from '../i18n/format';
import { sentence } from '../store/composer';

interface FieldProps {
  id: string;
  label: string;
  value: string;
  onChange(value: string): void;
  onBlur?(): void;
  onKeyDown?(e: KeyboardEvent<HTMLInputElement | HTMLTextAreaElement>): void;
  /** The rule the value breaks, shown as "Label: rule". */
  error?: string | undefined;
  hint?: ReactNode;
  /** Shows "n/limit" beside the label. */
  limit?: number;
  multiline?: boolean;
  rows?: number;
  type?: 'text' | 'url' | 'tel' | 'number';
  inputMode?: 'text' | 'url' | 'tel' | 'numeric';
  placeholder?: string;
  disabled?: boolean;
  monospace?: boolean;
  className?: string;
}

/** A labelled input whose rule, when broken, is named next to it (and tied to it for screen readers). */
export function FormField(props: FieldProps) {
  const { t } = useTranslation('messages');
  const { id, label, value, error, hint, limit } = props;
  const describedBy = [error ? `${id}-error` : null, hint ? `${id}-hint` : null].filter(Boolean).join(' ') || undefined;
  const common = {
    id,
    className: `input ${props.monospace ? 'input-mono' : ''}`,
    value,
    placeholder: props.placeholder,
    disabled: props.disabled,
    spellCheck: props.monospace ? false : undefined,
    // Links and phone numbers read left to right in every language.
    dir: props.type === 'url' || props.type === 'tel' ? 'ltr' : undefined,
    'aria-invalid': error ? true : undefined,
    'aria-describedby': describedBy,
    onChange: (e: { target: { value: string } }) => props.onChange(e.target.value),
    onBlur: props.onBlur,
    onKeyDown: props.onKeyDown,
  };
  const over = limit !== undefined && value.length > limit;
  return (
    <div className={`field ${props.className ?? ''}`}>
      <div className="label-row">
        <label htmlFor={id} className="field-label">
          {label}
        </label>
        {limit !== undefined && (
          <span className={`counter ${over ? 'is-over' : ''}`} aria-hidden="true">
            {`${formatNumber(value.length)}/${formatNumber(limit)}`}
          </span>
        )}
      </div>
      {props.multiline ? (
        <textarea {...common} rows={props.rows ?? 3} />
      ) : (
        <input {...common} type={props.type ?? 'text'} inputMode={props.inputMode} autoComplete="off" />
      )}
      {error && (
        <p id={`${id}-error`} className="field-error">
          {t('field.error', { label, rule: error })}
        </p>
      )}
      {hint && (
        <p id={`${id}-hint`} className="hint">
          {hint}
        </p>
      )}
    </div>
  );
}

/** For errors that are not about one field: "field.path: rule" lines. */
export function OtherErrors({ errors }: { errors: string[] }) {
  if (errors.length === 0) return null;
  return (
    <ul className="other-errors">
      {errors.map((e) => (
        <li key={e} className="field-error">
          {sentence(e)}
        </li>
      ))}
    </ul>
  );
}

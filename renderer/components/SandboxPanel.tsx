import { useTranslation } from 'react-i18next';
import { useSandboxActions } from '../app/controllers-context';
import { BEHAVIOUR_TEXT } from '../call-display';
import { formatPhoneNumber } from '../../shared/phone';
import type { SandboxCustomer, SandboxCustomerNetwork } from '../../shared/sandbox';
import { i18n, intlLocale } from '../i18n/i18n';
import { formatDuration, formatNumber, formatPercent, isolateLtr } from '../i18n/format';
import { useAppStore } from '../store/store';

const milliseconds = (ms: number): string => formatNumber(ms, { style: 'unit', unit: 'millisecond', unitDisplay: 'short' });

/**
 * A built-in customer's bad network in words, from its numbers ("lossy network (5% loss, 40 ms
 * jitter)"): the sandbox's own `label` is English, so it is only the fallback for a network
 * described by nothing else.
 */
export function sandboxNetworkText(network: SandboxCustomerNetwork): string {
  if (network.blackoutMs !== undefined && network.blackoutMs > 0) {
    const duration = formatDuration(network.blackoutMs / 1000);
    return network.blackoutAfterMs !== undefined
      ? i18n.t('sandbox.blackoutAfter', { duration, after: formatDuration(network.blackoutAfterMs / 1000) })
      : i18n.t('sandbox.blackout', { duration });
  }
  const details: string[] = [];
  if (network.lossPercent) details.push(i18n.t('sandbox.loss', { percent: formatPercent(network.lossPercent) }));
  if (network.jitterMs) details.push(i18n.t('sandbox.jitter', { duration: milliseconds(network.jitterMs) }));
  if (network.delayMs) details.push(i18n.t('sandbox.delay', { duration: milliseconds(network.delayMs) }));
  if (details.length === 0) return network.label;
  return i18n.t('sandbox.lossyNetwork', { details: new Intl.ListFormat(intlLocale(), { type: 'unit', style: 'short' }).format(details) });
}

/** One line of the customer list: name, number (kept left to right), how they behave, their network. */
export function sandboxCustomerText(customer: SandboxCustomer): string {
  const values = { name: customer.name, number: isolateLtr(formatPhoneNumber(customer.number)), behaviour: BEHAVIOUR_TEXT[customer.behaviour] };
  return customer.network ? i18n.t('sandbox.customerOptionNetwork', { ...values, network: sandboxNetworkText(customer.network) }) : i18n.t('sandbox.customerOption', values);
}

/** Sandbox mode only: simulated customers who call in (protocol.md behaviour, no real calls). */
export function SandboxPanel() {
  // Also re-renders the customer list, worded by sandboxCustomerText(), when the language changes.
  const { t } = useTranslation('common');
  const sandboxActions = useSandboxActions();
  const mode = useAppStore((s) => s.mode);
  const customers = useAppStore((s) => s.sandboxCustomers);
  const selection = useAppStore((s) => s.sandboxSelection);
  const setSelection = useAppStore((s) => s.setSandboxSelection);
  const error = useAppStore((s) => s.sandboxError);
  const done = useAppStore((s) => s.sandboxDone);
  const message = useAppStore((s) => s.sandboxMessage);
  const setMessage = useAppStore((s) => s.setSandboxMessage);
  if (mode !== 'sandbox') return null;

  return (
    <section className="card sandbox" aria-label={t('sandbox.title')}>
      <h2 className="card-title">
        {t('sandbox.title')} <span className="hint-inline">{t('sandbox.subtitle')}</span>
      </h2>
      <label htmlFor="sandbox-customer" className="field-label">
        {t('sandbox.customer')}
      </label>
      <div className="stack">
        <select id="sandbox-customer" className="input" value={selection} onChange={(e) => setSelection(e.target.value)} disabled={customers.length === 0}>
          {customers.length === 0 && <option value="">{t('sandbox.noCustomers')}</option>}
          {customers.map((c) => (
            <option key={c.number} value={c.number}>
              {sandboxCustomerText(c)}
            </option>
          ))}
        </select>
        <button type="button" className="btn btn-secondary" disabled={customers.length === 0} onClick={() => void sandboxActions.simulateIncomingCall()}>
          {t('sandbox.simulateCall')}
        </button>
      </div>
      <div className="sandbox-after">
        <button type="button" className="btn btn-secondary" disabled={customers.length === 0} onClick={() => void sandboxActions.simulateVoicemail()}>
          {t('sandbox.leaveVoicemail')}
        </button>
        <button type="button" className="btn btn-secondary" disabled={customers.length === 0} onClick={() => void sandboxActions.simulateCallbackRequest()}>
          {t('sandbox.askCallback')}
        </button>
      </div>
      <p className="hint">{t('sandbox.lastCallHint')}</p>
      <form
        noValidate
        className="sandbox-message"
        onSubmit={(e) => {
          e.preventDefault();
          void sandboxActions.simulateInboundMessage();
        }}
      >
        <label htmlFor="sandbox-message" className="field-label">
          {t('sandbox.message')}
        </label>
        <div className="stack">
          <input
            id="sandbox-message"
            className="input"
            autoComplete="off"
            placeholder={t('sandbox.messagePlaceholder')}
            value={message}
            disabled={customers.length === 0}
            onChange={(e) => setMessage(e.target.value)}
          />
          <button type="submit" className="btn btn-secondary" disabled={customers.length === 0}>
            {t('sandbox.simulateMessage')}
          </button>
        </div>
        <p className="hint">{t('sandbox.messageHint')}</p>
      </form>
      {error && (
        <p role="alert" className="field-error">
          {error}
        </p>
      )}
      {/* In the page before it speaks, so that its words are heard. */}
      <p role="status" className="sandbox-done">
        {done ?? ''}
      </p>
    </section>
  );
}

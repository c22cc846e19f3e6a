import { useSandboxActions } from '../app/controllers-context';
import { BEHAVIOUR_TEXT } from '../call-display';
import { formatPhoneNumber } from '../../shared/phone';
import { useAppStore } from '../store/store';

/** Sandbox mode only: simulated customers who call in (protocol.md behaviour, no real calls). */
export function SandboxPanel() {
  const sandboxActions = useSandboxActions();
  const mode = useAppStore((s) => s.mode);
  const customers = useAppStore((s) => s.sandboxCustomers);
  const selection = useAppStore((s) => s.sandboxSelection);
  const setSelection = useAppStore((s) => s.setSandboxSelection);
  const error = useAppStore((s) => s.sandboxError);
  const message = useAppStore((s) => s.sandboxMessage);
  const setMessage = useAppStore((s) => s.setSandboxMessage);
  if (mode !== 'sandbox') return null;

  return (
    <section className="card sandbox" aria-label="Sandbox">
      <h2 className="card-title">
        Sandbox <span className="hint-inline">simulated customers</span>
      </h2>
      <label htmlFor="sandbox-customer" className="field-label">
        Sandbox customer
      </label>
      <div className="stack">
        <select id="sandbox-customer" className="input" value={selection} onChange={(e) => setSelection(e.target.value)} disabled={customers.length === 0}>
          {customers.length === 0 && <option value="">No sandbox customers</option>}
          {customers.map((c) => (
            <option key={c.number} value={c.number}>
              {c.name} · {formatPhoneNumber(c.number)} ({BEHAVIOUR_TEXT[c.behaviour]}
              {c.network ? `, ${c.network.label}` : ''})
            </option>
          ))}
        </select>
        <button type="button" className="btn btn-secondary" disabled={customers.length === 0} onClick={() => void sandboxActions.simulateIncomingCall()}>
          Simulate incoming call
        </button>
      </div>
      <form
        noValidate
        className="sandbox-message"
        onSubmit={(e) => {
          e.preventDefault();
          void sandboxActions.simulateInboundMessage();
        }}
      >
        <label htmlFor="sandbox-message" className="field-label">
          Customer message
        </label>
        <div className="stack">
          <input
            id="sandbox-message"
            className="input"
            autoComplete="off"
            placeholder="Hi, can you call me back?"
            value={message}
            disabled={customers.length === 0}
            onChange={(e) => setMessage(e.target.value)}
          />
          <button type="submit" className="btn btn-secondary" disabled={customers.length === 0}>
            Simulate inbound message
          </button>
        </div>
        <p className="hint">The customer writes to you: their 24-hour window opens.</p>
      </form>
      {error && (
        <p role="alert" className="field-error">
          {error}
        </p>
      )}
    </section>
  );
}

import { useMemo } from 'react';
import { useTranslation } from 'react-i18next';
import { formatPhoneNumber } from '../../shared/phone';
import { useMessaging, useSandboxActions } from '../app/controllers-context';
import { useNow } from '../app/use-now';
import { contactTitle, isWindowOpen, lastCallNeedsPermission, recentConversations, windowText } from '../store/conversations';
import { emptyComposer } from '../store/composer';
import { useAppStore } from '../store/store';
import { Composer } from './Composer';
import { Ltr } from './Ltr';
import { MessageTimeline } from './MessageTimeline';

/** The customer beside the call: the 24-hour window, one-click actions, the timeline and the composer. */
export function ContactPanel() {
  const { t } = useTranslation('messages');
  const selected = useAppStore((s) => s.selectedContact);
  return (
    <section aria-label={t('contact.region')} className={`card contact-panel ${selected ? 'has-contact' : 'is-idle'}`}>
      {selected ? <ContactView contact={selected} /> : <ConversationChooser />}
    </section>
  );
}

function ContactView({ contact }: { contact: string }) {
  const { t } = useTranslation('messages');
  const messaging = useMessaging();
  const sandboxActions = useSandboxActions();
  const now = useNow(1000);
  const conversation = useAppStore((s) => s.conversations[contact]);
  // Calls change many times a second around a ring: the panel follows only the two facts it shows.
  const title = useAppStore((s) =>
    contactTitle(contact, { ...(s.conversations[contact] ? { conversation: s.conversations[contact] } : {}), history: s.history, calls: s.calls, customers: s.sandboxCustomers }),
  );
  const needsPermission = useAppStore((s) => lastCallNeedsPermission(contact, s.calls, s.history));
  const sandbox = useAppStore((s) => s.mode === 'sandbox');
  const stored = useAppStore((s) => s.composers[contact]);
  const notice = useAppStore((s) => (s.contactNotice?.contact === contact ? s.contactNotice : null));

  const conversationWindow = conversation?.window;
  const open = isWindowOpen(conversationWindow, now);
  // Until the agent types, the composer is the one the store would make (on Template when closed).
  const draft = useMemo(() => stored ?? emptyComposer(open ? 'text' : 'template', contact), [stored, open, contact]);
  const number = formatPhoneNumber(contact);
  const buttonSent = conversation?.messages.some((m) => m.direction === 'outbound' && m.interactiveType === 'voice_call') ?? false;

  return (
    <>
      <div className="contact-head">
        <div className="contact-who">
          <p className="eyebrow">{t('contact.eyebrow')}</p>
          <h2 className="peer-title" id={`contact-${contact}-title`}>
            {title === number ? <Ltr>{number}</Ltr> : title}
            {title !== number && (
              <span className="peer-number">
                <Ltr>{number}</Ltr>
              </span>
            )}
          </h2>
        </div>
        <button type="button" className="btn btn-quiet btn-small" onClick={() => messaging.selectContact(null)}>
          {t('contact.allConversations')}
        </button>
      </div>

      <p className={`window-state ${open ? 'window-open' : 'window-closed'}`}>
        <span className="window-dot" aria-hidden="true" />
        {windowText(conversationWindow, now)}
      </p>

      <div className="contact-actions">
        <button
          type="button"
          className="btn btn-secondary btn-small"
          disabled={!open}
          title={open ? t('contact.sendCallButtonHint') : t('contact.sendCallButtonBlocked')}
          onClick={() => void messaging.sendCallButton(contact)}
        >
          {t('contact.sendCallButton')}
        </button>
        {needsPermission && (
          <button type="button" className="btn btn-secondary btn-small" onClick={() => void messaging.requestCallPermission(contact)}>
            {t('contact.requestPermission')}
          </button>
        )}
      </div>
      {needsPermission && <p className="hint permission-hint">{open ? t('contact.permissionHintOpen') : t('contact.permissionHintClosed')}</p>}
      {notice && (
        <p role={notice.tone === 'error' ? 'alert' : 'status'} className={notice.tone === 'error' ? 'field-error' : 'form-status'}>
          {notice.text}
        </p>
      )}
      {sandbox && buttonSent && (
        <button type="button" className="btn btn-link sandbox-action" onClick={() => void sandboxActions.customerPressesCallButton(contact)}>
          {t('contact.customerPressesCallButton')}
        </button>
      )}

      <MessageTimeline messages={conversation?.messages ?? []} />
      <Composer contact={contact} draft={draft} windowOpen={open} conversationWindow={conversationWindow} />
    </>
  );
}

function ConversationChooser() {
  const { t } = useTranslation('messages');
  const messaging = useMessaging();
  const now = useNow(1000);
  const conversations = useAppStore((s) => s.conversations);
  const history = useAppStore((s) => s.history);
  const customers = useAppStore((s) => s.sandboxCustomers);
  const input = useAppStore((s) => s.contactInput);
  const error = useAppStore((s) => s.contactError);
  const setInput = useAppStore((s) => s.setContactInput);
  const recent = recentConversations(conversations, 8);

  return (
    <>
      <h2 className="card-title">{t('chooser.title')}</h2>
      <label htmlFor="contact-number" className="field-label">
        {t('chooser.numberLabel')}
      </label>
      <form
        noValidate
        className="open-contact"
        onSubmit={(e) => {
          e.preventDefault();
          void messaging.openContact();
        }}
      >
        <input
          id="contact-number"
          className="input"
          type="tel"
          inputMode="tel"
          autoComplete="off"
          dir="ltr"
          placeholder="+44 20 7946 0958"
          value={input}
          aria-invalid={error ? true : undefined}
          aria-describedby={error ? 'contact-number-error' : undefined}
          onChange={(e) => setInput(e.target.value)}
        />
        <button type="submit" className="btn btn-secondary">
          {t('chooser.open')}
        </button>
      </form>
      {error && (
        <p id="contact-number-error" role="alert" className="field-error">
          {error}
        </p>
      )}
      {recent.length === 0 ? (
        <p className="empty">{t('chooser.empty')}</p>
      ) : (
        <ul aria-label={t('chooser.listLabel')} className="conversations">
          {recent.map((c) => {
            const last = c.messages[c.messages.length - 1];
            const open = isWindowOpen(c.window, now);
            const number = formatPhoneNumber(c.contact);
            const title = contactTitle(c.contact, { conversation: c, history, customers });
            return (
              <li key={c.contact}>
                <button type="button" className="conversation-item" onClick={() => messaging.selectContact(c.contact)}>
                  <span className="conversation-title">{title === number ? <Ltr>{number}</Ltr> : title}</span>
                  <span className={`window-pill ${open ? 'is-open' : ''}`}>{open ? t('chooser.windowOpen') : t('chooser.windowClosed')}</span>
                  <span className="conversation-last">
                    {!last ? <Ltr>{number}</Ltr> : last.direction === 'inbound' ? last.summary : t('chooser.lastFromYou', { summary: last.summary })}
                  </span>
                </button>
              </li>
            );
          })}
        </ul>
      )}
    </>
  );
}

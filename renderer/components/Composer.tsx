import { useEffect, useRef, useState, type KeyboardEvent } from 'react';
import { useTranslation } from 'react-i18next';
import { MEDIA_TABLE, MEDIA_TYPES, mediaExtensions, type MediaType } from '../../shared/messages';
import { useMessaging } from '../app/controllers-context';
import { sayText } from '../i18n/texts';
import {
  COMPOSER_TABS,
  FIELD_LIMITS,
  MEDIA_BYS,
  checkComposer,
  focusAfterConfirmedSend,
  formatSize,
  linkCheckHint,
  linkCheckRefusal,
  sendNoticeText,
  mediaByLabel,
  mediaFieldLabel,
  mediaTypeLabel,
  otherErrors,
  tabLabel,
  templateFieldLabel,
  visibleError,
  type ComposerDraft,
  type ComposerTab,
  type SendFocus,
} from '../store/composer';
import { windowClosedReason } from '../store/conversations';
import { useAppStore } from '../store/store';
import type { ConversationWindowState } from '../../shared/conversation';
import type { TemplateDraft } from '../../shared/templates';
import { FormField, OtherErrors } from './FormField';
import { InteractiveForm, interactiveKeys } from './InteractiveForm';

interface Props {
  contact: string;
  draft: ComposerDraft;
  windowOpen: boolean;
  conversationWindow: ConversationWindowState | undefined;
}

/** Text, media by link or id, every interactive variant, and templates; free-form blocked while the window is closed. */
export function Composer({ contact, draft, windowOpen, conversationWindow }: Props) {
  const { t } = useTranslation('messages');
  const messaging = useMessaging();
  const tabs = useRef<Partial<Record<ComposerTab, HTMLButtonElement | null>>>({});
  // Checked on each render (a small object): the rules the window words itself follow a change of language.
  const live = checkComposer(draft, contact).errors;
  const idBase = `composer-${contact}`;
  const form = useRef<HTMLFormElement>(null);
  // Each answer to "Send anyway" places focus once its outcome is on screen: the button is gone
  // unless the answer asks again, and focus must not fall back to the page. One object per answer,
  // for the contact it was sent to (the panel may show another one by then).
  const [answer, setAnswer] = useState<{ contact: string } | null>(null);
  const focusedFor = useRef<{ contact: string } | null>(null);
  useEffect(() => {
    if (answer === null || answer === focusedFor.current || answer.contact !== contact || form.current === null) return;
    const target = focusAfterConfirmedSend(draft, shownKeys(draft));
    if (target === null) return;
    focusedFor.current = answer;
    focusIn(form.current, target);
  }, [answer, contact, draft]);
  const sendAnyway = (confirmed: readonly string[]) => void messaging.send(contact, { confirmed }).then(() => setAnswer({ contact }));

  const choose = (tab: ComposerTab) => messaging.editComposer(contact, (d) => (d.tab === tab ? d : { ...d, tab, showAllErrors: false, error: null, serverErrors: {}, notice: null }));
  const onTabKey = (e: KeyboardEvent<HTMLButtonElement>) => {
    const i = COMPOSER_TABS.indexOf(draft.tab);
    const next = e.key === 'ArrowRight' ? (i + 1) % COMPOSER_TABS.length : e.key === 'ArrowLeft' ? (i - 1 + COMPOSER_TABS.length) % COMPOSER_TABS.length : e.key === 'Home' ? 0 : e.key === 'End' ? COMPOSER_TABS.length - 1 : -1;
    if (next < 0) return;
    e.preventDefault();
    const tab = COMPOSER_TABS[next]!;
    choose(tab);
    tabs.current[tab]?.focus();
  };

  const freeForm = draft.tab !== 'template';
  const blocked = freeForm && !windowOpen;

  return (
    <div className="composer">
      <div role="tablist" aria-label={t('composer.tablist')} className="tabs">
        {COMPOSER_TABS.map((tab) => (
          <button
            key={tab}
            ref={(el) => {
              tabs.current[tab] = el;
            }}
            type="button"
            role="tab"
            id={`${idBase}-tab-${tab}`}
            aria-selected={draft.tab === tab}
            aria-controls={`${idBase}-panel`}
            tabIndex={draft.tab === tab ? 0 : -1}
            className={`tab ${draft.tab === tab ? 'is-on' : ''} ${tab !== 'template' && !windowOpen ? 'is-blocked' : ''}`}
            onClick={() => choose(tab)}
            onKeyDown={onTabKey}
          >
            {tabLabel(tab)}
          </button>
        ))}
      </div>
      {/* The panel wraps the form: a form may not take the tabpanel role (ARIA in HTML). */}
      <div id={`${idBase}-panel`} role="tabpanel" aria-labelledby={`${idBase}-tab-${draft.tab}`} className="tabpanel">
        <form
          ref={form}
          noValidate
          onSubmit={(e) => {
            e.preventDefault();
            void messaging.send(contact);
          }}
        >
          {blocked && (
            <div className="blocked" id={`${idBase}-blocked`}>
              <p>
                <strong>{t('composer.blocked')}</strong> {windowClosedReason(conversationWindow)}
              </p>
              <button type="button" className="btn btn-secondary btn-small" onClick={() => choose('template')}>
                {t('composer.useTemplate')}
              </button>
            </div>
          )}
          {/* The fields stay usable while a send is under way: the agent may type the next message. */}
          {draft.tab === 'text' && <TextForm contact={contact} draft={draft} live={live} disabled={blocked} />}
          {draft.tab === 'media' && <MediaForm contact={contact} draft={draft} live={live} disabled={blocked} sendAnyway={sendAnyway} />}
          {draft.tab === 'interactive' && <InteractiveForm contact={contact} draft={draft} live={live} disabled={blocked} />}
          {draft.tab === 'template' && <TemplateForm contact={contact} draft={draft} />}

          {draft.tab === 'interactive' && <SendAnyway contact={contact} draft={draft} disabled={blocked} sendAnyway={sendAnyway} />}
          {draft.tab === 'interactive' && <OtherErrors errors={otherErrors(draft, live, interactiveKeys(draft.interactive))} />}
          <SendOutcome draft={draft} shownKeys={shownKeys(draft)} />
          {draft.tab !== 'text' && (
            <div className="composer-actions">
              <button type="submit" className="btn btn-primary" disabled={blocked || draft.busy} aria-describedby={blocked ? `${idBase}-blocked` : undefined}>
                {draft.busy ? t('composer.sending') : draft.tab === 'template' ? t('composer.sendTemplate') : t('composer.send')}
              </button>
            </div>
          )}
        </form>
      </div>
    </div>
  );
}

const ENABLED = ':not(:disabled)';
const TEXTBOX = `input:not([type='radio']):not([type='checkbox'])${ENABLED}, textarea${ENABLED}`;
const FOCUS_TARGETS: Readonly<Record<SendFocus, string>> = {
  'send-anyway': `.send-confirm button${ENABLED}`,
  'field-in-error': `[aria-invalid='true']${ENABLED}`,
  send: `button[type='submit']${ENABLED}`,
  'first-field': TEXTBOX,
};

/**
 * Focuses the target in the form; when it is not there (a blocked form), the Send button, else the
 * first control that takes it. Only while focus is lost (on the page) or on "Send anyway": an agent
 * who went on to another field meanwhile keeps it.
 */
function focusIn(form: HTMLFormElement, target: SendFocus): void {
  const current = document.activeElement;
  if (current !== null && current !== document.body && current.closest('.send-confirm') === null) return;
  const element =
    form.querySelector<HTMLElement>(FOCUS_TARGETS[target]) ??
    form.querySelector<HTMLElement>(FOCUS_TARGETS.send) ??
    form.querySelector<HTMLElement>(`input${ENABLED}, select${ENABLED}, textarea${ENABLED}, button${ENABLED}`);
  element?.focus();
}

/** Keys a rendered field shows: a server error about one of them is shown there, not repeated below. */
function shownKeys(draft: ComposerDraft): Set<string> {
  switch (draft.tab) {
    case 'text':
      return new Set(['text.body']);
    case 'media':
      return new Set([`${draft.media.type}.${draft.media.by}`, `${draft.media.type}.caption`, 'document.filename']);
    case 'interactive':
      return interactiveKeys(draft.interactive);
    case 'template':
      return new Set(['to', ...(draft.template.draft?.fields.map((f) => f.path) ?? [])]);
  }
}

function SendOutcome({ draft, shownKeys: keys }: { draft: ComposerDraft; shownKeys: Set<string> }) {
  const { t } = useTranslation('messages');
  if (draft.error) {
    const onField = Object.keys(draft.serverErrors).some((k) => keys.has(k));
    return (
      <p role="alert" className="field-error form-error">
        {onField ? t('composer.seeField') : draft.error}
      </p>
    );
  }
  if (draft.notice) {
    return (
      <p role="status" className="form-status">
        {sendNoticeText(draft.notice)}
      </p>
    );
  }
  return null;
}

interface FormProps {
  contact: string;
  draft: ComposerDraft;
  live: Readonly<Record<string, string>>;
  disabled: boolean;
}

function TextForm({ contact, draft, live, disabled }: FormProps) {
  const { t } = useTranslation('messages');
  const messaging = useMessaging();
  const id = `composer-${contact}-text`;
  return (
    <div className="text-form">
      <FormField
        id={id}
        label={t('text.label')}
        multiline
        rows={3}
        value={draft.text}
        limit={FIELD_LIMITS.text}
        disabled={disabled}
        placeholder={disabled ? t('text.placeholderClosed') : t('text.placeholder')}
        error={visibleError(draft, live, 'text.body')}
        onChange={(v) => messaging.editComposer(contact, (d) => ({ ...d, text: v }), 'text.body')}
        onKeyDown={(e) => {
          if (e.key === 'Enter' && !e.shiftKey && !e.nativeEvent.isComposing) {
            e.preventDefault();
            void messaging.send(contact);
          }
        }}
      />
      <div className="composer-actions">
        <button type="submit" className="btn btn-primary" disabled={disabled || draft.busy}>
          {draft.busy ? t('composer.sending') : t('composer.send')}
        </button>
      </div>
    </div>
  );
}

/** Sends the message again confirming these warnings (the Composer moves focus once it is answered). */
type SendAnywayAction = (confirmed: readonly string[]) => void;

/**
 * The warnings a send came back with (needs_confirmation) and "Send anyway", which sends the same
 * message once more confirming exactly the warnings shown here (the button is described by them),
 * in the English the main process gave them, whatever the language they are shown in. A file that
 * breaks a rule never gets here: its rule shows on its field and nothing is sent.
 */
function SendAnyway({ contact, draft, disabled, sendAnyway }: { contact: string; draft: ComposerDraft; disabled: boolean; sendAnyway: SendAnywayAction }) {
  const { t } = useTranslation('messages');
  const { confirmation } = draft;
  if (confirmation === null) return null;
  const alertId = `composer-${contact}-confirm`;
  return (
    <div className="send-confirm">
      {/* A new element for each answer, so that the same words are announced again after another Send. */}
      <div role="alert" id={alertId} key={confirmation.asked}>
        <p>{t(confirmation.changed ? 'confirm.changed' : 'confirm.notSentYet', { count: confirmation.warnings.length })}</p>
        <ul>
          {/* Said in the UI's language from their codes; the English texts are what the button confirms. */}
          {confirmation.texts.map((w, i) => (
            // A warning the catalogue did not make comes as it is, in its own direction.
            <li key={confirmation.warnings[i] ?? i}>{typeof w === 'string' ? <bdi>{w}</bdi> : sayText(w)}</li>
          ))}
        </ul>
      </div>
      <button type="button" className="btn btn-secondary" disabled={disabled || draft.busy} aria-describedby={alertId} onClick={() => sendAnyway(confirmation.warnings)}>
        {t('confirm.sendAnyway')}
      </button>
    </div>
  );
}

const CHECK_CLASSES: Readonly<Record<'checking' | 'ok' | 'confirm', string | undefined>> = { checking: undefined, ok: 'check-ok', confirm: 'check-confirm' };

function MediaForm({ contact, draft, live, disabled, sendAnyway }: FormProps & { sendAnyway: SendAnywayAction }) {
  const { t } = useTranslation('messages');
  const messaging = useMessaging();
  const { media } = draft;
  const id = `composer-${contact}-media`;
  const rule = MEDIA_TABLE[media.type];
  const byLink = media.by === 'link';
  const check = byLink && draft.linkCheck && draft.linkCheck.link === media.link.trim() && draft.linkCheck.type === media.type ? draft.linkCheck : null;
  const edit = (key: string, patch: Partial<ComposerDraft['media']>) => messaging.editComposer(contact, (d) => ({ ...d, media: { ...d.media, ...patch } }), key);
  const linkKey = `${media.type}.link`;
  const idKey = `${media.type}.id`;
  const linkError = visibleError(draft, live, linkKey) ?? (check?.state === 'failed' ? linkCheckRefusal(check) : undefined);
  return (
    <div className="media-form">
      <div className="field">
        <label htmlFor={`${id}-type`} className="field-label">
          {t('media.typeLabel')}
        </label>
        <select id={`${id}-type`} className="input" value={media.type} disabled={disabled} onChange={(e) => edit(byLink ? linkKey : idKey, { type: e.target.value as MediaType })}>
          {MEDIA_TYPES.map((type) => (
            <option key={type} value={type}>
              {mediaTypeLabel(type)}
            </option>
          ))}
        </select>
      </div>
      <div className="field">
        <span className="field-label" id={`${id}-by`}>
          {t('media.byLabel')}
        </span>
        <div className="segmented" role="radiogroup" aria-labelledby={`${id}-by`}>
          {MEDIA_BYS.map((by) => (
            <label key={by} className={`segment ${media.by === by ? 'is-on' : ''}`}>
              {/* No key: choosing is not typing, so the new field's rule waits until it is typed in. */}
              <input type="radio" name={`${id}-by`} value={by} checked={media.by === by} disabled={disabled} onChange={() => messaging.editComposer(contact, (d) => ({ ...d, media: { ...d.media, by } }))} />
              {mediaByLabel(by)}
            </label>
          ))}
        </div>
      </div>
      {byLink ? (
        <FormField
          id={`${id}-link`}
          label={mediaFieldLabel('link')}
          type="url"
          inputMode="url"
          value={media.link}
          disabled={disabled}
          placeholder={t('media.linkPlaceholder', { extension: mediaExtensions(media.type)[0] ?? '' })}
          error={linkError}
          hint={
            check !== null && check.state !== 'failed' ? (
              <span className={CHECK_CLASSES[check.state]}>{linkCheckHint(check)}</span>
            ) : (
              t('media.linkHint', { extensions: mediaExtensions(media.type).join(', '), max: formatSize(rule.maxBytes) })
            )
          }
          onChange={(v) => edit(linkKey, { link: v })}
          onBlur={() => void messaging.checkMediaLink(contact)}
        />
      ) : (
        <FormField
          id={`${id}-id`}
          label={mediaFieldLabel('id')}
          value={media.id}
          disabled={disabled}
          placeholder={t('media.idPlaceholder')}
          error={visibleError(draft, live, idKey)}
          hint={t('media.idHint')}
          onChange={(v) => edit(idKey, { id: v })}
        />
      )}
      <SendAnyway contact={contact} draft={draft} disabled={disabled} sendAnyway={sendAnyway} />
      {media.type !== 'audio' && (
        <FormField
          id={`${id}-caption`}
          label={t('media.caption')}
          multiline
          rows={2}
          value={media.caption}
          limit={FIELD_LIMITS.caption}
          disabled={disabled}
          error={visibleError(draft, live, `${media.type}.caption`)}
          onChange={(v) => edit(`${media.type}.caption`, { caption: v })}
        />
      )}
      {media.type === 'document' && (
        <FormField
          id={`${id}-filename`}
          label={t('media.filename')}
          value={media.filename}
          disabled={disabled}
          placeholder={t('media.filenamePlaceholder')}
          error={visibleError(draft, live, 'document.filename')}
          onChange={(v) => edit('document.filename', { filename: v })}
        />
      )}
    </div>
  );
}

/** The body with each {{n}} replaced by the value typed for "Body {{n}}", or left as {{n}}. */
function previewOf(body: string, draft: TemplateDraft, values: Readonly<Record<string, string>>): string {
  return body.replace(/\{\{(\d+)\}\}/g, (whole, n: string) => {
    const field = draft.fields.find((f) => f.label === `Body {{${n}}}`);
    const value = field ? values[field.path]?.trim() : undefined;
    return value ? value : whole;
  });
}

function TemplateForm({ contact, draft }: { contact: string; draft: ComposerDraft }) {
  const { t } = useTranslation('messages');
  const messaging = useMessaging();
  const sandboxTemplates = useAppStore((s) => s.sandboxTemplates);
  const mode = useAppStore((s) => s.mode);
  const { template } = draft;
  const id = `composer-${contact}-template`;
  const parsed = template.draft;
  // The console's payload has no words, only variables; the sandbox's own templates do (a preview).
  const known = parsed ? sandboxTemplates.find((s) => s.name === parsed.name && s.language === parsed.languageCode) : undefined;
  const preview = known && parsed ? previewOf(known.body, parsed, template.values) : null;
  const missing = (path: string) => (draft.showAllErrors && (template.values[path] ?? '').trim() === '' ? t('template.fillIn') : undefined);
  return (
    <div className="template-form">
      {mode === 'sandbox' && sandboxTemplates.length > 0 && !parsed && (
        <div className="field">
          <label htmlFor={`${id}-pick`} className="field-label">
            {t('template.sandboxTemplate')}
          </label>
          <select
            id={`${id}-pick`}
            className="input"
            value=""
            disabled={draft.busy}
            onChange={(e) => {
              const chosen = sandboxTemplates.find((s) => `${s.name}/${s.language}` === e.target.value);
              if (chosen) void messaging.pasteTemplate(contact, chosen.apiPayload);
            }}
          >
            <option value="">{t('template.choose')}</option>
            {sandboxTemplates.map((s) => (
              <option key={`${s.name}/${s.language}`} value={`${s.name}/${s.language}`}>
                {t('template.option', { name: s.name, language: s.language })}
              </option>
            ))}
          </select>
        </div>
      )}
      {parsed ? (
        <div className="template-chosen">
          <p className="template-name">
            <span className="badge badge-template">{t('template.badge')}</span> {parsed.name} <span className="hint-inline">{parsed.languageCode}</span>
            {parsed.fields.length === 0 && <span className="hint-inline">{t('template.noVariables')}</span>}
          </p>
          <button
            type="button"
            className="btn btn-quiet btn-small"
            disabled={draft.busy}
            onClick={() => messaging.editComposer(contact, (d) => ({ ...d, template: { ...d.template, pasted: '', draft: null, parseError: null, values: {} } }))}
          >
            {t('template.change')}
          </button>
        </div>
      ) : (
        <FormField
          id={`${id}-payload`}
          label={t('template.payload')}
          multiline
          monospace
          rows={6}
          value={template.pasted}
          placeholder={t('template.payloadPlaceholder')}
          error={template.parseError ?? undefined}
          onChange={(v) => void messaging.pasteTemplate(contact, v)}
        />
      )}
      {parsed && preview && (
        <p className="template-preview">
          <span className="visually-hidden">{t('template.preview')} </span>
          {preview}
        </p>
      )}
      {parsed && (
        <div className="template-fields">
          <FormField
            id={`${id}-to`}
            label={t('template.recipient')}
            type="tel"
            inputMode="tel"
            value={template.to}
            error={draft.serverErrors.to}
            onChange={(v) => messaging.editComposer(contact, (d) => ({ ...d, template: { ...d.template, to: v } }), 'to')}
          />
          {parsed.fields.map((f, i) => (
            <FormField
              key={f.path}
              id={`${id}-var-${i}`}
              label={templateFieldLabel(parsed, f)}
              type={f.kind === 'link' ? 'url' : 'text'}
              value={template.values[f.path] ?? ''}
              placeholder={f.placeholder ? (f.kind === 'link' ? t('template.linkPlaceholder') : '') : f.sample}
              error={draft.serverErrors[f.path] ?? missing(f.path)}
              onChange={(v) => messaging.editComposer(contact, (d) => ({ ...d, template: { ...d.template, values: { ...d.template.values, [f.path]: v } } }), f.path)}
            />
          ))}
        </div>
      )}
    </div>
  );
}

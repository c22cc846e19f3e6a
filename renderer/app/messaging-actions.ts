// The messages domain: the contact in view, its conversation, the composer and its sends, templates,
// media link checks, the call button and the call-permission request.
//
// A media file the gateway takes with a warning (gateway-spec.md 2.3) comes back as needs_confirmation:
// the composer keeps everything and shows the warnings with "Send anyway", which sends the same
// message again with those warnings' texts `confirmed`. The warnings hold for that file only: an edit
// of its link, id or type clears them. The main process checks the file again and asks once more when
// it finds a warning that was not confirmed (the file changed meanwhile).
//
// What a command answers is worded when it arrives (renderer/i18n's `t`): these texts stand until
// the next edit or send. The media link check's findings are kept as the main process's codes and
// values instead, and said when drawn (store/composer.ts).
import type { SoftphoneApi } from '../../shared/api';
import type { SendReceipt } from '../../shared/conversation';
import { createLogger } from '../../shared/log';
import type { MessageContent } from '../../shared/messages';
import { formatPhoneNumber } from '../../shared/phone';
import type { Result } from '../../shared/result';
import type { StoreApi } from 'zustand/vanilla';
import { parseConversation, parseTemplateDraft } from '../bridge/payload-schemas';
import { errorMessage, messageErrorText } from '../error-texts';
import { i18n } from '../i18n/i18n';
import {
  afterSendOf,
  checkComposer,
  confirmationFrom,
  confirmedWarnings,
  fieldRuleOf,
  linkCheckOutcome,
  receiptNotes,
  serverErrorsFrom,
  templateValuesFor,
  withoutStaleConfirmation,
  type CallButtonInput,
  type ComposerDraft,
} from '../store/composer';
import { isWindowOpen } from '../store/conversations';
import { composerFor, type AppState } from '../store/store';

const log = createLogger('messaging');
const t = i18n.getFixedT(null, 'messages');

export interface MessagingActionsDeps {
  api: Pick<SoftphoneApi, 'getConversation' | 'sendMessage' | 'sendCallButton' | 'sendTemplate' | 'parseTemplate' | 'checkMediaLink' | 'requestCallPermission'>;
  store: StoreApi<AppState>;
}

export class MessagingActions {
  private readonly api: MessagingActionsDeps['api'];
  private readonly store: StoreApi<AppState>;
  /** Per contact, so that a slow parse of an older paste cannot overwrite a newer one. */
  private readonly templateParses = new Map<string, number>();

  constructor(deps: MessagingActionsDeps) {
    this.api = deps.api;
    this.store = deps.store;
  }

  private get state(): AppState {
    return this.store.getState();
  }

  /** Shows a contact's conversation (null: the list of conversations) and fetches it fresh. */
  selectContact(contact: string | null): void {
    this.state.selectContact(contact);
    if (contact !== null) void this.loadConversation(contact);
  }

  async loadConversation(contact: string): Promise<void> {
    const result = await this.api.getConversation({ contact });
    if (!result.ok) {
      log.warn('could not load a conversation', { code: result.error.code });
      return;
    }
    const conversation = parseConversation(result.value);
    if (conversation.ok) this.state.applyConversation(conversation.value);
  }

  /** The chooser: a number as typed opens its conversation. */
  async openContact(): Promise<boolean> {
    const typed = this.state.contactInput.trim();
    if (typed === '') {
      this.state.setContactError(t('chooser.enterNumber'));
      return false;
    }
    const result = await this.api.getConversation({ contact: typed });
    if (!result.ok) {
      this.state.setContactError(errorMessage(result.error));
      return false;
    }
    const conversation = parseConversation(result.value);
    if (!conversation.ok) {
      this.state.setContactError(t('chooser.unreadableConversation'));
      return false;
    }
    this.state.applyConversation(conversation.value);
    this.state.setContactInput('');
    this.state.selectContact(conversation.value.contact);
    return true;
  }

  /** Any edit of a composer; `key` is the field typed in (its live error shows from now on). */
  editComposer(contact: string, change: (draft: ComposerDraft) => ComposerDraft, key?: string): void {
    this.state.updateComposer(contact, (draft) => {
      const next = withoutStaleConfirmation(change(draft));
      if (key === undefined) return next;
      const { [key]: _cleared, ...serverErrors } = next.serverErrors;
      return { ...next, touched: { ...next.touched, [key]: true }, serverErrors, notice: null };
    });
  }

  /**
   * The Send button of the Text, Media and Interactive tabs, and Send template. Never retried.
   * `confirmed` is "Send anyway" with the warnings it was shown: of those, it confirms the ones the
   * form still shows for the file in it, and nothing else (with none left it is a plain Send).
   */
  async send(contact: string, options: { confirmed?: readonly string[] } = {}): Promise<void> {
    const draft = composerFor(this.state, contact);
    if (draft.busy) return;
    if (this.state.contactNotice?.contact === contact) this.state.setContactNotice(null);
    if (draft.tab === 'template') return this.sendTemplate(contact);
    if (!isWindowOpen(this.state.conversations[contact]?.window, Date.now())) {
      this.patchComposer(contact, { error: messageErrorText({ code: 'window_closed', message: '' }) });
      return;
    }
    const checked = checkComposer(draft, contact);
    if (!checked.value) {
      this.patchComposer(contact, { showAllErrors: true, error: t('composer.checkFields') });
      return;
    }
    const confirmed = confirmedWarnings(draft, options.confirmed ?? []);
    this.patchComposer(contact, { busy: true, error: null, serverErrors: {}, notice: null });
    const input = checked.value;
    const result =
      draft.tab === 'interactive' && draft.interactive.variant === 'voice_call'
        ? await this.api.sendCallButton(input as CallButtonInput)
        : await this.api.sendMessage({ to: contact, content: input as MessageContent, ...(confirmed.length > 0 ? { confirmed } : {}) });
    this.finishSend(contact, draft, result, confirmed);
  }

  async sendTemplate(contact: string): Promise<void> {
    const draft = composerFor(this.state, contact);
    const template = draft.template;
    if (draft.busy) return;
    if (!template.draft) {
      this.patchComposer(contact, { error: template.pasted.trim() === '' ? t('template.pasteFirst') : t('template.notATemplate') });
      return;
    }
    this.patchComposer(contact, { busy: true, error: null, serverErrors: {}, notice: null, showAllErrors: true });
    const result = await this.api.sendTemplate({ draft: template.draft, to: template.to.trim() || contact, values: template.values });
    this.finishSend(contact, draft, result);
  }

  /** The pasted "API Payload": parsed by the main process into one field per variable. */
  async pasteTemplate(contact: string, pasted: string): Promise<void> {
    this.editComposer(contact, (d) => ({ ...d, template: { ...d.template, pasted } }), 'template.payload');
    const request = (this.templateParses.get(contact) ?? 0) + 1;
    this.templateParses.set(contact, request);
    if (pasted.trim() === '') {
      this.editComposer(contact, (d) => ({ ...d, template: { ...d.template, draft: null, parseError: null, values: {} } }));
      return;
    }
    const result = await this.api.parseTemplate({ pasted });
    if (this.templateParses.get(contact) !== request) return;
    if (!result.ok) {
      this.editComposer(contact, (d) => ({ ...d, template: { ...d.template, draft: null, parseError: errorMessage(result.error) } }));
      return;
    }
    const parsed = parseTemplateDraft(result.value);
    if (!parsed.ok) {
      this.editComposer(contact, (d) => ({ ...d, template: { ...d.template, draft: null, parseError: t('template.unreadable') } }));
      return;
    }
    const templateDraft = parsed.value;
    this.editComposer(contact, (d) => ({
      ...d,
      template: {
        ...d.template,
        draft: templateDraft,
        parseError: null,
        values: templateValuesFor(templateDraft, d.template.values),
        // The recipient is the contact whose panel this is, whatever sample number the paste had.
        to: d.template.to.trim() === '' ? formatPhoneNumber(contact) : d.template.to,
      },
    }));
  }

  /** Checks a media link as soon as the agent leaves the field; the send checks it again. */
  async checkMediaLink(contact: string): Promise<void> {
    const { media } = composerFor(this.state, contact);
    // Media by id is the gateway's to judge: it holds the file.
    if (media.by !== 'link') return;
    const link = media.link.trim();
    if (link === '') {
      this.patchComposer(contact, { linkCheck: null });
      return;
    }
    this.patchComposer(contact, { linkCheck: { link, type: media.type, state: 'checking' } });
    const result = await this.api.checkMediaLink({ type: media.type, link });
    const now = composerFor(this.state, contact).media;
    if (now.link.trim() !== link || now.type !== media.type) return; // edited meanwhile
    if (!result.ok) {
      // The field's label is shown beside the rule: the check's own "link: " would repeat it.
      const refusal = fieldRuleOf(result.error) ?? messageErrorText(result.error);
      this.patchComposer(contact, { linkCheck: { link, type: media.type, state: 'failed', refusal } });
      return;
    }
    this.patchComposer(contact, { linkCheck: { link, type: media.type, ...linkCheckOutcome(result.value) } });
  }

  /** One click: the voice_call button, routed back to this agent. */
  async sendCallButton(contact: string): Promise<void> {
    this.state.setContactNotice(null);
    const result = await this.api.sendCallButton({ to: contact });
    this.state.setContactNotice(
      result.ok ? { contact, text: t('contact.callButtonSent'), tone: 'ok' } : { contact, text: messageErrorText(result.error), tone: 'error' },
    );
  }

  /** Free-form inside the window; outside it the Template tab, since only a template can ask. */
  async requestCallPermission(contact: string): Promise<void> {
    this.state.setContactNotice(null);
    if (!isWindowOpen(this.state.conversations[contact]?.window, Date.now())) {
      this.editComposer(contact, (d) => ({ ...d, tab: 'template' }));
      this.state.setContactNotice({ contact, text: t('contact.permissionNeedsTemplate'), tone: 'error' });
      return;
    }
    const result = await this.api.requestCallPermission({ to: contact });
    if (!result.ok && result.error.code === 'window_closed') this.editComposer(contact, (d) => ({ ...d, tab: 'template' }));
    this.state.setContactNotice(
      result.ok
        ? { contact, text: t('contact.permissionRequested'), tone: 'ok' }
        : { contact, text: result.error.code === 'window_closed' ? t('contact.permissionNeedsTemplate') : messageErrorText(result.error), tone: 'error' },
    );
  }

  private patchComposer(contact: string, patch: Partial<ComposerDraft>): void {
    this.state.updateComposer(contact, (d) => ({ ...d, ...patch }));
  }

  private finishSend(contact: string, sent: ComposerDraft, result: Result<SendReceipt>, confirmed: readonly string[] = []): void {
    if (result.ok) {
      const notes = receiptNotes(result.value);
      this.state.updateComposer(contact, (d) => ({ ...afterSendOf(d, sent), notice: notes.length > 0 ? notes : null }));
      return;
    }
    const error = result.error;
    if (error.code === 'needs_confirmation' && (error.confirm?.length ?? 0) > 0) {
      // Not an error of any field: the file is fine by the rules, the agent decides.
      this.state.updateComposer(contact, (d) =>
        withoutStaleConfirmation({ ...d, busy: false, error: null, serverErrors: {}, confirmation: confirmationFrom(sent, error, confirmed, d.confirmation) }),
      );
      return;
    }
    const placed = serverErrorsFrom(result.error);
    const hasField = Object.keys(placed).length > 0;
    this.patchComposer(contact, {
      busy: false,
      serverErrors: placed,
      confirmation: null,
      error: hasField ? t('composer.notSentRule', { rule: Object.values(placed)[0] }) : t('composer.notSentError', { reason: messageErrorText(result.error) }),
    });
  }
}

// Wires the three parts of the renderer together: the host's SoftphoneApi (the only way to the main
// process), the store (plain data the UI renders), and the media engine (live WebRTC objects).
// Components call the methods here; nothing in a component talks to the API or the engine directly.
import type { PresenceChoice, PushName, PushPayloads, SoftphoneApi, Unsubscribe } from '../../shared/api';
import type { CallState } from '../../shared/call-state';
import type { SendReceipt } from '../../shared/conversation';
import { createLogger } from '../../shared/log';
import { formatBytes, type MessageContent } from '../../shared/messages';
import { formatPhoneNumber } from '../../shared/phone';
import type { AppError, Result } from '../../shared/result';
import type { StoreApi } from 'zustand/vanilla';
import type { HostLink, HostLinkState } from '../bridge/host-link';
import { parseConversation, parsePresence, parsePush, parseSettings, parseSnapshot, parseTemplateDraft } from '../bridge/payload-schemas';
import { errorMessage, messageErrorText } from '../error-texts';
import { currentCall, hasBusyCall } from '../store/call-list';
import { afterSendOf, checkComposer, serverErrorsFrom, templateValuesFor, type CallButtonInput, type ComposerDraft } from '../store/composer';
import { isWindowOpen } from '../store/conversations';
import { SETTINGS_FIELDS, draftFromSettings, settingsErrorsFrom, validateDraft, type SettingsField } from '../store/settings-form';
import { composerFor, type AppState } from '../store/store';
import type { MediaEngine } from '../webrtc/media-engine';
import { errorText } from '../../shared/result';

const log = createLogger('controller');

const LEVEL_POLL_MS = 200;

/** The phases in which a call is the agent's current work: its customer becomes the contact in view. */
const WORKING_PHASES = new Set<CallState['phase']>(['dialing', 'calling', 'remote_ringing', 'answering', 'connecting', 'active']);

/** Sandbox control errors say exactly what the simulated customer could not do; keep their words. */
const sandboxErrorText = (error: AppError): string =>
  error.code === 'not_found' || error.code === 'invalid_input' || error.code === 'invalid_state' ? error.message : errorMessage(error);

export const PERMISSION_TEMPLATE_HINT =
  'The 24-hour window is closed, so the call-permission request must go out as a template: pick or paste one that asks for permission to call.';

export interface RingtonePlayer {
  start(): void;
  stop(): void;
}

export interface ControllerDeps {
  api: SoftphoneApi;
  link: HostLink;
  store: StoreApi<AppState>;
  engine: MediaEngine;
  ringtone?: RingtonePlayer;
}

export class SoftphoneController {
  private readonly api: SoftphoneApi;
  private readonly link: HostLink;
  private readonly store: StoreApi<AppState>;
  private readonly engine: MediaEngine;
  private readonly ringtone: RingtonePlayer | undefined;
  private snapshotRequest = 0;
  /** Per contact, so that a slow parse of an older paste cannot overwrite a newer one. */
  private readonly templateParses = new Map<string, number>();

  constructor(deps: ControllerDeps) {
    this.api = deps.api;
    this.link = deps.link;
    this.store = deps.store;
    this.engine = deps.engine;
    this.ringtone = deps.ringtone;
  }

  private get state(): AppState {
    return this.store.getState();
  }

  /** Subscribes to everything and loads the first snapshot once the host is reachable. */
  start(): Unsubscribe {
    const stops: Unsubscribe[] = [];
    const onPush = <N extends PushName>(name: N, apply: (payload: PushPayloads[N]) => void) => (payload: unknown) => {
      const parsed = parsePush(name, payload);
      if (!parsed.ok) {
        log.warn('dropped a malformed push', { push: name, problem: parsed.error.message });
        return;
      }
      apply(parsed.value);
    };
    stops.push(this.api.onCallChanged(onPush('callChanged', (call) => this.applyCall(call))));
    stops.push(this.api.onConnectionChanged(onPush('connectionChanged', (c) => this.state.setService(c))));
    stops.push(this.api.onHistoryChanged(onPush('historyChanged', (h) => this.state.setHistory(h))));
    stops.push(this.api.onPresenceChanged(onPush('presenceChanged', (p) => this.state.setPresence(p))));
    stops.push(this.api.onConversationChanged(onPush('conversationChanged', (c) => this.state.applyConversation(c))));
    stops.push(
      this.api.onSettingsChanged(
        onPush('settingsChanged', (settings) => {
          this.state.setSettings(settings);
          // The mode, the sandbox customers and the calls may all have changed with it.
          void this.refreshSnapshot();
        }),
      ),
    );

    let previous: HostLinkState['status'] = this.link.state().status;
    this.state.setHostLink(this.link.state());
    stops.push(
      this.link.subscribe((linkState) => {
        this.state.setHostLink(linkState);
        // After a (re)connect the pushes sent meanwhile are lost: the snapshot is the truth again.
        if (linkState.status === 'open' && previous !== 'open') void this.refreshSnapshot();
        previous = linkState.status;
      }),
    );
    if (previous === 'open') void this.refreshSnapshot();

    stops.push(this.store.subscribe((s, before) => this.followRinging(s.calls, before.calls)));
    this.followRinging(this.state.calls, {});

    const poll = setInterval(() => void this.pollLevels(), LEVEL_POLL_MS);
    stops.push(() => clearInterval(poll));

    return () => {
      for (const stop of stops.splice(0)) stop();
      this.ringtone?.stop();
      this.engine.closeAll();
    };
  }

  async refreshSnapshot(): Promise<void> {
    const request = ++this.snapshotRequest;
    const result = await this.api.getSnapshot({});
    if (request !== this.snapshotRequest) return; // a newer request is on its way
    if (!result.ok) {
      this.state.setSnapshotError(errorMessage(result.error));
      return;
    }
    const snapshot = parseSnapshot(result.value);
    if (!snapshot.ok) {
      log.error('the snapshot was malformed', { problem: snapshot.error.message });
      this.state.setSnapshotError('The softphone service sent data this window cannot read. Reload the window.');
      return;
    }
    this.state.applySnapshot(snapshot.value);
    this.engine.reconcile(Object.values(this.state.calls));
  }

  applyCall(call: CallState): void {
    const before = this.state.calls[call.localId];
    const merged = this.state.applyCall(call);
    this.engine.onCall(merged);
    // The customer of a call the agent takes on becomes the contact in view (once, so that the
    // agent may look at another contact during the call).
    const number = merged.peer.number;
    if (number !== undefined && WORKING_PHASES.has(merged.phase) && (before === undefined || !WORKING_PHASES.has(before.phase))) this.selectContact(number);
  }

  // ---- dialer ----

  setDialInput(value: string): void {
    this.state.setDialInput(value);
    if (this.state.dialError) this.state.setDialError(null);
  }

  /** The Call button: startCall, then the media engine makes and sends the offer. */
  async dial(): Promise<void> {
    const s = this.state;
    if (s.dialBusy || hasBusyCall(s.calls)) return;
    s.setDialBusy(true);
    s.setDialError(null);
    s.setCallNotice(null);
    try {
      const started = await this.api.startCall({ to: s.dialInput });
      if (!started.ok) {
        this.state.setDialError(errorMessage(started.error));
        return;
      }
      const sent = await this.engine.startOutgoing(started.value.localId);
      if (!sent.ok) this.state.setDialError(errorMessage(sent.error));
    } finally {
      this.state.setDialBusy(false);
    }
  }

  /** A recent call: its number goes into the dialer, formatted as people type it. */
  useNumber(number: string): void {
    this.setDialInput(formatPhoneNumber(number));
  }

  // ---- calls ----

  /** Resolves once the answer went out or failed (the card re-enables its buttons if the call is still ringing). */
  async answer(localId: string): Promise<void> {
    const call = this.state.calls[localId];
    if (!call || call.direction !== 'incoming' || call.phase !== 'ringing') return;
    this.state.setCallNotice(null);
    this.ringtone?.stop();
    await this.engine.answer(call);
  }

  async decline(localId: string): Promise<void> {
    const result = await this.api.declineCall({ localId });
    if (!result.ok) this.state.setCallNotice({ localId, text: errorMessage(result.error) });
  }

  async hangUp(localId: string): Promise<void> {
    const request = this.api.hangUp({ localId });
    // The agent wants silence now, whatever the gateway says.
    this.engine.close(localId);
    const result = await request;
    if (!result.ok && result.error.code !== 'not_found') this.state.setCallNotice({ localId, text: errorMessage(result.error) });
  }

  toggleMute(localId: string): void {
    const muted = !this.state.muted[localId];
    this.state.setMuted(localId, muted);
    this.engine.setMuted(localId, muted);
  }

  sendDtmf(localId: string, tone: string): boolean {
    return this.engine.sendDtmf(localId, tone);
  }

  // ---- presence ----

  /** The presence control: available or do not disturb (the main process adds "on a call" itself). */
  async setPresence(choice: PresenceChoice): Promise<void> {
    const result = await this.api.setPresence({ status: choice });
    if (!result.ok) {
      this.state.setPresenceError(errorMessage(result.error));
      return;
    }
    const presence = parsePresence(result.value);
    if (presence.ok) this.state.setPresence(presence.value);
  }

  // ---- sandbox ----

  async simulateIncomingCall(): Promise<void> {
    const number = this.state.sandboxSelection;
    this.state.setSandboxError(null);
    if (!number) {
      this.state.setSandboxError('Choose a sandbox customer first.');
      return;
    }
    const result = await this.api.simulateIncomingCall({ number });
    if (!result.ok) this.state.setSandboxError(errorMessage(result.error));
  }

  async customerHangsUp(localId: string): Promise<void> {
    const result = await this.api.simulateCustomerHangUp({ localId });
    if (!result.ok) this.state.setSandboxError(errorMessage(result.error));
  }

  // ---- messages ----

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
      this.state.setContactError('Enter the customer’s number, with the country code.');
      return false;
    }
    const result = await this.api.getConversation({ contact: typed });
    if (!result.ok) {
      this.state.setContactError(errorMessage(result.error));
      return false;
    }
    const conversation = parseConversation(result.value);
    if (!conversation.ok) {
      this.state.setContactError('The softphone service answered with a conversation this window cannot read.');
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
      const next = change(draft);
      if (key === undefined) return next;
      const { [key]: _cleared, ...serverErrors } = next.serverErrors;
      return { ...next, touched: { ...next.touched, [key]: true }, serverErrors, notice: null };
    });
  }

  /** The Send button of the Text, Media and Interactive tabs, and Send template. Never retried. */
  async send(contact: string): Promise<void> {
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
      this.patchComposer(contact, { showAllErrors: true, error: 'Not sent: check the highlighted fields.' });
      return;
    }
    this.patchComposer(contact, { busy: true, error: null, serverErrors: {}, notice: null });
    const input = checked.value;
    const result =
      draft.tab === 'interactive' && draft.interactive.variant === 'voice_call'
        ? await this.api.sendCallButton(input as CallButtonInput)
        : await this.api.sendMessage({ to: contact, content: input as MessageContent });
    this.finishSend(contact, draft, result);
  }

  async sendTemplate(contact: string): Promise<void> {
    const draft = composerFor(this.state, contact);
    const template = draft.template;
    if (draft.busy) return;
    if (!template.draft) {
      this.patchComposer(contact, { error: template.pasted.trim() === '' ? 'Paste the template’s API Payload first.' : 'The pasted payload is not a template yet: see the problem above.' });
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
      this.editComposer(contact, (d) => ({ ...d, template: { ...d.template, draft: null, parseError: 'The softphone service answered with a template this window cannot read.' } }));
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
    const link = media.link.trim();
    if (link === '') {
      this.patchComposer(contact, { linkCheck: null });
      return;
    }
    this.patchComposer(contact, { linkCheck: { link, type: media.type, state: 'checking', text: 'Checking the link…' } });
    const result = await this.api.checkMediaLink({ type: media.type, link });
    const now = composerFor(this.state, contact).media;
    if (now.link.trim() !== link || now.type !== media.type) return; // edited meanwhile
    if (!result.ok) {
      this.patchComposer(contact, { linkCheck: { link, type: media.type, state: 'failed', text: messageErrorText(result.error) } });
      return;
    }
    const { contentType, contentLength, warnings } = result.value;
    const size = contentLength !== undefined ? ` · ${formatBytes(contentLength)}` : '';
    const text = [`${contentType}${size}: fits the ${media.type} rules`, ...warnings].join('. ');
    this.patchComposer(contact, { linkCheck: { link, type: media.type, state: 'ok', text } });
  }

  /** One click: the voice_call button, routed back to this agent. */
  async sendCallButton(contact: string): Promise<void> {
    this.state.setContactNotice(null);
    const result = await this.api.sendCallButton({ to: contact });
    this.state.setContactNotice(
      result.ok ? { contact, text: 'Call button sent: when the customer taps it, the call rings here first.', tone: 'ok' } : { contact, text: messageErrorText(result.error), tone: 'error' },
    );
  }

  /** Free-form inside the window; outside it the Template tab, since only a template can ask. */
  async requestCallPermission(contact: string): Promise<void> {
    this.state.setContactNotice(null);
    if (!isWindowOpen(this.state.conversations[contact]?.window, Date.now())) {
      this.editComposer(contact, (d) => ({ ...d, tab: 'template' }));
      this.state.setContactNotice({ contact, text: PERMISSION_TEMPLATE_HINT, tone: 'error' });
      return;
    }
    const result = await this.api.requestCallPermission({ to: contact });
    if (!result.ok && result.error.code === 'window_closed') this.editComposer(contact, (d) => ({ ...d, tab: 'template' }));
    this.state.setContactNotice(
      result.ok
        ? { contact, text: 'Call permission requested: call again once the customer allows it.', tone: 'ok' }
        : { contact, text: result.error.code === 'window_closed' ? PERMISSION_TEMPLATE_HINT : messageErrorText(result.error), tone: 'error' },
    );
  }

  async simulateInboundMessage(): Promise<void> {
    const number = this.state.sandboxSelection;
    const text = this.state.sandboxMessage.trim();
    this.state.setSandboxError(null);
    if (!number) {
      this.state.setSandboxError('Choose a sandbox customer first.');
      return;
    }
    if (text === '') {
      this.state.setSandboxError('Type what the customer writes.');
      return;
    }
    const result = await this.api.simulateInboundMessage({ number, text });
    if (!result.ok) {
      this.state.setSandboxError(sandboxErrorText(result.error));
      return;
    }
    this.state.setSandboxMessage('');
    if (this.state.selectedContact === null) this.selectContact(number);
  }

  async customerPressesCallButton(contact: string): Promise<void> {
    const result = await this.api.simulatePressCallButton({ number: contact });
    if (!result.ok) this.state.setContactNotice({ contact, text: sandboxErrorText(result.error), tone: 'error' });
  }

  private patchComposer(contact: string, patch: Partial<ComposerDraft>): void {
    this.state.updateComposer(contact, (d) => ({ ...d, ...patch }));
  }

  private finishSend(contact: string, sent: ComposerDraft, result: Result<SendReceipt>): void {
    if (result.ok) {
      const warnings = result.value.warnings;
      this.state.updateComposer(contact, (d) => ({ ...afterSendOf(d, sent), notice: warnings.length > 0 ? `Sent. ${warnings.join('. ')}` : null }));
      return;
    }
    const placed = serverErrorsFrom(result.error);
    const hasField = Object.keys(placed).length > 0;
    this.patchComposer(contact, {
      busy: false,
      serverErrors: placed,
      error: hasField ? `Not sent: ${Object.values(placed)[0]}` : `Not sent. ${messageErrorText(result.error)}`,
    });
  }

  // ---- settings ----

  editSettings(field: SettingsField, value: string): void {
    this.state.editSettings(field, value);
  }

  /** Returns the first field with an error, for the form to move focus to. */
  async saveSettings(): Promise<SettingsField | null> {
    const form = this.state.settingsForm;
    if (form.busy) return null;
    const checked = validateDraft(form.draft);
    if (!checked.ok) {
      this.state.setSettingsForm({ errors: checked.errors, formError: null, status: null });
      return firstField(checked.errors);
    }
    this.state.setSettingsForm({ busy: true, errors: {}, formError: null, status: null });
    const result = await this.api.saveSettings({ settings: checked.input });
    if (!result.ok) {
      const placed = settingsErrorsFrom(result.error);
      const formError = placed.form === null ? null : result.error.code === 'invalid_input' ? placed.form : errorMessage(result.error);
      this.state.setSettingsForm({ busy: false, errors: placed.fields, formError });
      return firstField(placed.fields);
    }
    this.adoptSettings(result.value, 'Settings saved.');
    return null;
  }

  async useSandbox(): Promise<void> {
    this.state.setSettingsForm({ busy: true, formError: null, status: null });
    const result = await this.api.clearSettings({});
    if (!result.ok) {
      this.state.setSettingsForm({ busy: false, formError: errorMessage(result.error) });
      return;
    }
    this.adoptSettings(result.value, 'The account was forgotten: you are in the sandbox.');
  }

  private adoptSettings(value: unknown, status: string): void {
    const settings = parseSettings(value);
    if (!settings.ok) {
      this.state.setSettingsForm({ busy: false, formError: 'The softphone service answered with settings this window cannot read.' });
      return;
    }
    // Saved: the secrets leave the form (blank means "keep the stored one").
    this.state.setSettingsForm({ busy: false, dirty: false, errors: {}, formError: null, status, draft: draftFromSettings(settings.value) });
    this.state.setSettings(settings.value);
  }

  // ---- internals ----

  private followRinging(calls: AppState['calls'], before: AppState['calls']): void {
    if (calls === before || !this.ringtone) return;
    const ringing = Object.values(calls).some((c) => c.phase === 'ringing');
    if (ringing) this.ringtone.start();
    else this.ringtone.stop();
  }

  private async pollLevels(): Promise<void> {
    const call = currentCall(this.state.calls, Date.now());
    if (!call || call.phase === 'ended' || !this.engine.has(call.localId)) {
      this.state.setLevels({ mic: 0, customer: 0 });
      return;
    }
    try {
      const levels = await this.engine.levels(call.localId);
      this.state.setLevels({ mic: round2(levels.mic), customer: round2(levels.customer) });
    } catch (e) {
      log.debug('reading levels failed', { problem: errorText(e) });
    }
  }
}

const round2 = (v: number): number => Math.round(v * 100) / 100;

function firstField(errors: Partial<Record<SettingsField, string>>): SettingsField | null {
  return SETTINGS_FIELDS.find((f) => errors[f] !== undefined) ?? null;
}

// The messaging half of the agent's work beside the call (gateway-spec.md 2–4.1, 4.3): free-form
// messages, media by link, templates, the voice_call button and the call-permission request, each
// checked before anything is sent; the 24-hour window per contact (ConversationWindows) and the
// timeline of what was sent and received (MessageTimeline), both fed by the relay's message events.
//
// Rules kept here:
// - Free-form needs the window open (gateway-spec.md 3.1): refused here while it is closed, and a
//   131047 answer closes it (the gateway is the judge).
// - Media links are checked (media-link-check.ts: the file's bytes against gateway-spec.md 2.3) before
//   the message goes out; a file that breaks a rule is a clear error and nothing is sent. A file the
//   gateway takes with a warning (B-frames, moov after mdat) waits for the agent: needs_confirmation
//   with the warnings, and only the same send with those texts `confirmed` ("Send anyway") lets it
//   go. The file is checked again then: a warning it has now that the agent did not confirm asks
//   again, so a file changed after the agent saw the warnings never goes out on the old word.
// - Media by id is not checked here: the gateway holds the file and judges it. Its refusal (131053,
//   error_data.details "image.id: unknown media id …") is placed on the field the details name.
// - A signed link carries its credentials in the query: a link in a log line keeps only its origin
//   and path (`withoutQuery`, shared/media-fetch.ts, which cuts the link check's own texts already),
//   and so do the gateway's refusal texts passed on.
// - Nothing is retried: a send whose answer was lost may have gone out (gateway-client.ts).
import type { MediaLinkCheckResult } from '../../shared/api';
import { createLogger, type Logger } from '../../shared/log';
import { english, fieldRule, spaced, text, type RuleText } from '../../shared/i18n/text';
import { checkMediaFile, errorWithoutQueries, withoutQuery, type MediaFileCheck } from '../../shared/media-fetch';
import type { MediaFinding } from '../../shared/media-inspect/reading';
import { NOT_DELIVERED_FAILURE, SNAPSHOT_CONVERSATIONS, type Conversation, type MessageFailure, type SendReceipt } from '../../shared/conversation';
import type { RelayEnvelope, RelayEvent } from '../../shared/events';
import {
  buildCallPermissionRequest,
  buildFreeFormMessage,
  buildVoiceCallButtonMessage,
  describeMessage,
  mediaMembers,
  MESSAGE_ERROR_TEXT,
  type FreeFormMessage,
  type MediaType,
  type MessageContent,
} from '../../shared/messages';
import { normalisePhoneNumber } from '../../shared/phone';
import { errText, ok, type AppError, type Result } from '../../shared/result';
import { describeTemplate, fillTemplate, parseTemplatePayload, type TemplateDraft } from '../../shared/templates';
import type { ConversationWindows } from './conversation-windows';
import type { MessageSending } from './gateway-client';
import { undiciByteFetch, type MediaLinkCheckOptions } from './media-link-check';
import type { MessageTimeline } from './message-timeline';

/** The account the messages go through; absent while no account is set up and the sandbox is not running. */
export interface MessagingRuntime {
  gateway: MessageSending;
  /** The product word (protocol.md: a setting). */
  product: string;
  defaultCountry?: string;
  /** This agent's id on the relay (GET /me): the voice_call payload routes the call back to it. */
  agentId(): Promise<Result<string>>;
}

/** The media link check: its findings as they are, each note and warning with its code and values beside its English. */
export type LinkChecker = (type: MediaType, url: string, options?: MediaLinkCheckOptions) => Promise<Result<MediaFileCheck>>;

/** shared/media-fetch.ts's check on undici (media-link-check.ts), findings kept as texts for the window to say in its language. */
const checkLinkFile: LinkChecker = (type, url, { fetchImpl, ...rest } = {}) => checkMediaFile(type, url, { ...rest, fetch: fetchImpl ?? undiciByteFetch });

/** What a send learns of one media link: its notes, and the warnings the agent confirms. */
interface LinkFindings {
  field: string;
  link: string;
  warnings: MediaFinding[];
}

export interface MessagingServiceOptions {
  windows: ConversationWindows;
  timeline: MessageTimeline;
  logger?: Logger;
  now?: () => number;
  /** The media link check; the real one by default. */
  checkLink?: LinkChecker;
}

export const CALL_PERMISSION_REQUEST_TEXT = 'May we call you on this number? Tap to allow calls from us.';

const WINDOW_CLOSED = text('messaging.windowClosed');
const PERMISSION_OUTSIDE_WINDOW = text('messaging.permissionOutsideWindow');

export class MessagingService {
  private readonly windows: ConversationWindows;
  private readonly timeline: MessageTimeline;
  private readonly log: Logger;
  private readonly now: () => number;
  private readonly checkLink: LinkChecker;
  private readonly listeners = new Set<(conversation: Conversation) => void>();
  private readonly stops: (() => void)[] = [];
  private runtime: MessagingRuntime | undefined;
  /** See Conversation.revision: one counter, never below the clock. */
  private revision: number;
  private readonly startRevision: number;
  private readonly revisions = new Map<string, number>();
  /** Contacts changed in this turn of the event loop: one push each. */
  private readonly dirty = new Set<string>();
  private closed = false;

  constructor(options: MessagingServiceOptions) {
    this.windows = options.windows;
    this.timeline = options.timeline;
    this.log = options.logger ?? createLogger('messages');
    this.now = options.now ?? Date.now;
    this.checkLink = options.checkLink ?? checkLinkFile;
    this.revision = this.now();
    this.startRevision = this.revision;
    this.stops.push(this.windows.onChanged(({ contactNumber }) => this.markChanged(contactNumber)));
    this.stops.push(this.timeline.onChanged((contact) => this.markChanged(contact)));
  }

  setRuntime(runtime: MessagingRuntime | undefined): void {
    this.runtime = runtime;
  }

  onConversationChanged(listener: (conversation: Conversation) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Inbound messages open the window and join the timeline; statuses move messages forward. Calls are not ours. */
  applyRelayEvent(envelope: RelayEnvelope): void {
    if (this.closed) return;
    const e = envelope.event;
    if (e.type === 'message.inbound') this.onInbound(e);
    else if (e.type === 'message.status') this.onStatus(e);
  }

  /** A customer's name from a call, for the conversation's title. */
  rememberName(contact: string, name: string): void {
    this.timeline.rememberName(contact, name);
  }

  /** The name known for a contact (from its calls or messages), if any. */
  nameOf(contact: string): string | undefined {
    return this.timeline.nameOf(contact.replace(/[\s+]/g, ''));
  }

  conversation(contact: string): Conversation {
    const key = contact.replace(/[\s+]/g, '');
    const window = this.windows.stateOf(key);
    const messages = this.timeline.messagesOf(key);
    const lastMessageAt = messages[messages.length - 1]?.at ?? 0;
    const name = this.timeline.nameOf(key);
    return {
      contact: key,
      ...(name !== undefined ? { name } : {}),
      window,
      messages,
      lastActivityAt: Math.max(lastMessageAt, window.lastInboundAt ?? 0),
      revision: this.revisions.get(key) ?? this.startRevision,
    };
  }

  /** A contact's conversation, for a number in gateway digits or as typed. */
  lookUp(contact: string): Result<Conversation> {
    const trimmed = contact.trim();
    if (/^[0-9]+$/.test(trimmed)) return ok(this.conversation(trimmed));
    const number = normalisePhoneNumber(trimmed, this.runtime?.defaultCountry);
    return number.ok ? ok(this.conversation(number.value)) : number;
  }

  /** The contacts written with or by most recently, with their windows, newest first. */
  recentConversations(limit = SNAPSHOT_CONVERSATIONS): Conversation[] {
    const activity = new Map<string, number>();
    for (const { contact, lastActivityAt } of this.timeline.contactsByActivity()) activity.set(contact, lastActivityAt);
    for (const [contact, state] of Object.entries(this.windows.states())) {
      const at = Math.max(state.lastInboundAt ?? 0, state.open ? 0 : (state.closedAt ?? 0));
      if (at > (activity.get(contact) ?? -1)) activity.set(contact, at);
    }
    return [...activity.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, limit)
      .map(([contact]) => this.conversation(contact));
  }

  /**
   * The link judged on its bytes; the API's `warnings` are the check's notes (nothing to confirm),
   * `confirm` its media rules, each beside its code and values (`warningTexts`, `confirmTexts`).
   */
  async checkMediaLink(type: MediaType, link: string): Promise<Result<MediaLinkCheckResult>> {
    const checked = await this.checkLink(type, link.trim());
    if (!checked.ok) return checked;
    const { contentType, size, finalUrl, notes, noteTexts, warnings, description, descriptionText } = checked.value;
    return ok({
      contentType,
      contentLength: size,
      finalUrl,
      warnings: notes,
      warningTexts: noteTexts,
      ...(warnings.length > 0 ? { confirm: warnings.map((w) => w.message), confirmTexts: warnings.map((w) => w.text) } : {}),
      ...(description !== '' ? { description, descriptionText } : {}),
    });
  }

  parseTemplate(pasted: string): Result<TemplateDraft> {
    return parseTemplatePayload(pasted);
  }

  /**
   * A free-form message: window open, media links checked, then one POST. Warnings that need the
   * agent's word stop it with needs_confirmation unless every one the check finds now is among the
   * texts in `confirmed`; refusals stop it whatever is confirmed.
   */
  async sendMessage(to: string, content: MessageContent, options: { confirmed?: readonly string[] | undefined } = {}): Promise<Result<SendReceipt>> {
    const runtime = this.runtime;
    if (!runtime) return notConfigured();
    const contact = this.contactOf(to, runtime);
    if (!contact.ok) return contact;
    const closed = this.refuseIfClosed(contact.value, WINDOW_CLOSED);
    if (closed) return closed;
    const message = buildFreeFormMessage(runtime.product, contact.value, content);
    if (!message.ok) return message;
    const notes: { message: string; text: RuleText }[] = [];
    const confirm: LinkFindings[] = [];
    for (const member of mediaMembers(content)) {
      // Media by id is the gateway's to judge (see the top of this file).
      if (!('link' in member.source)) continue;
      const { type } = member;
      const { link } = member.source;
      const field = `content.${member.field}`;
      const checked = await this.checkLink(type, link, { field });
      if (!checked.ok) {
        this.log.info('media link refused before sending', { to: contact.value, field, link: withoutQuery(link), reason: checked.error.message });
        return checked;
      }
      const { notes: noted, noteTexts, warnings } = checked.value;
      noted.forEach((message, i) => notes.push({ message, text: noteTexts[i]! }));
      if (warnings.length > 0) confirm.push({ field, link, warnings });
    }
    const held = this.unconfirmed(contact.value, confirm, options.confirmed ?? []);
    if (held) return held;
    const sent = await this.sendFreeForm(runtime, contact.value, message.value, notes);
    return sent.ok ? sent : { ok: false, error: errorWithoutQueries(placeGatewayDetails(sent.error, content)) };
  }

  /**
   * needs_confirmation while a warning found now is not among the texts the agent confirmed; the
   * answer lists every warning found now, so the agent confirms the file as it is.
   */
  private unconfirmed(contact: string, confirm: readonly LinkFindings[], confirmed: readonly string[]): Result<never> | undefined {
    if (confirm.length === 0) return undefined;
    const given = new Set(confirmed);
    const found = confirm.flatMap((c) => c.warnings);
    const all = found.map((w) => w.message);
    const asked = { confirm: all, confirmTexts: found.map((w) => w.text) };
    const warnings = spaced(asked.confirmTexts);
    const open = confirm.find((c) => c.warnings.some((w) => !given.has(w.message)));
    const fields = confirm.map((c) => c.field);
    const links = confirm.map((c) => withoutQuery(c.link));
    if (open === undefined) {
      this.log.info('media sent with the warnings the agent confirmed', { to: contact, fields, links, warnings: all.length });
      return undefined;
    }
    if (confirmed.length > 0) {
      // The agent confirmed other words: the file is not the one they were about any more.
      this.log.info('media send waits again: the file has warnings the agent did not confirm', { to: contact, field: open.field, links, warnings: all.length, confirmed: confirmed.length });
      return errText('needs_confirmation', text('messaging.warningsChanged', { field: open.field, warnings }), { field: open.field, ...asked });
    }
    this.log.info('media send waits for the agent to confirm', { to: contact, field: open.field, links, warnings: all.length });
    return errText('needs_confirmation', text('messaging.confirmToSend', { field: open.field, warnings }), { field: open.field, ...asked });
  }

  /** A pasted template with its values. The variables are found again in the template itself. */
  async sendTemplate(draft: Pick<TemplateDraft, 'template'>, to: string, values: Readonly<Record<string, string>>): Promise<Result<SendReceipt>> {
    const runtime = this.runtime;
    if (!runtime) return notConfigured();
    const fresh = parseTemplatePayload(JSON.stringify({ template: draft.template }));
    if (!fresh.ok) return { ok: false, error: inDraft(fresh.error) };
    const filled = fillTemplate(fresh.value, { to, values, product: runtime.product, ...(runtime.defaultCountry ? { defaultCountry: runtime.defaultCountry } : {}) });
    if (!filled.ok) return filled;
    const message = filled.value;
    const sent = await runtime.gateway.sendTemplate(message);
    if (!sent.ok) return sent;
    const shown = fresh.value.fields.map((f) => values[f.path]?.trim()).filter((v): v is string => v !== undefined && v !== '');
    this.timeline.recordOutbound({
      messageId: sent.value.messageId,
      contact: message.to,
      kind: 'template',
      summary: shown.length > 0 ? `${describeTemplate(message)}: ${shown.join(' · ')}` : describeTemplate(message),
      at: this.now(),
    });
    return ok({ messageId: sent.value.messageId, contact: message.to, warnings: [] });
  }

  /** The one-click voice_call button; its payload names this agent so the call rings here first. */
  async sendCallButton(input: { to: string; bodyText?: string; displayText?: string; ttlMinutes?: number }): Promise<Result<SendReceipt>> {
    const runtime = this.runtime;
    if (!runtime) return notConfigured();
    const contact = this.contactOf(input.to, runtime);
    if (!contact.ok) return contact;
    const closed = this.refuseIfClosed(contact.value, WINDOW_CLOSED);
    if (closed) return closed;
    const agentId = await runtime.agentId();
    if (!agentId.ok) {
      return errText('not_available', text('messaging.noAgentId', { reason: agentId.error.text ?? agentId.error.message }));
    }
    const message = buildVoiceCallButtonMessage({
      product: runtime.product,
      to: contact.value,
      agentId: agentId.value,
      ...(nonBlank(input.bodyText) ? { bodyText: input.bodyText!.trim() } : {}),
      ...(nonBlank(input.displayText) ? { displayText: input.displayText!.trim() } : {}),
      ...(input.ttlMinutes !== undefined ? { ttlMinutes: input.ttlMinutes } : {}),
    });
    if (!message.ok) return message;
    return this.sendFreeForm(runtime, contact.value, message.value, []);
  }

  /** protocol.md: the free-form request needs the window; outside it only a template can ask. */
  async requestCallPermission(to: string, bodyText?: string): Promise<Result<SendReceipt>> {
    const runtime = this.runtime;
    if (!runtime) return notConfigured();
    const contact = this.contactOf(to, runtime);
    if (!contact.ok) return contact;
    const closed = this.refuseIfClosed(contact.value, PERMISSION_OUTSIDE_WINDOW);
    if (closed) return closed;
    const message = buildCallPermissionRequest(runtime.product, contact.value, nonBlank(bodyText) ? bodyText!.trim() : CALL_PERMISSION_REQUEST_TEXT);
    if (!message.ok) return message;
    return this.sendFreeForm(runtime, contact.value, message.value, []);
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const stop of this.stops.splice(0)) stop();
    this.listeners.clear();
    await this.timeline.close();
    await this.windows.close();
  }

  /** `notes`: what the media check noticed that needs no confirmation, the receipt's `warnings` (and `warningTexts`). */
  private async sendFreeForm(runtime: MessagingRuntime, contact: string, message: FreeFormMessage, notes: readonly { message: string; text: RuleText }[]): Promise<Result<SendReceipt>> {
    const sent = await runtime.gateway.sendMessage(message);
    if (!sent.ok) {
      // gateway-spec.md 3.1: the gateway says the window is closed; believe it until the customer writes.
      if (sent.error.code === 'window_closed') this.windows.recordClosed(contact, this.now());
      return sent;
    }
    const { to: _to, messaging_product: _product, recipient_type: _recipient, ...content } = message;
    this.timeline.recordOutbound({
      messageId: sent.value.messageId,
      contact,
      kind: message.type,
      ...(message.type === 'interactive' ? { interactiveType: message.interactive.type } : {}),
      summary: describeMessage(content as MessageContent),
      at: this.now(),
    });
    return ok({ messageId: sent.value.messageId, contact, warnings: notes.map((n) => n.message), ...(notes.length > 0 ? { warningTexts: notes.map((n) => n.text) } : {}) });
  }

  /** Numbers as typed ("+44 20 …") or in gateway digits. */
  private contactOf(to: string, runtime: MessagingRuntime): Result<string> {
    const trimmed = to.trim();
    return normalisePhoneNumber(/^[0-9]+$/.test(trimmed) ? `+${trimmed}` : trimmed, runtime.defaultCountry);
  }

  private refuseIfClosed(contact: string, why: RuleText): Result<never> | undefined {
    if (this.windows.stateOf(contact).open) return undefined;
    return errText('window_closed', why);
  }

  private onInbound(e: Extract<RelayEvent, { type: 'message.inbound' }>): void {
    if (e.from === undefined) {
      // Only a business-scoped user id (protocol.md): there is no number to key a window or a reply by.
      this.log.info('a message without a phone number was not added to a conversation', { messageId: e.messageId });
      return;
    }
    this.windows.recordInbound(e.from, e.timestamp);
    this.timeline.recordInbound({
      messageId: e.messageId,
      contact: e.from,
      ...(e.name !== undefined ? { name: e.name } : {}),
      kind: e.messageType,
      ...(e.permissionReply ? { interactiveType: 'call_permission_reply' } : {}),
      summary: inboundSummary(e),
      at: e.timestamp,
    });
  }

  private onStatus(e: Extract<RelayEvent, { type: 'message.status' }>): void {
    const first = e.errors?.[0];
    let failure: MessageFailure | undefined;
    if (e.status === 'failed') {
      failure = first ? { code: first.code, message: MESSAGE_ERROR_TEXT[first.code] ?? first.details ?? first.message } : NOT_DELIVERED_FAILURE;
    }
    this.timeline.applyStatus({ messageId: e.messageId, status: e.status, at: e.timestamp, ...(failure ? { failure } : {}) });
  }

  private markChanged(contact: string): void {
    if (this.closed) return;
    const key = contact.replace(/[\s+]/g, '');
    this.revision = Math.max(this.revision + 1, this.now());
    this.revisions.set(key, this.revision);
    const first = this.dirty.size === 0;
    this.dirty.add(key);
    if (first) queueMicrotask(() => this.flushChanges());
  }

  private flushChanges(): void {
    const contacts = [...this.dirty];
    this.dirty.clear();
    if (this.closed) return;
    for (const contact of contacts) {
      const conversation = this.conversation(contact);
      for (const listener of this.listeners) {
        try {
          listener(conversation);
        } catch (e) {
          this.log.error('a conversation listener failed', { error: e });
        }
      }
    }
  }
}

const notConfigured = (): Result<never> => errText('not_configured', text('service.notConfigured'));

const nonBlank = (s: string | undefined): boolean => s !== undefined && s.trim() !== '';

/**
 * A Graph refusal of the message's media placed on its field: the gateway's error_data.details name
 * the body path first ("image.id: unknown media id …", gateway-spec.md 2.3; the sandbox answers an
 * unknown id with 131053 so). gateway-client.ts keeps error_data as JSON in `detail`. Only a path of
 * a media member this message has is taken: anything else stays the message-wide error it was.
 */
function placeGatewayDetails(error: AppError, content: MessageContent): AppError {
  if (error.gatewayCode === undefined || error.detail === undefined || error.field !== undefined) return error;
  const details = graphDetailsOf(error.detail);
  const placed = details === undefined ? null : /^([A-Za-z_][\w.]*):\s*(\S[\s\S]*)$/.exec(details);
  const path = placed?.[1];
  const rule = placed?.[2];
  if (path === undefined || rule === undefined || !mediaMembers(content).some((m) => m.field === path)) return error;
  // The gateway's own words for the field, as they came.
  const field = `content.${path}`;
  const whole = fieldRule(field, rule.trim());
  return { ...error, field, message: english(whole), text: whole, issues: [{ field, text: rule.trim() }] };
}

/** A refusal of the template inside the sendTemplate command's `draft`: its field named from there ("draft.template.name: …"). */
function inDraft(error: AppError): AppError {
  const field = `draft.${error.field ?? 'template'}`;
  const rule = error.issues?.length === 1 ? error.issues[0]!.text : undefined;
  if (rule === undefined) return { code: 'invalid_input', message: `draft.${error.message}`, field };
  const whole = fieldRule(field, rule);
  return { code: 'invalid_input', message: english(whole), field, text: whole, issues: [{ field, text: rule }] };
}

/** error_data.details out of gateway-client.ts's `detail` ("<message> <error_data as JSON>", perhaps cut short after it). */
function graphDetailsOf(detail: string): string | undefined {
  const found = /"details":("(?:[^"\\]|\\.)*")/.exec(detail);
  if (!found) return undefined;
  try {
    const details: unknown = JSON.parse(found[1]!);
    return typeof details === 'string' && details.trim() !== '' ? details.trim() : undefined;
  } catch {
    return undefined;
  }
}

const MEDIA_WORDS: Readonly<Record<string, string>> = { image: 'Image', audio: 'Audio', video: 'Video', document: 'Document', sticker: 'Sticker', location: 'Location', contacts: 'Contact card' };

function inboundSummary(e: Extract<RelayEvent, { type: 'message.inbound' }>): string {
  if (e.text !== undefined && e.text.trim() !== '') return e.text;
  if (e.permissionReply) {
    const allowed = e.permissionReply.response === 'accept';
    return allowed ? `Allowed calls${e.permissionReply.isPermanent ? ' (permanently)' : ''}` : 'Declined calls';
  }
  return MEDIA_WORDS[e.messageType] ? `(${MEDIA_WORDS[e.messageType]})` : `(${e.messageType} message)`;
}

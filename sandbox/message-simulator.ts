// The messaging half of the service behind replymessage and sendtemplate (gateway-spec.md 3.1,
// 4.1, 4.3; protocol.md "Events"): every customer's 24-hour window, the delivery statuses of what
// the business sends, the customers' own messages, and the voice_call buttons they can press.
import { randomBytes } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import { CALL_PERMISSION_MS } from '../shared/callbacks';
import type { Logger } from '../shared/log';
import type { FreeFormMessage } from '../shared/messages';
import { normalisePhoneNumber } from '../shared/phone';
import { err, ok, type Result } from '../shared/result';
import type { SandboxCustomer, SandboxMessageReport } from '../shared/sandbox';
import type { TemplateMessage } from '../shared/templates';
import type { InboundMedia, InboundMessageItem } from '../shared/webhook';
import type { GatewayOutcome } from './call-simulator';
import { findCustomer } from './customers';
import type { GraphFailure } from './graph-error';
import { templateProblem } from './template-catalogue';
import { unixSeconds, type WebhookSender } from './webhook-sender';

export interface MessagingTimings {
  /** After the send's answer: when each status webhook goes out. Increasing; read last. */
  statusDelaysMs: { sent: number; delivered: number; read: number };
  /** gateway-spec.md 3.1: 24 hours; shorter in tests of expiry. */
  windowMs: number;
}

export const DEFAULT_MESSAGING_TIMINGS: MessagingTimings = {
  statusDelaysMs: { sent: 100, delivered: 300, read: 800 },
  windowMs: 24 * 60 * 60 * 1000,
};

export interface MessageSimulatorOptions {
  customers: readonly SandboxCustomer[];
  product: string;
  webhooks: WebhookSender;
  logger: Logger;
  timings: MessagingTimings;
  /** Valid numbers with no chat-app account: accepted, then a `failed` status (131026). */
  unreachableNumbers: readonly string[];
  /** The service's judgement of a message's media (media-judge.ts): a refusal, or undefined. */
  judgeMedia?: (message: FreeFormMessage) => Promise<GraphFailure | undefined>;
}

interface CallButton {
  payload: string;
  messageId: string;
  expiresAt: number;
}

const MAX_REPORTS = 2_000;

const newMessageId = () => `wamid.${randomBytes(24).toString('base64url')}`;

/** protocol.md: free-form outside the window is error 131047. */
const windowClosed = (number: string): GraphFailure => ({
  status: 400,
  code: 131047,
  message: '(#131047) Re-engagement message',
  details: `Message failed to send because more than 24 hours have passed since the customer last replied to this number (${number}).`,
});

const contactOf = (customer: SandboxCustomer) => ({ profile: { name: customer.name }, wa_id: customer.number });

const UNDELIVERABLE = { code: 131026, title: 'Message undeliverable', message: 'Message undeliverable', error_data: { details: 'The recipient has no account on the chat app, or cannot receive messages' } };

export class MessageSimulator {
  /** Customer number → when the customer last wrote (unix ms). */
  private readonly lastInbound = new Map<string, number>();
  private readonly buttons = new Map<string, CallButton>();
  private readonly messages: SandboxMessageReport[] = [];
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly stop = new AbortController();

  constructor(private readonly options: MessageSimulatorOptions) {
    // Every message waiting for its next status listens for the close: many at once is normal.
    setMaxListeners(0, this.stop.signal);
  }

  // ── Gateway endpoints: the business's side ──────────────────────────────────────────────────

  /** replymessage: free-form needs the customer's window open (gateway-spec.md 3.1). */
  reply(message: FreeFormMessage, at: number): GatewayOutcome {
    const number = message.to;
    const report = this.newReport('replymessage', message, at);
    if (!this.windowOpen(number, at)) return this.refuse(report, windowClosed(number));
    const messageId = this.accept(report);
    if (message.type === 'interactive' && message.interactive.type === 'voice_call') {
      const { payload, ttl_minutes } = message.interactive.action.parameters;
      this.buttons.set(number, { payload, messageId, expiresAt: at + ttl_minutes * 60_000 });
    }
    return this.sent(number, messageId);
  }

  /** replymessage as the service answers it: the window first, then the media fetched and judged. */
  async replyJudged(message: FreeFormMessage, at: number): Promise<GatewayOutcome> {
    const judge = this.options.judgeMedia;
    if (judge && this.windowOpen(message.to, at)) {
      const failure = await judge(message);
      if (failure) return this.refuse(this.newReport('replymessage', message, at), failure);
    }
    return this.reply(message, at);
  }

  /** sendtemplate: templates go out whatever the window (gateway-spec.md 1.2), if the account has them. */
  template(message: TemplateMessage, at: number): GatewayOutcome {
    const report = this.newReport('sendtemplate', message, at);
    const problem = templateProblem(message);
    if (problem) return this.refuse(report, problem);
    const messageId = this.accept(report);
    return this.sent(message.to, messageId, 'accepted');
  }

  // ── Control API: the customers' side ────────────────────────────────────────────────────────

  /** A customer writes to the business: a signed `messages` webhook, and the window opens. */
  inbound(number: string, text: string): Result<{ messageId: string }> {
    if (this.stop.signal.aborted) return err('not_available', 'the sandbox is closed');
    if (!this.reachable(number)) return err('not_found', `${number} has no account on the chat app: it cannot write`, { field: 'number' });
    const customer = findCustomer(this.options.customers, number);
    const at = Date.now();
    const messageId = newMessageId();
    this.lastInbound.set(number, at);
    this.remember({ messageId, direction: 'inbound', number, type: 'text', text, status: 'delivered', statuses: [], at });
    this.options.logger.info('customer wrote', { messageId, from: number });
    void this.options.webhooks.post(
      {
        contacts: [contactOf(customer)],
        messages: [{ from: number, id: messageId, timestamp: unixSeconds(at), type: 'text', text: { body: text } }],
      },
      'messages',
    );
    return ok({ messageId });
  }

  /**
   * A customer's voicemail (protocol.md "Voicemail"): an inbound audio message whose id is the
   * call's, the audio a voice note kept as media. Like any message of the customer's, under field
   * `messages` with `contacts`.
   */
  voicemail(customer: SandboxCustomer, callId: string, audio: { id: string; mimeType: string; sha256: string }): Result<{ messageId: string }> {
    if (this.stop.signal.aborted) return err('not_available', 'the sandbox is closed');
    const at = Date.now();
    const item = {
      from: customer.number,
      id: callId,
      timestamp: unixSeconds(at),
      type: 'audio',
      audio: { id: audio.id, mime_type: audio.mimeType, sha256: audio.sha256, voice: true },
    } satisfies InboundMessageItem & { audio: InboundMedia & { voice: boolean } };
    this.remember({ messageId: callId, direction: 'inbound', number: customer.number, type: 'audio', status: 'delivered', statuses: [], at });
    this.options.logger.info('customer left a voicemail', { callId, from: customer.number, mediaId: audio.id });
    void this.options.webhooks.post({ contacts: [contactOf(customer)], messages: [item] }, 'messages');
    return ok({ messageId: callId });
  }

  /**
   * A customer asks to be called back about `callId` (protocol.md "Callback requests"): the
   * service's automatic call-permission reply, `accept` for 7 days or for good.
   */
  callbackRequest(customer: SandboxCustomer, callId: string, permanent: boolean): Result<{ messageId: string }> {
    if (this.stop.signal.aborted) return err('not_available', 'the sandbox is closed');
    if (!this.reachable(customer.number)) return err('not_found', `${customer.number} has no account on the chat app: it cannot ask to be called back`, { field: 'number' });
    const at = Date.now();
    const messageId = newMessageId();
    const item = {
      from: customer.number,
      id: messageId,
      timestamp: unixSeconds(at),
      type: 'interactive',
      context: { id: callId },
      interactive: {
        type: 'call_permission_reply',
        call_permission_reply: {
          response: 'accept',
          is_permanent: permanent,
          ...(permanent ? {} : { expiration_timestamp: Math.floor((at + CALL_PERMISSION_MS) / 1000) }),
          response_source: 'automatic',
        },
      },
    } satisfies InboundMessageItem;
    this.remember({ messageId, direction: 'inbound', number: customer.number, type: 'interactive', interactiveType: 'call_permission_reply', status: 'delivered', statuses: [], at });
    this.options.logger.info('customer asked to be called back', { messageId, callId, from: customer.number, permanent });
    void this.options.webhooks.post({ contacts: [contactOf(customer)], messages: [item] }, 'messages');
    return ok({ messageId });
  }

  /** The voice_call button this customer can press now: the last one sent, within its ttl. */
  callButton(number: string, now: number): Result<{ payload: string }> {
    const button = this.buttons.get(number);
    if (!button) return err('not_found', `no voice_call button was sent to ${number}`, { field: 'number' });
    if (now >= button.expiresAt) {
      return err('invalid_state', `the voice_call button sent to ${number} expired at ${new Date(button.expiresAt).toISOString()} (ttl_minutes)`, { field: 'number' });
    }
    return ok({ payload: button.payload });
  }

  reports(): SandboxMessageReport[] {
    return this.messages.map((m) => ({ ...m, statuses: [...m.statuses] }));
  }

  /** Stops every pending status webhook. */
  close(): void {
    this.stop.abort();
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
  }

  // ── Steps ───────────────────────────────────────────────────────────────────────────────────

  private windowOpen(number: string, at: number): boolean {
    const last = this.lastInbound.get(number);
    return last !== undefined && at < last + this.options.timings.windowMs;
  }

  /** A valid number that is not on the list of numbers without an account. */
  private reachable(number: string): boolean {
    return !this.options.unreachableNumbers.includes(number) && normalisePhoneNumber(`+${number}`).ok;
  }

  private newReport(endpoint: 'replymessage' | 'sendtemplate', message: FreeFormMessage | TemplateMessage, at: number): SandboxMessageReport {
    const report: SandboxMessageReport = { direction: 'outbound', endpoint, number: message.to, type: message.type, status: 'accepted', statuses: [], at, body: message };
    if (message.type === 'text') report.text = message.text.body;
    if (message.type === 'interactive') report.interactiveType = message.interactive.type;
    if (message.type === 'template') report.templateName = message.template.name;
    return report;
  }

  private refuse(report: SandboxMessageReport, failure: GraphFailure): GatewayOutcome {
    report.status = 'refused';
    report.error = { code: failure.code, message: failure.message };
    this.remember(report);
    this.options.logger.info('message refused', { to: report.number, endpoint: report.endpoint, code: failure.code });
    return { ok: false, failure };
  }

  private accept(report: SandboxMessageReport): string {
    report.messageId = newMessageId();
    this.remember(report);
    // The statuses follow the answer that names the message.
    setImmediate(() => void this.deliverStatuses(report));
    return report.messageId;
  }

  /** gateway-spec.md 2.6. */
  private sent(number: string, messageId: string, messageStatus?: string): GatewayOutcome {
    return {
      ok: true,
      body: {
        messaging_product: this.options.product,
        contacts: [{ input: number, wa_id: number }],
        messages: [{ id: messageId, ...(messageStatus === undefined ? {} : { message_status: messageStatus }) }],
      },
    };
  }

  /** sent → delivered → read, each once the one before was delivered to the relay; or failed. */
  private async deliverStatuses(report: SandboxMessageReport): Promise<void> {
    const { statusDelaysMs } = this.options.timings;
    const start = Date.now();
    const steps: ('sent' | 'delivered' | 'read' | 'failed')[] = this.reachable(report.number) ? ['sent', 'delivered', 'read'] : ['failed'];
    for (const status of steps) {
      const due = start + (status === 'failed' ? statusDelaysMs.sent : statusDelaysMs[status]);
      await this.sleep(due - Date.now());
      if (this.stop.signal.aborted) return;
      const at = Date.now();
      report.status = status;
      report.statuses.push({ status, at });
      if (status === 'failed') report.error = { code: UNDELIVERABLE.code, message: UNDELIVERABLE.message };
      await this.options.webhooks.post(
        {
          statuses: [
            {
              id: report.messageId,
              status,
              timestamp: unixSeconds(at),
              recipient_id: report.number,
              ...(status === 'failed' ? { errors: [UNDELIVERABLE] } : {}),
            },
          ],
        },
        'messages',
      );
    }
  }

  private remember(report: SandboxMessageReport): void {
    this.messages.push(report);
    if (this.messages.length > MAX_REPORTS) this.messages.splice(0, this.messages.length - MAX_REPORTS);
  }

  private sleep(ms: number): Promise<void> {
    if (ms <= 0 || this.stop.signal.aborted) return Promise.resolve();
    const signal = this.stop.signal;
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.timers.delete(timer);
        signal.removeEventListener('abort', done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.timers.add(timer);
      signal.addEventListener('abort', done, { once: true });
    });
  }
}

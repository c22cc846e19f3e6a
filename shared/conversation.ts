// A contact's conversation as the agent sees it: the 24-hour window (gateway-spec.md 3.1) and the
// timeline of messages sent and received with their delivery status. The main process keeps it
// (electron/core/message-timeline.ts, conversation-windows.ts) and pushes it whole; the renderer
// mirrors it.
//
// protocol.md "Events": delivery statuses arrive in any order (`read` may come without `delivered`,
// and after a retry an older status can arrive late), so a status only ever moves forward, except
// to `failed`, which wins from anywhere.
import { english, text, type RuleText } from './i18n/text';

/** What the gateway said about a message the business sent; `accepted` until its first status. */
export type DeliveryStatus = 'accepted' | 'sent' | 'delivered' | 'read' | 'failed';

const DELIVERY_RANK: Readonly<Record<DeliveryStatus, number>> = { accepted: 0, sent: 1, delivered: 2, read: 3, failed: 4 };

/** Whether `incoming` replaces `current`: forward only, `failed` from anywhere, never back out of `failed`. */
export function isLaterStatus(current: DeliveryStatus | undefined, incoming: DeliveryStatus): boolean {
  if (current === undefined) return true;
  return DELIVERY_RANK[incoming] > DELIVERY_RANK[current];
}

export type ConversationWindowState =
  /** Free-form messages may be sent until `closesAt` (unix ms). */
  | { open: true; closesAt: number; lastInboundAt: number }
  /** Only templates: the customer never wrote, wrote over 24 hours ago, or the gateway answered 131047. */
  | { open: false; lastInboundAt?: number; closedAt?: number };

/** Why a message failed: the gateway's code and words, or, when it gave none, the catalogue's (`text`). */
export interface MessageFailure {
  code?: number;
  message: string;
  /** `message` as its code and values, when the catalogue made it. */
  text?: RuleText;
}

const NOT_DELIVERED = text('messaging.notDelivered');
/** A failure the gateway said nothing more of. */
export const NOT_DELIVERED_FAILURE: MessageFailure = { message: english(NOT_DELIVERED), text: NOT_DELIVERED };

export interface TimelineMessage {
  /** The gateway's message id ("wamid.…"): statuses arrive by it. */
  id: string;
  direction: 'outbound' | 'inbound';
  /** text, image, audio, video, document, interactive, template; for inbound what the customer sent. */
  kind: string;
  /** button, list, cta_url, flow, address_message, voice_call, call_permission_request(_reply). */
  interactiveType?: string;
  /** One line for the timeline (shared/messages.ts describeMessage, describeTemplate, the customer's text). */
  summary: string;
  /** Sent or received (unix ms). */
  at: number;
  /** Outbound only. */
  status?: DeliveryStatus;
  statusAt?: number;
  failure?: MessageFailure;
}

export interface Conversation {
  /** Gateway digits. */
  contact: string;
  /** The customer's profile name, from their messages or calls. */
  name?: string;
  window: ConversationWindowState;
  /** Oldest first, at most CONVERSATION_MESSAGE_LIMIT. */
  messages: TimelineMessage[];
  /** The newest message's time, or the window's last inbound; 0 when there is neither. */
  lastActivityAt: number;
  /**
   * Grows with every change. Seeded from the clock, so a restarted main process continues above
   * what a window still shows; the renderer keeps the higher of two versions it holds.
   */
  revision: number;
}

/** Messages kept per contact; the oldest go first. */
export const CONVERSATION_MESSAGE_LIMIT = 100;
/** Conversations a snapshot carries, most recent first. */
export const SNAPSHOT_CONVERSATIONS = 25;

/** What a send answers: the gateway's id for the message, and what the link check noticed. */
export interface SendReceipt {
  messageId: string;
  /** Gateway digits of the recipient. */
  contact: string;
  /** Things that did not stop the send but are worth knowing (an unknown media size, …), in English. */
  warnings: string[];
  /** The same as codes and values, in the same order, when the catalogue made them (the media check's notes). */
  warningTexts?: RuleText[];
}

/** The link check's findings (shared/media-fetch.ts, run by electron/core/messaging-service.ts). */
export interface MediaLinkCheck {
  contentType: string;
  contentLength?: number;
  finalUrl: string;
  warnings: string[];
  /** The notes as codes and values, in the same order: what the window shows in the agent's language. */
  warningTexts?: RuleText[];
  /** Warnings the agent will confirm with "Send anyway" when sending (gateway-spec.md 2.3's media rules), in English. */
  confirm?: string[];
  /** The same as codes and values, in the same order. */
  confirmTexts?: RuleText[];
}

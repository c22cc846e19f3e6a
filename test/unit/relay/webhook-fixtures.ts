// Webhooks as the calling service sends them (protocol.md), built from the payload types that
// shared/webhook.ts exports, and signed the way the service signs them.
import { createHmac } from 'node:crypto';
import type {
  CallConnectItem,
  CallStatusItem,
  CallTerminateItem,
  InboundMessageItem,
  MessageStatusItem,
  WebhookEnvelope,
  WebhookValue,
} from '../../../shared/webhook';
import { ANSWER_SDP, OFFER_SDP } from '../../fixtures/sdp';

/** The descriptions the webhooks below carry, for the tests that compare them. */
export { ANSWER_SDP, OFFER_SDP };

export const APP_SECRET = 'test-app-secret-0123456789';
export const VERIFY_TOKEN = 'verify-token-abc';
export const AGENT_TOKEN = 'agent-token-0001-0123456789abcdef';
export const CUSTOMER = '447700900123';
export const BUSINESS = '15550001111';

/** Unix seconds as the service writes them: a string. */
export const unixSeconds = (ms = Date.now()): string => String(Math.floor(ms / 1000));

export function envelope(field: 'calls' | 'messages', value: WebhookValue): WebhookEnvelope {
  return {
    object: 'chatapp_business_account',
    entry: [{ id: '102290129340398', changes: [{ field, value: { messaging_product: 'chatapp', metadata: { display_phone_number: BUSINESS, phone_number_id: '106540352242922' }, ...value } }] }],
  };
}

export function incomingCallItem(callId: string, overrides: Partial<CallConnectItem> = {}): CallConnectItem {
  return {
    id: callId,
    from: CUSTOMER,
    to: BUSINESS,
    event: 'connect',
    timestamp: unixSeconds(),
    direction: 'USER_INITIATED',
    session: { sdp_type: 'offer', sdp: OFFER_SDP },
    ...overrides,
  };
}

export function incomingCall(callId: string, overrides: Partial<CallConnectItem> = {}): WebhookEnvelope {
  return envelope('calls', { contacts: [{ profile: { name: 'Ada Customer' }, wa_id: CUSTOMER }], calls: [incomingCallItem(callId, overrides)] });
}

export function answeredCall(callId: string, overrides: Partial<CallConnectItem> = {}): WebhookEnvelope {
  return envelope('calls', {
    calls: [{ id: callId, to: CUSTOMER, from: BUSINESS, event: 'connect', timestamp: unixSeconds(), direction: 'BUSINESS_INITIATED', session: { sdp_type: 'answer', sdp: ANSWER_SDP }, ...overrides }],
  });
}

export function terminatedCall(callId: string, overrides: Partial<CallTerminateItem> = {}): WebhookEnvelope {
  const item: CallTerminateItem = { id: callId, from: CUSTOMER, to: BUSINESS, event: 'terminate', timestamp: unixSeconds(), direction: 'USER_INITIATED', status: 'COMPLETED', ...overrides };
  return envelope('calls', { calls: [item] });
}

export function callStatus(callId: string, status: CallStatusItem['status']): WebhookEnvelope {
  return envelope('calls', { statuses: [{ id: callId, type: 'call', status, timestamp: unixSeconds(), recipient_id: CUSTOMER }] });
}

export function messageStatus(messageId: string, status: MessageStatusItem['status'], overrides: Partial<MessageStatusItem> = {}): WebhookEnvelope {
  return envelope('messages', { statuses: [{ id: messageId, status, timestamp: unixSeconds(), recipient_id: CUSTOMER, ...overrides }] });
}

export function inboundText(messageId: string, text: string, overrides: Partial<InboundMessageItem> = {}): WebhookEnvelope {
  return envelope('messages', {
    contacts: [{ profile: { name: 'Ada Customer' }, wa_id: CUSTOMER }],
    messages: [{ from: CUSTOMER, id: messageId, timestamp: unixSeconds(), type: 'text', text: { body: text }, ...overrides }],
  });
}

export function signature(raw: string | Buffer, secret = APP_SECRET): string {
  return `sha256=${createHmac('sha256', secret).update(raw).digest('hex')}`;
}

export interface PostOptions {
  secret?: string;
  /** Overrides the computed signature header; null sends none. */
  signatureHeader?: string | null;
}

/** POSTs a webhook. Objects are serialised here; strings and buffers are sent as they are. */
export async function postWebhook(relayUrl: string, body: unknown, options: PostOptions = {}): Promise<{ status: number; text: string }> {
  const raw = typeof body === 'string' || Buffer.isBuffer(body) ? body : JSON.stringify(body);
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  const sig = options.signatureHeader === undefined ? signature(raw, options.secret ?? APP_SECRET) : options.signatureHeader;
  if (sig !== null) headers['x-hub-signature-256'] = sig;
  const res = await fetch(`${relayUrl}/webhook`, { method: 'POST', headers, body: typeof raw === 'string' ? raw : new Uint8Array(raw) });
  return { status: res.status, text: await res.text() };
}

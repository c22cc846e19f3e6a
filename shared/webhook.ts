// Normalises the calling service's webhooks (protocol.md "Events") into RelayEvents (events.ts).
//
// Pure: no Node, no DOM. The relay calls it on every verified webhook; the sandbox builds its
// webhooks from the payload types below so that both sides agree on the shapes.
//
// protocol.md: accept the Cloud API envelope and the bare `value` object; do not depend on the
// exact `object` string; unknown fields and events are ignored, never errors. Each item is parsed
// on its own, so one malformed item never costs the others in the same webhook.
import { z } from 'zod';
import { relayEventSchema, type CallErrorInfo, type RelayEvent } from './events';
import { fieldPath, isRecord, issueEnglish, ruleMessage, trimmedString } from './validation';
import { errorText } from './result';
import { compact } from './compact';

// ---------------------------------------------------------------------------------------------
// Payload shapes, as the service sends them (protocol.md). Timestamps are unix seconds as strings.

/** Unix seconds, as a decimal string ("1718000000"). */
export type UnixSecondsString = string;

export interface WebhookContact {
  /** The user's number (digits with country code); absent when only a business-scoped id exists. */
  wa_id?: string;
  /** Business-scoped user id, in payloads that omit the phone number. */
  user_id?: string;
  parent_user_id?: string;
  profile?: { name?: string };
}

export interface WebhookError {
  code: number;
  message?: string;
  /** Some payloads carry `title` instead of `message`. */
  title?: string;
  error_data?: { details?: string };
}

export interface CallSession {
  sdp_type: 'offer' | 'answer';
  sdp: string;
}

interface CallItemCommon {
  /** "wacid.…" */
  id: string;
  from?: string;
  /** Newer payloads may carry only this, without `from` (protocol.md). */
  from_user_id?: string;
  to?: string;
  to_user_id?: string;
  timestamp: UnixSecondsString;
  direction?: 'USER_INITIATED' | 'BUSINESS_INITIATED';
  /** From a voice_call button's `payload`. */
  cta_payload?: string;
  deeplink_payload?: string;
}

/**
 * A connect: a customer's incoming call (offer), or the answer to a business-initiated call. Live
 * incoming connects may come without `direction`: the offer says it (protocol.md "What real
 * payloads show").
 */
export interface CallConnectItem extends CallItemCommon {
  event: 'connect';
  session?: CallSession;
  /**
   * Older payloads carry the SDP here as well (protocol.md): a JSON string
   * `{"sdp":"v=0\r\n…","type":"answer"}`, read also when it is the SDP itself.
   */
  connection?: { webrtc?: { sdp?: string } };
}

export interface CallTerminateItem extends CallItemCommon {
  event: 'terminate';
  status: 'COMPLETED' | 'FAILED';
  /** Only when the call was answered. */
  start_time?: UnixSecondsString;
  end_time?: UnixSecondsString;
  /** Whole seconds. */
  duration?: number;
  errors?: WebhookError[];
  /** What accept or connect carried in `biz_opaque_callback_data`, echoed. */
  biz_opaque_callback_data?: string;
}

/** A file the service made of a call: kept 7 days under `id`, downloadable at `url` for 5 minutes (protocol.md). */
export interface CaptureMediaPayload {
  id: string;
  /** Hex SHA-256 of the file. */
  sha256: string;
  mime_type: string;
  url: string;
}

/**
 * The service's recording of a call is ready (protocol.md "What the service added in 2026"): after
 * the terminate, with no direction and no SDP. An Ogg Opus file, channel 0 the business, 1 the customer.
 */
export interface CallRecordingAvailableItem extends CallItemCommon {
  event: 'call_recording_available';
  call_recording: { type: 'audio'; audio: CaptureMediaPayload & { mime_type: 'audio/ogg; codecs=opus' } };
}

/** The service's transcript of a call is ready: a JSON document of segments (shared/service-capture.ts transcriptDocumentSchema). */
export interface CallTranscriptionAvailableItem extends CallItemCommon {
  event: 'call_transcription_available';
  call_transcript: { document: CaptureMediaPayload & { mime_type: 'application/json' } };
}

/** One `value.calls[]` item. */
export type CallWebhookItem = CallConnectItem | CallTerminateItem | CallRecordingAvailableItem | CallTranscriptionAvailableItem;

/** Progress of a business-initiated call: one `value.statuses[]` item with `type: "call"`. */
export interface CallStatusItem {
  id: string;
  type: 'call';
  status: 'RINGING' | 'ACCEPTED' | 'REJECTED';
  timestamp: UnixSecondsString;
  recipient_id?: string;
  recipient_user_id?: string;
  recipient_parent_user_id?: string;
  /** What connect carried in `biz_opaque_callback_data`, echoed. */
  biz_opaque_callback_data?: string;
}

/** Delivery status of a message the business sent: one `value.statuses[]` item. */
export interface MessageStatusItem {
  /** "wamid.…" */
  id: string;
  status: 'sent' | 'delivered' | 'read' | 'failed';
  timestamp: UnixSecondsString;
  recipient_id?: string;
  parent_recipient_user_id?: string;
  errors?: WebhookError[];
}

export type StatusWebhookItem = CallStatusItem | MessageStatusItem;

export interface CallPermissionReply {
  response: 'accept' | 'reject';
  is_permanent?: boolean;
  /** Unix seconds (a number or a numeric string); permanent grants have none. */
  expiration_timestamp?: number | UnixSecondsString;
  /** "automatic" when the service revoked the permission itself (after unanswered business calls). */
  response_source?: string;
}

/** The media of an inbound media message, under the member its `type` names. */
export interface InboundMedia {
  id: string;
  mime_type?: string;
  sha256?: string;
}

/** One `value.messages[]` item: a message from the user. Other members vary with `type`. */
export interface InboundMessageItem {
  from?: string;
  from_user_id?: string;
  /** "wamid.…" */
  id: string;
  timestamp: UnixSecondsString;
  type: string;
  text?: { body: string };
  interactive?: { type: string; call_permission_reply?: CallPermissionReply };
  /** What the message answers: for an automatic call-permission reply (a callback request), the call's id (protocol.md). */
  context?: { id: string; from?: string };
  /** A voicemail is an audio message whose `id` is the call's (protocol.md). */
  audio?: InboundMedia;
  image?: InboundMedia;
  video?: InboundMedia;
  document?: InboundMedia;
  sticker?: InboundMedia;
}

/** The `value` object of one change; gateways that forward only this are accepted too. */
export interface WebhookValue {
  messaging_product?: string;
  metadata?: { display_phone_number?: string; phone_number_id?: string };
  contacts?: WebhookContact[];
  calls?: CallWebhookItem[];
  statuses?: StatusWebhookItem[];
  messages?: InboundMessageItem[];
  /** A failed terminate's errors may sit here instead of (or as well as) in its item (protocol.md). */
  errors?: WebhookError[];
}

export interface WebhookChange {
  field: 'calls' | 'messages' | (string & {});
  value: WebhookValue;
}

export interface WebhookEntry {
  /** The business account id. */
  id: string;
  changes: WebhookChange[];
}

/** The Cloud API envelope: `object` is "<product>_business_account" (not relied upon). */
export interface WebhookEnvelope {
  object: string;
  entry: WebhookEntry[];
}

// ---------------------------------------------------------------------------------------------
// Lenient item schemas: required members fail the item, optional members of a wrong type are
// dropped instead of failing it (protocol.md: never crash, never lose a call over a stray field).

/** Beyond this a "seconds" value would be past the year 5000: it can only be milliseconds. */
const SURELY_MILLISECONDS = 1e11;
const unixSecondsToMs = z
  .union([z.string().trim().regex(/^\d{1,13}(\.\d+)?$/, ruleMessage('gateway.unixSeconds')), z.number().finite().nonnegative()], {
    error: ruleMessage('gateway.unixSecondsNumeric'),
  })
  .transform((v) => {
    const n = Number(v);
    // protocol.md says seconds; a gateway that forwards milliseconds must not push calls into the future.
    return Math.round(n >= SURELY_MILLISECONDS ? n : n * 1000);
  });

/** Strings stay; numbers become strings (some gateways send numbers as numbers); anything else is dropped. */
const looseString = z.unknown().optional().transform((v): string | undefined => {
  if (typeof v === 'string') return v.trim() === '' ? undefined : v;
  if (typeof v === 'number' && Number.isFinite(v)) return String(v);
  return undefined;
});
const looseMs = z.unknown().optional().transform((v): number | undefined => {
  const parsed = unixSecondsToMs.safeParse(v);
  return parsed.success ? parsed.data : undefined;
});
const looseInt = z.unknown().optional().transform((v): number | undefined => {
  const n = typeof v === 'string' && /^\d+$/.test(v.trim()) ? Number(v) : v;
  return typeof n === 'number' && Number.isInteger(n) && n >= 0 ? n : undefined;
});
const looseUpper = z.unknown().optional().transform((v) => (typeof v === 'string' ? v.trim().toUpperCase() : undefined));
const looseLower = z.unknown().optional().transform((v) => (typeof v === 'string' ? v.trim().toLowerCase() : undefined));
const id = trimmedString();

const errorItemSchema = z.object({
  code: z.union([z.number().int(), z.string().regex(/^-?\d+$/).transform(Number)]),
  message: looseString,
  title: looseString,
  error_data: z.unknown().optional().transform((v) => (isRecord(v) && typeof v.details === 'string' ? v.details : undefined)),
});

const errorsList = z.unknown().optional().transform((v): CallErrorInfo[] | undefined => {
  if (!Array.isArray(v)) return undefined;
  const out: CallErrorInfo[] = [];
  for (const raw of v) {
    const parsed = errorItemSchema.safeParse(raw);
    if (!parsed.success) continue;
    const e = parsed.data;
    out.push(compact({ code: e.code, message: e.message ?? e.title ?? `Error ${e.code}`, details: e.error_data }));
  }
  return out.length > 0 ? out : undefined;
});

const sdpText = z.unknown().optional().transform((v) => (typeof v === 'string' && v.trim() !== '' ? v : undefined));

/**
 * protocol.md "What real payloads show": the legacy `connection.webrtc.sdp` is not an SDP but a JSON
 * string `{"sdp":"v=0\r\n…","type":"answer"}`. Text that is not JSON is an SDP given there directly
 * and is taken as it is; JSON that holds no SDP is nothing (the connect then needs `session.sdp`).
 */
function legacySdp(v: unknown): { sdp: string; sdpType?: string } | undefined {
  const text = sdpText.parse(v);
  if (text === undefined) return undefined;
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return { sdp: text };
  }
  if (!isRecord(json)) return undefined;
  const sdp = sdpText.parse(json.sdp);
  return sdp === undefined ? undefined : { sdp, sdpType: looseLower.parse(json.type) };
}

/** `biz_opaque_callback_data` echoed: kept when it is a string within the service's 512 characters, else left out. */
const opaqueData = z.unknown().optional().transform((v) => (typeof v === 'string' && v !== '' && v.length <= 512 ? v : undefined));

const callItemSchema = z.object({
  id,
  event: looseLower,
  timestamp: looseMs,
  from: looseString,
  from_user_id: looseString,
  to: looseString,
  direction: looseUpper,
  session: z.unknown().optional().transform((v) => (isRecord(v) ? { sdpType: looseLower.parse(v.sdp_type), sdp: sdpText.parse(v.sdp) } : undefined)),
  connection: z.unknown().optional().transform((v) => (isRecord(v) && isRecord(v.webrtc) ? legacySdp(v.webrtc.sdp) : undefined)),
  cta_payload: looseString,
  deeplink_payload: looseString,
  status: looseUpper,
  start_time: looseMs,
  end_time: looseMs,
  duration: looseInt,
  errors: errorsList,
  biz_opaque_callback_data: opaqueData,
  // Read only for their own events (CAPTURES), where a malformed file fails the item at its path.
  call_recording: z.unknown().optional(),
  call_transcript: z.unknown().optional(),
});

/** The file a recording or transcript item names: the media id (7 days) and its url (5 minutes) are what the app fetches by. */
type CaptureEvent = Extract<RelayEvent, { type: 'call.capture_available' }>;

const capturedFileSchema = z.object({
  id,
  url: trimmedString(),
  mime_type: looseString,
  sha256: looseString,
});

/**
 * The items that say the service's own recording or transcript of a call is ready (protocol.md "What
 * the service added in 2026"): the member that holds the file, and the file's member in it.
 */
const CAPTURES = new Map<string, { kind: CaptureEvent['kind']; holder: 'call_recording' | 'call_transcript'; file: 'audio' | 'document' }>([
  ['call_recording_available', { kind: 'recording', holder: 'call_recording', file: 'audio' }],
  ['call_transcription_available', { kind: 'transcript', holder: 'call_transcript', file: 'document' }],
]);

const statusItemSchema = z.object({
  id,
  type: looseLower,
  status: trimmedString(),
  timestamp: unixSecondsToMs,
  recipient_id: looseString,
  recipient_user_id: looseString,
  errors: errorsList,
  biz_opaque_callback_data: opaqueData,
});

/** A media message's object: only its id is kept. */
const mediaIdOf = z.unknown().optional().transform((v) => (isRecord(v) && typeof v.id === 'string' && v.id.trim() !== '' ? v.id : undefined));
/** The message an item answers (`context`): only its id is kept, the call's for an automatic permission reply (protocol.md "Callback requests"). */
const contextIdOf = z.unknown().optional().transform((v) => (isRecord(v) && typeof v.id === 'string' && v.id.trim() !== '' ? v.id.trim() : undefined));
const MEDIA_TYPES = ['audio', 'image', 'video', 'document', 'sticker'] as const;

const messageItemSchema = z.object({
  id,
  from: looseString,
  from_user_id: looseString,
  timestamp: unixSecondsToMs,
  type: looseString,
  text: z.unknown().optional().transform((v) => (isRecord(v) && typeof v.body === 'string' ? v.body : undefined)),
  interactive: z.unknown().optional(),
  context: contextIdOf,
  audio: mediaIdOf,
  image: mediaIdOf,
  video: mediaIdOf,
  document: mediaIdOf,
  sticker: mediaIdOf,
});

const permissionReplySchema = z.object({
  response: z.string().transform((v) => v.trim().toLowerCase()).pipe(z.enum(['accept', 'reject'])),
  is_permanent: z.unknown().optional().transform((v) => (typeof v === 'boolean' ? v : undefined)),
  expiration_timestamp: looseMs,
  response_source: looseLower,
});

const contactSchema = z.object({
  wa_id: looseString,
  user_id: looseString,
  profile: z.unknown().optional().transform((v) => (isRecord(v) && typeof v.name === 'string' && v.name.trim() !== '' ? v.name : undefined)),
});

// Compile-time guard: whatever the sandbox builds from the payload types above parses here.
type Accepts<Schema extends z.ZodType, Item> = [Item] extends [z.input<Schema>] ? true : never;
const _payloadTypesParse: [
  Accepts<typeof callItemSchema, CallWebhookItem>,
  Accepts<typeof statusItemSchema, StatusWebhookItem>,
  Accepts<typeof messageItemSchema, InboundMessageItem>,
] = [true, true, true];
void _payloadTypesParse;

// ---------------------------------------------------------------------------------------------

/** An item that could not be normalised: where it was and which rule it broke. */
export interface SkippedWebhookItem {
  /** Dotted path inside the webhook body, e.g. `entry[0].changes[1].value.calls[2].timestamp`. */
  path: string;
  reason: string;
}

export interface NormalisedWebhook {
  events: RelayEvent[];
  /** Malformed items, skipped one by one. Unknown events are not listed: they are simply ignored. */
  skipped: SkippedWebhookItem[];
}

/** Every event in a webhook (per change: calls, then statuses, then messages, each in order). Never throws. */
export function normaliseWebhook(body: unknown): RelayEvent[] {
  return normaliseWebhookDetailed(body).events;
}

/** Like normaliseWebhook, and also reports the malformed items it skipped (for the relay's log). */
export function normaliseWebhookDetailed(body: unknown): NormalisedWebhook {
  const out: NormalisedWebhook = { events: [], skipped: [] };
  try {
    for (const { value, path } of valuesOf(body)) normaliseValue(value, path, out);
  } catch (e) {
    // Unreachable by design; kept so that a surprise in a payload can never crash the caller.
    out.skipped.push({ path: '(root)', reason: `unexpected error: ${errorText(e)}` });
  }
  return out;
}

const CALL_STATUSES = new Set(['RINGING', 'ACCEPTED', 'REJECTED']);
const MESSAGE_STATUSES = new Set(['sent', 'delivered', 'read', 'failed']);

function valuesOf(body: unknown): { value: Record<string, unknown>; path: string }[] {
  if (!isRecord(body)) return [];
  if (Array.isArray(body.entry)) {
    const values: { value: Record<string, unknown>; path: string }[] = [];
    body.entry.forEach((entry, i) => {
      if (!isRecord(entry) || !Array.isArray(entry.changes)) return;
      entry.changes.forEach((change, j) => {
        if (isRecord(change) && isRecord(change.value)) values.push({ value: change.value, path: `entry[${i}].changes[${j}].value` });
      });
    });
    return values;
  }
  // A single forwarded change `{field, value}`, or the bare value itself.
  if (typeof body.field === 'string' && isRecord(body.value)) return [{ value: body.value, path: 'value' }];
  return [{ value: body, path: '' }];
}

function normaliseValue(value: Record<string, unknown>, path: string, out: NormalisedWebhook): void {
  const names = contactNames(value.contacts);
  // protocol.md "What real payloads show": a failed terminate's errors may be in the item, here, or both.
  const valueErrors = errorsList.parse(value.errors);

  eachItem(value.calls, (raw, i) => {
    const where = itemPath(path, 'calls', i);
    const parsed = callItemSchema.safeParse(raw);
    if (!parsed.success) return skip(out, where, parsed.error);
    const item = parsed.data;
    const from = item.from?.replace(/^\+/, '');
    if (item.event === 'connect') {
      // Both carry the same SDP when both are present (protocol.md); the session's is the current shape.
      const sdp = item.session?.sdp ?? item.connection?.sdp;
      const sdpType = item.session?.sdpType ?? item.connection?.sdpType;
      const kind =
        item.direction === 'USER_INITIATED' ? 'incoming' : item.direction === 'BUSINESS_INITIATED' ? 'answered' : sdpType === 'offer' ? 'incoming' : sdpType === 'answer' ? 'answered' : undefined;
      if (!kind) return out.skipped.push({ path: `${where}.direction`, reason: 'a connect must say USER_INITIATED or BUSINESS_INITIATED' });
      if (item.timestamp === undefined) return out.skipped.push({ path: `${where}.timestamp`, reason: 'must be unix seconds (a numeric string)' });
      if (!sdp) return out.skipped.push({ path: `${where}.session.sdp`, reason: 'a connect must carry an SDP' });
      const expected = kind === 'incoming' ? 'offer' : 'answer';
      if (sdpType !== undefined && sdpType !== expected) {
        return out.skipped.push({ path: `${where}.session.sdp_type`, reason: `must be "${expected}" for ${item.direction ?? 'this'} connect` });
      }
      if (kind === 'incoming') {
        return emit(out, where, {
          type: 'call.incoming',
          callId: item.id,
          from,
          fromUserId: item.from_user_id,
          name: contactName(names, from, item.from_user_id),
          to: item.to,
          sdp,
          timestamp: item.timestamp,
          ctaPayload: item.cta_payload,
          deeplinkPayload: item.deeplink_payload,
        });
      }
      return emit(out, where, { type: 'call.answered', callId: item.id, sdp, timestamp: item.timestamp });
    }
    if (item.event === 'terminate') {
      // A terminate must never be lost over a missing detail: it is what ends a ringing call.
      const timestamp = item.timestamp ?? item.end_time;
      if (timestamp === undefined) return out.skipped.push({ path: `${where}.timestamp`, reason: 'must be unix seconds (a numeric string)' });
      const errors = sameErrorsOnce([...(item.errors ?? []), ...(item.status === 'COMPLETED' ? [] : (valueErrors ?? []))]);
      const status = item.status === 'COMPLETED' || item.status === 'FAILED' ? item.status : errors ? 'FAILED' : 'COMPLETED';
      return emit(out, where, {
        type: 'call.terminated',
        callId: item.id,
        status,
        timestamp,
        startTime: item.start_time,
        endTime: item.end_time,
        durationSec: item.duration,
        errors,
        opaque: item.biz_opaque_callback_data,
      });
    }
    const capture = item.event === undefined ? undefined : CAPTURES.get(item.event);
    if (capture !== undefined) {
      // No direction and no SDP: it comes after the terminate and is never a call of its own.
      if (item.timestamp === undefined) return out.skipped.push({ path: `${where}.timestamp`, reason: 'must be unix seconds (a numeric string)' });
      const holder = item[capture.holder];
      const file = capturedFileSchema.safeParse(isRecord(holder) ? holder[capture.file] : undefined);
      if (!file.success) return skip(out, `${where}.${capture.holder}.${capture.file}`, file.error);
      return emit(out, where, {
        type: 'call.capture_available',
        callId: item.id,
        kind: capture.kind,
        mediaId: file.data.id,
        url: file.data.url,
        mimeType: file.data.mime_type,
        sha256: file.data.sha256,
        timestamp: item.timestamp,
      });
    }
    // Other call events (e.g. ones this version does not know yet) are ignored (protocol.md).
  });

  eachItem(value.statuses, (raw, i) => {
    const where = itemPath(path, 'statuses', i);
    const parsed = statusItemSchema.safeParse(raw);
    if (!parsed.success) return skip(out, where, parsed.error);
    const item = parsed.data;
    const upper = item.status.toUpperCase();
    const lower = item.status.toLowerCase();
    // Call statuses say type "call"; message statuses carry no type. Uppercase call statuses
    // without a type are still call statuses (message statuses are always lowercase).
    const isCall = item.type === 'call' || (item.type === undefined && item.status === upper && CALL_STATUSES.has(upper));
    if (isCall) {
      if (!CALL_STATUSES.has(upper)) return;
      return emit(out, where, {
        type: 'call.status',
        callId: item.id,
        status: upper as 'RINGING' | 'ACCEPTED' | 'REJECTED',
        timestamp: item.timestamp,
        recipientId: item.recipient_id,
        recipientUserId: item.recipient_user_id,
        opaque: item.biz_opaque_callback_data,
      });
    }
    if (!MESSAGE_STATUSES.has(lower)) return;
    emit(out, where, {
      type: 'message.status',
      messageId: item.id,
      status: lower as 'sent' | 'delivered' | 'read' | 'failed',
      timestamp: item.timestamp,
      recipientId: item.recipient_id,
      errors: item.errors,
    });
  });

  eachItem(value.messages, (raw, i) => {
    const where = itemPath(path, 'messages', i);
    const parsed = messageItemSchema.safeParse(raw);
    if (!parsed.success) return skip(out, where, parsed.error);
    const item = parsed.data;
    const from = item.from?.replace(/^\+/, '');
    let permissionReply: Extract<RelayEvent, { type: 'message.inbound' }>['permissionReply'];
    if (isRecord(item.interactive) && item.interactive.type === 'call_permission_reply') {
      const reply = permissionReplySchema.safeParse(item.interactive.call_permission_reply);
      if (!reply.success) return skip(out, `${where}.interactive.call_permission_reply`, reply.error);
      permissionReply = compact({
        response: reply.data.response,
        isPermanent: reply.data.is_permanent,
        expiresAt: reply.data.expiration_timestamp,
        source: reply.data.response_source === '' ? undefined : reply.data.response_source,
      });
    }
    const mediaType = MEDIA_TYPES.find((type) => type === item.type);
    emit(out, where, {
      type: 'message.inbound',
      messageId: item.id,
      from,
      fromUserId: item.from_user_id,
      name: contactName(names, from, item.from_user_id),
      timestamp: item.timestamp,
      messageType: item.type ?? 'unknown',
      text: item.text,
      mediaId: mediaType === undefined ? undefined : item[mediaType],
      contextId: item.context,
      permissionReply,
    });
  });
}

function contactNames(contacts: unknown): { byWaId: Map<string, string>; byUserId: Map<string, string> } {
  const byWaId = new Map<string, string>();
  const byUserId = new Map<string, string>();
  eachItem(contacts, (raw) => {
    const parsed = contactSchema.safeParse(raw);
    const name = parsed.success ? parsed.data.profile : undefined;
    if (!parsed.success || name === undefined) return;
    if (parsed.data.wa_id) byWaId.set(parsed.data.wa_id.replace(/^\+/, ''), name);
    if (parsed.data.user_id) byUserId.set(parsed.data.user_id, name);
  });
  return { byWaId, byUserId };
}

/** The errors in order, each once (the same error in the item and in the value is one error); undefined for none. */
function sameErrorsOnce(errors: CallErrorInfo[]): CallErrorInfo[] | undefined {
  const seen = new Set<string>();
  const once = errors.filter((e) => {
    const key = JSON.stringify([e.code, e.message, e.details]);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
  return once.length > 0 ? once : undefined;
}

// Module functions rather than closures made inside normaliseValue: those would be made again,
// and named, for every webhook.
function itemPath(path: string, member: string, i: number): string {
  return `${path ? `${path}.` : ''}${member}[${i}]`;
}

function contactName(names: ReturnType<typeof contactNames>, from?: string, userId?: string) {
  return (from && names.byWaId.get(from)) ?? (userId && names.byUserId.get(userId)) ?? undefined;
}

function eachItem(list: unknown, visit: (item: unknown, index: number) => unknown): void {
  if (!Array.isArray(list)) return;
  list.forEach((item, i) => void visit(item, i));
}

/** Last safety net: only events that satisfy the published schema leave this module. */
function emit(out: NormalisedWebhook, where: string, candidate: RelayEvent): void {
  const parsed = relayEventSchema.safeParse(compact(candidate));
  if (parsed.success) out.events.push(parsed.data);
  else skip(out, where, parsed.error);
}

function skip(out: NormalisedWebhook, where: string, error: z.ZodError): void {
  const issue = error.issues[0];
  out.skipped.push({ path: fieldPath(issue?.path ?? [], where), reason: issue === undefined ? 'invalid' : issueEnglish(issue) });
}


// The payload of the app's voice_call button (protocol.md "voice_call button": at most 512
// characters; it comes back as the call's `cta_payload`). One codec for every reader: the app
// writes it, the relay routes the call by it, the UI labels the call by it, so all three agree on
// what is ours. Anything that is not ours — someone else's button, an older unversioned payload,
// too long, malformed — names no agent, and the call rings the whole team as usual.
import { z } from 'zod';
import { err, ok, type Result } from './result';

/** protocol.md: `payload` ≤ 512 characters. */
export const VOICE_CALL_PAYLOAD_MAX_CHARS = 512;

/** The message field the payload travels in: errors of the encoder name it. */
const PAYLOAD_FIELD = 'interactive.action.parameters.payload';

export interface VoiceCallPayload {
  v: 1;
  /** The agent who sent the button: the relay routes the resulting call to this agent. */
  agentId: string;
  /** The customer's number, gateway digits. Optional when decoding: routing needs only the agent. */
  contact?: string;
}

/** Why a payload is not one of ours. */
export type ForeignPayloadReason = 'too_long' | 'not_json' | 'unversioned' | 'unknown_version' | 'malformed';

export type VoiceCallPayloadDecoding =
  /** A payload this app wrote: the call is routed to `payload.agentId` first. */
  | { kind: 'ours'; payload: VoiceCallPayload }
  /** The call carries no payload at all (it did not come from a voice_call button). */
  | { kind: 'absent' }
  /** Someone else's payload, or one this version does not read: route the call normally. */
  | { kind: 'foreign'; reason: ForeignPayloadReason };

const payloadV1Schema = z.object({ v: z.literal(1), agentId: z.string().min(1), contact: z.string().optional() });

/** `{"v":1,"agentId":…,"contact":…}`, refused when it would not fit in 512 characters. */
export function encodeVoiceCallPayload({ agentId, contact }: { agentId: string; contact: string }): Result<string> {
  if (agentId.trim() === '') return err('invalid_input', `${PAYLOAD_FIELD}: the agent id must not be empty`, { field: PAYLOAD_FIELD });
  const payload = JSON.stringify({ v: 1, agentId, contact } satisfies VoiceCallPayload);
  if (payload.length > VOICE_CALL_PAYLOAD_MAX_CHARS) {
    return err('invalid_input', `${PAYLOAD_FIELD}: must be at most ${VOICE_CALL_PAYLOAD_MAX_CHARS} characters (the agent id or contact is too long)`, {
      field: PAYLOAD_FIELD,
    });
  }
  return ok(payload);
}

/** What a call's `cta_payload` says. Never throws: the payload is outside data. */
export function decodeVoiceCallPayload(ctaPayload: string | undefined): VoiceCallPayloadDecoding {
  if (ctaPayload === undefined) return { kind: 'absent' };
  // The gateway caps what it carries; a longer payload was not written by this app (and is not parsed at all).
  if (ctaPayload.length > VOICE_CALL_PAYLOAD_MAX_CHARS) return foreign('too_long');
  let data: unknown;
  try {
    data = JSON.parse(ctaPayload);
  } catch {
    return foreign('not_json');
  }
  if (typeof data !== 'object' || data === null || Array.isArray(data)) return foreign('malformed');
  // Without a version it may be anybody's `{"agentId":…}`: routing a call by it would let any
  // button pick an agent.
  if (!('v' in data)) return foreign('unversioned');
  if (data.v !== 1) return foreign('unknown_version');
  const parsed = payloadV1Schema.safeParse(data);
  if (!parsed.success) return foreign('malformed');
  const { agentId, contact } = parsed.data;
  return { kind: 'ours', payload: { v: 1, agentId, ...(contact !== undefined ? { contact } : {}) } };
}

const foreign = (reason: ForeignPayloadReason): VoiceCallPayloadDecoding => ({ kind: 'foreign', reason });

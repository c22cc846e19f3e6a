// Call control requests and responses: gateway-spec.md 4.2 for the bodies, protocol.md for the
// success bodies and the Graph error envelope that the gateway passes through.
import { z } from 'zod';
import { term } from './i18n/text';
import { literalNamed, requiredString, ruleMessage } from './validation';
import { SERVICE_CAPTURE_PURPOSE_MAX } from './service-capture';

export const DEFAULT_PRODUCT = 'chatapp';
export const CALL_ACTIONS = ['accept', 'reject', 'terminate', 'initiate'] as const;
export type CallAction = (typeof CALL_ACTIONS)[number];

/** gateway-spec.md 2.1: digits only, with the country code, no "+". */
export const GATEWAY_NUMBER = /^[1-9][0-9]{6,14}$/;
export const gatewayNumberSchema = requiredString().regex(GATEWAY_NUMBER, ruleMessage('phone.gatewayDigits'));

const nonEmpty = (member: string) => requiredString().min(1, ruleMessage('gateway.memberNotEmpty', { member }));

/** Builds the four request schemas for an account's product word (protocol.md: keep it a setting). */
/**
 * `biz_opaque_callback_data` on accept and connect (protocol.md): the service echoes it on the call's
 * status events and its terminate. The app sends the call's record id (its local id), so that a
 * status that overtakes the initiate's answer is matched by it.
 */
export const OPAQUE_CALLBACK_DATA_MAX = 512;
const opaqueCallbackData = z
  .string({ error: ruleMessage('common.mustBeString') })
  .min(1, ruleMessage('common.notEmpty'))
  .max(OPAQUE_CALLBACK_DATA_MAX, ruleMessage('common.atMostCharacters', { count: OPAQUE_CALLBACK_DATA_MAX }));

/**
 * `recording` / `transcription` on accept and connect (shared/service-capture.ts, protocol.md): the
 * service refuses a missing or over-long purpose.
 */
const captureRequest = z.strictObject({
  status: literalNamed('ENABLED'),
  purpose: nonEmpty('purpose').max(SERVICE_CAPTURE_PURPOSE_MAX, ruleMessage('common.atMostCharacters', { count: SERVICE_CAPTURE_PURPOSE_MAX })),
  announcement_language: nonEmpty('announcement_language'),
});

export function callRequestSchemas(product: string = DEFAULT_PRODUCT) {
  const messagingProduct = literalNamed(product);
  const callId = nonEmpty('call_id');
  const sdp = nonEmpty('sdp');
  return {
    accept: z.strictObject({
      messaging_product: messagingProduct,
      call_id: callId,
      action: literalNamed('accept'),
      session: z.strictObject({ sdp_type: z.literal('answer', { error: ruleMessage('gateway.answerWhenAccepting') }), sdp }),
      biz_opaque_callback_data: opaqueCallbackData.optional(),
      recording: captureRequest.optional(),
      transcription: captureRequest.optional(),
    }),
    reject: z.strictObject({
      messaging_product: messagingProduct,
      call_id: callId,
      action: literalNamed('reject'),
    }),
    terminate: z.strictObject({
      messaging_product: messagingProduct,
      call_id: callId,
      action: literalNamed('terminate'),
    }),
    initiate: z.strictObject({
      messaging_product: messagingProduct,
      to: gatewayNumberSchema,
      // gateway-spec.md 4.2: the path says "initiate", the body says "connect".
      action: literalNamed('connect', term('initiateConnect')),
      session: z.strictObject({ sdp_type: z.literal('offer', { error: ruleMessage('gateway.offerWhenInitiating') }), sdp }),
      biz_opaque_callback_data: opaqueCallbackData.optional(),
      recording: captureRequest.optional(),
      transcription: captureRequest.optional(),
    }),
  };
}
export type CallRequestSchemas = ReturnType<typeof callRequestSchemas>;
export type AcceptCallRequest = z.infer<CallRequestSchemas['accept']>;
export type RejectCallRequest = z.infer<CallRequestSchemas['reject']>;
export type TerminateCallRequest = z.infer<CallRequestSchemas['terminate']>;
export type InitiateCallRequest = z.infer<CallRequestSchemas['initiate']>;
export type CallRequest = AcceptCallRequest | RejectCallRequest | TerminateCallRequest | InitiateCallRequest;

/** accept / reject / terminate success (protocol.md). */
export const callActionSuccessSchema = z.object({ messaging_product: z.string(), success: z.literal(true) });
export type CallActionSuccess = z.infer<typeof callActionSuccessSchema>;

/** initiate success: the new call's id (protocol.md). */
export const initiateSuccessSchema = z.object({
  messaging_product: z.string(),
  calls: z.array(z.object({ id: z.string().min(1) })).min(1),
});
export type InitiateSuccess = z.infer<typeof initiateSuccessSchema>;

/** The Graph error envelope (protocol.md). Anything else is an opaque error kept for diagnostics. */
export const graphErrorSchema = z.object({
  error: z.object({
    message: z.string(),
    type: z.string().optional(),
    code: z.number(),
    error_subcode: z.number().optional(),
    error_data: z.unknown().optional(),
    fbtrace_id: z.string().optional(),
  }),
});
export type GraphError = z.infer<typeof graphErrorSchema>;

/** Gateway error codes worth a clear message (protocol.md). */
export const GATEWAY_ERROR_TEXT: Readonly<Record<number, string>> = {
  100: 'The gateway refused a parameter',
  131009: 'This customer cannot receive a call button',
  131047: 'The 24-hour conversation window is closed: send a template instead',
  138000: 'Calling is not enabled for this business number',
  138001: 'This customer cannot be called',
  138002: 'Too many concurrent calls on this business number',
  138003: 'A call with this customer is already in progress',
  138004: 'The call could not connect',
  138005: 'Too many calls in a short time: try again later',
  138006: 'The customer has not allowed business calls: send a call-permission request',
  138007: 'The call timed out while connecting',
  138009: 'Too many call-permission requests to this customer',
  138012: 'The limit of business-initiated calls was reached',
  138013: 'Business-initiated calls are not available in the customer\u2019s country',
  138014: 'Calling is temporarily disabled for this business number',
  138019: 'The call could not be set up',
  138020: 'The call relay timed out',
  138021: 'No audio was received from the agent',
  138022: 'Audio stopped during the call',
  138023: 'The call was accepted but no audio flowed',
  138038: 'Another partner handles this number\u2019s calls: only its Call primary can answer or place them',
};

/** Conversation Routing: another partner is the number's Call primary (protocol.md). */
export const OTHER_PARTNER_CODE = 138038;

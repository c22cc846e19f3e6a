// The sandbox's control API (sandbox/README.md): what the app's embedded mode and the tests use to
// drive simulated customers. The gateway endpoints themselves follow gateway-spec.md.
import type { MediaType } from './messages';

export type CustomerBehaviour =
  | 'answers' // rings ~1 s, answers, talks
  | 'rejects' // rings, then rejects
  | 'no_answer' // rings until the business gives up
  | 'no_permission' // initiate answered with error 138006
  | 'busy'; // initiate answered with error 138003

export interface SandboxCustomer {
  /** Digits with country code (gateway form). */
  number: string;
  name: string;
  behaviour: CustomerBehaviour;
}

/** A simulated customer's view of one call, for tests and diagnostics. */
export interface SandboxCallReport {
  callId: string;
  number: string;
  direction: 'USER_INITIATED' | 'BUSINESS_INITIATED';
  state: 'ringing' | 'connected' | 'ended';
  /** Gateway requests for this call, in order received: "accept", "reject", "terminate", "initiate". */
  requests: { action: string; at: number }[];
  /** When the customer's peer received its first packet of any kind from the business (unix ms). */
  firstPacketAt?: number;
  /** ICE username fragments of the peers that sent the customer a check: in a team, the winner's only. */
  checkedBy: string[];
  /** Decoded Opus frames heard from the business (silent ones too), and their RMS energy (0..1). */
  framesHeard: number;
  heardRms: number;
  /**
   * RMS energy (0..1) of the frames that arrived in the last 500 ms, 0 when none did: what the
   * customer hears now (a mute shows here while framesHeard keeps rising).
   */
  recentRms: number;
  /** When the customer first decoded a non-silent frame from the business (unix ms). */
  firstHeardAt?: number;
  /** Frames the customer sent. */
  framesSent: number;
  /** DTMF digits (RFC 4733, payload type 126) heard from the business, in order. */
  digitsHeard?: string;
}

/** Where a message the sandbox received stands: its last delivery status, or why it was refused. */
export type SandboxMessageStatus = 'accepted' | 'sent' | 'delivered' | 'read' | 'failed' | 'refused';

/** One message the sandbox saw: sent by the business (replymessage, sendtemplate) or by a customer. */
export interface SandboxMessageReport {
  /** "wamid.…"; absent for a refused message. */
  messageId?: string;
  direction: 'outbound' | 'inbound';
  endpoint?: 'replymessage' | 'sendtemplate';
  /** The customer's number (gateway digits). */
  number: string;
  /** text, image, audio, video, document, interactive or template. */
  type: string;
  interactiveType?: string;
  /** A text message's body. */
  text?: string;
  templateName?: string;
  status: SandboxMessageStatus;
  /** Every status webhook sent for it, in order. */
  statuses: { status: 'sent' | 'delivered' | 'read' | 'failed'; at: number }[];
  /** The gateway error of a refused message, or of a failed status. */
  error?: { code: number; message: string };
  /** When the sandbox received it (unix ms). */
  at: number;
  /** An outbound message's request body, as received. */
  body?: unknown;
}

/** A template the sandbox's account has, with the "API Payload" its template list would show. */
export interface SandboxTemplate {
  name: string;
  language: string;
  category: 'MARKETING' | 'UTILITY' | 'AUTHENTICATION';
  /** The body text with its {{n}} variables. */
  body: string;
  /** The JSON an agent copies from the template list (gateway-spec.md 4.3). */
  apiPayload: string;
}

/** A file in the sandbox account's media library: messages may name it by `id` instead of `link`. */
export interface SandboxMedia {
  id: string;
  /** The message types it may be sent as (its MIME type is one of the type's, gateway-spec.md 2.3). */
  type: MediaType;
  mimeType: string;
  fileName: string;
  /** Bytes. */
  size: number;
  /** Hex SHA-256 of the file's bytes. */
  sha256: string;
  /** What the file is, in words. */
  description: string;
}

/** Numbers that are valid but have no chat-app account: messages to them fail (131026). */
export const SANDBOX_UNREACHABLE_NUMBERS: readonly string[] = ['12025550199'];

export const SANDBOX_PATHS = {
  customers: '/control/customers', // GET → SandboxCustomer[]
  incoming: '/control/incoming', // POST { number } → { callId }
  hangup: '/control/hangup', // POST { callId } → {}
  calls: '/control/calls', // GET → SandboxCallReport[]; GET /control/calls/{id} → SandboxCallReport
  log: '/control/log', // GET → { action, callId?, at, status }[]
  inbound: '/control/inbound', // POST { number, text } → { messageId } — the customer writes; opens the window
  pressCallButton: '/control/press-call-button', // POST { number } → { callId, payload } — the last voice_call button
  messages: '/control/messages', // GET → SandboxMessageReport[]
  templates: '/control/templates', // GET → SandboxTemplate[]
  media: '/control/media', // GET → SandboxMedia[]; GET /control/media/{id} → the file's bytes
} as const;

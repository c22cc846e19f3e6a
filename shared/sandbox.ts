// The sandbox's control API (sandbox/REFERENCE.md): what the app's embedded mode and the tests use to
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
  /** A bad network the customer always calls from; absent for a clean one. */
  network?: SandboxCustomerNetwork;
}

/**
 * A bad network between a customer's phone and the business, both ways (POST /control/network):
 * what real access networks do to UDP. Every field 0 is a clean network. Loss, delay and jitter
 * start with the call's media; the setup and DTLS cross clean, and only a blackout stops them
 * (sandbox/REFERENCE.md "Bad networks").
 */
export interface SandboxNetworkImpairment {
  /** Share of packets dropped at random, each way, 0..100. */
  lossPercent: number;
  /** Added one-way delay of every packet, ms. */
  delayMs: number;
  /** Up to this much more delay, drawn for each packet, ms: later packets overtake earlier ones. */
  jitterMs: number;
  /** Every packet (RTP, RTCP, ICE checks, DTLS) dropped both ways for this long, ms. */
  blackoutMs: number;
}

/** What POST /control/network takes: each field's range. */
export const SANDBOX_NETWORK_LIMITS = {
  lossPercent: 100,
  delayMs: 2_000,
  jitterMs: 2_000,
  blackoutMs: 120_000,
} as const satisfies Record<keyof SandboxNetworkImpairment, number>;

/** A built-in customer's bad network, as the customer list shows it. */
export interface SandboxCustomerNetwork extends Partial<SandboxNetworkImpairment> {
  /** In words, for the customer list: "lossy network (5 % loss, 40 ms jitter)". */
  label: string;
  /** The blackout starts this long after media starts flowing (the customer's first frame), ms. */
  blackoutAfterMs?: number;
}

/** Packets of every kind one way, and how many of them the bad network dropped (loss and blackout). */
export interface SandboxPacketCount {
  packets: number;
  dropped: number;
}

/** The network a call's customer is on now: the impairment in force and what it did so far. */
export interface SandboxNetworkReport extends SandboxNetworkImpairment {
  /** The blackout in force or to come (a built-in one is set when media starts), unix ms. */
  blackoutStartsAt?: number;
  blackoutEndsAt?: number;
  /** Everything is dropped now. */
  blackedOut: boolean;
  /** Sent by the customer's phone. */
  toBusiness: SandboxPacketCount;
  /** Sent by the business to the customer's phone. */
  fromBusiness: SandboxPacketCount;
}

/**
 * What a customer hears, judged on each 500 ms of decoded audio (sandbox/heard-audio.ts): below
 * -60 dBFS is silence; music when most of the energy lies on the hold music's notes
 * (HOLD_MUSIC_NOTES_HZ) and their octave above; anything else, speech, noise or another tone, is a voice.
 */
export type SandboxHeardSound = 'silence' | 'music' | 'voice';

/** The customer began to hear `heard` at `at` (unix ms, when the first window of it was complete). */
export interface SandboxHeardLogEntry {
  at: number;
  heard: SandboxHeardSound;
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
  /** When the last RTP packet from the business arrived (unix ms): a delay on the network shows here. */
  lastRtpAt?: number;
  /** Frames the customer sent. */
  framesSent: number;
  /**
   * What the last complete 500 ms window of the business's audio was; 'silence' before the first
   * one, and once no audio arrived for a second (a sender that stopped).
   */
  heardNow: SandboxHeardSound;
  /** Milliseconds of the business's audio judged as each, since the call began (500 ms a window). */
  heardMs: Record<SandboxHeardSound, number>;
  /** Each change of what the customer hears, oldest first; the last 50. */
  heardLog: SandboxHeardLogEntry[];
  /** DTMF digits (RFC 4733, payload type 126) heard from the business, in order. */
  digitsHeard?: string;
  /**
   * How loud each probe tone (720, 960, 1245 and 1440 Hz, between the hold music's notes) was in the
   * last half second, as a mean amplitude 0..1 keyed by Hz: tests give each party a tone and tell
   * from this whom the customer hears.
   */
  tonesHeard?: Record<string, number>;
  /** The customer's network: its impairment, whether a blackout is in force, the packets dropped each way. */
  network: SandboxNetworkReport;
  /** What a phone's RTP stack would notice in the business's stream (sandbox/rtp-continuity.ts). */
  rtp?: SandboxRtpReport;
  /** The service's own recording and transcript, when accept or connect asked for either. */
  capture?: SandboxCaptureReport;
}

/** What accept or connect carried in `recording` or `transcription`. */
export interface SandboxCaptureAsked {
  purpose: string;
  announcementLanguage: string;
}

/**
 * The service's own recording and transcript of a call (sandbox/REFERENCE.md "The service's
 * recording and transcript"): what was asked, the notice played to both sides, and what was sent
 * after the call.
 */
export interface SandboxCaptureReport {
  recording?: SandboxCaptureAsked;
  transcription?: SandboxCaptureAsked;
  notice: {
    /** The words spoken after the chime ('' when only the chime could be played). */
    text: string;
    /** The language the words are spoken in ("en"), whatever was asked for. */
    spokenLanguage: string;
    /** The announcement_language asked for (the recording's when both were asked). */
    askedLanguage: string;
    /** The first and last notice frames went toward the business (unix ms): the agent heard it then. */
    startedAt?: number;
    endedAt?: number;
    /** The customer's phone played the notice, so the customer counts as having heard it: true once it was played whole. */
    heardByCustomer: boolean;
  };
  /** Milliseconds captured, from the notice's first frame to the end of the call (or until now). */
  capturedMs: number;
  /** The media ids sent in call_recording_available and call_transcription_available. */
  recordingMediaId?: string;
  transcriptMediaId?: string;
  /** When those events were sent (unix ms). */
  sentAt?: number;
}

/**
 * The business's RTP stream as the customer received it: distinct SSRCs, packets, sequence numbers
 * that did not follow the last one, and audio timestamps that jumped away from the time that passed
 * (more than 150 ms either way, or backwards). One SSRC and no gap or jump for a whole call: no seam.
 */
export interface SandboxRtpReport {
  ssrcs: number;
  packets: number;
  sequenceGaps: number;
  timestampJumps: number;
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

/**
 * The tone (Hz) of a sandbox customer's voicemail (POST /control/voicemail), so that a test can tell
 * whose it is: the customers' calls all carry the same recorded voice, so each number gets a steady
 * tone of its own instead, 500 + 50 × (FNV-1a of the number's digits mod 20) Hz, from 500 to 1450 Hz.
 * The default customers' tones all differ; two other numbers may share one.
 */
export function sandboxVoicemailToneHz(number: string): number {
  let hash = 0x811c9dc5;
  for (const digit of number.replace(/\D/g, '')) hash = Math.imul(hash ^ digit.charCodeAt(0), 0x01000193) >>> 0;
  return 500 + 50 * (hash % 20);
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
  voicemail: '/control/voicemail', // POST { callId } or { number } → { callId, mediaId } — the customer of an unanswered incoming call leaves a voicemail
  callbackRequest: '/control/callback-request', // POST { number, callId?, permanent? } → { callId, messageId } — the customer asks to be called back (the service's automatic permission reply)
  network: '/control/network', // POST { callId, lossPercent?, jitterMs?, delayMs?, blackoutMs? } → SandboxNetworkReport — replaces the call's impairment
} as const;

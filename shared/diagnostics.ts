// What a call leaves for support (Settings → "Export diagnostics"): its quality samples, the path
// its media took, and what each side's description said — never an address, an ICE password, a
// fingerprint, a key, a token or a full phone number.
import { z } from 'zod';
import { qualitySampleSchema, qualitySummarySchema, type QualitySample, type QualitySummary } from './call-quality';
import { orList } from './i18n/text';
import type { OfferSummary } from './sdp';
import { ruleMessage } from './validation';

/** Seconds a call keeps for diagnostics: an hour-long call is thinned, a short one kept whole. */
export const QUALITY_SAMPLES_KEPT = 300;
/** Calls whose diagnostics are kept. */
export const CALL_DIAGNOSTICS_KEPT = 20;

const CANDIDATE_TYPES = ['host', 'srflx', 'prflx', 'relay'] as const;
const candidateType = z.enum(CANDIDATE_TYPES, ruleMessage('common.mustBe', { values: orList(CANDIDATE_TYPES) }));
const shortText = z.string().max(16);

/** The selected candidate pair (renderer/webrtc/quality-stats.ts SelectedCandidatePair). */
export const callPathSchema = z.strictObject({
  localType: candidateType,
  remoteType: candidateType,
  localProtocol: shortText.optional(),
  relayProtocol: shortText.optional(),
  currentRoundTripTime: z.number().finite().nonnegative().max(60).optional(),
});
export type CallPath = z.infer<typeof callPathSchema>;

/** shared/sdp.ts describeOffer's summary: codecs, candidate counts and transports, roles; no addresses. */
export const sdpSummarySchema = z.strictObject({
  iceLite: z.boolean(),
  setup: shortText.optional(),
  codecs: z
    .array(z.strictObject({ payload: z.number().int().min(0).max(127), name: z.string().max(64), rate: z.number().int().positive().max(1_000_000).optional(), channels: z.number().int().min(0).max(16).optional() }))
    .max(64),
  telephoneEventPayload: z.number().int().min(0).max(127).optional(),
  candidateCount: z.number().int().min(0).max(1000),
  candidateTransports: z.array(shortText).max(8),
  candidateTypes: z.array(shortText).max(8),
  fingerprintType: shortText.optional(),
  direction: shortText.optional(),
}) satisfies z.ZodType<OfferSummary>;

const moment = z.number().finite().positive().optional();

/**
 * When each step of a call's set-up happened in the window (unix ms, fractions kept): the click
 * (Answer, Call), the complete answer or offer at hand, ICE let start (the customer's candidates
 * added, or the customer's answer applied), ICE connected, and media connected (DTLS done).
 */
export const windowCallTimingsSchema = z.strictObject({
  clickedAt: moment,
  sdpReadyAt: moment,
  iceStartedAt: moment,
  iceConnectedAt: moment,
  mediaConnectedAt: moment,
});
export type WindowCallTimings = z.infer<typeof windowCallTimingsSchema>;

/**
 * The same in the main process: the command received, an incoming call's claim on the relay sent
 * and answered, and the gateway request the call waits on (accept, or initiate) sent and answered.
 */
export interface MainCallTimings {
  commandAt?: number;
  claimSentAt?: number;
  claimDoneAt?: number;
  gatewaySentAt?: number;
  gatewayDoneAt?: number;
}

export type CallTimings = WindowCallTimings & MainCallTimings;

/** The set-up's moments in the order a call passes them; a step ends at each one a call has. */
export const CALL_SETUP_MOMENTS = [
  'clickedAt',
  'sdpReadyAt',
  'commandAt',
  'claimSentAt',
  'claimDoneAt',
  'gatewaySentAt',
  'gatewayDoneAt',
  'iceStartedAt',
  'iceConnectedAt',
  'mediaConnectedAt',
] as const satisfies readonly (keyof CallTimings)[];
export type CallSetupMoment = (typeof CALL_SETUP_MOMENTS)[number];

/**
 * Where a call's set-up spent its time: from each moment it has to the next (in ms), named by the
 * moment the step ends at. Empty when the call has fewer than two moments.
 */
export function callSetupSteps(timings: CallTimings): { to: CallSetupMoment; ms: number }[] {
  const steps: { to: CallSetupMoment; ms: number }[] = [];
  let last: number | undefined;
  for (const moment of CALL_SETUP_MOMENTS) {
    const at = timings[moment];
    if (at === undefined) continue;
    if (last !== undefined) steps.push({ to: moment, ms: at - last });
    last = at;
  }
  return steps;
}

/** What the window reports as a call's media closes (reportQuality). */
export const callQualityReportSchema = z.strictObject({
  localId: z.string().min(1, ruleMessage('common.notEmpty')).max(200, ruleMessage('common.tooLong')),
  summary: qualitySummarySchema,
  samples: z.array(qualitySampleSchema).max(QUALITY_SAMPLES_KEPT, ruleMessage('commands.atMostSamples', { count: QUALITY_SAMPLES_KEPT })),
  path: callPathSchema.optional(),
  sdp: z.strictObject({ local: sdpSummarySchema.optional(), remote: sdpSummarySchema.optional() }).optional(),
  timings: windowCallTimingsSchema.optional(),
});
export type CallQualityReport = z.infer<typeof callQualityReportSchema>;

/** One call in the diagnostics file. */
export interface CallDiagnostics extends Omit<CallQualityReport, 'timings'> {
  /** The window's moments and the main process's (callSetupSteps says where the time went). */
  timings?: CallTimings;
  callId?: string;
  direction?: 'incoming' | 'outgoing';
  /** When the report arrived (unix ms). */
  at: number;
}

export type { QualitySample, QualitySummary };

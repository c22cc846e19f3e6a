// A call's record, derived from all of its facts (call-facts.ts) as one pure function: the same
// facts give the same record whichever instance wrote them and in whatever order, so the writer
// simply derives the row again whenever a fact is added.
import { DIAL_TIMEOUT_MS, RING_TIMEOUT_MS } from '../../shared/call-state';
import type { TransferKind, TransferMiss } from '../../shared/transfer';
import { compact } from '../../shared/compact';
import type { CallFact, CallFactKind, CallFactOf } from './call-facts';

export const CALL_OUTCOMES = ['answered', 'abandoned', 'missed', 'no_answer', 'cancelled', 'failed'] as const;
/**
 * - `answered`: an agent talked with the customer (the service's terminate carries the call's start).
 * - `abandoned`: incoming, the customer hung up while it rang.
 * - `missed`: incoming, nobody answered before the service gave up, or every agent rung declined.
 * - `no_answer`: outgoing, the customer did not answer or rejected it.
 * - `cancelled`: outgoing, the agent hung up before the customer answered.
 * - `failed`: the gateway refused it or its set-up failed (terminate FAILED, never answered, or
 *   its media never started).
 */
export type CallOutcome = (typeof CALL_OUTCOMES)[number];

/**
 * The service's terminate does not say who ended a call that was never answered; how long it rang
 * does. The service gives up ringing an incoming call after RING_TIMEOUT_MS, the app dialling out
 * after DIAL_TIMEOUT_MS: a call that rang within this margin of that was given up (missed, not
 * answered), one that ended sooner was ended by the customer (abandoned) or the agent (cancelled).
 * The margin covers the service's whole-second timestamps and the few seconds between the app's
 * start of its dial timer and the service's RINGING.
 */
const GAVE_UP_MARGIN_MS = 5_000;
/** An incoming call that rang this long, on the service's own clock, was given up by the service. */
export const SERVICE_GAVE_UP_MS = RING_TIMEOUT_MS - GAVE_UP_MARGIN_MS;
/** An outgoing call that rang this long was given up by the app: the customer did not answer. */
export const DIAL_GAVE_UP_MS = DIAL_TIMEOUT_MS - GAVE_UP_MARGIN_MS;
/**
 * Terminate errors that say the call's media never started (protocol.md: no media at the call's
 * start, accepted but no media): its set-up failed, even when the service gives the call a start.
 */
export const MEDIA_NEVER_STARTED_ERRORS: readonly number[] = [138021, 138023];

export const TRANSFER_RESULTS = ['ringing', 'consulting', 'transferred', 'joined', 'not_answered', 'cancelled'] as const;
export type TransferResult = (typeof TRANSFER_RESULTS)[number];

/** One transfer or consult of a bridged call. */
export interface TransferRecord {
  transferId: string;
  kind: TransferKind;
  /** The agent who started it. */
  by?: string;
  /** When it was first seen (unix ms). */
  at: number;
  /** The colleagues it rang. */
  rung: string[];
  /** The colleague who took it. */
  answeredBy?: string;
  result: TransferResult;
  /** Why it was not answered. */
  reason?: TransferMiss;
}

/** One call, as `calls` keeps it. Times are unix ms. */
export interface CallRecord {
  callId: string;
  direction: 'incoming' | 'outgoing';
  /** The customer's number (digits with country code), when the service gave it. */
  customer?: string;
  customerUserId?: string;
  customerName?: string;
  /** The business number an incoming call was made to. */
  businessNumber?: string;
  /** The first moment known of the call: it rang, or the agent dialled. */
  startedAt: number;
  /** It rang: the team's phones (incoming), the customer's phone (outgoing, the service's RINGING). */
  rangAt?: number;
  /** An agent answered (incoming), the customer answered (outgoing). */
  answeredAt?: number;
  endedAt?: number;
  /** Absent while the call goes on. */
  outcome?: CallOutcome;
  /** The agent who answered it (incoming) or placed it (outgoing). */
  agentId?: string;
  rungAgents: string[];
  declinedAgents: string[];
  transfers: TransferRecord[];
  /** From ringing to the answer, or to the end of a call never answered. */
  waitMs?: number;
  /** From the answer to the end, less the time on hold. */
  talkMs?: number;
  /**
   * Time on hold, as the relay saw it: a bridged call's holds, each until it was taken off (by the
   * agent, or by a transfer that brought a colleague to talk) or the call ended. Absent when the
   * relay saw none: a direct call's hold stays in the app.
   */
  holdMs?: number;
  endStatus?: 'COMPLETED' | 'FAILED';
  errorCode?: number;
  errorMessage?: string;
  /** Why the team's bridge let the call go (`call.bridge_failed`). */
  bridgeFailure?: string;
  voicemailAt?: number;
  voicemailMediaId?: string;
  /** The latest wrap-up of the call, by its time (`wrap_up` facts): an agent's, after the call. */
  disposition?: string;
  notes?: string;
}

/** The record the facts make; undefined when they make no call (an audio message that names none). */
export function callRecordOf(facts: readonly CallFact[]): CallRecord | undefined {
  const of = <K extends CallFactKind>(kind: K): Extract<CallFact, { kind: K }>[] =>
    facts.filter((f): f is Extract<CallFact, { kind: K }> => f.kind === kind).sort((a, b) => a.at - b.at || a.agentId.localeCompare(b.agentId) || a.ref.localeCompare(b.ref));
  const first = <K extends CallFactKind>(kind: K): Extract<CallFact, { kind: K }> | undefined => of(kind)[0];

  // A voicemail or a wrap-up alone makes no call: the call is what the service and the relay saw of it.
  const callFacts = facts.filter((f) => f.kind !== 'voicemail' && f.kind !== 'wrap_up');
  if (callFacts.length === 0) return undefined;
  const callId = callFacts[0]!.callId;

  const incoming = first('incoming');
  const direction: CallRecord['direction'] = incoming !== undefined ? 'incoming' : 'outgoing';
  const claim = first('claimed');
  const terminated = first('terminated');
  const statusOf = (status: 'RINGING' | 'ACCEPTED' | 'REJECTED') => of('status').find((f) => f.ref === status);
  const startedAt = Math.min(...callFacts.map((f) => f.at));
  const rangAt = incoming !== undefined ? incoming.at : statusOf('RINGING')?.at;
  const endedAt = terminated?.at;
  // protocol.md: the terminate carries start_time and duration only when the call was answered —
  // nobody talked, though, on a call whose media never started.
  const mediaNeverStarted =
    terminated !== undefined && terminated.data.status === 'FAILED' && (terminated.data.errors ?? []).some((e) => MEDIA_NEVER_STARTED_ERRORS.includes(e.code));
  const answeredPerService = terminated !== undefined && !mediaNeverStarted && (terminated.data.startTime !== undefined || terminated.data.durationSec !== undefined);
  const answeredAt = answerTimeOf({ direction, claim, answered: first('answered'), accepted: statusOf('ACCEPTED'), terminated, answeredPerService });

  const declines = of('declined');
  const outcome =
    terminated === undefined
      ? undefined
      : outcomeOf({
          direction,
          answered: answeredPerService,
          failed: terminated.data.status === 'FAILED',
          rejected: statusOf('REJECTED') !== undefined,
          nobodyLeft: declines.some((d) => d.data.othersRinging === 0 && d.data.answeredBy === undefined),
          voicemail: first('voicemail') !== undefined,
          rangMs: ringTimeOf({ incoming, ringing: statusOf('RINGING'), claim, terminated }),
        });

  const waitFrom = direction === 'incoming' ? rangAt : startedAt;
  const waitUntil = answeredAt ?? endedAt;
  const holdMs = holdTimeOf(of('hold'), of('transfer'), endedAt);
  // The service's duration runs from the answer to the end, holds included: it does not know of them.
  const connectedMs =
    answeredPerService && terminated !== undefined
      ? terminated.data.durationSec !== undefined
        ? Math.round(terminated.data.durationSec * 1000)
        : answeredAt !== undefined
          ? Math.max(0, terminated.at - answeredAt)
          : undefined
      : undefined;
  const talkMs = connectedMs === undefined ? undefined : Math.max(0, connectedMs - (holdMs ?? 0));
  const error = terminated?.data.errors?.[0];
  const bridgeFailure = of('bridge_failed').find((f) => f.data.goesOn !== true);
  const voicemail = first('voicemail');
  const status = of('status')[0];
  // Each agent's latest wrap-up is one fact; the call's is the latest of them.
  const wrapUp = of('wrap_up').at(-1);

  return compact({
    callId,
    direction,
    customer: incoming?.data.from ?? status?.data.recipientId,
    customerUserId: incoming?.data.fromUserId,
    customerName: incoming?.data.name,
    businessNumber: incoming?.data.to,
    startedAt,
    rangAt,
    answeredAt,
    endedAt,
    outcome,
    agentId: claim?.agentId,
    rungAgents: rungAgentsOf(of('rung'), declines, claim, terminated),
    declinedAgents: distinct(declines.map((d) => d.agentId)),
    transfers: transfersOf(of('rung'), of('transfer')),
    waitMs: waitFrom !== undefined && waitUntil !== undefined ? Math.max(0, waitUntil - waitFrom) : undefined,
    talkMs,
    holdMs,
    endStatus: terminated?.data.status,
    errorCode: error?.code,
    errorMessage: error?.message,
    bridgeFailure: bridgeFailure?.ref,
    voicemailAt: voicemail?.at,
    voicemailMediaId: voicemail?.data.mediaId,
    disposition: wrapUp?.data.disposition ?? undefined,
    notes: wrapUp?.data.notes,
  });
}

function answerTimeOf(facts: {
  direction: 'incoming' | 'outgoing';
  claim: CallFactOf<'claimed'> | undefined;
  answered: CallFactOf<'answered'> | undefined;
  accepted: CallFactOf<'status'> | undefined;
  terminated: CallFactOf<'terminated'> | undefined;
  answeredPerService: boolean;
}): number | undefined {
  const { terminated } = facts;
  // An ended call that the service says was never answered has no answer time, whatever was attempted.
  if (terminated !== undefined && !facts.answeredPerService) return undefined;
  const byService = terminated?.data.startTime;
  // The agent's claim (incoming) and the customer's answer (outgoing) are to the millisecond on the
  // relay's clock, the service's start time only to the second.
  const seen = facts.direction === 'incoming' ? facts.claim?.at : (facts.answered?.at ?? facts.accepted?.at);
  return seen ?? byService;
}

/**
 * How long an ended call rang: an incoming call from its connect to its terminate, an outgoing one
 * from the service's RINGING, both on the service's own timestamps, so that a webhook retried late
 * or taken by another instance changes nothing. An outgoing call that never rang is timed from the
 * agent's claim, which followed the app's initiate, to the terminate as the relay received it.
 */
function ringTimeOf(facts: {
  incoming: CallFactOf<'incoming'> | undefined;
  ringing: CallFactOf<'status'> | undefined;
  claim: CallFactOf<'claimed'> | undefined;
  terminated: CallFactOf<'terminated'>;
}): number {
  const { terminated } = facts;
  if (facts.incoming !== undefined) return terminated.data.timestamp - facts.incoming.data.timestamp;
  if (facts.ringing !== undefined) return terminated.data.timestamp - facts.ringing.data.timestamp;
  return facts.claim !== undefined ? terminated.at - facts.claim.at : 0;
}

function outcomeOf(call: {
  direction: 'incoming' | 'outgoing';
  answered: boolean;
  failed: boolean;
  rejected: boolean;
  nobodyLeft: boolean;
  voicemail: boolean;
  rangMs: number;
}): CallOutcome {
  if (call.answered) return 'answered';
  if (call.failed) return 'failed';
  // The service offers the customer voicemail only once the call was rejected or rang out.
  if (call.direction === 'incoming') return call.nobodyLeft || call.voicemail || call.rangMs >= SERVICE_GAVE_UP_MS ? 'missed' : 'abandoned';
  return call.rejected || call.rangMs >= DIAL_GAVE_UP_MS ? 'no_answer' : 'cancelled';
}

/**
 * The transfer states in which the bridge takes a held call off hold (transfers.ts): a colleague
 * answered, and agents talk with each other or the customer.
 */
const TAKES_OFF_HOLD: readonly string[] = ['consulting', 'transferred', 'joined', 'with_customer'];

/**
 * The time a call spent on hold: from each hold to the resume, or to a transfer that took it off
 * hold, or to the call's end for a hold still on then; undefined when the relay saw no hold. A hold
 * and a resume in the same millisecond hold for no time.
 */
function holdTimeOf(holds: CallFactOf<'hold'>[], transfers: CallFactOf<'transfer'>[], endedAt: number | undefined): number | undefined {
  if (holds.length === 0) return undefined;
  const changes = [
    ...holds.map((f) => ({ at: f.at, held: f.data.held })),
    ...transfers.filter((f) => TAKES_OFF_HOLD.includes(f.data.state)).map((f) => ({ at: f.at, held: false })),
  ].sort((a, b) => a.at - b.at || Number(b.held) - Number(a.held));
  let total = 0;
  let heldSince: number | undefined;
  for (const change of changes) {
    if (endedAt !== undefined && change.at > endedAt) break;
    if (change.held) heldSince ??= change.at;
    else if (heldSince !== undefined) {
      total += change.at - heldSince;
      heldSince = undefined;
    }
  }
  if (heldSince !== undefined && endedAt !== undefined) total += endedAt - heldSince;
  return total;
}

/**
 * Who the call rang, in the order they were rung: the agents it rang as it came in, a decliner
 * (it rang, or it could not decline), and transfers' colleagues. An agent held back by a colleague's
 * voice_call head start counts only if the head start ran out before the call was answered or ended.
 */
function rungAgentsOf(rung: CallFactOf<'rung'>[], declines: CallFactOf<'declined'>[], claim: CallFactOf<'claimed'> | undefined, terminated: CallFactOf<'terminated'> | undefined): string[] {
  const settledAt = Math.min(claim?.at ?? Infinity, terminated?.at ?? Infinity);
  const rang = rung.flatMap((f) => {
    if (!('agents' in f.data)) return [{ agentId: f.agentId, at: f.at }];
    const { agents, heldBack } = f.data;
    const later = heldBack !== undefined && heldBack.ringsAt < settledAt ? heldBack.agents.map((agentId) => ({ agentId, at: heldBack.ringsAt })) : [];
    return [...agents.map((agentId) => ({ agentId, at: f.at })), ...later];
  });
  const all = [...rang, ...declines.map((d) => ({ agentId: d.agentId, at: d.at }))].sort((a, b) => a.at - b.at || a.agentId.localeCompare(b.agentId));
  return distinct(all.map((r) => r.agentId));
}

/** The order in which a transfer's states outrank one another as its result, the last first. */
const RESULT_OF_STATE: Partial<Record<string, TransferResult>> = {
  joined: 'joined',
  transferred: 'transferred',
  with_customer: 'transferred',
  not_answered: 'not_answered',
  cancelled: 'cancelled',
  consulting: 'consulting',
  ringing: 'ringing',
};
const RESULT_RANK: readonly TransferResult[] = ['joined', 'transferred', 'not_answered', 'cancelled', 'consulting', 'ringing'];

function transfersOf(rung: CallFactOf<'rung'>[], updates: CallFactOf<'transfer'>[]): TransferRecord[] {
  const transferRings = rung.flatMap((f) => ('agents' in f.data || f.ref === '' ? [] : [{ ...f, data: f.data }]));
  const ids = distinct([...transferRings.map((f) => f.ref), ...updates.map((f) => f.data.transferId)]);
  return ids
    .map((transferId): TransferRecord => {
      const rings = transferRings.filter((f) => f.ref === transferId);
      const told = updates.filter((f) => f.data.transferId === transferId);
      const by = rings.find((f) => f.data.by !== undefined)?.data.by ?? told.find((f) => f.data.state === 'ringing')?.agentId;
      const kind = rings.find((f) => f.data.transferKind !== undefined)?.data.transferKind ?? told[0]?.data.transferKind ?? 'transfer';
      const results = told.flatMap((f) => {
        const result = RESULT_OF_STATE[f.data.state];
        return result === undefined ? [] : [result];
      });
      const result = RESULT_RANK.find((r) => results.includes(r)) ?? 'ringing';
      const toStarter = told.filter((f) => f.agentId === by);
      const answeredBy =
        toStarter.find((f) => (f.data.state === 'consulting' || f.data.state === 'transferred' || f.data.state === 'joined') && f.data.colleague !== undefined)?.data.colleague ??
        told.find((f) => (f.data.state === 'with_customer' || f.data.state === 'joined') && f.agentId !== by)?.agentId;
      const reason = told.find((f) => f.data.state === 'not_answered')?.data.reason;
      return compact({
        transferId,
        kind,
        by,
        at: Math.min(...[...rings, ...told].map((f) => f.at)),
        rung: distinct(rings.map((f) => f.agentId)),
        answeredBy,
        result,
        reason,
      });
    })
    .sort((a, b) => a.at - b.at || a.transferId.localeCompare(b.transferId));
}

function distinct(values: readonly string[]): string[] {
  return [...new Set(values)];
}

// What one relay instance saw of a call, as facts: the service's webhooks (its ring, progress and
// end), an agent's claim or decline, a transfer's ring and outcome, a hold, a voicemail. Each
// instance records only what it handled itself; the call's row (call-record.ts) is derived from
// all of them, so it comes out the same whichever instance saw what, in whatever order the facts
// were written.
//
// Each fact has a key — (call id, kind, agent, ref) — under which the same fact seen twice (the
// service retries webhooks; two instances may take the same one) is one row, the earliest seen —
// but for an agent's edit (a wrap-up), where the latest replaces the earlier.
import { z } from 'zod';
import { STALE_CONNECT_MS } from '../../shared/call-state';
import type { RelayEvent } from '../../shared/events';
import { compact } from '../../shared/compact';
import { TRANSFER_KINDS, TRANSFER_MISSES, TRANSFER_STATES } from '../../shared/transfer';
import type { Audience } from '../backend/types';

const callError = z.object({ code: z.number(), message: z.string(), details: z.string().optional() });
/**
 * The service's own time of a webhook (unix ms, whole seconds): how long a call rang is measured on
 * it, the same whichever instance received the webhook, and however late a retry brought it.
 */
const serviceTimestamp = z.number();

/** The `data` of each kind of fact: what the fact says besides its key and time. */
const DATA = {
  /** A customer calls (call.incoming). */
  incoming: z.object({
    timestamp: serviceTimestamp,
    from: z.string().optional(),
    fromUserId: z.string().optional(),
    name: z.string().optional(),
    to: z.string().optional(),
  }),
  /**
   * The call rang: as it came in, one fact for the ring (agent '', ref ''), written by the instance
   * that stored the call.incoming — `agents` rang at once, `heldBack.agents` were held back by a
   * colleague's voice_call head start and ring at `heldBack.ringsAt`, unless the call was answered
   * or ended first; or as a colleague's transfer or consult, one fact per agent it rang (ref: the
   * transfer's id, `by` the colleague).
   */
  rung: z.union([
    z.object({ agents: z.array(z.string()), heldBack: z.object({ agents: z.array(z.string()), ringsAt: z.number() }).optional() }),
    z.object({ by: z.string().optional(), transferKind: z.enum(TRANSFER_KINDS).optional() }),
  ]),
  /** The agent declined the ringing call; `othersRinging` 0 and no `answeredBy`: nobody was left to answer it. */
  declined: z.object({ othersRinging: z.number().int().nonnegative(), answeredBy: z.string().optional() }),
  /** The agent won the call's claim: it answers an incoming call, or placed an outgoing one. */
  claimed: z.object({}),
  /** Progress of an outgoing call (ref: RINGING, ACCEPTED or REJECTED). */
  status: z.object({ timestamp: serviceTimestamp, recipientId: z.string().optional() }),
  /** The customer answered an outgoing call. */
  answered: z.object({}),
  /** The service ended the call; start, end and duration only when it was answered (protocol.md). */
  terminated: z.object({
    status: z.enum(['COMPLETED', 'FAILED']),
    timestamp: serviceTimestamp,
    startTime: z.number().optional(),
    endTime: z.number().optional(),
    durationSec: z.number().optional(),
    errors: z.array(callError).optional(),
  }),
  /** The bridge let the call go (ref: the reason); for `agent_not_back`, the agent it is about. */
  bridge_failed: z.object({ goesOn: z.boolean().optional() }),
  /** What a transfer came to, as told to one agent (ref: `<transferId>:<state>`). */
  transfer: z.object({
    transferId: z.string(),
    transferKind: z.enum(TRANSFER_KINDS),
    state: z.enum(TRANSFER_STATES),
    colleague: z.string().optional(),
    reason: z.enum(TRANSFER_MISSES).optional(),
  }),
  /** The customer left a voicemail: an inbound audio message whose id is the call's (protocol.md), and its media's id. */
  voicemail: z.object({ mediaId: z.string().optional() }),
  /**
   * The agent put the call on hold (`held`) or took it off (a bridged call: the relay's bridge plays
   * the customer music). ref: `on@<at>` or `off@<at>`, so that each hold and resume is a fact.
   */
  hold: z.object({ held: z.boolean() }),
  /**
   * The agent's wrap-up of the call (`PUT /calls/{callId}/wrap-up`): its disposition (null: none)
   * and notes, at the time the relay took it. One per agent (ref ''): a later one replaces it
   * (LATER_REPLACES).
   */
  wrap_up: z.object({ disposition: z.string().nullable(), notes: z.string() }),
} as const;

export type CallFactKind = keyof typeof DATA;
export const CALL_FACT_KINDS = Object.keys(DATA) as CallFactKind[];
type DataOf<K extends CallFactKind> = z.infer<(typeof DATA)[K]>;

/** One fact of a call of kind K. `agentId` and `ref` complete its key ('' when the kind has none); `at` is unix ms. */
export interface CallFactOf<K extends CallFactKind> {
  kind: K;
  callId: string;
  agentId: string;
  ref: string;
  at: number;
  data: DataOf<K>;
}
export type CallFact = { [K in CallFactKind]: CallFactOf<K> }[CallFactKind];

function fact<K extends CallFactKind>(kind: K, callId: string, at: number, data: DataOf<K>, key: { agentId?: string; ref?: string } = {}): CallFactOf<K> {
  return { kind, callId, agentId: key.agentId ?? '', ref: key.ref ?? '', at, data: compact(data) };
}

/** The key under which two sightings of a fact are one. */
export const factKey = (f: Pick<CallFact, 'callId' | 'kind' | 'agentId' | 'ref'>): string => JSON.stringify([f.callId, f.kind, f.agentId, f.ref]);

/**
 * The kinds whose facts are edits: under one key the latest replaces the earlier, whatever order
 * they are written in (an agent edits its wrap-up). Every other fact is a sighting, and the
 * earliest sighting stands.
 */
export const LATER_REPLACES: readonly CallFactKind[] = ['wrap_up'];

/** Whether `fact` takes the place of `known`, a fact of the same key: the later edit, else the earlier sighting. */
export function replaces(fact: Pick<CallFact, 'kind' | 'at'>, known: Pick<CallFact, 'at'>): boolean {
  return LATER_REPLACES.includes(fact.kind) ? fact.at >= known.at : fact.at < known.at;
}

/** What the relay knew as it handled an event (relay-records.ts `SeenEvent`). */
export interface EventContext {
  receivedAt: number;
  audience: Audience;
  /** The delivery rules let it through: a duplicate, a stale or a tombstoned connect did not, and rang nobody. */
  stored: boolean;
  /** The agents a stored call.incoming rings. */
  reachable: () => readonly string[];
}

/**
 * When a webhook's event happened: when the relay received it, to the millisecond, unless it came
 * late (the service retries for days, and its own timestamp is only to the second): then the
 * service's own time.
 */
export function serviceTimeOf(timestamp: number, receivedAt: number): number {
  return receivedAt - timestamp > STALE_CONNECT_MS ? timestamp : receivedAt;
}

/**
 * The times a webhook may give: from 2000 to 9999, which every date type on the way (JavaScript's,
 * PostgreSQL's) holds. A webhook's time outside them is no time: the relay's receipt stands for
 * the event's, and a start or end is left out.
 */
const EARLIEST_TIME = Date.UTC(2000, 0, 1);
const LATEST_TIME = Date.UTC(9999, 11, 31);
/** The longest call duration kept, a week: well inside `talk_ms`, an integer of milliseconds. */
const LONGEST_CALL_SEC = 7 * 24 * 3600;

const timeOrUndefined = (ms: number | undefined): number | undefined => (ms !== undefined && Number.isFinite(ms) && ms >= EARLIEST_TIME && ms <= LATEST_TIME ? ms : undefined);
const durationOrUndefined = (sec: number | undefined): number | undefined => (sec !== undefined && Number.isFinite(sec) && sec >= 0 && sec <= LONGEST_CALL_SEC ? sec : undefined);

/** The facts an event the relay handled says about its call; none for what the records do not keep. */
export function factsOfEvent(event: RelayEvent, context: EventContext): CallFact[] {
  return factsOf({ ...event, timestamp: timeOrUndefined(event.timestamp) ?? context.receivedAt }, context);
}

function factsOf(event: RelayEvent, context: EventContext): CallFact[] {
  const { receivedAt, audience } = context;
  switch (event.type) {
    case 'call.incoming': {
      const at = serviceTimeOf(event.timestamp, receivedAt);
      const incoming = fact('incoming', event.callId, at, { timestamp: event.timestamp, from: event.from, fromUserId: event.fromUserId, name: event.name, to: event.to });
      const reachable = context.stored ? context.reachable() : [];
      if (reachable.length === 0) return [incoming];
      const preferred = audience.kind === 'ringing' ? audience.preferredAgentId : undefined;
      const releaseAt = audience.kind === 'ringing' ? audience.releaseAt : undefined;
      const headStart = preferred !== undefined && releaseAt !== undefined;
      const heldBack = headStart ? reachable.filter((agentId) => agentId !== preferred) : [];
      const rung = fact('rung', event.callId, at, {
        agents: headStart ? reachable.filter((agentId) => agentId === preferred) : [...reachable],
        ...(heldBack.length > 0 && releaseAt !== undefined ? { heldBack: { agents: heldBack, ringsAt: releaseAt } } : {}),
      });
      return [incoming, rung];
    }
    case 'call.answered':
      return [fact('answered', event.callId, serviceTimeOf(event.timestamp, receivedAt), {})];
    case 'call.status':
      return [fact('status', event.callId, serviceTimeOf(event.timestamp, receivedAt), { timestamp: event.timestamp, recipientId: event.recipientId }, { ref: event.status })];
    case 'call.terminated':
      return [
        fact(
          'terminated',
          event.callId,
          serviceTimeOf(event.timestamp, receivedAt),
          {
            status: event.status,
            timestamp: event.timestamp,
            startTime: timeOrUndefined(event.startTime),
            endTime: timeOrUndefined(event.endTime),
            durationSec: durationOrUndefined(event.durationSec),
            errors: event.errors,
          },
        ),
      ];
    case 'call.bridge_failed': {
      const agentId = event.reason === 'agent_not_back' && audience.kind === 'agent' ? audience.agentId : '';
      return [fact('bridge_failed', event.callId, receivedAt, { goesOn: event.goesOn }, { agentId, ref: event.reason })];
    }
    case 'call.transfer_ring': {
      if (audience.kind !== 'agent') return [];
      return [fact('rung', event.callId, receivedAt, { by: event.by.agentId, transferKind: event.kind }, { agentId: audience.agentId, ref: event.transferId })];
    }
    case 'call.transfer_update':
      return [
        fact(
          'transfer',
          event.callId,
          receivedAt,
          { transferId: event.transferId, transferKind: event.kind, state: event.state, colleague: event.colleague?.agentId, reason: event.reason },
          { agentId: event.agentId, ref: `${event.transferId}:${event.state}` },
        ),
      ];
    case 'message.inbound':
      // protocol.md: a voicemail is an inbound audio message whose id is the call's id. Any other
      // audio message's fact names no call, and so makes no call row.
      return event.messageType === 'audio' ? [fact('voicemail', event.messageId, receivedAt, { mediaId: event.mediaId })] : [];
    case 'call.capture_available':
      // The app keeps the service's recording and transcript with its own entry of the call.
      return [];
    case 'call.recording':
      // The team's own recording keeps its meta beside its file (recordings-store.ts).
      return [];
    case 'call.monitor':
      // A supervisor's join of a call is live state, not a fact of the call's record.
      return [];
    case 'call.claimed':
      // The claim itself is recorded where it is decided (claimedFact), also when this event's store fails.
      return [];
    case 'message.status':
      return [];
  }
}

export function claimedFact(callId: string, agentId: string, at: number): CallFactOf<'claimed'> {
  return fact('claimed', callId, at, {}, { agentId });
}

export function declinedFact(callId: string, agentId: string, at: number, verdict: { othersRinging: number; answeredBy?: string }): CallFactOf<'declined'> {
  return fact('declined', callId, at, { othersRinging: verdict.othersRinging, answeredBy: verdict.answeredBy }, { agentId });
}

export function wrapUpFact(callId: string, agentId: string, at: number, wrapUp: { disposition: string | null; notes: string }): CallFactOf<'wrap_up'> {
  return fact('wrap_up', callId, at, { disposition: wrapUp.disposition, notes: wrapUp.notes }, { agentId });
}

export function holdFact(callId: string, agentId: string, at: number, held: boolean): CallFactOf<'hold'> {
  return fact('hold', callId, at, { held }, { agentId, ref: `${held ? 'on' : 'off'}@${at}` });
}

/** A row of `call_facts` as the drivers read it. */
export interface CallFactRow {
  call_id: string;
  kind: string;
  agent_id: string;
  ref: string;
  at: Date;
  data: unknown;
}

/**
 * A row read back; undefined for a kind this relay does not know (a newer relay wrote it) or data
 * that does not parse, which the derivation then leaves out.
 */
export function factOfRow(row: CallFactRow): CallFact | undefined {
  if (!(CALL_FACT_KINDS as readonly string[]).includes(row.kind)) return undefined;
  const kind = row.kind as CallFactKind;
  const data = DATA[kind].safeParse(row.data);
  if (!data.success) return undefined;
  return { kind, callId: row.call_id, agentId: row.agent_id, ref: row.ref, at: row.at.getTime(), data: data.data } as CallFact;
}


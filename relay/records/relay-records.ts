// What the relay tells its call records, one call per fact it handles (relay-service.ts). The relay
// imports only this type: `CallRecords` (call-records.ts) is built by whoever starts the relay
// (relay/cli.ts), so that a relay without records loads no database package.
import type { RelayEvent } from '../../shared/events';
import type { Audience, Presence, ReportedPresence } from '../backend/types';
import type { SqlRunner } from './database';

/** An event this instance handled: a webhook's, or one the relay made (a claim, a transfer's word, a bridge failure). */
export interface SeenEvent {
  event: RelayEvent;
  receivedAt: number;
  audience: Audience;
  /** The delivery rules let it through (a duplicate, a stale or a tombstoned connect did not). */
  stored: boolean;
  /** The agents whose presence rings as the call comes in; asked only of a stored `call.incoming`. */
  reachable: () => readonly string[];
}

/** What the records say of themselves, for the relay's /healthz (records-writer.ts `WriterStats`). */
export interface RecordsStatus {
  database: 'connecting' | 'up' | 'down' | 'closed';
  /** Facts waiting in memory, and in the journal on disk. */
  queued: number;
  journaled: number;
  /** Facts written, and lost, since the start. */
  written: number;
  dropped: number;
  lastError?: { message: string; at: string };
}

/** An agent's wrap-up of a call, as its app sends it (`PUT /calls/{callId}/wrap-up`), checked against the team's settings. */
export interface WrapUp {
  callId: string;
  agentId: string;
  /** One of the team's dispositions, or null for none. */
  disposition: string | null;
  notes: string;
}

/**
 * What became of a wrap-up: `saved` once the database holds it (`savedAt`, unix ms, is its time:
 * the latest wins); `not_found` for a call the records do not have; `forbidden` for an agent who did
 * not talk with the customer (never answered it, nor had it transferred to it); `too_late` more than
 * WRAP_UP_EDITABLE_MS after the call ended; `unavailable` while the database cannot answer.
 */
export type WrapUpOutcome =
  | { kind: 'saved'; wrapUp: WrapUp & { savedAt: number } }
  | { kind: 'not_found' }
  | { kind: 'forbidden' }
  | { kind: 'too_late' }
  | { kind: 'unavailable' };

/** What the wrap-up endpoint asks of the records. */
export interface WrapUpRecords {
  /** Stores the wrap-up in the database before it resolves `saved`; never rejects. */
  saveWrapUp(wrapUp: WrapUp): Promise<WrapUpOutcome>;
}

export interface RelayRecords extends WrapUpRecords {
  /** An event stored, or dropped by the delivery rules. Never waits: facts are written later, in batches. */
  eventSeen(seen: SeenEvent): void;
  /** An agent won a call's claim (or claimed it again). */
  claimed(callId: string, agentId: string): void;
  /** An agent declined a call, and how many colleagues it left to answer it. */
  declined(callId: string, agentId: string, verdict: { othersRinging: number; answeredBy?: string }): void;
  /** The agent on a bridged call held it (the customer hears the music) or resumed it. */
  held(callId: string, agentId: string, held: boolean): void;
  /**
   * An agent reported its presence, with its reason (a break's, or the call an after_call_work
   * follows); `before` is the team's presence for it until then. A state fact when they differ.
   */
  presenceReported(agentId: string, reported: ReportedPresence, before: ReportedPresence | undefined): void;
  /** The team's presence, read to notice an agent whose presence lapsed (`presenceTtlMs` after its last report). */
  followPresence(presenceOf: (agentId: string) => Presence | undefined, presenceTtlMs: number): void;
  /** How the writing goes now. */
  status(): RecordsStatus;
  /** The database once it is open and migrated: what the wallboard and the reports read. */
  database(): Promise<SqlRunner>;
}

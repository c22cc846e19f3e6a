// An agent's wrap-up of a call (relay/REFERENCE.md "Wrap-up"): who may save one, until when, and its
// write. Unlike the other facts it is written at once, in a transaction of its own, not queued: the
// agent is told it is saved only once the database holds it, and nothing the writer does to what
// waits (the journal, a queue past its bound dropping whole calls) can lose it after that.
import { WRAP_UP_EDITABLE_MS } from '../../shared/team-settings';
import { wrapUpFact, type CallFact } from './call-facts';
import { callRecordOf } from './call-record';
import type { SqlRunner } from './database';
import { callFactsOf, deriveCalls, insertCallFacts, lockCalls } from './records-store';
import type { WrapUp, WrapUpOutcome } from './relay-records';

/** The transfer states told to an agent left with the customer: alone (`with_customer`), or three-way (`joined`). */
const WITH_CUSTOMER_NOW: readonly string[] = ['with_customer', 'joined'];
/** The transfer states told to the agent who started it once the colleague named took the customer: handed on, or three-way. */
const COLLEAGUE_TOOK_CUSTOMER: readonly string[] = ['transferred', 'joined'];

/**
 * Whether the agent talked with the customer, from the call's facts: it answered (or placed) the
 * call — its claim — or a transfer handed it the customer. A colleague rung for a transfer it did
 * not take, or consulted and not handed the call, did not.
 */
export function talkedWithCustomer(facts: readonly CallFact[], agentId: string): boolean {
  return facts.some((f) => {
    if (f.kind === 'claimed') return f.agentId === agentId;
    if (f.kind !== 'transfer') return false;
    return (f.agentId === agentId && WITH_CUSTOMER_NOW.includes(f.data.state)) || (f.data.colleague === agentId && COLLEAGUE_TOOK_CUSTOMER.includes(f.data.state));
  });
}

/** Half a surrogate pair: JavaScript strings may hold one, PostgreSQL's text refuses it. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/** A text as PostgreSQL can keep it: without NUL characters (jsonOf leaves them out too), half a surrogate pair replaced with U+FFFD. */
export function storableText(text: string): string {
  return text.replaceAll('\u0000', '').replace(LONE_SURROGATE, '\uFFFD');
}

export interface WrapUpWrite {
  /** The wrap-up's time (unix ms): the relay's clock as it takes it. */
  at: number;
  /** This instance's facts of the call that wait for its writer: a call that just ended may have its end, even its claim, there still. */
  waiting: readonly CallFact[];
  instanceId: string;
}

/**
 * Decides and saves a wrap-up in the transaction given, under the call's lock (its texts as the
 * database keeps them, and as the outcome says): the call's waiting
 * facts go in first (the writer writing them again changes nothing), then the call's facts say
 * whether there is such a call, whether this agent talked on it and whether it ended too long ago;
 * a wrap-up that passes replaces this agent's earlier one if it is later, and the call's row is
 * derived again.
 */
export async function writeWrapUp(tx: SqlRunner, asked: WrapUp, write: WrapUpWrite): Promise<WrapUpOutcome> {
  const wrapUp: WrapUp = { ...asked, disposition: asked.disposition === null ? null : storableText(asked.disposition), notes: storableText(asked.notes) };
  const { callId, agentId } = wrapUp;
  await lockCalls(tx, [callId]);
  if (write.waiting.length > 0) await insertCallFacts(tx, write.waiting, write.instanceId);
  const outcome = verdictOn(await callFactsOf(tx, [callId]), wrapUp, write.at);
  if (outcome.kind === 'saved') await insertCallFacts(tx, [wrapUpFact(callId, agentId, write.at, wrapUp)], write.instanceId);
  if (outcome.kind === 'saved' || write.waiting.length > 0) await deriveCalls(tx, [callId]);
  return outcome;
}

function verdictOn(facts: readonly CallFact[], wrapUp: WrapUp, at: number): WrapUpOutcome {
  const record = callRecordOf(facts);
  if (record === undefined) return { kind: 'not_found' };
  if (!talkedWithCustomer(facts, wrapUp.agentId)) return { kind: 'forbidden' };
  if (record.endedAt !== undefined && at - record.endedAt > WRAP_UP_EDITABLE_MS) return { kind: 'too_late' };
  return { kind: 'saved', wrapUp: { ...wrapUp, savedAt: at } };
}

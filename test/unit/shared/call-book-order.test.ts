// protocol.md: the gateway's events come duplicated, out of order and late. Whatever the delivery,
// the agent's book must end where the ordered story ends, and must never ring a call that is over.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  applyCallEvent,
  deadlineOf,
  emptyBook,
  incomingLocalId,
  owedOnCrash,
  type CallBook,
  type CallEffect,
  type CallEvent,
  type CallState,
} from '../../../shared/call-state';
import { ANSWER_SDP, DIAL_OFFER_SDP, OFFER_SDP } from '../../fixtures/sdp';

const T0 = 1_800_000_000_000;
const IN_ID = 'wacid.in-1';
const OUT_ID = 'wacid.out-1';
const OUT_LOCAL = 'out:1';

type Remote = Extract<CallEvent, { type: `remote.${string}` }>;
type Step = (at: number) => Remote;

const incoming: Step = (at) => ({ type: 'remote.incoming', at, callId: IN_ID, peer: { number: '447700900123', name: 'Ada' }, offerSdp: OFFER_SDP, timestamp: T0 });
const claimedElsewhere: Step = (at) => ({ type: 'remote.claimed', at, callId: IN_ID });
/** The same claim, to an agent that knows its own id. */
const claimedByColleague: Step = (at) => ({ type: 'remote.claimed', at, callId: IN_ID, mine: false });
const terminate =
  (callId: string, extra: { durationSec?: number; failed?: boolean } = {}): Step =>
  (at) => ({
    type: 'remote.terminated',
    at,
    callId,
    status: extra.failed ? 'FAILED' : 'COMPLETED',
    timestamp: T0 + 30_000,
    ...(extra.durationSec !== undefined ? { durationSec: extra.durationSec } : {}),
    ...(extra.failed ? { errors: [{ code: 138021, message: 'No media' }] } : {}),
  });
const status =
  (s: 'RINGING' | 'ACCEPTED' | 'REJECTED'): Step =>
  (at) => ({ type: 'remote.status', at, callId: OUT_ID, status: s, timestamp: T0 + 1_000 });
const answered: Step = (at) => ({ type: 'remote.answered', at, callId: OUT_ID, answerSdp: ANSWER_SDP, timestamp: T0 + 2_000 });

interface Story {
  name: string;
  direction: 'incoming' | 'outgoing';
  events: Step[];
}

/** What the gateway really said, in its order. */
const STORIES: Story[] = [
  { name: 'incoming, nobody answers', direction: 'incoming', events: [incoming, terminate(IN_ID)] },
  { name: 'incoming, a colleague answers', direction: 'incoming', events: [incoming, claimedElsewhere, terminate(IN_ID, { durationSec: 33 })] },
  { name: 'incoming, a colleague answers (own id known)', direction: 'incoming', events: [incoming, claimedByColleague, terminate(IN_ID, { durationSec: 33 })] },
  { name: 'incoming, it fails', direction: 'incoming', events: [incoming, terminate(IN_ID, { failed: true })] },
  { name: 'incoming, still ringing', direction: 'incoming', events: [incoming] },
  { name: 'outgoing, answered and ended by the customer', direction: 'outgoing', events: [status('RINGING'), answered, status('ACCEPTED'), terminate(OUT_ID, { durationSec: 41 })] },
  { name: 'outgoing, rejected', direction: 'outgoing', events: [status('RINGING'), status('REJECTED'), terminate(OUT_ID)] },
  { name: 'outgoing, not answered', direction: 'outgoing', events: [status('RINGING'), terminate(OUT_ID)] },
  { name: 'outgoing, failed', direction: 'outgoing', events: [terminate(OUT_ID, { failed: true })] },
  { name: 'outgoing, still ringing', direction: 'outgoing', events: [status('RINGING')] },
  { name: 'outgoing, answered, talking', direction: 'outgoing', events: [status('RINGING'), answered, status('ACCEPTED')] },
];

const dial = (at: number): CallEvent => ({ type: 'local.dial', at, localId: OUT_LOCAL, peer: { number: '447700900123' }, offerSdp: DIAL_OFFER_SDP });
const initiateOk = (at: number): CallEvent => ({ type: 'local.initiate_ok', at, localId: OUT_LOCAL, callId: OUT_ID });

/** What the agent sees of a call: enough to tell any two different outcomes apart. */
function summary(call: CallState | undefined): string {
  if (!call) return 'none';
  if (call.phase !== 'ended') return `${call.phase}${call.direction === 'outgoing' && 'answerSdp' in call ? ' with answer' : ''}`;
  const end = call.end;
  const detail = end.kind === 'completed' ? `:${end.by}` : end.kind === 'failed' ? `:${end.code}` : '';
  return `ended:${end.kind}${detail} after ${call.durationSec}s`;
}

interface Run {
  book: CallBook;
  /** Every state the agent was shown, in order. */
  shown: CallState[];
  /** Everything the book asked for, in order. */
  effects: CallEffect[];
}

function run(events: CallEvent[]): Run {
  let book = emptyBook();
  const shown: CallState[] = [];
  const effects: CallEffect[] = [];
  for (const ev of events) {
    const next = applyCallEvent(book, ev);
    book = next.book;
    shown.push(...next.changed);
    effects.push(...next.effects);
  }
  return { book, shown, effects };
}

/** What was asked of the relay and the gateway, in a comparable form (deadlines are checked step by step). */
const requests = (effects: readonly CallEffect[]): string[] =>
  effects
    .filter((e) => e.kind !== 'deadline')
    .map((e) => JSON.stringify(e))
    .sort();

const localIdOf = (story: Story) => (story.direction === 'incoming' ? incomingLocalId(IN_ID) : OUT_LOCAL);

function ordered(story: Story): CallEvent[] {
  const remote = story.events.map((step, i) => step(T0 + 100 + i * 100));
  return story.direction === 'incoming' ? remote : [dial(T0), initiateOk(T0 + 50), ...remote];
}

/** A delivery: each event one to three times, shuffled, the initiate response anywhere, and late repeats. */
const delivery = fc
  .record({
    story: fc.nat({ max: STORIES.length - 1 }),
    copies: fc.array(fc.integer({ min: 1, max: 3 }), { minLength: 4, maxLength: 4 }),
    seed: fc.array(fc.nat(), { minLength: 16, maxLength: 16 }),
    initiateAt: fc.nat({ max: 12 }),
    late: fc.array(fc.nat({ max: 3 }), { maxLength: 4 }),
  })
  .map(({ story: index, copies, seed, initiateAt, late }) => {
    const story = STORIES[index]!;
    const bag: Step[] = story.events.flatMap((step, i) => Array.from({ length: copies[i] ?? 1 }, () => step));
    // A deterministic shuffle driven by the generated seed (fast-check shrinks it).
    for (let i = bag.length - 1; i > 0; i--) {
      const j = (seed[i % seed.length] ?? 0) % (i + 1);
      [bag[i], bag[j]] = [bag[j]!, bag[i]!];
    }
    const remote: CallEvent[] = bag.map((step, i) => step(T0 + 100 + i * 100));
    // Late redeliveries, a minute and more after the story: stale by then.
    for (const [k, i] of late.entries()) {
      const step = story.events[i % story.events.length]!;
      remote.push(step(T0 + 70_000 + k * 1_000));
    }
    if (story.direction === 'incoming') return { story, events: remote };
    const at = Math.min(initiateAt, remote.length);
    const okAt = remote[at - 1]?.at ?? T0 + 50;
    return { story, events: [dial(T0), ...remote.slice(0, at), initiateOk(okAt + 1), ...remote.slice(at).map((e) => ({ ...e, at: e.at + 2 }))] };
  });

describe('delivery order never matters', () => {
  it('10 000 deliveries with duplicates, shuffled order and late repeats end where the ordered story ends, and never ring an ended call', () => {
    fc.assert(
      fc.property(delivery, ({ story, events }) => {
        const localId = localIdOf(story);
        const reference = run(ordered(story));
        // Never ring a call whose terminate was already delivered, nor once it has ended.
        let terminated = false;
        let ended = false;
        let book = emptyBook();
        const effects: CallEffect[] = [];
        /** The deadline the book last asked for, as the coordinator's timer would hold it. */
        let armed: number | undefined;
        for (const ev of events) {
          if (ev.type === 'remote.terminated') terminated = true;
          const next = applyCallEvent(book, ev);
          book = next.book;
          effects.push(...next.effects);
          for (const e of next.effects) if (e.kind === 'deadline' && e.localId === localId) armed = e.at;
          // expect() only on a mismatch: 10 000 runs × every step.
          if (armed !== deadlineOf(book.calls[localId])) expect(armed).toBe(deadlineOf(book.calls[localId]));
          for (const call of next.changed) {
            if (terminated || ended) expect(call.phase).not.toBe('ringing');
            if (call.phase === 'ended') ended = true;
          }
          // Once ended, a call stays ended.
          if (ended) expect(book.calls[localId]?.phase).toBe('ended');
        }

        expect(summary(book.calls[localId])).toBe(summary(reference.book.calls[localId]));
        // The same claims and requests, and the same ends owed after a crash (the crash-recovery file).
        expect(requests(effects)).toEqual(requests(reference.effects));
        expect(owedOnCrash(book)).toEqual(owedOnCrash(reference.book));
        // Nothing is asked of the gateway for a call the gateway itself ended or is still placing.
        expect(effects.filter((e) => e.kind === 'end' || e.kind === 'accept')).toEqual([]);
      }),
      { numRuns: 10_000 },
    );
  });

  it('the stories themselves end as a person would expect', () => {
    const outcomes = STORIES.map((story) => `${story.name}: ${summary(run(ordered(story)).book.calls[localIdOf(story)])}`);
    expect(outcomes).toEqual([
      'incoming, nobody answers: ended:missed after 0s',
      'incoming, a colleague answers: ended:answered_elsewhere after 0s',
      'incoming, a colleague answers (own id known): ended:answered_elsewhere after 0s',
      'incoming, it fails: ended:failed:138021 after 0s',
      'incoming, still ringing: ringing',
      'outgoing, answered and ended by the customer: ended:completed:customer after 41s',
      'outgoing, rejected: ended:rejected after 0s',
      'outgoing, not answered: ended:no_answer after 0s',
      'outgoing, failed: ended:failed:138021 after 0s',
      'outgoing, still ringing: remote_ringing',
      'outgoing, answered, talking: connecting with answer',
    ]);
  });
});

import { describe, expect, it } from 'vitest';
import { historyEntryFor, historyEntrySchema, type HistoryEntry } from '../../../shared/history';
import {
  answer,
  ASKED_LOCAL,
  asEnded,
  CALLEE,
  CAROL,
  CUSTOMER,
  dial,
  endedCalls,
  hangup,
  IN_ID,
  IN_LOCAL,
  incoming,
  OUT_ID,
  OUT_LOCAL,
  run,
  T0,
} from './call-fixtures';

const ended = endedCalls();

describe('historyEntryFor', () => {
  // Every end kind, with the outcome, the failure detail and the talk time the history shows.
  const expected: Record<string, Omit<HistoryEntry, 'startedAt'>> = {
    'incoming.completed.agent': {
      localId: IN_LOCAL,
      callId: IN_ID,
      direction: 'incoming',
      number: CUSTOMER.number,
      name: CUSTOMER.name,
      outcome: 'completed',
      endedAt: T0 + 35_000,
      durationSec: 30,
    },
    'incoming.completed.customer': {
      localId: IN_LOCAL,
      callId: IN_ID,
      direction: 'incoming',
      number: CUSTOMER.number,
      name: CUSTOMER.name,
      outcome: 'completed',
      endedAt: T0 + 65_000,
      durationSec: 60,
    },
    'incoming.declined': {
      localId: IN_LOCAL,
      callId: IN_ID,
      direction: 'incoming',
      number: CUSTOMER.number,
      name: CUSTOMER.name,
      outcome: 'declined',
      endedAt: T0 + 4_000,
      durationSec: 0,
    },
    'incoming.missed': {
      localId: IN_LOCAL,
      callId: IN_ID,
      direction: 'incoming',
      number: CUSTOMER.number,
      name: CUSTOMER.name,
      outcome: 'missed',
      endedAt: T0 + 58_000,
      durationSec: 0,
    },
    'incoming.failed': {
      localId: IN_LOCAL,
      callId: IN_ID,
      direction: 'incoming',
      number: CUSTOMER.number,
      name: CUSTOMER.name,
      outcome: 'failed',
      failureCode: 'ice_failed',
      failureMessage: 'The audio connection failed',
      endedAt: T0 + 20_000,
      durationSec: 0,
    },
    'incoming.answered_elsewhere': {
      localId: IN_LOCAL,
      callId: IN_ID,
      direction: 'incoming',
      number: CUSTOMER.number,
      name: CUSTOMER.name,
      outcome: 'answered_elsewhere',
      endedAt: T0 + 6_000,
      durationSec: 0,
    },
    // Handed on after 55 s of talk: who has the customer now.
    'incoming.transferred': {
      localId: IN_LOCAL,
      callId: IN_ID,
      direction: 'incoming',
      number: CUSTOMER.number,
      name: CUSTOMER.name,
      outcome: 'transferred',
      transferredTo: CAROL.name,
      endedAt: T0 + 60_000,
      durationSec: 55,
    },
    // A colleague's consult, under the transfer's own local id; its talk time is this agent's part only.
    'incoming.consult_ended': {
      localId: ASKED_LOCAL,
      callId: IN_ID,
      direction: 'incoming',
      number: CUSTOMER.number,
      name: CUSTOMER.name,
      outcome: 'consult_ended',
      endedAt: T0 + 30_000,
      durationSec: 26,
    },
    'outgoing.completed.agent': {
      localId: OUT_LOCAL,
      callId: OUT_ID,
      direction: 'outgoing',
      number: CALLEE.number,
      name: CALLEE.name,
      outcome: 'completed',
      endedAt: T0 + 39_000,
      durationSec: 30,
    },
    'outgoing.completed.customer': {
      localId: OUT_LOCAL,
      callId: OUT_ID,
      direction: 'outgoing',
      number: CALLEE.number,
      name: CALLEE.name,
      outcome: 'completed',
      endedAt: T0 + 70_000,
      durationSec: 61,
    },
    'outgoing.cancelled': {
      localId: OUT_LOCAL,
      callId: OUT_ID,
      direction: 'outgoing',
      number: CALLEE.number,
      name: CALLEE.name,
      outcome: 'cancelled',
      endedAt: T0 + 4_000,
      durationSec: 0,
    },
    'outgoing.no_answer': {
      localId: OUT_LOCAL,
      callId: OUT_ID,
      direction: 'outgoing',
      number: CALLEE.number,
      name: CALLEE.name,
      outcome: 'no_answer',
      endedAt: T0 + 61_000,
      durationSec: 0,
    },
    'outgoing.rejected': {
      localId: OUT_LOCAL,
      callId: OUT_ID,
      direction: 'outgoing',
      number: CALLEE.number,
      name: CALLEE.name,
      outcome: 'rejected',
      endedAt: T0 + 5_000,
      durationSec: 0,
    },
    // The initiate request failed: the gateway never gave the call an id.
    'outgoing.failed': {
      localId: OUT_LOCAL,
      direction: 'outgoing',
      number: CALLEE.number,
      name: CALLEE.name,
      outcome: 'failed',
      failureCode: '138006',
      failureMessage: 'The customer has not allowed business calls',
      endedAt: T0 + 700,
      durationSec: 0,
    },
  };

  it('has an expectation for every ended fixture', () => {
    expect(Object.keys(expected).sort()).toEqual(Object.keys(ended).sort());
  });

  it.each(Object.keys(expected))('%s', (name) => {
    const call = ended[name]!;
    // Exactly these members: no undefined ones, no failure detail unless it failed.
    expect(historyEntryFor(call)).toStrictEqual({ ...expected[name], startedAt: T0 });
  });

  it('takes the start from when the call began ringing or dialing', () => {
    const lateDial = asEnded(run([dial(T0 + 9_000), hangup(T0 + 9_500, OUT_LOCAL)]));
    expect(historyEntryFor(lateDial)).toMatchObject({ startedAt: T0 + 9_000, endedAt: T0 + 9_500 });
  });

  it('keeps a business-scoped user id for a caller without a number, and leaves out what is unknown', () => {
    const call = asEnded(run([incoming(T0, { peer: { userId: 'BSUID.7781' } }), answer(T0 + 1_000), hangup(T0 + 2_000)]));
    const entry = historyEntryFor(call);
    expect(entry).toMatchObject({ userId: 'BSUID.7781', outcome: 'completed' });
    expect(entry).not.toHaveProperty('number');
    expect(entry).not.toHaveProperty('name');
    expect(entry).not.toHaveProperty('failureCode');
    expect(entry).not.toHaveProperty('failureMessage');
  });
});

describe('historyEntrySchema', () => {
  it('reads back every entry the history makes, a transfer’s and a consult’s included', () => {
    for (const call of Object.values(ended)) {
      const entry = historyEntryFor(call);
      expect(historyEntrySchema.safeParse(JSON.parse(JSON.stringify(entry)))).toEqual({ success: true, data: entry });
    }
  });
});

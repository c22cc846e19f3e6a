// A bridged call outlives the window that carried its audio (shared/calls/rejoin.ts): every row of
// the reducer's rejoin table, its deadline, the crash-recovery file's `restore`, and hold and
// transfer state kept through a rejoin. Direct calls end as they always did.
import { describe, expect, it } from 'vitest';
import {
  applyCallEvent,
  deadlineOf,
  emptyBook,
  owedOnCrash,
  publicCall,
  reduceCall,
  REJOIN_GRACE_MS,
  REJOIN_REFUSALS,
  REJOIN_WINDOW_MS,
  rejoinDeadline,
  transferableCall,
  transferToActOn,
  TRANSFER_REFUSALS,
  type CallBook,
  type CallEffect,
  type CallEvent,
  type CallRecord,
  type LocalError,
  type RestorableCall,
} from '../../../shared/call-state';
import { relayEventSchema } from '../../../shared/events';
import { historyEntryFor } from '../../../shared/history';
import { english, text, type RuleText } from '../../../shared/i18n/text';
import {
  answer,
  ANSWER_SDP,
  asEnded,
  askedStates,
  bridgeFailed,
  bridgedStates,
  CAROL,
  claimResult,
  deadline,
  dial,
  hangup,
  hold,
  IN_ID,
  IN_LOCAL,
  incoming,
  incomingStates,
  initiateOk,
  leftover,
  mediaConnected,
  mediaFailed,
  OFFER_SDP,
  OUT_ID,
  OUT_LOCAL,
  outgoingStates,
  OWN_TRANSFER,
  ownStates,
  REJOIN_LEG,
  REJOIN_REFUSED,
  REJOIN_REFUSALS_SEEN,
  REJOIN_REQUEST,
  REJOIN_SDP_REFUSED,
  rejoinAnswer,
  rejoinAnswered,
  rejoinFailed,
  rejoinOffer,
  rejoinStates,
  resume,
  run,
  T0,
  transferUpdate,
  windowGone,
} from './call-fixtures';

/** When the events of a case happen: after every fixture state was reached. */
const AT = T0 + 100_000;
const COMMAND = 'rq-command';

const bridged = bridgedStates();
const rejoin = rejoinStates();
/** The rejoin's deadline for a call whose window went at `since`: the relay's window, and 5 s for its word. */
const notBackAt = (since: number): number => since + REJOIN_WINDOW_MS + 5_000;
const WENT_AT = T0 + 25_000;

const step = (call: CallRecord | undefined, ev: CallEvent) => reduceCall(call, ev);
const replyOf = (requestId: string, result: { ok: true; value: unknown } | { ok: false; error: unknown }): CallEffect => ({ kind: 'reply', requestId, result } as CallEffect);
const refusal = (said: RuleText) => ({ ok: false as const, error: { code: 'invalid_state', message: english(said), text: said } });
const without = <T extends object, K extends keyof T>(value: T, ...keys: K[]): Omit<T, K> => {
  const copy = { ...value };
  for (const key of keys) delete copy[key];
  return copy;
};

function book(...calls: CallRecord[]): CallBook {
  const byCallId: Record<string, string> = {};
  for (const call of calls) if (call.callId !== undefined) byCallId[call.callId] = call.localId;
  return { ...emptyBook(), calls: Object.fromEntries(calls.map((c) => [c.localId, c])), byCallId };
}

describe('a bridged call whose window goes (local.window_gone)', () => {
  const own = ownStates('consult');
  const asked = askedStates('consult');
  const rejoinable: Record<string, CallRecord> = {
    connecting: bridged.connecting,
    active: bridged.active,
    held: bridged.held,
    outgoing: bridged.outgoing,
    'its own consult': own.consulting,
    'a three-way call': own.joined,
    'a colleague’s consult it took': asked.active,
  };

  it.each(Object.keys(rejoinable))('%s: asks the relay for a new leg, the call kept as it was, rejoining from now', (name) => {
    const call = rejoinable[name]!;
    const { state, effects } = step(call, windowGone(AT, call.localId));
    expect(state).toEqual({ ...call, rejoin: { since: AT }, open: { waiting: 'rejoin_offer' } });
    // The window sees it rejoining; what main waits for is its own.
    expect(publicCall(state!)).toEqual({ ...call, rejoin: { since: AT } });
    expect(effects).toEqual([
      { kind: 'rejoin', localId: call.localId, callId: call.callId },
      { kind: 'deadline', localId: call.localId, at: notBackAt(AT) },
    ]);
  });

  it('gone again before the offer is answered: nothing changes, the next window answers the same offer', () => {
    for (const call of [rejoin.asking, rejoin.offered]) expect(step(call, windowGone(AT))).toEqual({ state: call, effects: [] });
  });

  it('gone after its window answered the offer: a fresh leg is asked for, the absence counted from when the media first went', () => {
    const { state, effects } = step(rejoin.answered, windowGone(AT));
    expect(state).toEqual({ ...bridged.active, rejoin: { since: WENT_AT }, open: { waiting: 'rejoin_offer' } });
    expect(effects).toEqual([{ kind: 'rejoin', localId: IN_LOCAL, callId: IN_ID }]); // the deadline stays as it was
  });

  it('gone while its answer is with the relay: a fresh leg is asked for, and the waiting rejoinCall told its offer is closed', () => {
    const { state, effects } = step(rejoin.answering, windowGone(AT));
    expect(state).toEqual({ ...bridged.active, rejoin: { since: WENT_AT }, open: { waiting: 'rejoin_offer' } });
    expect(effects).toEqual([{ kind: 'rejoin', localId: IN_LOCAL, callId: IN_ID }, replyOf(REJOIN_REQUEST, refusal(REJOIN_REFUSALS.offerClosed))]);
    // The answer's late word changes nothing any more.
    expect(step(state, rejoinAnswered(AT + 10, { kind: 'answered' }))).toEqual({ state, effects: [] });
  });

  it('a direct call, and a bridged one not answered or placed yet, end exactly as when their media failed', () => {
    const i = incomingStates();
    const o = outgoingStates();
    const bridgedRinging = run([incoming(T0, { bridged: true })]);
    const bridgedAnswering = run([answer(T0 + 3_000)], bridgedRinging);
    const bridgedCalling = run([dial(T0), { ...initiateOk(T0 + 1_000), bridged: true }]);
    const error: LocalError = { code: 'media_failed', message: 'The window stopped unexpectedly during the call, and its audio ended with it', text: text('callMedia.windowCrashed') };
    const calls = [i.ringing, i.answering, i.accepting, i.connecting, i.active, i.held, i.ended, o.dialing, o.calling, o.remote_ringing, o.connecting, o.active, o.held, bridgedRinging, bridgedAnswering, bridgedCalling];
    for (const call of calls) {
      const gone = step(call, windowGone(AT, call.localId, error));
      expect(gone).toEqual(step(call, { type: 'local.media_failed', at: AT, localId: call.localId, error }));
      expect(gone.state?.phase === 'active' || gone.state?.phase === 'connecting' ? gone.state.rejoin : undefined).toBeUndefined();
    }
    // An answered direct call ends failed with the window's reason, and the gateway hears terminate.
    expect(asEnded(step(i.active, windowGone(AT, IN_LOCAL, error)).state).end).toEqual({ kind: 'failed', ...error });
  });

  it('concerns no call, or an ended one: nothing', () => {
    expect(step(undefined, windowGone(AT))).toEqual({ state: undefined, effects: [] });
    const ended = run([hangup(T0 + 30_000)], bridged.active);
    expect(step(ended, windowGone(AT))).toEqual({ state: ended, effects: [] });
  });
});

describe('a bridged call whose media fails (local.media_failed)', () => {
  it('active: its network changed; a new leg, as after a reload', () => {
    expect(step(bridged.active, mediaFailed(AT))).toEqual(step(bridged.active, windowGone(AT)));
    expect(step(bridged.held, mediaFailed(AT)).state).toMatchObject({ heldSince: T0 + 20_000, rejoin: { since: AT } });
  });

  it('connecting: its media never worked, so it ends with the honest reason as before', () => {
    const { state, effects } = step(bridged.connecting, mediaFailed(AT));
    expect(asEnded(state).end).toEqual({ kind: 'failed', code: 'ice_failed', message: 'The audio connection failed' });
    expect(effects).toEqual([{ kind: 'end', localId: IN_LOCAL, callId: IN_ID, action: 'terminate' }]);
  });

  it('rejoining: the new leg broke once answered (a fresh one); before that, the old leg’s failure changes nothing', () => {
    for (const call of [rejoin.asking, rejoin.offered]) expect(step(call, mediaFailed(AT))).toEqual({ state: call, effects: [] });
    expect(step(rejoin.answered, mediaFailed(AT))).toEqual(step(rejoin.answered, windowGone(AT)));
    // Reloaded while connecting, then the new leg's ICE failed: a fresh leg, not the connecting rule.
    const connecting = rejoinStates(bridged.connecting);
    expect(step(connecting.answered, mediaFailed(AT)).state).toEqual({ ...bridged.connecting, rejoin: { since: WENT_AT }, open: { waiting: 'rejoin_offer' } });
  });
});

describe('the relay’s offer of a new leg (local.rejoin_offer)', () => {
  it('is kept on the call for the next window to answer; nothing is waited for any more', () => {
    const { state, effects } = step(rejoin.asking, rejoinOffer(AT));
    expect(state).toEqual({ ...bridged.active, rejoin: { since: WENT_AT, legId: REJOIN_LEG, offerSdp: OFFER_SDP } });
    expect(state).not.toHaveProperty('open');
    expect(effects).toEqual([]);
  });

  it('changes nothing when not asked for: repeated, another offer after it, or on a call not rejoining', () => {
    for (const call of [rejoin.offered, rejoin.answering, rejoin.answered, bridged.active, incomingStates().active]) {
      expect(step(call, rejoinOffer(AT))).toEqual({ state: call, effects: [] });
      expect(step(call, rejoinOffer(AT, IN_LOCAL, 'leg-other'))).toEqual({ state: call, effects: [] });
    }
  });
});

describe('the relay would not offer a leg (local.rejoin_failed)', () => {
  it('403, not a member: the call went on without this agent; it ends here and nothing is owed', () => {
    const { state, effects } = step(rejoin.asking, rejoinFailed(AT, 'not_member'));
    const said = text('calls.rejoinNotMember');
    expect(asEnded(state).end).toEqual({ kind: 'failed', code: 'rejoin_not_member', message: 'The call went on without you', text: said });
    expect(state).not.toHaveProperty('open');
    expect(effects).toEqual([{ kind: 'deadline', localId: IN_LOCAL, at: undefined }]);
    expect(owedOnCrash(applyCallEvent(book(rejoin.asking), rejoinFailed(AT, 'not_member')).book)).toEqual([]);
    // Its talk time is this agent's, up to now.
    expect(asEnded(state)).toMatchObject({ connectedAt: T0 + 5_000, durationSec: 95, endedAt: AT, bridged: true });
  });

  it('410: the relay gave it up for this agent not being back in time; it is let go, its hang-up leaving through the relay (which says whether the gateway still needs it)', () => {
    const { state, effects } = step(rejoin.asking, rejoinFailed(AT, 'ended'));
    const said = text('calls.agentNotBack', { seconds: 60 });
    expect(asEnded(state).end).toEqual({ kind: 'failed', code: 'agent_not_back', message: 'You did not come back to the call within 60 s, so it was ended', text: said });
    expect(state?.open).toEqual({ waiting: 'confirmation', owed: 'terminate' });
    expect(effects).toEqual([
      { kind: 'end', localId: IN_LOCAL, callId: IN_ID, action: 'terminate' },
      { kind: 'deadline', localId: IN_LOCAL, at: undefined },
    ]);
  });

  it('404 or 503 within the window: the agent lets it go with the relay’s word, and the gateway hears terminate', () => {
    const { state, effects } = step(rejoin.asking, rejoinFailed(WENT_AT + 1_000, 'gone'));
    expect(asEnded(state).end).toEqual({ kind: 'failed', ...REJOIN_REFUSALS_SEEN.gone });
    expect(state?.open).toEqual({ waiting: 'confirmation', owed: 'terminate' });
    expect(effects).toEqual([
      { kind: 'end', localId: IN_LOCAL, callId: IN_ID, action: 'terminate' },
      { kind: 'deadline', localId: IN_LOCAL, at: undefined },
    ]);
  });

  it('the window over with the relay never reached: this agent was not back in time, and the gateway hears terminate', () => {
    const atEnd = step(rejoin.asking, rejoinFailed(WENT_AT + 60_000, 'gone'));
    expect(asEnded(atEnd.state).end).toMatchObject({ kind: 'failed', code: 'agent_not_back' });
    expect(atEnd.state?.open).toEqual({ waiting: 'confirmation', owed: 'terminate' });
    expect(asEnded(step(rejoin.asking, rejoinFailed(WENT_AT + 59_999, 'gone')).state).end).toMatchObject({ kind: 'failed', code: REJOIN_REFUSALS_SEEN.gone.code });
  });

  it('changes nothing unless a leg was asked for', () => {
    for (const call of [rejoin.offered, rejoin.answering, rejoin.answered, bridged.active]) {
      for (const verdict of ['not_member', 'ended', 'gone'] as const) expect(step(call, rejoinFailed(AT, verdict))).toEqual({ state: call, effects: [] });
    }
  });
});

describe('a window’s answer to the offer (local.rejoin_answer, the rejoinCall command)', () => {
  it('goes to the relay; the command waits for its word, and the window sees nothing change yet', () => {
    const { state, effects } = step(rejoin.offered, rejoinAnswer(AT, IN_LOCAL, REJOIN_LEG, COMMAND));
    expect(state).toEqual({ ...rejoin.offered, open: { waiting: 'rejoin_answer', legId: REJOIN_LEG, replyTo: COMMAND } });
    expect(publicCall(state!)).toEqual(publicCall(rejoin.offered));
    expect(effects).toEqual([{ kind: 'rejoin_answer', localId: IN_LOCAL, callId: IN_ID, legId: REJOIN_LEG, sdp: ANSWER_SDP }]);
  });

  it('the first window to answer takes it: another answer, one to a replaced offer, or one before any offer is refused', () => {
    const refused = { effects: [replyOf(COMMAND, refusal(REJOIN_REFUSALS.offerClosed))] };
    for (const call of [rejoin.answering, rejoin.answered, rejoin.asking, bridged.active, incomingStates().active]) {
      expect(step(call, rejoinAnswer(AT, IN_LOCAL, REJOIN_LEG, COMMAND))).toEqual({ state: call, ...refused });
    }
    expect(step(rejoin.offered, rejoinAnswer(AT, IN_LOCAL, 'leg-earlier', COMMAND))).toEqual({ state: rejoin.offered, ...refused });
    expect(english(REJOIN_REFUSALS.offerClosed)).toBe('This offer to rejoin the call is no longer open: another window took it, or a newer one replaced it');
    expect(step(undefined, rejoinAnswer(AT, IN_LOCAL, REJOIN_LEG, COMMAND)).effects).toEqual([
      replyOf(COMMAND, { ok: false, error: { code: 'not_found', message: `There is no call ${IN_LOCAL}`, text: text('calls.noSuchCall', { localId: IN_LOCAL }) } }),
    ]);
  });
});

describe('the relay’s word on the answer (local.rejoin_answered)', () => {
  it('applied: the window may connect its leg; the command is answered', () => {
    const { state, effects } = step(rejoin.answering, rejoinAnswered(AT, { kind: 'answered' }));
    expect(state).toEqual({ ...bridged.active, rejoin: { since: WENT_AT, legId: REJOIN_LEG, offerSdp: OFFER_SDP, answered: true } });
    expect(effects).toEqual([replyOf(REJOIN_REQUEST, { ok: true, value: { localId: IN_LOCAL, callId: IN_ID } })]);
  });

  it('its SDP refused (400): the command hears why, and a fresh leg is asked for, counted from when the media went', () => {
    const { state, effects } = step(rejoin.answering, rejoinAnswered(AT, { kind: 'sdp_refused', error: REJOIN_SDP_REFUSED }));
    expect(state).toEqual({ ...bridged.active, rejoin: { since: WENT_AT }, open: { waiting: 'rejoin_offer' } });
    expect(effects).toEqual([{ kind: 'rejoin', localId: IN_LOCAL, callId: IN_ID }, replyOf(REJOIN_REQUEST, { ok: false, error: REJOIN_SDP_REFUSED })]);
  });

  it('refused otherwise (403, 409): the command hears why; the call waits for the relay’s word as it was', () => {
    const { state, effects } = step(rejoin.answering, rejoinAnswered(AT, { kind: 'refused', error: REJOIN_REFUSED }));
    expect(state).toEqual(rejoin.offered);
    expect(effects).toEqual([replyOf(REJOIN_REQUEST, { ok: false, error: REJOIN_REFUSED })]);
  });

  it('changes nothing for another leg, or a call not answering', () => {
    expect(step(rejoin.answering, rejoinAnswered(AT, { kind: 'answered' }, IN_LOCAL, 'leg-other'))).toEqual({ state: rejoin.answering, effects: [] });
    for (const call of [rejoin.asking, rejoin.offered, rejoin.answered, bridged.active]) expect(step(call, rejoinAnswered(AT, { kind: 'answered' }))).toEqual({ state: call, effects: [] });
  });
});

describe('connected again (local.media_connected)', () => {
  it('on the answered leg: the call is as it was before its window went, its deadline gone', () => {
    const { state, effects } = step(rejoin.answered, mediaConnected(AT));
    expect(state).toEqual(bridged.active);
    expect(effects).toEqual([{ kind: 'deadline', localId: IN_LOCAL, at: undefined }]);
  });

  it('a call reloaded while connecting becomes active then', () => {
    const connecting = rejoinStates(bridged.connecting);
    expect(connecting.back).toEqual({ ...bridged.connecting, phase: 'active', connectedAt: T0 + 26_800 });
  });

  it('before the new leg is answered: the old leg’s word, nothing changes', () => {
    for (const call of [rejoin.asking, rejoin.offered, rejoin.answering]) expect(step(call, mediaConnected(AT))).toEqual({ state: call, effects: [] });
  });
});

describe('not back in time (local.deadline)', () => {
  it('deadlineOf a rejoining call: when its media went, the relay’s window and 5 s for the relay’s word', () => {
    expect(REJOIN_WINDOW_MS).toBe(60_000);
    expect(REJOIN_GRACE_MS).toBe(5_000);
    for (const call of [rejoin.asking, rejoin.offered, rejoin.answering, rejoin.answered]) expect(deadlineOf(call)).toBe(notBackAt(WENT_AT));
    expect(rejoinDeadline({ since: WENT_AT })).toBe(notBackAt(WENT_AT));
    expect(deadlineOf(rejoinStates(bridged.connecting).asking)).toBe(notBackAt(WENT_AT));
    expect(deadlineOf(bridged.active)).toBeUndefined();
    expect(deadlineOf(rejoin.back)).toBeUndefined();
  });

  it('the relay never said: the agent lets the call go, and the gateway hears terminate', () => {
    const { state, effects } = step(rejoin.offered, deadline(notBackAt(WENT_AT)));
    expect(asEnded(state).end).toEqual({ kind: 'failed', code: 'agent_not_back', message: 'You did not come back to the call within 60 s, so it was ended', text: text('calls.agentNotBack', { seconds: 60 }) });
    expect(effects).toEqual([
      { kind: 'end', localId: IN_LOCAL, callId: IN_ID, action: 'terminate' },
      { kind: 'deadline', localId: IN_LOCAL, at: undefined },
    ]);
  });

  it('a rejoinCall still waiting hears its offer is closed', () => {
    expect(step(rejoin.answering, deadline(notBackAt(WENT_AT))).effects).toEqual([
      { kind: 'end', localId: IN_LOCAL, callId: IN_ID, action: 'terminate' },
      replyOf(REJOIN_REQUEST, refusal(REJOIN_REFUSALS.offerClosed)),
      { kind: 'deadline', localId: IN_LOCAL, at: undefined },
    ]);
  });

  it('this agent’s transfer ringing with an earlier deadline: that one comes first, then the rejoin’s', () => {
    const ringing = rejoinStates(ownStates('consult').ringing).offered; // rings until T0 + 60 s; the rejoin gives up at T0 + 90 s
    expect(deadlineOf(ringing)).toBe(T0 + 60_000);
    const { state, effects } = step(ringing, deadline(T0 + 60_000));
    expect(state).toMatchObject({ phase: 'active', transfer: { state: 'not_answered' }, rejoin: { since: WENT_AT, legId: REJOIN_LEG } });
    expect(effects).toEqual([{ kind: 'deadline', localId: IN_LOCAL, at: notBackAt(WENT_AT) }]);
    expect(asEnded(step(state, deadline(notBackAt(WENT_AT))).state).end).toMatchObject({ code: 'agent_not_back' });
  });

  it('the rejoin’s deadline first, while a transfer this agent started rings on', () => {
    const away = run([windowGone(T0 + 6_000)], bridged.active);
    const ringing = run([transferUpdate(T0 + 40_000, 'ringing', { transferId: OWN_TRANSFER, colleague: CAROL })], away); // rings until T0 + 80 s
    expect(deadlineOf(ringing)).toBe(notBackAt(T0 + 6_000));
    expect(asEnded(step(ringing, deadline(notBackAt(T0 + 6_000))).state).end).toMatchObject({ code: 'agent_not_back' });
  });
});

describe('the relay let this agent go (remote.bridge_failed agent_not_back)', () => {
  const notBack = (o: Partial<Extract<CallEvent, { type: 'remote.bridge_failed' }>> = {}) => ({ ...bridgeFailed(AT, IN_ID, 'agent_not_back'), ...o });

  it('the call goes on with colleagues: over here, nothing owed', () => {
    const { state, effects } = step(rejoin.offered, notBack({ goesOn: true, awaySec: 3 }));
    expect(asEnded(state).end).toEqual({ kind: 'failed', code: 'agent_not_back', message: 'You did not come back to the call within 3 s, so it was ended', text: text('calls.agentNotBack', { seconds: 3 }) });
    expect(state).not.toHaveProperty('open');
    expect(effects).toEqual([{ kind: 'deadline', localId: IN_LOCAL, at: undefined }]);
  });

  it('the customer was alone: the agent lets it go, and the gateway hears terminate (refused harmlessly if the relay ended it)', () => {
    const { state, effects } = step(rejoin.offered, notBack({ awaySec: 60 }));
    expect(asEnded(state).end).toMatchObject({ code: 'agent_not_back', message: 'You did not come back to the call within 60 s, so it was ended' });
    expect(effects).toEqual([
      { kind: 'end', localId: IN_LOCAL, callId: IN_ID, action: 'terminate' },
      { kind: 'deadline', localId: IN_LOCAL, at: undefined },
    ]);
  });

  it('also for a call this app did not know was away (its window still open, its leg silent): the relay’s window, or 60 s when it said none', () => {
    expect(step(bridged.active, notBack({ goesOn: true })).state).toMatchObject({ phase: 'ended', end: { code: 'agent_not_back', text: text('calls.agentNotBack', { seconds: 60 }) } });
    expect(step(bridged.active, notBack()).effects).toEqual([{ kind: 'end', localId: IN_LOCAL, callId: IN_ID, action: 'terminate' }]);
  });

  it('is a relay event the app reads, with goesOn and awaySec', () => {
    const event = { type: 'call.bridge_failed', callId: IN_ID, reason: 'agent_not_back', goesOn: true, awaySec: 3, timestamp: AT };
    expect(relayEventSchema.parse(event)).toEqual(event);
    expect(relayEventSchema.safeParse({ ...event, goesOn: false }).success).toBe(false);
    expect(relayEventSchema.safeParse({ ...event, awaySec: -1 }).success).toBe(false);
  });
});

describe('hold, resume and transfers while the call rejoins', () => {
  const rejoiningNow = refusal(REJOIN_REFUSALS.rejoining);

  it('refuse hold and resume in the catalogue’s words; the customer hears the music meanwhile', () => {
    expect(english(REJOIN_REFUSALS.rejoining)).toBe('The call is rejoining: wait until it is connected again');
    for (const call of [rejoin.asking, rejoin.offered, rejoin.answered]) expect(step(call, hold(AT, IN_LOCAL, COMMAND))).toEqual({ state: call, effects: [replyOf(COMMAND, rejoiningNow)] });
    const held = rejoinStates(bridged.held);
    expect(step(held.offered, resume(AT, IN_LOCAL, COMMAND))).toEqual({ state: held.offered, effects: [replyOf(COMMAND, rejoiningNow)] });
  });

  it('refuse a transfer, a consult and the actions on one under way', () => {
    expect(transferableCall(rejoin.offered)).toEqual(rejoiningNow);
    const consulting = rejoinStates(ownStates('consult').consulting).offered;
    for (const action of ['cancel', 'complete', 'join'] as const) expect(transferToActOn(consulting, action)).toEqual(rejoiningNow);
    // Nothing under way is still the first thing said.
    expect(transferToActOn(rejoin.offered, 'cancel')).toEqual(refusal(TRANSFER_REFUSALS.none));
  });

  it('a call rejoining in hand cannot be held to take another into hand; one rejoining on hold is no obstacle', () => {
    const second = incoming(AT, { callId: OUT_ID });
    const inHand = applyCallEvent(applyCallEvent(book(rejoin.offered), second).book, answer(AT + 1_000, `in:${OUT_ID}`, COMMAND));
    expect(inHand.effects).toEqual([replyOf(COMMAND, rejoiningNow)]);
    const onHold = applyCallEvent(applyCallEvent(book(rejoinStates(bridged.held).offered), second).book, answer(AT + 1_000, `in:${OUT_ID}`, COMMAND));
    expect(onHold.effects).toContainEqual({ kind: 'claim', localId: `in:${OUT_ID}`, callId: OUT_ID });
  });

  it('hold, its time and a transfer under way are kept through a rejoin, untouched', () => {
    const own = ownStates('consult');
    const asked = askedStates('consult');
    for (const call of [bridged.active, bridged.held, bridged.outgoing, own.consulting, own.joined, own.notAnswered, asked.active, asked.joined]) {
      const story = rejoinStates(call);
      for (const during of [story.asking, story.offered, story.answering, story.answered]) expect(without(publicCall(during) as RestorableCall, 'rejoin')).toEqual(call);
      expect(story.back).toEqual(call);
    }
    // Resumed once back: the time on hold counts from the hold, through the rejoin.
    const back = rejoinStates(bridged.held).back;
    const resumed = step(back, resume(AT, IN_LOCAL, COMMAND));
    expect(resumed.state).toMatchObject({ phase: 'active', heldMs: AT - (T0 + 20_000) });
    expect(resumed.state).not.toHaveProperty('heldSince');
  });
});

describe('ended while a window’s answer is with the relay', () => {
  it('the waiting rejoinCall hears its offer is closed', () => {
    const { state, effects } = step(rejoin.answering, hangup(AT, IN_LOCAL, COMMAND));
    expect(asEnded(state).end).toEqual({ kind: 'completed', by: 'agent' });
    expect(effects).toEqual([
      replyOf(COMMAND, { ok: true, value: { localId: IN_LOCAL, callId: IN_ID } }),
      { kind: 'end', localId: IN_LOCAL, callId: IN_ID, action: 'terminate' },
      replyOf(REJOIN_REQUEST, refusal(REJOIN_REFUSALS.offerClosed)),
      { kind: 'deadline', localId: IN_LOCAL, at: undefined },
    ]);
  });
});

describe('a call a crash left rejoinable', () => {
  it('owedOnCrash: a bridged call this agent is in is kept to restore, as the window sees it without its rejoin; its terminate stays for an older app', () => {
    const restore = publicCall(bridged.active);
    expect(owedOnCrash(book(bridged.active))).toEqual([{ callId: IN_ID, action: 'terminate', restore }]);
    for (const call of [rejoin.asking, rejoin.offered, rejoin.answering, rejoin.answered]) expect(owedOnCrash(book(call))).toEqual([{ callId: IN_ID, action: 'terminate', restore }]);
    expect(owedOnCrash(book(bridged.held))).toEqual([{ callId: IN_ID, action: 'terminate', restore: publicCall(bridged.held) }]);
    expect(owedOnCrash(book(bridged.connecting))).toEqual([{ callId: IN_ID, action: 'terminate', restore: publicCall(bridged.connecting) }]);
    expect(owedOnCrash(book(bridged.outgoing))).toEqual([{ callId: OUT_ID, action: 'terminate', restore: publicCall(bridged.outgoing) }]);
  });

  it('owedOnCrash: no restore for a direct call, nor a bridged one still ringing, answering or dialing', () => {
    const i = incomingStates();
    expect(owedOnCrash(book(i.active))).toEqual([{ callId: IN_ID, action: 'terminate' }]);
    expect(owedOnCrash(book(run([incoming(T0, { bridged: true })])))).toEqual([{ callId: IN_ID, action: 'reject' }]);
    expect(owedOnCrash(book(run([incoming(T0, { bridged: true }), answer(T0 + 3_000), claimResult(T0 + 3_200, 'won')])))).toEqual([{ callId: IN_ID, action: 'terminate' }]);
    expect(owedOnCrash(book(run([dial(T0), { ...initiateOk(T0 + 1_000), bridged: true }])))).toEqual([{ callId: OUT_ID, action: 'terminate' }]);
    expect(owedOnCrash(book(asEnded(run([rejoinFailed(AT, 'not_member')], rejoin.asking))))).toEqual([]);
  });

  it('a leftover with restore is the call again, rejoining from now: it shows, and nothing is claimed or ended', () => {
    const restore = publicCall(bridged.held) as RestorableCall;
    const { book: after, changed, effects } = applyCallEvent(emptyBook(), leftover(AT, 'terminate', IN_ID, `left:${IN_ID}`, restore));
    const call = { ...restore, rejoin: { since: AT }, open: { waiting: 'rejoin_offer' } };
    expect(changed).toEqual([call]);
    expect(after.calls).toEqual({ [IN_LOCAL]: call });
    expect(after.byCallId).toEqual({ [IN_ID]: IN_LOCAL });
    expect(after.leftovers).toEqual({});
    expect(effects).toEqual([
      { kind: 'rejoin', localId: IN_LOCAL, callId: IN_ID },
      { kind: 'deadline', localId: IN_LOCAL, at: notBackAt(AT) },
    ]);
    // Then as any rejoin: offered, answered, connected: the call as it was, still on hold.
    const back = run([rejoinOffer(AT + 100), rejoinAnswer(AT + 2_000), rejoinAnswered(AT + 2_020, { kind: 'answered' }), mediaConnected(AT + 2_300)], after.calls[IN_LOCAL]);
    expect(back).toEqual(restore);
    // A call of this run: when it ends, it is in the history with what ended it.
    const ended = asEnded(run([rejoinFailed(AT + 100, 'ended')], after.calls[IN_LOCAL]));
    expect(historyEntryFor(ended)).toMatchObject({ localId: IN_LOCAL, outcome: 'failed' });
  });

  it('a restore that is not a bridged call in progress of that id, or a call already held here: the leftover as before', () => {
    const direct = publicCall(incomingStates().active) as RestorableCall;
    const other = { ...(publicCall(bridged.active) as RestorableCall), callId: OUT_ID };
    for (const restore of [direct, other]) {
      const { book: after, effects } = applyCallEvent(emptyBook(), leftover(AT, 'terminate', IN_ID, `left:${IN_ID}`, restore));
      expect(after.calls).toEqual({});
      expect(after.leftovers[IN_ID]).toMatchObject({ open: { waiting: 'claim', owed: 'terminate' } });
      expect(effects).toEqual([{ kind: 'claim', localId: `left:${IN_ID}`, callId: IN_ID }]);
    }
    const known = book(bridged.active);
    expect(applyCallEvent(known, leftover(AT, 'terminate', IN_ID, `left:${IN_ID}`, publicCall(bridged.active) as RestorableCall)).book).toBe(known);
  });

  it('the relay’s verdict on a restored call: not a member owes nothing; given up or gone, its hang-up is owed until the relay or the gateway answers', () => {
    const restored = applyCallEvent(emptyBook(), leftover(AT, 'terminate', IN_ID, `left:${IN_ID}`, publicCall(bridged.active) as RestorableCall)).book;
    const notMember = applyCallEvent(restored, rejoinFailed(AT + 500, 'not_member')).book;
    expect(notMember.calls[IN_LOCAL]?.phase).toBe('ended');
    expect(owedOnCrash(notMember)).toEqual([]);
    for (const verdict of ['ended', 'gone'] as const) {
      const after = applyCallEvent(restored, rejoinFailed(AT + 500, verdict)).book;
      expect(after.calls[IN_LOCAL]?.phase).toBe('ended');
      expect(owedOnCrash(after)).toEqual([{ callId: IN_ID, action: 'terminate' }]);
    }
  });
});

describe('every rejoin event is idempotent', () => {
  const cases: Array<[string, CallRecord, CallEvent]> = [
    ['window gone', bridged.active, windowGone(AT)],
    ['window gone after the answer', rejoin.answered, windowGone(AT)],
    ['media failed', bridged.active, mediaFailed(AT)],
    ['offer', rejoin.asking, rejoinOffer(AT)],
    ['not a member', rejoin.asking, rejoinFailed(AT, 'not_member')],
    ['ended', rejoin.asking, rejoinFailed(AT, 'ended')],
    ['gone', rejoin.asking, rejoinFailed(AT, 'gone')],
    ['answer', rejoin.offered, rejoinAnswer(AT, IN_LOCAL, REJOIN_LEG, COMMAND)],
    ['answered', rejoin.answering, rejoinAnswered(AT, { kind: 'answered' })],
    ['sdp refused', rejoin.answering, rejoinAnswered(AT, { kind: 'sdp_refused', error: REJOIN_SDP_REFUSED })],
    ['refused', rejoin.answering, rejoinAnswered(AT, { kind: 'refused', error: REJOIN_REFUSED })],
    ['connected', rejoin.answered, mediaConnected(AT)],
    ['not back', rejoin.offered, deadline(notBackAt(WENT_AT))],
    ['let go', rejoin.offered, bridgeFailed(AT, IN_ID, 'agent_not_back')],
  ];
  it.each(cases)('%s: the same event again leaves the very same book, and asks for nothing but a reply', (_name, call, ev) => {
    const start = book(call);
    const first = applyCallEvent(start, ev);
    expect(first.book).not.toBe(start);
    const again = applyCallEvent(first.book, ev);
    expect(again.book).toBe(first.book);
    expect(again.effects.filter((e) => e.kind !== 'reply')).toEqual([]);
  });
});

describe('outgoing calls', () => {
  it('rejoin as incoming ones do, under their own local id', () => {
    const out = rejoinStates(bridged.outgoing, OUT_LOCAL);
    expect(out.asking).toMatchObject({ localId: OUT_LOCAL, callId: OUT_ID, rejoin: { since: WENT_AT } });
    expect(step(bridged.outgoing, windowGone(AT, OUT_LOCAL)).effects[0]).toEqual({ kind: 'rejoin', localId: OUT_LOCAL, callId: OUT_ID });
    expect(out.back).toEqual(bridged.outgoing);
  });
});

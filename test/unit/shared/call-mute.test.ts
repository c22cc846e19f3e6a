// Mute is the call's (shared/calls/mute.ts): the agent's command sets `muted` on a live call, every
// later step of the call keeps it (the phases to active, a hold and its resume, a rejoin, a
// transfer), an ended call carries none, and the crash-recovery file's `restore` brings it back.
import { describe, expect, it } from 'vitest';
import { applyCallEvent, emptyBook, owedOnCrash, publicCall, reduceCall, type CallEvent, type CallRecord, type RestorableCall } from '../../../shared/call-state';
import { english, text } from '../../../shared/i18n/text';
import {
  acceptOk,
  answer,
  answered,
  bridgedStates,
  claimResult,
  hangup,
  hold,
  IN_ID,
  IN_LOCAL,
  incoming,
  incomingStates,
  leftover,
  mediaConnected,
  OUT_LOCAL,
  outgoingStates,
  ownStates,
  rejoinStates,
  resume,
  run,
  status,
  T0,
  initiateOk,
} from './call-fixtures';

const mute = (at: number, muted: boolean, localId = IN_LOCAL, requestId?: string): Extract<CallEvent, { type: 'local.mute' }> => ({
  type: 'local.mute',
  at,
  localId,
  muted,
  ...(requestId !== undefined ? { requestId } : {}),
});

describe('local.mute', () => {
  it('mutes a live call and answers its command; unmuted, the call has no `muted` at all', () => {
    const { active } = incomingStates();
    const muted = reduceCall(active, mute(T0 + 10_000, true, IN_LOCAL, 'rq-mute'));
    expect(muted.state).toEqual({ ...active, muted: true });
    expect(muted.effects).toEqual([{ kind: 'reply', requestId: 'rq-mute', result: { ok: true, value: { localId: IN_LOCAL, callId: IN_ID } } }]);

    const unmuted = reduceCall(muted.state, mute(T0 + 12_000, false, IN_LOCAL, 'rq-unmute'));
    expect(unmuted.state).toEqual(active);
    expect(unmuted.state).not.toHaveProperty('muted');
    expect(unmuted.effects).toEqual([{ kind: 'reply', requestId: 'rq-unmute', result: { ok: true, value: { localId: IN_LOCAL, callId: IN_ID } } }]);
  });

  it('asking for what the call is already changes nothing: the same call comes back, and the command is answered', () => {
    const { active } = incomingStates();
    const muted = run([mute(T0 + 10_000, true)], active);
    const book = { ...emptyBook(), calls: { [IN_LOCAL]: muted }, byCallId: { [IN_ID]: IN_LOCAL } };
    const again = applyCallEvent(book, mute(T0 + 11_000, true, IN_LOCAL, 'rq-again'));
    expect(again.book).toBe(book);
    expect(again.changed).toEqual([]);
    expect(again.effects).toEqual([{ kind: 'reply', requestId: 'rq-again', result: { ok: true, value: { localId: IN_LOCAL, callId: IN_ID } } }]);
    expect(reduceCall(active, mute(T0 + 11_000, false)).state).toBe(active);
  });

  it('an ended call cannot be muted; no call is not_found', () => {
    const { ended } = incomingStates();
    const over = reduceCall(ended, mute(T0 + 40_000, true, IN_LOCAL, 'rq-mute'));
    expect(over.state).toBe(ended);
    expect(over.effects).toEqual([{ kind: 'reply', requestId: 'rq-mute', result: { ok: false, error: { code: 'invalid_state', message: english(text('calls.endedNotMuted')), text: text('calls.endedNotMuted') } } }]);
    const none = applyCallEvent(emptyBook(), mute(T0, true, 'in:nobody', 'rq-none'));
    expect(none.effects).toMatchObject([{ kind: 'reply', requestId: 'rq-none', result: { ok: false, error: { code: 'not_found' } } }]);
  });

  it('a call muted while it is set up stays muted as it connects, incoming and outgoing', () => {
    const incomingCall = run([incoming(T0), answer(T0 + 3_000), mute(T0 + 3_100, true), claimResult(T0 + 3_200, 'won'), acceptOk(T0 + 4_000), mediaConnected(T0 + 5_000)]);
    expect(incomingCall).toMatchObject({ phase: 'active', muted: true });
    const { dialing } = outgoingStates();
    const outgoingCall = run(
      [mute(T0 + 100, true, OUT_LOCAL), initiateOk(T0 + 1_000), claimResult(T0 + 1_100, 'won', OUT_LOCAL), status(T0 + 2_000, 'RINGING'), answered(T0 + 8_000), mediaConnected(T0 + 9_000, OUT_LOCAL)],
      dialing,
    );
    expect(outgoingCall).toMatchObject({ phase: 'active', muted: true });
  });

  it('mute and hold are apart: a muted call is held and resumed muted, and a held call can be unmuted', () => {
    const { active } = incomingStates();
    const mutedHeld = run([mute(T0 + 10_000, true), hold(T0 + 12_000)], active);
    expect(mutedHeld).toMatchObject({ heldSince: T0 + 12_000, muted: true });
    expect(run([resume(T0 + 14_000)], mutedHeld)).toMatchObject({ phase: 'active', muted: true });
    const unmutedHeld = run([mute(T0 + 13_000, false)], mutedHeld);
    expect(unmutedHeld).toMatchObject({ heldSince: T0 + 12_000 });
    expect(unmutedHeld).not.toHaveProperty('muted');
  });

  it('an ended call carries no mute, whatever it was', () => {
    const { active } = incomingStates();
    const ended = run([mute(T0 + 10_000, true), hangup(T0 + 20_000)], active);
    expect(ended.phase).toBe('ended');
    expect(ended).not.toHaveProperty('muted');
  });

  it('a bridged call rejoining keeps its mute, through every step of the rejoin, and may be muted while it rejoins', () => {
    const muted = run([mute(T0 + 10_000, true)], bridgedStates().active);
    for (const step of Object.values(rejoinStates(muted))) expect(step).toMatchObject({ muted: true });
    const { asking } = rejoinStates(bridgedStates().active);
    expect(run([mute(T0 + 25_100, true)], asking)).toMatchObject({ rejoin: { since: T0 + 25_000 }, muted: true });
  });

  it('a consult this agent started and is ringing keeps the call\'s mute', () => {
    const consulting = run([mute(T0 + 22_000, true)], ownStates().ringing);
    expect(consulting).toMatchObject({ transfer: { state: 'ringing' }, muted: true });
  });

  it('after a crash: the crash-recovery file keeps the mute in `restore`, and the call comes back muted, rejoining', () => {
    const mutedCall: CallRecord = run([mute(T0 + 10_000, true)], bridgedStates().held);
    const book = { ...emptyBook(), calls: { [IN_LOCAL]: mutedCall }, byCallId: { [IN_ID]: IN_LOCAL } };
    const [owed] = owedOnCrash(book);
    expect(owed?.restore).toEqual(publicCall(mutedCall));
    expect(owed?.restore?.muted).toBe(true);

    const back = applyCallEvent(emptyBook(), leftover(T0 + 90_000, 'terminate', IN_ID, `left:${IN_ID}`, owed?.restore as RestorableCall));
    expect(back.changed.map(publicCall)).toEqual([{ ...publicCall(mutedCall), rejoin: { since: T0 + 90_000 } }]);
    expect(back.book.calls[IN_LOCAL]).toMatchObject({ muted: true, heldSince: T0 + 20_000 });
  });
});

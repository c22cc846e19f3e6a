// Who hears a bridged call besides its agents, in the call reducer (shared/calls/oversight.ts): the
// team's recording (`recording`, from call.recording) and the supervisors in it (`monitors`, from
// call.monitor). Every phase × both words; then what a word told again, out of order or for an
// ended call does; then the book: words that come before the call has its id wait for it.
import { describe, expect, it } from 'vitest';
import { applyCallEvent, emptyBook, reduceCall, type CallEvent, type CallRecord } from '../../../shared/call-state';
import { historyEntryFor } from '../../../shared/history';
import type { MonitorMode } from '../../../shared/supervision';
import {
  answered,
  askedStates,
  asEnded,
  bridgedStates,
  dial,
  endResult,
  hangup,
  hold,
  IN_ID,
  IN_LOCAL,
  incoming,
  incomingStates,
  initiateOk,
  mediaConnected,
  OUT_ID,
  OUT_LOCAL,
  outgoingStates,
  ownStates,
  rejoinStates,
  resume,
  run,
  T0,
  terminated,
  type Ev,
} from './call-fixtures';

const AT = T0 + 200_000;

const recordingWord = (at: number, recording: boolean, callId = IN_ID): Ev<'remote.recording'> => ({ type: 'remote.recording', at, callId, recording, timestamp: at - 50 });
const monitorWord = (at: number, supervisorId: string, name: string, mode: MonitorMode | 'left', callId = IN_ID): Ev<'remote.monitor'> => ({
  type: 'remote.monitor',
  at,
  callId,
  supervisorId,
  name,
  mode,
  timestamp: at - 50,
});

/** One step of one call alone in its book: its state after, and the effects it asked for. */
const step = (call: CallRecord, ev: CallEvent) => reduceCall(call, ev);

/** Every state a live call of each kind reaches, with the call id its events carry. */
function liveStates(): Array<[string, CallRecord, string]> {
  const i = incomingStates();
  const o = outgoingStates();
  const b = bridgedStates();
  const a = askedStates();
  const own = ownStates();
  const r = rejoinStates();
  return [
    ['incoming ringing', i.ringing, IN_ID],
    ['incoming answering', i.answering, IN_ID],
    ['incoming connecting', i.connecting, IN_ID],
    ['incoming active', i.active, IN_ID],
    ['incoming held', i.held, IN_ID],
    ['outgoing calling', o.calling, OUT_ID],
    ['outgoing remote_ringing', o.remote_ringing, OUT_ID],
    ['outgoing connecting', o.connecting, OUT_ID],
    ['outgoing active', o.active, OUT_ID],
    ['bridged connecting', b.connecting, IN_ID],
    ['bridged active', b.active, IN_ID],
    ['bridged held', b.held, IN_ID],
    ['bridged outgoing', b.outgoing, OUT_ID],
    ['a colleague’s consult ringing here', a.ringing, IN_ID],
    ['a colleague’s consult answered here', a.active, IN_ID],
    ['a three-way call', a.joined, IN_ID],
    ['this agent’s consult ringing a colleague', own.ringing, IN_ID],
    ['this agent’s consult, the two talking', own.consulting, IN_ID],
    ['rejoining, a new leg asked for', r.asking, IN_ID],
    ['rejoining, the new leg offered', r.offered, IN_ID],
    ['rejoining, the window’s answer with the relay', r.answering, IN_ID],
  ];
}

describe('the team’s recording of a call', () => {
  it.each(liveStates())('%s: records from the relay’s word on, and stops at its word, nothing else of the call changed, no effect asked', (_name, call, callId) => {
    const on = step(call, recordingWord(AT, true, callId));
    expect(on.effects).toEqual([]);
    expect(on.state).toEqual({ ...call, recording: true });
    const off = step(on.state!, recordingWord(AT + 1_000, false, callId));
    expect(off.effects).toEqual([]);
    expect(off.state).toEqual(call);
    expect(off.state).not.toHaveProperty('recording');
  });

  it('told again, changes nothing: the very same call comes back, recording or not', () => {
    const active = bridgedStates().active;
    const recording = run([recordingWord(AT, true)], active);
    expect(step(recording, recordingWord(AT + 10, true)).state).toBe(recording);
    expect(step(active, recordingWord(AT, false)).state).toBe(active);
  });

  it('stays through hold, resume and a rejoin, as the call’s other facts do', () => {
    const recording = run([recordingWord(AT, true)], bridgedStates().active);
    const held = run([hold(AT + 1_000)], recording);
    expect(held).toMatchObject({ recording: true, heldSince: AT + 1_000 });
    expect(run([resume(AT + 2_000)], held)).toMatchObject({ recording: true });
    expect(rejoinStates(recording).back).toMatchObject({ phase: 'active', recording: true });
  });

  it('ends with the call: the ended call and its recent-calls entry say nothing of it (the entry’s mark is main’s, team-recordings.ts)', () => {
    const recording = run([recordingWord(AT, true)], bridgedStates().active);
    const ended = asEnded(run([hangup(AT + 5_000), endResult(AT + 5_200, 'done')], recording));
    expect(ended).not.toHaveProperty('recording');
    expect(historyEntryFor(ended)).not.toHaveProperty('teamRecording');
    const byCustomer = asEnded(run([terminated(AT + 5_000, { durationSec: 30 })], recording));
    expect(byCustomer).not.toHaveProperty('recording');
  });

  it('is not told to an ended call: its tombstone stays as it ended', () => {
    const ended = incomingStates().ended;
    expect(step(ended, recordingWord(AT, true)).state).toBe(ended);
  });
});

describe('the supervisors in a call', () => {
  it.each(liveStates())('%s: joins, switches and leaves as the relay tells, no effect asked', (_name, call, callId) => {
    const whispering = step(call, monitorWord(AT, 'sam', 'Sam Supervisor', 'whisper', callId));
    expect(whispering.effects).toEqual([]);
    expect(whispering.state).toEqual({ ...call, monitors: [{ supervisorId: 'sam', name: 'Sam Supervisor', mode: 'whisper' }] });
    const barging = step(whispering.state!, monitorWord(AT + 1_000, 'sam', 'Sam Supervisor', 'barge', callId));
    expect(barging.state).toEqual({ ...call, monitors: [{ supervisorId: 'sam', name: 'Sam Supervisor', mode: 'barge' }] });
    const left = step(barging.state!, monitorWord(AT + 2_000, 'sam', 'Sam Supervisor', 'left', callId));
    expect(left.effects).toEqual([]);
    expect(left.state).toEqual(call);
    expect(left.state).not.toHaveProperty('monitors');
  });

  it('keeps one entry per supervisor, each where it joined: a switch replaces it in place, a leave removes it alone', () => {
    const active = bridgedStates().active;
    const two = run([monitorWord(AT, 'sam', 'Sam Supervisor', 'listen'), monitorWord(AT + 100, 'tess', 'Tess Lead', 'whisper')], active);
    expect(two.monitors).toEqual([
      { supervisorId: 'sam', name: 'Sam Supervisor', mode: 'listen' },
      { supervisorId: 'tess', name: 'Tess Lead', mode: 'whisper' },
    ]);
    const samBarges = run([monitorWord(AT + 200, 'sam', 'Sam Supervisor', 'barge')], two);
    expect(samBarges.monitors).toEqual([
      { supervisorId: 'sam', name: 'Sam Supervisor', mode: 'barge' },
      { supervisorId: 'tess', name: 'Tess Lead', mode: 'whisper' },
    ]);
    // A name the relay tells anew (the team's file renamed the supervisor) is the one shown.
    const renamed = run([monitorWord(AT + 250, 'tess', 'Tess Lead (QA)', 'whisper')], samBarges);
    expect(renamed.monitors?.[1]).toEqual({ supervisorId: 'tess', name: 'Tess Lead (QA)', mode: 'whisper' });
    const samLeft = run([monitorWord(AT + 300, 'sam', 'Sam Supervisor', 'left')], renamed);
    expect(samLeft.monitors).toEqual([{ supervisorId: 'tess', name: 'Tess Lead (QA)', mode: 'whisper' }]);
    expect(samLeft).toMatchObject({ phase: 'active', connectedAt: active.phase === 'active' ? active.connectedAt : -1 });
  });

  it('told again, changes nothing; a leave of a supervisor not in the call changes nothing', () => {
    const active = bridgedStates().active;
    const whispering = run([monitorWord(AT, 'sam', 'Sam Supervisor', 'whisper')], active);
    expect(step(whispering, monitorWord(AT + 10, 'sam', 'Sam Supervisor', 'whisper')).state).toBe(whispering);
    expect(step(whispering, monitorWord(AT + 10, 'tess', 'Tess Lead', 'left')).state).toBe(whispering);
    expect(step(active, monitorWord(AT, 'sam', 'Sam Supervisor', 'left')).state).toBe(active);
  });

  it('go with the call’s end, and are not told to an ended call', () => {
    const joined = run([monitorWord(AT, 'sam', 'Sam Supervisor', 'barge'), recordingWord(AT, true)], bridgedStates().active);
    const ended = asEnded(run([terminated(AT + 5_000, { durationSec: 40 })], joined));
    expect(ended).not.toHaveProperty('monitors');
    expect(ended).not.toHaveProperty('recording');
    expect(step(ended, monitorWord(AT + 6_000, 'sam', 'Sam Supervisor', 'left')).state).toBe(ended);
  });
});

describe('the book', () => {
  it('holds the words for a call whose id is not known yet, and gives them to it, in order, once its initiate names it', () => {
    let book = applyCallEvent(emptyBook(), dial(T0, OUT_LOCAL)).book;
    for (const ev of [recordingWord(T0 + 500, true, OUT_ID), recordingWord(T0 + 600, false, OUT_ID), recordingWord(T0 + 700, true, OUT_ID), monitorWord(T0 + 800, 'sam', 'Sam Supervisor', 'whisper', OUT_ID)]) {
      const change = applyCallEvent(book, ev);
      expect(change.changed).toEqual([]);
      book = change.book;
    }
    // Each word is its own (told at its own moment), not a repeat of another.
    expect(book.pending[OUT_ID]).toHaveLength(4);
    const named = applyCallEvent(book, { ...initiateOk(T0 + 1_000), bridged: true });
    expect(named.book.calls[OUT_LOCAL]).toMatchObject({ phase: 'calling', recording: true, monitors: [{ supervisorId: 'sam', mode: 'whisper' }] });
    expect(named.book.pending[OUT_ID]).toBeUndefined();
  });

  it('changes only the call of that id: another call of the agent’s stays as it was', () => {
    const book = applyCallEvent(applyCallEvent(emptyBook(), incoming(T0)).book, dial(T0 + 1, OUT_LOCAL)).book;
    const change = applyCallEvent(book, recordingWord(T0 + 10, true, IN_ID));
    expect(change.changed.map((c) => c.localId)).toEqual([IN_LOCAL]);
    expect(change.book.calls[OUT_LOCAL]).toBe(book.calls[OUT_LOCAL]);
    expect(change.effects).toEqual([]);
  });

  it('connects a dialled call’s media with what was told while it rang', () => {
    const calling = run([recordingWord(T0 + 1_500, true, OUT_ID)], outgoingStates().calling);
    expect(run([answered(T0 + 8_000), mediaConnected(T0 + 9_000, OUT_LOCAL)], calling)).toMatchObject({ phase: 'active', recording: true });
  });
});

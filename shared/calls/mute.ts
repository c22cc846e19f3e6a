// Mute: the agent's microphone on a call sends silence (the window's media, call-audio.ts). It is the
// call's, kept with it in the main process like its hold, so that every window of the agent shows
// it and a window made afresh opens its microphone muted: a reload, a second window, and the next
// run after a crash, which takes a bridged call up again with it (`restore`, rejoin.ts). The gateway
// and the relay know nothing of it. Kept across a hold, a rejoin and a transfer; an ended call
// carries none (endCall builds the ended call afresh).
import { text } from '../i18n/text';
import { errText, ok } from '../result';
import { noSuchCall, type Handler } from './steps';
import type { CallEvent } from './types';

/** Mutes or unmutes a live call's microphone; asking for what it is already is harmless. */
export const muteChanged: Handler<Extract<CallEvent, { type: 'local.mute' }>> = (ev, { call }) => {
  if (call === undefined) return { reply: noSuchCall(ev.localId) };
  if (call.phase === 'ended') return { reply: errText('invalid_state', text('calls.endedNotMuted')) };
  const reply = ok({ localId: call.localId, callId: call.callId ?? '' });
  if ((call.muted === true) === ev.muted) return { reply };
  if (ev.muted) return { call: { ...call, muted: true }, reply };
  const { muted: _unmuted, ...rest } = call;
  return { call: rest, reply };
};

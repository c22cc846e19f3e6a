// Who hears a bridged call besides its agents and its customer, as the relay tells the agents in it:
// the team's recording (`recording`, event call.recording, shared/bridge-recording.ts) and the
// supervisors who joined it (`monitors`, event call.monitor, shared/supervision.ts). The relay
// decides both; a call mirrors them while it is live, and an ended call keeps neither (endCall
// builds the ended call afresh): whether the call was recorded stays with its recent-calls entry.
//
// A word told again changes nothing (the same call object comes back), so a redelivery or a replay
// after a reconnect pushes nothing; a word for an ended call is dropped.
import type { LiveRecord } from './record';
import { NOTHING, type Handler, type Step } from './steps';
import type { CallEvent, CallMonitor } from './types';

/** The team's bridge records the call now, or no longer. */
export const recordingChanged: Handler<Extract<CallEvent, { type: 'remote.recording' }>> = (ev, { call }) => {
  if (call === undefined || call.phase === 'ended') return NOTHING;
  if ((call.recording === true) === ev.recording) return NOTHING;
  if (ev.recording) return { call: { ...call, recording: true } };
  const { recording: _stopped, ...rest } = call;
  return { call: rest };
};

/**
 * A supervisor joined the call, switched how it is in it, or left it: one entry per supervisor,
 * replaced where it stands (the window's list does not reorder), removed when it leaves.
 */
export const monitorChanged: Handler<Extract<CallEvent, { type: 'remote.monitor' }>> = (ev, { call }) => {
  if (call === undefined || call.phase === 'ended') return NOTHING;
  const monitors = call.monitors ?? [];
  const current = monitors.find((m) => m.supervisorId === ev.supervisorId);
  if (ev.mode === 'left') return current === undefined ? NOTHING : withMonitors(call, monitors.filter((m) => m !== current));
  if (current !== undefined && current.mode === ev.mode && current.name === ev.name) return NOTHING;
  const told: CallMonitor = { supervisorId: ev.supervisorId, name: ev.name, mode: ev.mode };
  return withMonitors(call, current === undefined ? [...monitors, told] : monitors.map((m) => (m === current ? told : m)));
};

/** The call with these supervisors in it; none leaves no `monitors` at all. */
function withMonitors(call: LiveRecord, monitors: CallMonitor[]): Step {
  if (monitors.length > 0) return { call: { ...call, monitors } };
  const { monitors: _none, ...rest } = call;
  return { call: rest };
}

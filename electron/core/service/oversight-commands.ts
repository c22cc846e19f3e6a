// Who else hears a bridged call: the team's recording of it ("Record", "Stop recording", "Play
// recording": team-recordings.ts) and a supervisor's join of a colleague's call (the Team view's live
// calls, "Listen", "Whisper", "Barge", "Leave": monitoring.ts). The relay decides both; these
// commands ask it, and its events tell every window in the call what came of it.
import { PHASE_TERM, type CallRecord } from '../../../shared/call-state';
import { RECORDING_AGENT_PATHS, recordingToggleReplySchema } from '../../../shared/bridge-recording';
import { term, text } from '../../../shared/i18n/text';
import { errText, ok, type Result } from '../../../shared/result';
import type { TeamRecordings } from '../team-recordings';
import type { CommandHandlers } from './handlers';
import type { ModeMachine } from './mode';
import type { Runtime } from './runtime';

export function oversightCommands(mode: ModeMachine, recordings: TeamRecordings) {
  const withRuntime = async <T>(run: (runtime: Runtime) => Promise<Result<T>>): Promise<Result<T>> => {
    const runtime = await mode.settled();
    return runtime ? run(runtime) : errText('not_available', text('team.noRelay'));
  };
  return {
    setRecording: ({ localId, recording }) =>
      withRuntime(async (runtime) => {
        const callId = recordableCallId(localId, runtime.coordinator.call(localId));
        if (!callId.ok) return callId;
        // The relay tells every window in the call what came of it (call.recording): that moves the call, not this answer.
        return runtime.relay.agentRequest('recording', 'POST', RECORDING_AGENT_PATHS.toggle(callId.value), { recording }, recordingToggleReplySchema);
      }),
    getRecording: ({ localId }) => recordings.play(localId),
    getLiveCalls: () => withRuntime((runtime) => runtime.monitoring.liveCalls()),
    startMonitor: ({ callId, mode: how }) => withRuntime((runtime) => runtime.monitoring.start(callId, how)),
    answerMonitor: ({ callId, legId, sdp }) => withRuntime((runtime) => runtime.monitoring.answer(callId, legId, sdp)),
    leaveMonitor: ({ callId }) => withRuntime((runtime) => runtime.monitoring.leave(callId)),
  } satisfies Partial<CommandHandlers>;
}

/** The gateway's id of a call that can be recorded or stop being recorded: a live call through the team's bridge. */
function recordableCallId(localId: string, call: CallRecord | undefined): Result<string> {
  if (call === undefined) return errText('not_found', text('calls.noSuchCall', { localId }));
  if (call.phase === 'ended' || call.callId === undefined) return errText('invalid_state', text('teamRecording.onlyLive', { phase: term(PHASE_TERM[call.phase]) }));
  if (call.bridged !== true) return errText('invalid_state', text('teamRecording.notBridged'));
  return ok(call.callId);
}

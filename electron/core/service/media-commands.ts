// A call's media kept with its recent-calls entry, as the window plays or reads it: "Play voicemail"
// (voicemail-keeper.ts), the service's own "Play recording" and "Transcript" (capture-keeper.ts),
// each from the file kept on this machine or fetched from the service now.
import type { CaptureKeeper } from '../capture-keeper';
import type { VoicemailKeeper } from '../voicemail-keeper';
import type { CommandHandlers } from './handlers';

export function mediaCommands(voicemails: VoicemailKeeper, captures: CaptureKeeper) {
  return {
    getVoicemail: ({ callId, mediaId }) => voicemails.play(callId, mediaId),
    getServiceRecording: ({ localId }) => captures.recording(localId),
    getTranscript: ({ localId }) => captures.transcript(localId),
  } satisfies Partial<CommandHandlers>;
}

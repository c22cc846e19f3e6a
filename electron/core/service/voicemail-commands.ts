// "Play voicemail": a call's voicemail as the window plays it, from the file kept on this machine or
// fetched from the service now (voicemail-keeper.ts).
import type { VoicemailKeeper } from '../voicemail-keeper';
import type { CommandHandlers } from './handlers';

export function voicemailCommands(voicemails: VoicemailKeeper) {
  return {
    getVoicemail: ({ callId, mediaId }) => voicemails.play(callId, mediaId),
  } satisfies Partial<CommandHandlers>;
}

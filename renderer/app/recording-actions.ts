// A call's recordings: the customer's voicemail ("Play voicemail", in recent calls and the Team
// view), the service's own recording of the call ("Play recording", or "Play the service's
// recording" beside the team's), its transcript ("Transcript"), and the team's own recording of a
// bridged call: "Record" and "Stop recording" on the call (setRecording), "Play recording" after it
// (getRecording, the file the relay keeps). The main process holds the files (kept on this machine, or fetched from the
// service by their media id) and hands them over: audio as base64 (getVoicemail,
// getServiceRecording), which becomes a Blob the player shows through an object URL of its own
// (media-src blob:, renderer/REFERENCE.md "Content-Security-Policy") on the speaker calls play on,
// so that a customer's words go to the agent's headset rather than the room; the transcript as
// its segments (getTranscript), with the name the relay gives this agent for channel 0.
import type { SoftphoneApi } from '../../shared/api';
import { err, ok, type Result } from '../../shared/result';
import type { TranscriptSegment } from '../../shared/service-capture';
import { parseRecordingAudio, parseTeam, parseTranscript, parseVoicemailAudio } from '../bridge/payload-schemas';

/** Which voicemail: the call it was left on, and the media id when the window knows it (the Team view's records). */
export interface VoicemailRef {
  callId: string;
  mediaId?: string | undefined;
}

/** A transcript as the window shows it: the segments in order, and the agent's name when the app knows it. */
export interface TranscriptView {
  segments: TranscriptSegment[];
  /** The relay's name for this agent (channel 0); undefined when the app does not know it. */
  agentName: string | undefined;
}

export interface RecordingActionsDeps {
  api: Pick<SoftphoneApi, 'getVoicemail' | 'getServiceRecording' | 'getTranscript' | 'getTeam' | 'getRecording' | 'setRecording'>;
  /** The speaker calls play on ('' = the system default); the system default where there is none. */
  speaker?: (() => string) | undefined;
  /** This agent's name as the last wallboard read had it, if one was read: the team is not asked again then. */
  ownName?: (() => string | undefined) | undefined;
}

/** base64 → bytes; undefined when it is not base64. */
function decodeBase64(data: string): Uint8Array<ArrayBuffer> | undefined {
  let binary: string;
  try {
    binary = atob(data);
  } catch {
    return undefined;
  }
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

/** A checked answer of base64 audio as a Blob; `what` names the file in the refusal of an empty one. */
function audioBlob(audio: Result<{ mimeType: string; data: string }>, what: string): Result<Blob> {
  if (!audio.ok) return audio;
  const bytes = decodeBase64(audio.value.data);
  if (bytes === undefined || bytes.length === 0) return err('internal', `The ${what} came without its audio`);
  return ok(new Blob([bytes], { type: audio.value.mimeType }));
}

export class RecordingActions {
  private readonly api: RecordingActionsDeps['api'];
  private readonly speaker: () => string;
  private readonly ownName: () => string | undefined;

  constructor(deps: RecordingActionsDeps) {
    this.api = deps.api;
    this.speaker = deps.speaker ?? (() => '');
    this.ownName = deps.ownName ?? (() => undefined);
  }

  /** The voicemail's audio, ready for an object URL; the main process's refusal as it came. */
  async voicemail(ref: VoicemailRef): Promise<Result<Blob>> {
    const result = await this.api.getVoicemail({ callId: ref.callId, ...(ref.mediaId !== undefined ? { mediaId: ref.mediaId } : {}) });
    return audioBlob(result.ok ? parseVoicemailAudio(result.value) : result, 'voicemail');
  }

  /** The service's recording of the recent call `localId`, ready for an object URL; a refusal as it came. */
  async serviceRecording(localId: string): Promise<Result<Blob>> {
    const result = await this.api.getServiceRecording({ localId });
    return audioBlob(result.ok ? parseRecordingAudio(result.value) : result, 'recording');
  }

  /** The team's recording of the recent call `localId` (the relay's file), ready for an object URL; a refusal as it came. */
  async teamRecording(localId: string): Promise<Result<Blob>> {
    const result = await this.api.getRecording({ localId });
    return audioBlob(result.ok ? parseRecordingAudio(result.value) : result, 'recording');
  }

  /**
   * "Record" / "Stop recording" on the bridged call `localId`: whether it records now, as the relay
   * answered. The call shows "Recording" once the relay tells every window in it (`call.recording`).
   */
  async setRecording(localId: string, recording: boolean): Promise<Result<boolean>> {
    const result = await this.api.setRecording({ localId, recording });
    return result.ok ? ok(result.value.recording) : result;
  }

  /**
   * The service's transcript of the recent call `localId`, and the agent's own name for its channel
   * 0: the wallboard's when it was read, else the team's list asked once now; none when neither
   * answers (a sandbox, a direct account), which the transcript says as "You".
   */
  async transcript(localId: string): Promise<Result<TranscriptView>> {
    const known = this.ownName();
    const [result, agentName] = await Promise.all([this.api.getTranscript({ localId }), known !== undefined ? Promise.resolve(known) : this.nameFromTeam()]);
    if (!result.ok) return result;
    const transcript = parseTranscript(result.value);
    if (!transcript.ok) return transcript;
    return ok({ segments: transcript.value.segments, agentName });
  }

  /** Where a voicemail or a recording plays ('' = the system default). */
  speakerId(): string {
    return this.speaker();
  }

  private async nameFromTeam(): Promise<string | undefined> {
    const answer = await this.api.getTeam({});
    const team = answer.ok ? parseTeam(answer.value) : answer;
    return team.ok ? team.value.find((member) => member.self === true)?.name : undefined;
  }
}

// The voicemail domain: "Play voicemail" in recent calls and in the Team view. The main process
// holds the file (kept on this machine, or fetched from the service by its media id) and hands its
// bytes over (getVoicemail); this turns them into a Blob the player shows through an object URL of
// its own (media-src blob:, renderer/REFERENCE.md "Content-Security-Policy"), and says on which
// speaker it plays: the one calls play on, so a customer's message goes to the agent's headset
// rather than the room.
import type { SoftphoneApi } from '../../shared/api';
import { err, ok, type Result } from '../../shared/result';
import { parseVoicemailAudio } from '../bridge/payload-schemas';

/** Which voicemail: the call it was left on, and the media id when the window knows it (the Team view's records). */
export interface VoicemailRef {
  callId: string;
  mediaId?: string | undefined;
}

export interface VoicemailActionsDeps {
  api: Pick<SoftphoneApi, 'getVoicemail'>;
  /** The speaker calls play on ('' = the system default); the system default where there is none. */
  speaker?: (() => string) | undefined;
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

export class VoicemailActions {
  private readonly api: VoicemailActionsDeps['api'];
  private readonly speaker: () => string;

  constructor(deps: VoicemailActionsDeps) {
    this.api = deps.api;
    this.speaker = deps.speaker ?? (() => '');
  }

  /** The voicemail's audio, ready for an object URL; the main process's refusal as it came. */
  async audio(ref: VoicemailRef): Promise<Result<Blob>> {
    const result = await this.api.getVoicemail({ callId: ref.callId, ...(ref.mediaId !== undefined ? { mediaId: ref.mediaId } : {}) });
    if (!result.ok) return result;
    const audio = parseVoicemailAudio(result.value);
    if (!audio.ok) return audio;
    const bytes = decodeBase64(audio.value.data);
    if (bytes === undefined || bytes.length === 0) return err('internal', 'The voicemail came without its audio');
    return ok(new Blob([bytes], { type: audio.value.mimeType }));
  }

  /** Where a voicemail plays ('' = the system default). */
  speakerId(): string {
    return this.speaker();
  }
}

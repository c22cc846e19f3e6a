// Voicemails (shared/voicemail.ts, protocol.md "Voicemail"): an inbound audio message whose id is the
// id of a call in recent calls is that call's voicemail, kept with its entry as media-keeper.ts keeps
// a call's media (`voicemail`, in `<dataDir>/voicemails/`). An audio message that is no call's
// voicemail is held like one whose call has no entry yet, and let go after 10 minutes.
import type { RelayEnvelope } from '../../shared/events';
import { text } from '../../shared/i18n/text';
import type { Result } from '../../shared/result';
import { VOICEMAIL_KEPT_MS, VOICEMAIL_MAX_BYTES, type VoicemailAudio } from '../../shared/voicemail';
import type { KeptMedia } from './media-files';
import { MEDIA_HOLD_MS, MEDIA_RETRY_LATER_MS, MEDIA_RETRY_MS, MediaKeeper, type MediaKeeperOptions, type MediaKind } from './media-keeper';

export const VOICEMAIL_RETRY_MS = MEDIA_RETRY_MS;
export const VOICEMAIL_RETRY_LATER_MS = MEDIA_RETRY_LATER_MS;
export const VOICEMAIL_HOLD_MS = MEDIA_HOLD_MS;

const VOICEMAIL: MediaKind = {
  member: 'voicemail',
  what: 'a voicemail',
  keptMs: VOICEMAIL_KEPT_MS,
  maxBytes: VOICEMAIL_MAX_BYTES,
  none: ({ callId }) => text('voicemail.none', { callId }),
  notKept: (reason) => text('voicemail.notKept', { reason }),
};

export type VoicemailKeeperOptions = Omit<MediaKeeperOptions, 'kind'>;

export class VoicemailKeeper extends MediaKeeper {
  constructor(o: VoicemailKeeperOptions) {
    super({ ...o, kind: VOICEMAIL });
  }

  /** The relay's events: an inbound audio message with a media id may be a call's voicemail. */
  relayEvent(envelope: RelayEnvelope): void {
    const e = envelope.event;
    if (e.type !== 'message.inbound' || e.messageType !== 'audio' || e.mediaId === undefined) return;
    this.received(e.messageId, e.mediaId, e.timestamp);
  }

  /** "Play voicemail": the entry's, or a team voicemail by the media id the Team view gives. */
  async play(callId: string, mediaId?: string): Promise<Result<VoicemailAudio>> {
    const file = await this.file(callId, mediaId);
    return file.ok ? { ok: true, value: audioOf(file.value) } : file;
  }
}

/** A kept file as the window plays it. */
export const audioOf = (kept: KeptMedia): VoicemailAudio => ({ mimeType: kept.mimeType, data: kept.bytes.toString('base64') });

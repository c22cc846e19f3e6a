// The service's own recording and transcript of a call (shared/service-capture.ts, protocol.md "What
// the service added in 2026"): the relay's `call.capture_available` after the call ends marks the
// call's recent-calls entry (`serviceRecording`, `transcript`) and the file is fetched at once — the
// url that came with it first (5 minutes), then by its media id (7 days) — and kept in
// `<dataDir>/recordings/` or `<dataDir>/transcripts/`, retried and said on the entry as a voicemail
// is (media-keeper.ts). An event for a call this app does not know waits 10 minutes for its entry,
// then is let go. "Play recording" and "Transcript" read the kept file, else fetch it now.
import { join } from 'node:path';
import type { RelayEnvelope } from '../../shared/events';
import type { HistoryEntry } from '../../shared/history';
import { text } from '../../shared/i18n/text';
import { errorText, errText, ok, type Result } from '../../shared/result';
import { transcriptDocumentSchema, type Transcript } from '../../shared/service-capture';
import type { VoicemailAudio } from '../../shared/voicemail';
import { MediaFiles, RECORDING_DIR, TRANSCRIPT_DIR } from './media-files';
import { MediaKeeper, type MediaKeeperOptions } from './media-keeper';
import { audioOf } from './voicemail-keeper';

/** How long the service keeps a recording's or transcript's media id. */
export const CAPTURE_KEPT_MS = 7 * 24 * 60 * 60 * 1000;
/** The largest recording the app fetches: a long call's two channels of Opus. */
export const RECORDING_MAX_BYTES = 64 * 1024 * 1024;
export const TRANSCRIPT_MAX_BYTES = 16 * 1024 * 1024;
/** What the files are when the event does not say. */
const RECORDING_MIME = 'audio/ogg; codecs=opus';
const TRANSCRIPT_MIME = 'application/json';

export type CaptureKeeperOptions = Omit<MediaKeeperOptions, 'kind' | 'files'> & { dataDir: string };

export class CaptureKeeper {
  private readonly recordings: MediaKeeper;
  private readonly transcripts: MediaKeeper;

  constructor(private readonly o: CaptureKeeperOptions) {
    const { dataDir, ...common } = o;
    this.recordings = new MediaKeeper({
      ...common,
      files: new MediaFiles(join(dataDir, RECORDING_DIR), o.log, 'recording'),
      kind: {
        member: 'serviceRecording',
        what: 'the service’s recording',
        keptMs: CAPTURE_KEPT_MS,
        maxBytes: RECORDING_MAX_BYTES,
        none: ({ callId, localId }) => text('capture.noRecording', { call: localId ?? callId }),
        notKept: (reason) => text('capture.recordingNotKept', { reason }),
      },
    });
    this.transcripts = new MediaKeeper({
      ...common,
      files: new MediaFiles(join(dataDir, TRANSCRIPT_DIR), o.log, 'transcript'),
      kind: {
        member: 'transcript',
        what: 'the service’s transcript',
        keptMs: CAPTURE_KEPT_MS,
        maxBytes: TRANSCRIPT_MAX_BYTES,
        none: ({ callId, localId }) => text('capture.noTranscript', { call: localId ?? callId }),
        notKept: (reason) => text('capture.transcriptNotKept', { reason }),
      },
    });
  }

  /** The relay's events: a call's recording or transcript is ready. */
  relayEvent(envelope: RelayEnvelope): void {
    const e = envelope.event;
    if (e.type !== 'call.capture_available') return;
    const recording = e.kind === 'recording';
    const link = { url: e.url, mimeType: e.mimeType ?? (recording ? RECORDING_MIME : TRANSCRIPT_MIME), ...(e.sha256 !== undefined ? { sha256: e.sha256 } : {}) };
    (recording ? this.recordings : this.transcripts).received(e.callId, e.mediaId, e.timestamp, link);
  }

  /** Fetches what is not kept yet (a start, a new gateway). */
  resume(): void {
    this.recordings.resume();
    this.transcripts.resume();
  }

  /** "Play recording". */
  async recording(localId: string): Promise<Result<VoicemailAudio>> {
    const entry = this.entryOf(localId);
    if (entry?.callId === undefined || entry.serviceRecording === undefined) return errText('not_found', text('capture.noRecording', { call: localId }));
    const file = await this.recordings.file(entry.callId, undefined, localId);
    return file.ok ? ok(audioOf(file.value)) : file;
  }

  /** "Transcript": its segments in the order they were said. A document that is no transcript is said, not shown. */
  async transcript(localId: string): Promise<Result<Transcript>> {
    const entry = this.entryOf(localId);
    if (entry?.callId === undefined || entry.transcript === undefined) return errText('not_found', text('capture.noTranscript', { call: localId }));
    const file = await this.transcripts.file(entry.callId, undefined, localId);
    if (!file.ok) return file;
    let json: unknown;
    try {
      json = JSON.parse(file.value.bytes.toString('utf8'));
    } catch (e) {
      this.o.log.warn('the service’s transcript is not JSON', { callId: entry.callId, bytes: file.value.bytes.length });
      return errText('gateway_unreachable', text('capture.badTranscript'), { detail: errorText(e) });
    }
    const parsed = transcriptDocumentSchema.safeParse(json);
    if (!parsed.success) {
      const detail = parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ').slice(0, 2048);
      this.o.log.warn('the service’s transcript is not the document it should be', { callId: entry.callId, detail });
      return errText('gateway_unreachable', text('capture.badTranscript'), { detail });
    }
    const segments = parsed.data.transcript.segments.map((s, i) => ({ s, i })).sort((a, b) => a.s.start - b.s.start || a.i - b.i).map(({ s }) => s);
    return ok({ segments });
  }

  async stop(): Promise<void> {
    await Promise.all([this.recordings.stop(), this.transcripts.stop()]);
  }

  private entryOf(localId: string): HistoryEntry | undefined {
    return this.o.history.entries().find((e) => e.localId === localId);
  }
}

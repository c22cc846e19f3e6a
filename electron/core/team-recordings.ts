// The team's own recordings of bridged calls (shared/bridge-recording.ts), as recent calls know them:
// an entry whose call the team's bridge recorded — a `call.recording` saying it records came for its
// call id — is marked `teamRecording`, and "Play recording" fetches the file from the relay then
// (GET /recordings/{callId} with the agent token). Nothing is kept on this machine: the file is the
// relay's, kept and deleted by its own rules. The mark usually comes while the call is live, before
// its entry exists: the call id is remembered (the newest RECORDED_LIMIT), and its entries are marked
// as they come.
import type { RelayEnvelope } from '../../shared/events';
import type { HistoryEntry } from '../../shared/history';
import { text } from '../../shared/i18n/text';
import type { Logger } from '../../shared/log';
import { errText, ok, type Result } from '../../shared/result';
import type { VoicemailAudio } from '../../shared/voicemail';
import { RECORDING_MAX_BYTES } from './capture-keeper';
import type { HistoryStore } from './history-store';
import type { RelayClient } from './relay-client';

/** The calls seen recording that are remembered: the newest this many, enough for any entry still to come. */
const RECORDED_LIMIT = 500;

export interface TeamRecordingsOptions {
  history: HistoryStore;
  /** The relay of the mode that runs; undefined while none does. */
  relay: () => Pick<RelayClient, 'recordingFile'> | undefined;
  log: Logger;
}

export class TeamRecordings {
  /** Call ids seen recording, oldest first. */
  private readonly recorded = new Set<string>();
  private readonly unsubscribe: () => void;

  constructor(private readonly o: TeamRecordingsOptions) {
    // After the change has reached every listener: marked inside one, the windows would hear the mark
    // first and the unmarked entry last.
    this.unsubscribe = o.history.onChanged(() => queueMicrotask(() => this.markRecorded(this.o.history.entries())));
  }

  /** The relay's events: the team's bridge records a call now. */
  relayEvent(envelope: RelayEnvelope): void {
    const e = envelope.event;
    if (e.type !== 'call.recording' || !e.recording) return;
    // Kept after its entries are marked: an entry of the same call that comes later (the call
    // handed back to this agent, a correction of the entry) was recorded too.
    this.recorded.delete(e.callId);
    this.recorded.add(e.callId);
    if (this.recorded.size > RECORDED_LIMIT) this.recorded.delete(this.recorded.values().next().value!);
    this.markRecorded(this.o.history.entries());
  }

  /** "Play recording": the team's recording of the call of entry `localId`, from the relay now. */
  async play(localId: string): Promise<Result<VoicemailAudio>> {
    const entry = this.o.history.entries().find((e) => e.localId === localId);
    if (entry?.callId === undefined) return errText('not_found', text('teamRecording.none', { call: localId }));
    const relay = this.o.relay();
    if (relay === undefined) return errText('not_available', text('team.noRelay'));
    const file = await relay.recordingFile(entry.callId, RECORDING_MAX_BYTES);
    if (file.ok) return ok({ mimeType: file.value.mimeType, data: file.value.bytes.toString('base64') });
    if (file.error.code !== 'not_found') return file;
    // A call the bridge recorded has its file once the call is over and the node has handed it over.
    const { httpStatus, detail } = file.error;
    const said = entry.teamRecording === true ? text('teamRecording.notReady') : text('teamRecording.none', { call: localId });
    return errText('not_found', said, { ...(httpStatus !== undefined ? { httpStatus } : {}), ...(detail !== undefined ? { detail } : {}) });
  }

  stop(): void {
    this.unsubscribe();
    this.recorded.clear();
  }

  /** Marks every entry of a recorded call that is not marked yet. */
  private markRecorded(entries: readonly HistoryEntry[]): void {
    // An id matches whole, never by its prefix (protocol.md).
    const unmarked = entries.filter((e) => e.callId !== undefined && e.teamRecording !== true && this.recorded.has(e.callId));
    for (const entry of unmarked) {
      this.o.log.info('the team’s bridge recorded a call of recent calls', { localId: entry.localId, callId: entry.callId });
      this.o.history.record({ ...entry, teamRecording: true });
    }
  }
}

// Call history across restarts: `<dataDir>/history.json`, newest first, at most HISTORY_LIMIT.
import { copyFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import type { QualitySummary } from '../../shared/call-quality';
import { HISTORY_LIMIT, historyEntrySchema, type HistoryEntry } from '../../shared/history';
import { createLogger, type Logger } from '../../shared/log';
import { CoalescingWriter, readJsonFile, setAsideCorruptFile, writeJsonFileAtomic } from './json-file';

const HISTORY_FILE = 'history.json';
const FILE_VERSION = 1;


const historyFileSchema = z.object({ version: z.literal(FILE_VERSION), entries: z.array(z.unknown()) });

export interface HistoryStoreOptions {
  dataDir: string;
  logger?: Logger;
  now?: () => number;
}

export class HistoryStore {
  private list: HistoryEntry[] = [];
  private readonly pendingQuality = new Map<string, QualitySummary>();
  private readonly listeners = new Set<(entries: HistoryEntry[]) => void>();
  private readonly writer: CoalescingWriter;
  private readonly path: string;
  private readonly log: Logger;
  private readonly now: () => number;

  private constructor(options: HistoryStoreOptions) {
    this.path = join(options.dataDir, HISTORY_FILE);
    this.log = options.logger ?? createLogger('history');
    this.now = options.now ?? Date.now;
    this.writer = new CoalescingWriter(
      () => writeJsonFileAtomic(this.path, { version: FILE_VERSION, entries: this.list }),
      (e) => this.log.error('could not save the call history', { error: e }),
    );
  }

  static async open(options: HistoryStoreOptions): Promise<HistoryStore> {
    const store = new HistoryStore(options);
    await store.load();
    return store;
  }

  /** Newest first. */
  entries(): HistoryEntry[] {
    return [...this.list];
  }

  /** Adds an entry, or replaces the one with the same localId (a late terminate can correct the duration); its quality, wrap-up, voicemail and team recording stay. */
  record(entry: HistoryEntry): void {
    const earlier = this.list.find((e) => e.localId === entry.localId);
    const quality = entry.quality ?? earlier?.quality ?? this.pendingQuality.get(entry.localId);
    this.pendingQuality.delete(entry.localId);
    if (quality !== undefined) entry = { ...entry, quality };
    // A late correction of the call (its duration) keeps the agent's wrap-up.
    const wrapUp = entry.wrapUp ?? earlier?.wrapUp;
    if (wrapUp !== undefined) entry = { ...entry, wrapUp };
    // And the customer's voicemail, which may have come before the correction.
    const voicemail = entry.voicemail ?? earlier?.voicemail;
    if (voicemail !== undefined) entry = { ...entry, voicemail };
    // And that the team's bridge recorded it (team-recordings.ts): the call's end does not say so.
    if (earlier?.teamRecording === true) entry = { ...entry, teamRecording: true };
    const others = this.list.filter((e) => e.localId !== entry.localId);
    // Stable sort: entries that ended at the same moment keep the newer one first.
    this.list = [entry, ...others].sort((a, b) => b.endedAt - a.endedAt).slice(0, HISTORY_LIMIT);
    this.writer.request();
    const snapshot = this.entries();
    for (const listener of this.listeners) listener(snapshot);
  }

  /**
   * How a call sounded, reported by the window as its media closes. The entry may not be recorded
   * yet (the call's end and the report race): the summary then waits for it.
   */
  attachQuality(localId: string, quality: QualitySummary): void {
    const entry = this.list.find((e) => e.localId === localId);
    if (entry) {
      this.record({ ...entry, quality });
      return;
    }
    this.pendingQuality.set(localId, quality);
    // Reports for calls that never reach the history (a window's stale call) must not pile up.
    if (this.pendingQuality.size > 20) this.pendingQuality.delete(this.pendingQuality.keys().next().value!);
  }

  onChanged(listener: (entries: HistoryEntry[]) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Resolves when everything recorded so far is on disk. */
  flush(): Promise<void> {
    return this.writer.flush();
  }

  private async load(): Promise<void> {
    const read = await readJsonFile(this.path);
    if (read.kind === 'missing') return;
    const file = read.kind === 'json' ? historyFileSchema.safeParse(read.value) : undefined;
    if (!file?.success) {
      // Start empty, but keep the unreadable file beside the new one.
      const aside = await setAsideCorruptFile(this.path, this.now());
      this.log.warn('call history unreadable; starting empty', { keptAs: aside, reason: read.kind === 'unparsable' ? read.reason : 'unexpected shape' });
      return;
    }
    const entries: HistoryEntry[] = [];
    let bad = 0;
    for (const item of file.data.entries) {
      const parsed = historyEntrySchema.safeParse(item);
      if (parsed.success) entries.push(parsed.data);
      else bad++;
    }
    if (bad > 0) {
      // Some entries did not parse: keep a copy of the file as it was before it is rewritten.
      const aside = `${this.path}.corrupt-${this.now()}`;
      await copyFile(this.path, aside);
      this.log.warn('some call history entries were unreadable and were left out', { unreadable: bad, keptAs: aside });
    }
    this.list = entries.sort((a, b) => b.endedAt - a.endedAt).slice(0, HISTORY_LIMIT);
  }
}

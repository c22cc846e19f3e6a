// The agent's wrap-ups ("Disposition", "Notes", "Save wrap-up"): kept with the call's recent-calls
// entry the moment the agent saves, then sent to the relay, which keeps them with the team's record
// of the call (relay/REFERENCE.md "Wrap-up"). Nothing the agent wrote waits on the network: a relay
// that cannot take it now (unreachable, its database down, the call's record not written yet) gets it
// again later, with a growing pause, and again at each start of the app; a refusal for good (not this
// agent's call, past 24 hours) is kept with the entry and said there.
import type { HistoryEntry, WrapUp } from '../../shared/history';
import { english, text } from '../../shared/i18n/text';
import type { Logger } from '../../shared/log';
import { err, errText, ok, type AppError, type Result } from '../../shared/result';
import { WRAP_UP_EDITABLE_MS, type TeamSettings } from '../../shared/team-settings';
import { list } from '../../shared/i18n/text';
import { invalidInput } from '../../shared/validation';
import type { HistoryStore } from './history-store';
import type { SavedWrapUp } from './relay-client';

/** What sending a wrap-up needs from the relay; RelayClient is the real one. */
export interface WrapUpSink {
  saveWrapUp(callId: string, wrapUp: { disposition: string | null; notes: string }): Promise<Result<SavedWrapUp>>;
}

/** Pauses between tries of one wrap-up; the last repeats for as long as the app runs. */
export const WRAP_UP_RETRY_MS = [2_000, 5_000, 15_000, 30_000, 60_000] as const;
/**
 * A 404 is worth a few more tries: the call's record may not be written yet (another relay instance
 * took the call's webhooks and writes in batches). After this many it is taken as the relay's word.
 */
const NOT_FOUND_TRIES = 5;

/** An entry the agent may wrap up: a call it talked on (incoming or outgoing). */
export const talkedOnEntry = (entry: HistoryEntry): boolean =>
  entry.outcome === 'completed' || entry.outcome === 'transferred' || (entry.outcome === 'failed' && entry.durationSec > 0);

export interface WrapUpsOptions {
  history: HistoryStore;
  /** The relay of the current mode; undefined while there is none. */
  relay: () => WrapUpSink | undefined;
  settings: () => TeamSettings;
  now: () => number;
  log: Logger;
  /** A wrap-up was saved here (before the relay has it): after-call work may stop waiting for it. */
  onSaved?: (entry: HistoryEntry) => void;
  setTimer?: (run: () => void, ms: number) => ReturnType<typeof setTimeout>;
  clearTimer?: (timer: ReturnType<typeof setTimeout>) => void;
}

export class WrapUps {
  /** Entries being sent, or waiting to be sent again, by localId: one try at a time each. */
  private readonly sending = new Map<string, { tries: number; notFound: number; timer?: ReturnType<typeof setTimeout> }>();
  private readonly setTimer: NonNullable<WrapUpsOptions['setTimer']>;
  private readonly clearTimer: NonNullable<WrapUpsOptions['clearTimer']>;
  private stopped = false;

  constructor(private readonly o: WrapUpsOptions) {
    this.setTimer = o.setTimer ?? ((run, ms) => setTimeout(run, ms));
    this.clearTimer = o.clearTimer ?? ((timer) => clearTimeout(timer));
  }

  /** "Save wrap-up": kept with the entry now, then sent. */
  save(localId: string, disposition: string | null, notes: string): Result<HistoryEntry> {
    const entry = this.o.history.entries().find((e) => e.localId === localId);
    if (entry === undefined) return errText('invalid_input', text('team.wrapUpNoEntry', { localId }), { field: 'localId' });
    if (!talkedOnEntry(entry)) return errText('invalid_state', text('team.wrapUpNotTalked'));
    if (this.o.now() - entry.endedAt > WRAP_UP_EDITABLE_MS) return errText('invalid_state', text('team.wrapUpTooLate'));
    const settings = this.o.settings();
    // A disposition the team has dropped since it was saved may stay as it was.
    if (disposition !== null && !settings.dispositions.includes(disposition) && disposition !== entry.wrapUp?.disposition) {
      return invalidInput([{ field: 'disposition', text: text('team.disposition', { values: list(settings.dispositions) }) }]);
    }
    if (disposition === null && settings.dispositionRequired) return invalidInput([{ field: 'disposition', text: text('team.dispositionRequired') }]);
    const wrapUp: WrapUp = { disposition, notes, savedAt: this.o.now(), synced: false };
    const saved: HistoryEntry = { ...entry, wrapUp };
    this.o.history.record(saved);
    this.o.log.info('wrap-up saved', { localId, callId: entry.callId, disposition: disposition !== null });
    this.o.onSaved?.(saved);
    this.restart(localId);
    return ok(saved);
  }

  /** Sends every wrap-up the relay does not have yet (a start, a new relay). */
  resume(): void {
    for (const entry of this.o.history.entries()) {
      if (entry.wrapUp !== undefined && !entry.wrapUp.synced && entry.wrapUp.refused !== true && !this.sending.has(entry.localId)) this.restart(entry.localId);
    }
  }

  stop(): void {
    this.stopped = true;
    for (const state of this.sending.values()) if (state.timer !== undefined) this.clearTimer(state.timer);
    this.sending.clear();
  }

  private restart(localId: string): void {
    const earlier = this.sending.get(localId);
    if (earlier?.timer !== undefined) this.clearTimer(earlier.timer);
    this.sending.set(localId, { tries: 0, notFound: 0 });
    void this.send(localId);
  }

  private async send(localId: string): Promise<void> {
    const state = this.sending.get(localId);
    if (state === undefined || this.stopped) return;
    state.timer = undefined;
    const entry = this.o.history.entries().find((e) => e.localId === localId);
    const wrapUp = entry?.wrapUp;
    if (entry === undefined || wrapUp === undefined || wrapUp.synced || wrapUp.refused === true) {
      this.sending.delete(localId);
      return;
    }
    if (entry.callId === undefined) {
      this.settle(entry, wrapUp, { refused: true, syncError: 'the call has no id of the service, so the team has no record of it' });
      return;
    }
    const relay = this.o.relay();
    const result: Result<SavedWrapUp> = relay ? await relay.saveWrapUp(entry.callId, { disposition: wrapUp.disposition, notes: wrapUp.notes }) : err('not_available', 'no relay is connected');
    if (this.sending.get(localId) !== state || this.stopped) return; // saved again meanwhile: that save sends itself
    if (result.ok) {
      this.settle(entry, wrapUp, { synced: true });
      return;
    }
    state.tries += 1;
    const status = result.error.httpStatus;
    if (status === 404) state.notFound += 1;
    const forGood = status === 400 || status === 403 || status === 409 || (status === 404 && state.notFound >= NOT_FOUND_TRIES);
    const reason = reasonOf(result.error);
    if (forGood) {
      this.o.log.warn('the relay refused a wrap-up', { localId, callId: entry.callId, httpStatus: status });
      this.settle(entry, wrapUp, { refused: true, syncError: reason });
      return;
    }
    if (state.tries === 1) this.o.log.warn('a wrap-up could not reach the relay yet; it is sent again', { localId, callId: entry.callId, reason });
    this.note(entry, wrapUp, reason);
    const pause = WRAP_UP_RETRY_MS[Math.min(state.tries - 1, WRAP_UP_RETRY_MS.length - 1)]!;
    state.timer = this.setTimer(() => void this.send(localId), pause);
  }

  /** The try is over: the entry says how (when the agent has not saved a newer wrap-up since). */
  private settle(entry: HistoryEntry, sent: WrapUp, outcome: { synced: true } | { refused: true; syncError: string }): void {
    this.sending.delete(entry.localId);
    const current = this.o.history.entries().find((e) => e.localId === entry.localId);
    if (current?.wrapUp?.savedAt !== sent.savedAt) return;
    const { syncError: _dropped, ...kept } = current.wrapUp;
    this.o.history.record({ ...current, wrapUp: 'synced' in outcome ? { ...kept, synced: true } : { ...kept, synced: false, refused: true, syncError: outcome.syncError } });
  }

  /** Why the relay does not have it yet, on the entry (only when that changed: no write per try). */
  private note(entry: HistoryEntry, sent: WrapUp, reason: string): void {
    const current = this.o.history.entries().find((e) => e.localId === entry.localId);
    if (current?.wrapUp?.savedAt !== sent.savedAt || current.wrapUp.syncError === reason) return;
    this.o.history.record({ ...current, wrapUp: { ...current.wrapUp, syncError: reason } });
  }
}

/** The relay's own words when it gave some, else the error's English sentence. */
const reasonOf = (error: AppError): string => error.detail ?? (error.text !== undefined ? english(error.text) : error.message);

// Voicemails (shared/voicemail.ts, protocol.md "Voicemail"): an inbound audio message whose id is the
// id of a call in recent calls is that call's voicemail. Its entry is marked at once (the windows
// hear of it with historyChanged) and the audio is fetched from the service by its media id and kept
// on this machine (voicemail-files.ts), so that "Play voicemail" works without the network and after
// the service has let the media go (7 days).
//
// - A fetch that fails says why on the entry (`fetchError`) and is tried again after 2, 5, 15, 30 and
//   60 s, then every 10 minutes while the app runs, until 7 days after the voicemail came. Entries
//   with a voicemail not kept yet are tried again when the app starts (when a gateway is there).
// - A voicemail whose call has no entry yet (the call's end and the message race, or the app records
//   the call later) is held for 10 minutes and attached when the entry comes.
// - An id is matched whole against the entries' call ids: never routed by its prefix (protocol.md).
// - Play: the kept file; else the media fetched now, by the entry's media id or the one given (the
//   team's records), and kept when the entry has it.
import type { RelayEnvelope } from '../../shared/events';
import type { HistoryEntry } from '../../shared/history';
import { english, text } from '../../shared/i18n/text';
import type { Logger } from '../../shared/log';
import { errorText, errText, ok, type AppError, type Result } from '../../shared/result';
import { VOICEMAIL_KEPT_MS, VOICEMAIL_MAX_BYTES, type HistoryVoicemail, type VoicemailAudio } from '../../shared/voicemail';
import type { MediaFetching } from './gateway-client';
import type { HistoryStore } from './history-store';
import type { KeptVoicemail, VoicemailFiles } from './voicemail-files';

/** Pauses between the first tries of one voicemail's fetch; then VOICEMAIL_RETRY_LATER_MS. */
export const VOICEMAIL_RETRY_MS = [2_000, 5_000, 15_000, 30_000, 60_000] as const;
export const VOICEMAIL_RETRY_LATER_MS = 10 * 60_000;
/** How long a voicemail waits for its call's entry. */
export const VOICEMAIL_HOLD_MS = 10 * 60_000;
/** Audio messages that are no call's voicemail are held too (an id says nothing of what it is): at most this many. */
const HELD_LIMIT = 200;

type Timer = ReturnType<typeof setTimeout>;

export interface VoicemailKeeperOptions {
  history: HistoryStore;
  files: VoicemailFiles;
  /** The gateway of the mode that runs; undefined while none does. */
  gateway: () => MediaFetching | undefined;
  now: () => number;
  log: Logger;
  setTimer?: (run: () => void, ms: number) => Timer;
  clearTimer?: (timer: Timer) => void;
}

interface Held {
  mediaId: string;
  at: number;
  heldAt: number;
}

/** One voicemail's fetches: one try at a time, the next one's timer while it waits. */
interface Fetches {
  tries: number;
  timer?: Timer;
  running?: Promise<Result<KeptVoicemail>>;
}

export class VoicemailKeeper {
  /** Voicemails waiting for their call's entry, by call id, the oldest first. */
  private readonly held = new Map<string, Held>();
  /** By call id. */
  private readonly fetches = new Map<string, Fetches>();
  /** Ends the downloads under way when the app quits. */
  private readonly quitting = new AbortController();
  private readonly setTimer: NonNullable<VoicemailKeeperOptions['setTimer']>;
  private readonly clearTimer: NonNullable<VoicemailKeeperOptions['clearTimer']>;
  private readonly unsubscribe: () => void;
  private stopped = false;

  constructor(private readonly o: VoicemailKeeperOptions) {
    this.setTimer = o.setTimer ?? ((run, ms) => setTimeout(run, ms));
    this.clearTimer = o.clearTimer ?? ((timer) => clearTimeout(timer));
    this.unsubscribe = o.history.onChanged(() => this.attachHeld());
  }

  /** The relay's events: an inbound audio message with a media id may be a call's voicemail. */
  relayEvent(envelope: RelayEnvelope): void {
    const e = envelope.event;
    if (e.type !== 'message.inbound' || e.messageType !== 'audio' || e.mediaId === undefined) return;
    this.received(e.messageId, e.mediaId, e.timestamp);
  }

  /** Audio `mediaId` left at `at` (unix ms) in a message whose id is `callId`. */
  received(callId: string, mediaId: string, at: number): void {
    if (this.stopped) return;
    if (this.entriesOf(callId).length > 0) {
      this.attach(callId, mediaId, at);
      return;
    }
    this.held.delete(callId);
    this.held.set(callId, { mediaId, at, heldAt: this.o.now() });
    if (this.held.size > HELD_LIMIT) this.held.delete(this.held.keys().next().value!);
    this.o.log.info('an audio message waits for its call in recent calls', { messageId: callId, mediaId });
  }

  /** Fetches every voicemail not kept yet that the service may still have (a start, a new gateway). */
  resume(): void {
    if (this.stopped) return;
    const now = this.o.now();
    const callIds = new Set<string>();
    for (const entry of this.o.history.entries()) {
      const voicemail = entry.voicemail;
      if (entry.callId !== undefined && voicemail !== undefined && !voicemail.saved && now < voicemail.at + VOICEMAIL_KEPT_MS) callIds.add(entry.callId);
    }
    for (const callId of callIds) if (!this.fetches.has(callId)) this.restart(callId);
  }

  /** "Play voicemail". */
  async play(callId: string, mediaId?: string): Promise<Result<VoicemailAudio>> {
    const known = this.voicemailOf(callId);
    const kept = await this.o.files.read(callId);
    if (kept !== undefined && (known === undefined || kept.mediaId === known.mediaId)) return ok(audioOf(kept));
    if (known !== undefined) {
      // The entry's voicemail, fetched now: it is kept, and its retries start over from here.
      let fetches = this.fetches.get(callId);
      if (fetches === undefined) {
        fetches = { tries: 0 };
        this.fetches.set(callId, fetches);
      }
      const fetched = await this.run(callId, fetches);
      return fetched.ok ? ok(audioOf(fetched.value)) : fetched;
    }
    const id = this.held.get(callId)?.mediaId ?? mediaId;
    if (id === undefined) return errText('not_found', text('voicemail.none', { callId }));
    const fetched = await this.fetchMedia(id);
    return fetched.ok ? ok({ mimeType: fetched.value.mimeType, data: fetched.value.bytes.toString('base64') }) : fetched;
  }

  /** The app quits: no more tries; downloads under way give up, and a file being written is finished. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.unsubscribe();
    this.quitting.abort();
    const running: Promise<unknown>[] = [];
    for (const fetches of this.fetches.values()) {
      if (fetches.timer !== undefined) this.clearTimer(fetches.timer);
      if (fetches.running !== undefined) running.push(fetches.running);
    }
    this.fetches.clear();
    this.held.clear();
    await Promise.allSettled(running);
  }

  private entriesOf(callId: string): HistoryEntry[] {
    return this.o.history.entries().filter((e) => e.callId === callId);
  }

  private voicemailOf(callId: string): HistoryVoicemail | undefined {
    return this.entriesOf(callId).find((e) => e.voicemail !== undefined)?.voicemail;
  }

  /** Marks the call's entries and fetches the audio; the same voicemail again changes nothing. */
  private attach(callId: string, mediaId: string, at: number): void {
    let marked = false;
    for (const entry of this.entriesOf(callId)) {
      if (entry.voicemail?.mediaId === mediaId) continue;
      this.o.history.record({ ...entry, voicemail: { mediaId, at, saved: false } });
      marked = true;
    }
    if (marked) {
      this.o.log.info('a call has a voicemail', { callId, mediaId });
      this.restart(callId);
    } else if (this.voicemailOf(callId)?.saved === false && !this.fetches.has(callId)) this.restart(callId);
  }

  /** Entries that came for held voicemails take them; those held too long are let go. */
  private attachHeld(): void {
    if (this.held.size === 0 || this.stopped) return;
    const now = this.o.now();
    const ready: [string, Held][] = [];
    for (const [callId, held] of this.held) {
      if (now - held.heldAt > VOICEMAIL_HOLD_MS) this.held.delete(callId);
      else if (this.entriesOf(callId).length > 0) ready.push([callId, held]);
    }
    for (const [callId, held] of ready) {
      this.held.delete(callId);
      this.attach(callId, held.mediaId, held.at);
    }
  }

  /** A fresh series of tries, the first one now. */
  private restart(callId: string): void {
    const earlier = this.fetches.get(callId);
    if (earlier?.timer !== undefined) this.clearTimer(earlier.timer);
    const fetches: Fetches = { tries: 0 };
    this.fetches.set(callId, fetches);
    void this.run(callId, fetches);
  }

  /** One try now (or the one under way), then the entry says how it went and the next try waits. */
  private run(callId: string, fetches: Fetches): Promise<Result<KeptVoicemail>> {
    if (fetches.running !== undefined) return fetches.running;
    if (fetches.timer !== undefined) this.clearTimer(fetches.timer);
    fetches.timer = undefined;
    const voicemail = this.voicemailOf(callId);
    if (voicemail === undefined) {
      this.fetches.delete(callId);
      return Promise.resolve(errText('not_found', text('voicemail.none', { callId })));
    }
    const running = this.tryOnce(callId, voicemail.mediaId).then((result) => {
      fetches.running = undefined;
      this.settle(callId, voicemail.mediaId, fetches, result);
      return result;
    });
    fetches.running = running;
    return running;
  }

  private async tryOnce(callId: string, mediaId: string): Promise<Result<KeptVoicemail>> {
    const fetched = await this.fetchMedia(mediaId);
    if (!fetched.ok) return fetched;
    if (this.stopped) return errText('not_available', text('service.shuttingDown'));
    try {
      await this.o.files.keep(callId, fetched.value, this.o.now());
    } catch (e) {
      this.o.log.error('a voicemail could not be kept', { callId, mediaId, error: e });
      return errText('internal', text('voicemail.notKept', { reason: errorText(e) }));
    }
    const { mimeType, bytes } = fetched.value;
    this.o.log.info('a voicemail is kept', { callId, mediaId, bytes: bytes.length });
    return ok({ callId, mediaId, mimeType, bytes });
  }

  private fetchMedia(mediaId: string): ReturnType<MediaFetching['fetchMedia']> {
    const gateway = this.o.gateway();
    if (gateway === undefined) return Promise.resolve(errText('not_configured', text('service.notConfigured')));
    return gateway.fetchMedia(mediaId, VOICEMAIL_MAX_BYTES, this.quitting.signal);
  }

  /** The try is over: the entry says so, and another is due unless it worked or the service has let the media go. */
  private settle(callId: string, mediaId: string, fetches: Fetches, result: Result<KeptVoicemail>): void {
    if (this.stopped || this.fetches.get(callId) !== fetches) return;
    if (result.ok) {
      this.fetches.delete(callId);
      this.mark(callId, mediaId, (v) => ({ mediaId: v.mediaId, at: v.at, saved: true }));
      return;
    }
    fetches.tries += 1;
    const reason = reasonOf(result.error);
    this.mark(callId, mediaId, (v) => ({ ...v, saved: false, fetchError: reason }));
    const voicemail = this.voicemailOf(callId);
    const pause = VOICEMAIL_RETRY_MS[fetches.tries - 1] ?? VOICEMAIL_RETRY_LATER_MS;
    if (voicemail?.mediaId !== mediaId || this.o.now() + pause >= voicemail.at + VOICEMAIL_KEPT_MS) {
      this.fetches.delete(callId);
      if (voicemail?.mediaId === mediaId) this.o.log.warn('a voicemail was not kept: the service keeps it no longer', { callId, mediaId, reason });
      return;
    }
    if (fetches.tries === 1) this.o.log.warn('a voicemail could not be fetched yet; it is tried again', { callId, mediaId, reason });
    fetches.timer = this.setTimer(() => void this.run(callId, fetches), pause);
  }

  /** Changes the voicemail `mediaId` of the call's entries (only where that changes something: no write per try). */
  private mark(callId: string, mediaId: string, change: (voicemail: HistoryVoicemail) => HistoryVoicemail): void {
    for (const entry of this.entriesOf(callId)) {
      if (entry.voicemail?.mediaId !== mediaId) continue;
      const next = change(entry.voicemail);
      if (JSON.stringify(next) !== JSON.stringify(entry.voicemail)) this.o.history.record({ ...entry, voicemail: next });
    }
  }
}

const audioOf = (kept: KeptVoicemail): VoicemailAudio => ({ mimeType: kept.mimeType, data: kept.bytes.toString('base64') });

/** The error's English sentence (a gateway's refusal in its clear words, or the gateway's own). */
const reasonOf = (error: AppError): string => (error.text !== undefined ? english(error.text) : error.message);

// A call's media kept with its recent-calls entry (the customer's voicemail, the service's own
// recording and transcript of the call): the entry is marked at once (the windows hear of it with
// historyChanged) and the file is fetched from the service by its media id and kept on this
// machine (media-files.ts), so that it plays without the network and after the service has let
// the media go (7 days). One keeper per kind, each with its entry member and its folder.
//
// - A fetch that fails says why on the entry (`fetchError`) and is tried again after 2, 5, 15, 30 and
//   60 s, then every 10 minutes while the app runs, until 7 days after the media came. Entries
//   with media not kept yet are tried again when the app starts (when a gateway is there).
// - Media whose call has no entry yet (the call's end and the event race, or the app records the
//   call later) is held for 10 minutes and attached when the entry comes.
// - An id is matched whole against the entries' call ids: never routed by its prefix (protocol.md).
// - A url the service gave with the media id is tried first while it lives (5 minutes); then the
//   media id is looked up (GatewayClient.fetchMedia).
// - Play: the kept file; else the media fetched now, by the entry's media id or the one given (the
//   team's records), and kept when the entry has it.
import type { HistoryEntry } from '../../shared/history';
import { english, text, type RuleText } from '../../shared/i18n/text';
import type { Logger } from '../../shared/log';
import { errorText, errText, ok, type AppError, type Result } from '../../shared/result';
import type { CapturedMedia } from '../../shared/service-capture';
import type { MediaFetching, MediaLink } from './gateway-client';
import type { HistoryStore } from './history-store';
import type { KeptMedia, MediaFiles } from './media-files';

/** Pauses between the first tries of one file's fetch; then MEDIA_RETRY_LATER_MS. */
export const MEDIA_RETRY_MS = [2_000, 5_000, 15_000, 30_000, 60_000] as const;
export const MEDIA_RETRY_LATER_MS = 10 * 60_000;
/** How long media waits for its call's entry. */
export const MEDIA_HOLD_MS = 10 * 60_000;
/** How long a url the service gives lives. */
export const MEDIA_LINK_MS = 5 * 60_000;
/** Media of calls this app may never have (an id says nothing of what it is) is held too: at most this many. */
const HELD_LIMIT = 200;

type Timer = ReturnType<typeof setTimeout>;

/** The entry members a keeper keeps media on: all `{ mediaId, at, saved, fetchError? }`. */
export type MediaMember = 'voicemail' | 'serviceRecording' | 'transcript';

/** What one keeper keeps. */
export interface MediaKind {
  member: MediaMember;
  /** How log lines name one: "a voicemail". */
  what: string;
  /** How long the service keeps the media id after `at`. */
  keptMs: number;
  maxBytes: number;
  /** The call has none (`callId`, `localId` when asked by it). */
  none: (ids: { callId: string; localId?: string }) => RuleText;
  /** The disk refused the file. */
  notKept: (reason: string) => RuleText;
}

export interface MediaKeeperOptions {
  kind: MediaKind;
  history: HistoryStore;
  files: MediaFiles;
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

/** One file's fetches: one try at a time, the next one's timer while it waits. */
interface Fetches {
  tries: number;
  timer?: Timer;
  running?: Promise<Result<KeptMedia>>;
}

export class MediaKeeper {
  /** Media waiting for its call's entry, by call id, the oldest first. */
  private readonly held = new Map<string, Held>();
  /** The urls the service gave, by call id, while they live. */
  private readonly links = new Map<string, { mediaId: string; link: MediaLink; until: number }>();
  /** By call id. */
  private readonly fetches = new Map<string, Fetches>();
  /** Ends the downloads under way when the app quits. */
  private readonly quitting = new AbortController();
  private readonly setTimer: NonNullable<MediaKeeperOptions['setTimer']>;
  private readonly clearTimer: NonNullable<MediaKeeperOptions['clearTimer']>;
  private readonly unsubscribe: () => void;
  private readonly kind: MediaKind;
  private stopped = false;

  constructor(private readonly o: MediaKeeperOptions) {
    this.kind = o.kind;
    this.setTimer = o.setTimer ?? ((run, ms) => setTimeout(run, ms));
    this.clearTimer = o.clearTimer ?? ((timer) => clearTimeout(timer));
    this.unsubscribe = o.history.onChanged(() => this.attachHeld());
  }

  /** Media `mediaId` of call `callId`, ready at `at` (unix ms); `link` where the service said it is for now. */
  received(callId: string, mediaId: string, at: number, link?: MediaLink): void {
    if (this.stopped) return;
    if (link !== undefined) this.links.set(callId, { mediaId, link, until: this.o.now() + MEDIA_LINK_MS });
    if (this.entriesOf(callId).length > 0) {
      this.attach(callId, mediaId, at);
      return;
    }
    this.held.delete(callId);
    this.held.set(callId, { mediaId, at, heldAt: this.o.now() });
    if (this.held.size > HELD_LIMIT) this.letGo(this.held.keys().next().value!);
    this.o.log.info(`${this.kind.what} waits for its call in recent calls`, { callId, mediaId });
  }

  /** Fetches every file not kept yet that the service may still have (a start, a new gateway). */
  resume(): void {
    if (this.stopped) return;
    const now = this.o.now();
    const callIds = new Set<string>();
    for (const entry of this.o.history.entries()) {
      const media = entry[this.kind.member];
      if (entry.callId !== undefined && media !== undefined && !media.saved && now < media.at + this.kind.keptMs) callIds.add(entry.callId);
    }
    for (const callId of callIds) if (!this.fetches.has(callId)) this.restart(callId);
  }

  /** The call's file to play or read: kept, else fetched now (`localId` names the call in a refusal). */
  async file(callId: string, mediaId?: string, localId?: string): Promise<Result<KeptMedia>> {
    const known = this.mediaOf(callId);
    const kept = await this.o.files.read(callId);
    if (kept !== undefined && (known === undefined || kept.mediaId === known.mediaId)) return ok(kept);
    if (known !== undefined) {
      // The entry's media, fetched now: it is kept, and its retries start over from here.
      let fetches = this.fetches.get(callId);
      if (fetches === undefined) {
        fetches = { tries: 0 };
        this.fetches.set(callId, fetches);
      }
      return this.run(callId, fetches);
    }
    const id = this.held.get(callId)?.mediaId ?? mediaId;
    if (id === undefined) return errText('not_found', this.kind.none({ callId, ...(localId !== undefined ? { localId } : {}) }));
    const fetched = await this.fetchMedia(callId, id);
    return fetched.ok ? ok({ callId, mediaId: id, mimeType: fetched.value.mimeType, bytes: fetched.value.bytes }) : fetched;
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
    this.links.clear();
    await Promise.allSettled(running);
  }

  private entriesOf(callId: string): HistoryEntry[] {
    return this.o.history.entries().filter((e) => e.callId === callId);
  }

  private mediaOf(callId: string): CapturedMedia | undefined {
    const member = this.kind.member;
    return this.entriesOf(callId).find((e) => e[member] !== undefined)?.[member];
  }

  /** Marks the call's entries and fetches the file; the same media again changes nothing. */
  private attach(callId: string, mediaId: string, at: number): void {
    const member = this.kind.member;
    let marked = false;
    for (const entry of this.entriesOf(callId)) {
      if (entry[member]?.mediaId === mediaId) continue;
      this.o.history.record({ ...entry, [member]: { mediaId, at, saved: false } });
      marked = true;
    }
    if (marked) {
      this.o.log.info(`a call has ${this.kind.what}`, { callId, mediaId });
      this.restart(callId);
    } else if (this.mediaOf(callId)?.saved === false && !this.fetches.has(callId)) this.restart(callId);
  }

  /** Entries that came for held media take it; those held too long are let go. */
  private attachHeld(): void {
    if (this.held.size === 0 || this.stopped) return;
    const now = this.o.now();
    const ready: [string, Held][] = [];
    for (const [callId, held] of this.held) {
      if (now - held.heldAt > MEDIA_HOLD_MS) this.letGo(callId);
      else if (this.entriesOf(callId).length > 0) ready.push([callId, held]);
    }
    for (const [callId, held] of ready) {
      this.held.delete(callId);
      this.attach(callId, held.mediaId, held.at);
    }
  }

  /** Held media no entry came for: its url goes with it. */
  private letGo(callId: string): void {
    this.held.delete(callId);
    this.links.delete(callId);
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
  private run(callId: string, fetches: Fetches): Promise<Result<KeptMedia>> {
    if (fetches.running !== undefined) return fetches.running;
    if (fetches.timer !== undefined) this.clearTimer(fetches.timer);
    fetches.timer = undefined;
    const media = this.mediaOf(callId);
    if (media === undefined) {
      this.fetches.delete(callId);
      return Promise.resolve(errText('not_found', this.kind.none({ callId })));
    }
    const running = this.tryOnce(callId, media.mediaId).then((result) => {
      fetches.running = undefined;
      this.settle(callId, media.mediaId, fetches, result);
      return result;
    });
    fetches.running = running;
    return running;
  }

  private async tryOnce(callId: string, mediaId: string): Promise<Result<KeptMedia>> {
    const fetched = await this.fetchMedia(callId, mediaId);
    if (!fetched.ok) return fetched;
    if (this.stopped) return errText('not_available', text('service.shuttingDown'));
    try {
      await this.o.files.keep(callId, fetched.value, this.o.now());
    } catch (e) {
      this.o.log.error(`${this.kind.what} could not be kept`, { callId, mediaId, error: e });
      return errText('internal', this.kind.notKept(errorText(e)));
    }
    const { mimeType, bytes } = fetched.value;
    this.o.log.info(`${this.kind.what} is kept`, { callId, mediaId, bytes: bytes.length });
    return ok({ callId, mediaId, mimeType, bytes });
  }

  /** The media by its id, first at the url the service gave with it while that lives. */
  private fetchMedia(callId: string, mediaId: string): ReturnType<MediaFetching['fetchMedia']> {
    const gateway = this.o.gateway();
    if (gateway === undefined) return Promise.resolve(errText('not_configured', text('service.notConfigured')));
    const given = this.links.get(callId);
    if (given !== undefined && (given.mediaId !== mediaId || given.until <= this.o.now())) this.links.delete(callId);
    const link = this.links.get(callId)?.link;
    return link === undefined ? gateway.fetchMedia(mediaId, this.kind.maxBytes, this.quitting.signal) : gateway.fetchMedia(mediaId, this.kind.maxBytes, this.quitting.signal, link);
  }

  /** The try is over: the entry says so, and another is due unless it worked or the service has let the media go. */
  private settle(callId: string, mediaId: string, fetches: Fetches, result: Result<KeptMedia>): void {
    if (this.stopped || this.fetches.get(callId) !== fetches) return;
    if (result.ok) {
      this.fetches.delete(callId);
      this.links.delete(callId);
      this.mark(callId, mediaId, (v) => ({ mediaId: v.mediaId, at: v.at, saved: true }));
      return;
    }
    fetches.tries += 1;
    const reason = reasonOf(result.error);
    this.mark(callId, mediaId, (v) => ({ ...v, saved: false, fetchError: reason }));
    const media = this.mediaOf(callId);
    const pause = MEDIA_RETRY_MS[fetches.tries - 1] ?? MEDIA_RETRY_LATER_MS;
    if (media?.mediaId !== mediaId || this.o.now() + pause >= media.at + this.kind.keptMs) {
      this.fetches.delete(callId);
      if (media?.mediaId === mediaId) this.o.log.warn(`${this.kind.what} was not kept: the service keeps it no longer`, { callId, mediaId, reason });
      return;
    }
    if (fetches.tries === 1) this.o.log.warn(`${this.kind.what} could not be fetched yet; it is tried again`, { callId, mediaId, reason });
    fetches.timer = this.setTimer(() => void this.run(callId, fetches), pause);
  }

  /** Changes the media `mediaId` of the call's entries (only where that changes something: no write per try). */
  private mark(callId: string, mediaId: string, change: (media: CapturedMedia) => CapturedMedia): void {
    const member = this.kind.member;
    for (const entry of this.entriesOf(callId)) {
      const media = entry[member];
      if (media?.mediaId !== mediaId) continue;
      const next = change(media);
      if (JSON.stringify(next) !== JSON.stringify(media)) this.o.history.record({ ...entry, [member]: next });
    }
  }
}

/** The error's English sentence (a gateway's refusal in its clear words, or the gateway's own). */
const reasonOf = (error: AppError): string => (error.text !== undefined ? english(error.text) : error.message);

// The media engine: the only owner of RTCPeerConnection, MediaStream and the remote <audio> elements
// (style.md 6; the store only ever sees plain data). It keeps one CallMedia per call, keyed by the
// call's localId (call-media.ts: its leg, audio and health), routes each call pushed by the main
// process to it, and reports media facts; it sends no call command (call commands belong to
// renderer/app/call-actions.ts). Media acts on one trigger, the pushed call: ringing prepares the
// answer (a bridged ring's leg may connect ahead: warmRingLeg), `connecting` lets ICE start
// (incoming) or applies the customer's answer (outgoing), `heldSince` holds and resumes, `muted`
// mutes (the track stays, disabled: silence; a held call's microphone opens only on the resume), `ended`
// closes. A bridged call rejoining (`rejoin`: the window that carried its audio went, or its media
// failed) brings the bridge's offer of a new leg: its answer is prepared as for a ringing call, and
// ICE starts once the relay applied it (`rejoin.answered`). A supervisor's leg of a call it joined is
// no call of its own: `monitor` (monitor-media.ts) holds it, on the same devices.
import type { LegReport } from '../../shared/bridge';
import type { CallState } from '../../shared/call-state';
import type { WindowCallTimings } from '../../shared/diagnostics';
import type { IceConfig } from '../../shared/ice-servers';
import { createLogger } from '../../shared/log';
import { errorText, ok, type Result } from '../../shared/result';
import { NO_STATS, callStats, candidatePathOf, type CallLevels, type CallStats, type CandidatePath } from './audio-stats';
import type { AudioRoute } from './call-audio';
import { CallMedia, type MediaFact, type MediaSessionReport } from './call-media';
import { GATHER_CAP_MS } from './call-leg';
import { HoldMusic, type HoldMusicSource } from './hold-music';
import { BRIDGED_DISCONNECT_GRACE_MS, DISCONNECT_GRACE_MS, type CallQualityRecord, type MediaCondition, type QualityView } from './media-health';
import { mediaFailure, mediaProblem, type MediaOutcome, type MediaText } from './media-text';
import { Listeners } from './listeners';
import { MonitorMedia, type MonitorMediaDeps } from './monitor-media';

const log = createLogger('media');

/** The devices calls use; '' is the system default. */
export interface AudioRouting {
  microphone: string;
  speaker: string;
}

/** How long a call's capture waits for the device choice to be known before it takes the default. */
const ROUTING_WAIT_MS = 1_000;

const NO_SERVERS: IceConfig = { iceServers: [], iceTransportPolicy: 'all' };

export interface MediaEngineOptions {
  getUserMedia?: (constraints: MediaStreamConstraints) => Promise<MediaStream>;
  createPeerConnection?: (config: RTCConfiguration) => RTCPeerConnection;
  /** The ICE servers and transport policy of a call starting now (renderer/webrtc/ice-config.ts); none by default. */
  iceConfig?: () => Promise<Result<IceConfig>>;
  /** Where remote <audio> elements go; document.body by default. */
  audioParent?: () => HTMLElement;
  /** Makes a call's remote <audio> element; document.createElement('audio') by default. */
  createAudioElement?: () => HTMLAudioElement;
  gatherCapMs?: number;
  disconnectGraceMs?: number;
  /** The grace of a bridged call's media; BRIDGED_DISCONNECT_GRACE_MS by default. */
  bridgedDisconnectGraceMs?: number;
  /** The music a held customer hears (renderer/webrtc/hold-music.ts); made when first needed by default. */
  holdMusic?: HoldMusicSource;
}

/** When each step of a call's set-up happened in the window (shared/diagnostics.ts). */
export type CallTimings = WindowCallTimings;

/** Unix ms with performance.now()'s fractions, as the main process stamps its own moments. */
export const wallClockNow = (): number => performance.timeOrigin + performance.now();

export class MediaEngine {
  private readonly calls = new Map<string, CallMedia>();
  private readonly timings = new Map<string, CallTimings>();
  /** The last leg of a rejoining call this window prepared media for: each offer is answered at most once here. */
  private readonly rejoinLegs = new Map<string, string>();
  /** Bridged rings answered with a leg of this window's own (another window took the ring's). */
  private readonly ownRingLegs = new Map<string, { legId: string; offerSdp: string }>();
  private readonly facts = new Listeners<MediaFact>('media fact');
  private readonly conditions = new Listeners<MediaCondition>('media condition');
  private readonly qualities = new Listeners<CallQualityRecord>('call quality');
  private readonly notices = new Listeners<{ localId: string; text: MediaText }>('media notice');
  private readonly options: MediaEngineOptions;
  private holdMusicSource: HoldMusicSource | undefined;
  private routing: AudioRouting = { microphone: '', speaker: '' };
  /** Settles once the latest routing handed to useDevices() is known. */
  private routingKnown: Promise<void> = Promise.resolve();
  private routingSeq = 0;
  /** What every leg is made with: the options', else the browser's. */
  private readonly parts: Omit<MonitorMediaDeps, 'devices' | 'routingKnown'>;
  /** A supervisor's leg of the team call it joined (monitor-media.ts), on the devices calls use. */
  readonly monitor: MonitorMedia;

  constructor(options: MediaEngineOptions = {}) {
    const o = (this.options = options);
    this.holdMusicSource = options.holdMusic;
    this.parts = {
      getUserMedia: o.getUserMedia ?? ((c) => navigator.mediaDevices.getUserMedia(c)),
      createPeerConnection: o.createPeerConnection ?? ((c) => new RTCPeerConnection(c)),
      iceConfig: o.iceConfig ?? (() => Promise.resolve(ok(NO_SERVERS))),
      audioParent: o.audioParent ?? (() => document.body),
      createAudioElement: o.createAudioElement ?? (() => document.createElement('audio')),
      holdMusic: () => (this.holdMusicSource ??= new HoldMusic()),
      gatherCapMs: o.gatherCapMs ?? GATHER_CAP_MS,
    };
    this.monitor = new MonitorMedia({ ...this.parts, devices: () => ({ ...this.routing }), routingKnown: () => this.routingSettled() });
  }

  /** Media facts (connected, failed), for the calls domain to report to the main process. */
  onFact(listener: (fact: MediaFact) => void): () => void {
    return this.facts.add(listener);
  }

  /** Media stopping and coming back on connected calls ("Reconnecting…"). */
  onCondition(listener: (condition: MediaCondition) => void): () => void {
    return this.conditions.add(listener);
  }

  /** A call's quality summary and samples, once its media closes (only calls that connected). */
  onCallQuality(listener: (record: CallQualityRecord) => void): () => void {
    return this.qualities.add(listener);
  }

  /** A problem the agent should read on this call's panel, as a value (worded where it is shown). */
  onNotice(listener: (notice: { localId: string; text: MediaText }) => void): () => void {
    return this.notices.add(listener);
  }

  has(localId: string): boolean {
    return this.calls.has(localId);
  }

  /**
   * Follows the main process's view of a call. Safe to call with every push, in any order. A new
   * leg offered to a rejoining call, not answered yet, replaces the call's media (the failed leg's,
   * or none after a reload), once per leg.
   */
  onCall(call: CallState): void {
    const media = this.calls.get(call.localId);
    if (media) media.seen = true;
    const offered = rejoinOffer(call);
    if (call.phase === 'ended') {
      this.close(call.localId);
      this.rejoinLegs.delete(call.localId);
      this.ownRingLegs.delete(call.localId);
    } else if (offered && this.rejoinLegs.get(call.localId) !== offered.legId) this.prepareRejoin(call, offered);
    else if (media) media.follow(call);
    else if (call.phase === 'ringing' && call.direction === 'incoming') this.prepareIncoming(call.localId, call.offerSdp).follow(call);
  }

  /** After a snapshot: media for calls the main process no longer has live is closed. */
  reconcile(calls: readonly CallState[]): void {
    const live = new Set(calls.filter((c) => c.phase !== 'ended').map((c) => c.localId));
    for (const [localId, media] of this.calls) if (media.seen && !live.has(localId)) this.close(localId);
    for (const legs of [this.rejoinLegs, this.ownRingLegs]) for (const localId of [...legs.keys()]) if (!live.has(localId)) legs.delete(localId);
    for (const call of calls) this.onCall(call);
  }

  /**
   * The Answer click, media side: the complete answer, made while the call rang. A preparation
   * that failed (e.g. the microphone was refused) is tried once more, now that the agent is here to
   * see a permission prompt. Nothing reaches the customer until the call is pushed in `connecting`.
   */
  async answerFor(call: Extract<CallState, { direction: 'incoming' }>): Promise<MediaOutcome<{ sdp: string }>> {
    const { localId } = call;
    if (this.calls.get(localId)?.failedUnreported) this.close(localId);
    const media = this.calls.get(localId) ?? this.prepareIncoming(localId, this.ownRingLegs.get(localId)?.offerSdp ?? call.offerSdp);
    const answer = await media.answer();
    if (!answer.ok && answer.error.code === 'media_failed') this.close(localId);
    return answer;
  }

  /** A bridged ring: the answer made for it (handed over or not), the leg it answers (none: the ring's own), whether ICE runs on it. */
  async ringLegOf(localId: string): Promise<{ sdp: string; legId?: string; warm: boolean } | undefined> {
    const media = this.calls.get(localId);
    if (!media || media.legId !== undefined) return undefined;
    await media.leg.settled();
    const sdp = this.calls.get(localId) === media ? media.leg.description : undefined;
    const own = this.ownRingLegs.get(localId);
    return sdp === undefined || media.failedUnreported ? undefined : { sdp, ...(own ? { legId: own.legId } : {}), warm: media.leg.warmedUp };
  }

  /** A bridged ring's answer made afresh: to `own` (another window took the leg), else to the leg it answered (its ICE failed). False once Answer handed one over. */
  answerRingLegAgain(call: CallState, own?: { legId: string; offerSdp: string }): boolean {
    const phase = this.calls.get(call.localId)?.leg.phase.kind;
    if (call.phase !== 'ringing' || (phase !== undefined && phase !== 'ready' && phase !== 'failed')) return false;
    if (own) this.ownRingLegs.set(call.localId, own);
    this.close(call.localId);
    this.prepareIncoming(call.localId, this.ownRingLegs.get(call.localId)?.offerSdp ?? call.offerSdp);
    return true;
  }

  /** The team's bridge took the answer `sdp` while the call rings: ICE may run (CallLeg.warm). */
  warmRingLeg(localId: string, sdp: string): void {
    this.calls.get(localId)?.leg.warm(sdp);
  }

  /**
   * A rejoining call's answer to the bridge's offer of `rejoin.legId`, made as the offer came (the
   * rejoinCall command carries it). Handed over once: the media of another leg, or of none, has no
   * answer to give. Nothing reaches the bridge until the call is pushed with `rejoin.answered`.
   * `again` ("Try again"): a leg whose microphone could not be opened (its media closed) is prepared anew first.
   */
  async rejoinAnswerFor(call: CallState, again = false): Promise<MediaOutcome<{ sdp: string }>> {
    const { localId } = call;
    const offered = rejoinOffer(call);
    if (again && offered !== undefined && !this.calls.has(localId) && this.rejoinLegs.get(localId) === offered.legId) this.prepareRejoin(call, offered);
    const legId = offered?.legId;
    const media = this.calls.get(localId);
    if (legId === undefined || !media || media.legId !== legId) return mediaFailure('invalid_state', mediaProblem('endedBeforeAnswer'));
    const answer = await media.answer();
    if (!answer.ok && answer.error.code === 'media_failed' && this.calls.get(localId) === media) this.close(localId);
    return answer;
  }

  /**
   * A call being placed: microphone, one audio track, a complete offer. The calls domain sends it
   * with startCall; the customer's answer comes with the call's push.
   */
  async prepareOutgoing(localId: string): Promise<MediaOutcome<{ sdp: string }>> {
    if (this.calls.has(localId)) return mediaFailure('invalid_state', mediaProblem('alreadyHasMedia'));
    const offer = await this.open(localId).prepareOutgoing();
    if (!offer.ok) {
      if (offer.error.code === 'media_failed') this.close(localId);
      return offer;
    }
    return offer;
  }

  sendDtmf(localId: string, tones: string): boolean {
    return this.calls.get(localId)?.leg.sendDtmf(tones) ?? false;
  }

  /** Closes the call's media: peer connection, microphone, remote audio. Idempotent. */
  close(localId: string): void {
    const media = this.calls.get(localId);
    if (!media) return;
    this.calls.delete(localId);
    const record = media.close();
    const timings = this.timings.get(localId);
    if (record) this.qualities.emit(timings ? { ...record, timings } : record);
  }

  /** Closes a rejoining call's media of `legId` (its answer was not taken); the media of another leg stays. */
  closeRejoinLeg(localId: string, legId: string): void {
    if (this.calls.get(localId)?.legId === legId) this.close(localId);
  }

  /** Every call's media, and a joined call's (the window goes). */
  closeAll = (): void => {
    [...this.calls.keys()].forEach((localId) => this.close(localId));
    this.monitor.close();
  };

  /**
   * The devices calls use from now on, and at once for the calls under way (replaceTrack, setSinkId).
   * A routing still being worked out holds new captures back ROUTING_WAIT_MS at most.
   */
  useDevices(routing: AudioRouting | Promise<AudioRouting>): Promise<void> {
    const seq = ++this.routingSeq;
    const applied = Promise.resolve(routing).then(
      async (next) => {
        if (seq !== this.routingSeq) return;
        this.routing = { microphone: next.microphone, speaker: next.speaker };
        await Promise.all([...[...this.calls.values()].map((media) => media.audio.reconcile({ ...this.routing })), this.monitor.useDevices({ ...this.routing })]);
      },
      (e: unknown) => log.warn('the audio devices could not be worked out', { problem: errorText(e) }),
    );
    this.routingKnown = applied;
    return applied;
  }

  /** The speaker calls play on ('' = the system default); the call-waiting tone plays there too. */
  speakerId(): string {
    return this.routing.speaker;
  }

  /** Where the hold music comes from once it has played: the bundled file, or rendered in the window. */
  holdMusicOrigin(): 'file' | 'rendered' | undefined {
    return this.holdMusicSource instanceof HoldMusic ? this.holdMusicSource.origin() : undefined;
  }

  async levels(localId: string): Promise<CallLevels> {
    const media = this.calls.get(localId);
    const pc = media?.leg.pc;
    if (!media || !pc) return { mic: 0, customer: 0 };
    return media.levels.read(pc, media.audio.micOpen);
  }

  async stats(localId: string): Promise<CallStats> {
    const pc = this.calls.get(localId)?.leg.pc;
    return pc ? callStats(pc) : { ...NO_STATS };
  }

  async candidatePath(localId: string): Promise<CandidatePath | undefined> {
    const pc = this.calls.get(localId)?.leg.pc;
    return pc ? candidatePathOf(pc) : undefined;
  }

  /** The microphone track and the speaker of a call, for tests and diagnostics. */
  audioRouteOf(localId: string): AudioRoute | undefined {
    return this.calls.get(localId)?.audio.route();
  }

  /** A report of a bridged call's customer leg (the customerLegQuality push): judged beside the call's own leg. */
  customerLegQuality(localId: string, report: LegReport): void {
    this.calls.get(localId)?.health.customerLeg(report);
  }

  /** A call's quality now: the last second's sample and MOS, the warnings, "Reconnecting…", the summary so far. */
  qualityOf(localId: string): QualityView | undefined {
    return this.calls.get(localId)?.health.view();
  }

  /** Every call's media as it stands (phase, peer connection states, microphone), for diagnostics. */
  describe(): MediaSessionReport[] {
    return [...this.calls.values()].map((media) => media.describe());
  }

  timingsOf(localId: string): CallTimings {
    return { ...this.timings.get(localId) };
  }

  /**
   * Keeps a moment of a call's set-up (the first of each): it goes with the call's quality record to
   * the main process's diagnostics, and to the test probe (window.__softphoneMedia.timings). A click
   * (`clickedAt`) before the call's answer was handed over starts them afresh: an Answer that failed
   * or was refused (its media closed, or its preparation failed) says nothing of the one that follows.
   */
  noteTiming(localId: string, patch: CallTimings): void {
    const phase = this.calls.get(localId)?.leg.phase.kind;
    const handedOver = phase === 'answering' || phase === 'connecting' || phase === 'connected';
    if (patch.clickedAt !== undefined && !handedOver) this.timings.delete(localId);
    const known = this.timings.get(localId) ?? {};
    const fresh = Object.fromEntries(Object.entries(patch).filter(([moment]) => known[moment as keyof CallTimings] === undefined));
    this.timings.set(localId, { ...known, ...fresh });
    // Only recent calls matter to anyone reading these.
    if (this.timings.size > 50) this.timings.delete(this.timings.keys().next().value!);
  }

  /** Ringing: the answer made ahead (no remote candidate yet: nothing sent); a snapshot without the call closes it. */
  private prepareIncoming(localId: string, offerSdp: string): CallMedia {
    const media = this.open(localId);
    media.seen = true;
    media.prepareIncoming(offerSdp);
    return media;
  }

  /**
   * A rejoining call offered a new leg: the call's old media (its failed leg) goes, and the answer to
   * the offer is made at once, its candidates held back until the relay applies it. The hold, and the
   * bridged grace, follow the call from the start.
   */
  private prepareRejoin(call: CallState, offered: { legId: string; offerSdp: string }): void {
    const { localId } = call;
    this.close(localId);
    this.rejoinLegs.set(localId, offered.legId);
    const media = this.open(localId, offered.legId);
    media.seen = true;
    media.prepareIncoming(offered.offerSdp);
    media.follow(call);
  }

  private open(localId: string, legId?: string): CallMedia {
    const o = this.options;
    const media = new CallMedia(
      localId,
      {
        ...this.parts,
        disconnectGraceMs: o.disconnectGraceMs ?? DISCONNECT_GRACE_MS,
        bridgedDisconnectGraceMs: o.bridgedDisconnectGraceMs ?? BRIDGED_DISCONNECT_GRACE_MS,
        devices: { ...this.routing },
        routingKnown: () => this.routingSettled(),
        fact: (fact) => this.facts.emit(fact),
        moment: (moment) => this.noteTiming(localId, { [moment]: wallClockNow() }),
        condition: (condition) => this.conditions.emit(condition),
        notice: (id, text) => this.notices.emit({ localId: id, text }),
      },
      legId,
    );
    this.calls.set(localId, media);
    return media;
  }

  private async routingSettled(): Promise<void> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([this.routingKnown, new Promise((resolve) => (timer = setTimeout(resolve, ROUTING_WAIT_MS)))]);
    clearTimeout(timer);
  }
}

/**
 * The bridge's offer of a new leg to a rejoining call, while no window's answer to it was applied
 * (one applied already belongs to the window that sent it).
 */
function rejoinOffer(call: CallState): { legId: string; offerSdp: string } | undefined {
  if (call.phase !== 'connecting' && call.phase !== 'active') return undefined;
  const rejoin = call.rejoin;
  if (rejoin?.legId === undefined || rejoin.offerSdp === undefined || rejoin.answered) return undefined;
  return { legId: rejoin.legId, offerSdp: rejoin.offerSdp };
}

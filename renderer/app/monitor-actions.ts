// Supervisors on the team's bridge (shared/supervision.ts), the window's domain: the one owner of
// getLiveCalls, startMonitor, answerMonitor and leaveMonitor. While the Team view is open it reads
// the team's live calls every LIVE_CALLS_REFRESH_MS into the supervision store. "Listen", "Whisper",
// "Barge" on a call not joined yet joins it: the relay's node offers a leg, the media engine answers
// it (webrtc/monitor-media.ts) and the answer goes back; on the joined call they switch modes without
// dropping; "Leave" leaves. The monitorChanged push says when the call left this supervisor (it
// ended, the relay took the leg away): its media closes then; and whether the call records. One
// joined call at a time.
import type { MonitorChange, SoftphoneApi, Unsubscribe } from '../../shared/api';
import { createLogger } from '../../shared/log';
import type { Result } from '../../shared/result';
import { LIVE_CALLS_REFRESH_MS, liveCallsSchema, type MonitorMode } from '../../shared/supervision';
import { parseWith } from '../../shared/validation';
import type { StoreApi } from 'zustand/vanilla';
import { parsePush } from '../bridge/payload-schemas';
import { errorMessage, refusalText } from '../error-texts';
import { i18n } from '../i18n/i18n';
import type { CallParties, SupervisionState } from '../store/supervision';
import type { MonitorMedia } from '../webrtc/monitor-media';
import { mediaText } from '../webrtc/media-text';
import { documentVisibility, pollWhileShown, type PageVisibility } from './poll-while-shown';

const log = createLogger('monitor');
const t = i18n.getFixedT(null, 'common');

/** The part of the media engine's monitor leg the domain drives. */
export type MonitorControls = Pick<MonitorMedia, 'answer' | 'connect' | 'setMode' | 'close' | 'legOf' | 'onFact'>;

export interface MonitorActionsDeps {
  api: Pick<SoftphoneApi, 'getLiveCalls' | 'startMonitor' | 'answerMonitor' | 'leaveMonitor' | 'onMonitorChanged'>;
  store: StoreApi<SupervisionState>;
  /** The supervisor's own leg; none where the window has no media (a join is refused then). */
  media?: MonitorControls | undefined;
  /** The document by default; none where there is no window (always shown then). */
  visibility?: PageVisibility | undefined;
  now?: () => number;
}

export class MonitorActions {
  private readonly api: MonitorActionsDeps['api'];
  private readonly store: StoreApi<SupervisionState>;
  private readonly media: MonitorControls | undefined;
  private readonly visibility: PageVisibility | undefined;
  private readonly now: () => number;
  /** Each join, switch and leave takes a turn: what answers after a later one began is out of date. */
  private turn = 0;

  constructor(deps: MonitorActionsDeps) {
    this.api = deps.api;
    this.store = deps.store;
    this.media = deps.media;
    this.visibility = deps.visibility ?? documentVisibility();
    this.now = deps.now ?? Date.now;
  }

  private get state(): SupervisionState {
    return this.store.getState();
  }

  /** Hears the relay's word on the joined call, and the joined call's media. */
  start(): Unsubscribe {
    const stops: Unsubscribe[] = [];
    stops.push(
      this.api.onMonitorChanged((payload: unknown) => {
        const change = parsePush('monitorChanged', payload);
        if (!change.ok) log.warn('dropped a malformed push', { push: 'monitorChanged', problem: change.error.message });
        else this.changed(change.value);
      }),
    );
    if (this.media) {
      stops.push(
        this.media.onFact((fact) => {
          const joined = this.state.joined;
          if (joined?.callId !== fact.callId) return;
          if (fact.state === 'connected') this.state.updateJoined({ stage: 'connected' });
          else void this.leaveWith(fact.callId, t('monitor.audioFailed', { reason: mediaText(fact.reason) }));
        }),
      );
    }
    return () => {
      for (const stop of stops.splice(0)) stop();
      this.media?.close();
    };
  }

  /**
   * The Team view is open (a supervisor's): reads the live calls now, then every
   * LIVE_CALLS_REFRESH_MS, one read at a time, none while the window is hidden. The returned
   * function stops it and forgets the list; a joined call stays.
   */
  watch(): Unsubscribe {
    const poll = pollWhileShown({
      read: async (live) => {
        const result = await this.api.getLiveCalls({});
        if (live()) this.applyLiveCalls(result);
      },
      intervalMs: LIVE_CALLS_REFRESH_MS,
      visibility: this.visibility,
      now: this.now,
    });
    return () => {
      poll.stop();
      this.state.forgetList();
    };
  }

  /**
   * "Listen", "Whisper", "Barge" on a live call: the joined call switches to `mode`; another call is
   * joined (the one joined before is left, its leg closed first). A refusal is said in the call's
   * item; a join already under way for it is not asked twice.
   */
  async monitor(callId: string, parties: CallParties, mode: MonitorMode): Promise<void> {
    const joined = this.state.joined;
    if (joined?.callId === callId) return this.switchTo(mode);
    if (this.state.notes[callId]?.kind === 'joining') return;
    const turn = ++this.turn;
    if (joined) {
      this.media?.close();
      this.state.setJoined(null);
    }
    this.state.setNote(callId, { kind: 'joining' });
    this.state.setNotice(null);
    const joinedNow = await this.join(callId, mode, turn, parties);
    this.state.setNote(callId, joinedNow.ok ? null : { kind: 'refused', text: joinedNow.error });
  }

  /** "Leave": the leg closes at once (the microphone with it) and the relay is told; the call goes on. */
  async leave(): Promise<void> {
    const joined = this.state.joined;
    if (!joined) return;
    ++this.turn;
    this.media?.close();
    this.state.setJoined(null);
    const left = await this.api.leaveMonitor({ callId: joined.callId });
    if (!left.ok) log.warn('the relay was not told of a leave: the closed leg tells it', { callId: joined.callId, problem: left.error.message });
  }

  /** The relay's word on the joined call: another mode, whether it records, or the call left this supervisor. */
  changed(change: MonitorChange): void {
    const joined = this.state.joined;
    if (joined?.callId !== change.callId) return;
    if (change.mode !== 'left') {
      if (change.recording !== undefined) this.state.updateJoined({ recording: change.recording });
      // The mode in force said again (with the recording) changes nothing: a switch to "Listen"
      // under way keeps the microphone it closed at once.
      if (change.mode === joined.mode) return;
      this.media?.setMode(change.mode);
      this.state.updateJoined({ mode: change.mode });
      return;
    }
    ++this.turn;
    this.media?.close();
    this.state.setJoined(null);
    this.state.setNotice(change.reason === 'call_ended' ? t('monitor.callEnded') : t('monitor.removed'));
  }

  /** Joins `callId`: the relay's offer answered and handed back. The error's words when it could not. */
  private async join(callId: string, mode: MonitorMode, turn: number, parties: CallParties): Promise<{ ok: true } | { ok: false; error: string }> {
    const media = this.media;
    if (!media) return { ok: false, error: t('monitor.noAudio') };
    let started = await this.api.startMonitor({ callId, mode });
    // Joined already, by a window that went (a reload): its leg is gone with it, so a new one is asked for.
    if (started.ok && (started.value.legId === undefined || started.value.offer === undefined)) {
      await this.api.leaveMonitor({ callId });
      started = await this.api.startMonitor({ callId, mode });
    }
    if (turn !== this.turn) return this.abandon(callId);
    if (!started.ok) return { ok: false, error: refusalText(started.error) };
    const { legId, offer } = started.value;
    if (legId === undefined || offer === undefined) return { ok: false, error: t('monitor.noOffer') };
    this.state.setJoined({ callId, mode: started.value.mode, parties, stage: 'joining', switching: null, problem: null, recording: false });
    const answer = await media.answer(callId, legId, offer, started.value.mode);
    if (turn !== this.turn) return this.abandon(callId, legId);
    if (!answer.ok) return this.giveUp(callId, mediaText(answer.error.problem));
    const answered = await this.api.answerMonitor({ callId, legId, sdp: answer.value.sdp });
    if (turn !== this.turn) return this.abandon(callId, legId);
    if (!answered.ok) return this.giveUp(callId, refusalText(answered.error), legId);
    media.connect(legId);
    this.state.updateJoined({ stage: 'connecting' });
    return { ok: true };
  }

  /** A join that a later leave or join overtook: its leg, if any, closes and the relay is told. */
  private async abandon(callId: string, legId?: string): Promise<{ ok: true }> {
    if (legId !== undefined && this.media?.legOf(callId) === legId) this.media.close();
    if (this.state.joined?.callId !== callId) await this.api.leaveMonitor({ callId });
    return { ok: true };
  }

  /** A join that failed half-way: the leg closes, the relay is told, the call's item says why. */
  private async giveUp(callId: string, reason: string, legId?: string): Promise<{ ok: false; error: string }> {
    if (legId === undefined || this.media?.legOf(callId) === legId) this.media?.close();
    if (this.state.joined?.callId === callId) this.state.setJoined(null);
    await this.api.leaveMonitor({ callId });
    return { ok: false, error: reason };
  }

  /** The joined call in another mode; going to "Listen" closes the microphone at once, before the relay's word. */
  private async switchTo(mode: MonitorMode): Promise<void> {
    const joined = this.state.joined;
    if (!joined || joined.stage === 'joining' || (joined.mode === mode && joined.switching === null)) return;
    const turn = ++this.turn;
    const { callId } = joined;
    if (mode === 'listen') this.media?.setMode('listen');
    this.state.updateJoined({ switching: mode, problem: null });
    const switched = await this.api.startMonitor({ callId, mode });
    if (turn !== this.turn || this.state.joined?.callId !== callId) return;
    if (!switched.ok) {
      // The microphone as the mode still in force has it.
      this.media?.setMode(this.state.joined.mode);
      this.state.updateJoined({ switching: null, problem: t('monitor.switchFailed', { reason: refusalText(switched.error) }) });
      return;
    }
    this.media?.setMode(switched.value.mode);
    this.state.updateJoined({ mode: switched.value.mode, switching: null });
  }

  /** The joined call's media failed: the supervisor leaves it, told why. */
  private async leaveWith(callId: string, notice: string): Promise<void> {
    ++this.turn;
    this.media?.close();
    this.state.setJoined(null);
    this.state.setNotice(notice);
    await this.api.leaveMonitor({ callId });
  }

  private applyLiveCalls(result: Result<unknown>): void {
    if (!result.ok) {
      this.state.setError(t('team.live.readFailed', { reason: errorMessage(result.error) }));
      return;
    }
    const calls = parseWith(liveCallsSchema, result.value);
    if (!calls.ok) {
      this.state.setError(t('team.live.readFailed', { reason: errorMessage(calls.error) }));
      return;
    }
    this.state.applyLiveCalls(calls.value, this.now());
  }
}

// The audio devices domain: the agent's three choices (microphone, speaker, ringer) saved as
// preferences, applied to the calls and the ringer, followed across `devicechange` (a chosen device
// that vanishes falls back to the system default at once, mid-call too, and is used again when it
// comes back), and the Audio settings' checks. Holds no DOM object itself: devices, calls, the
// ringer and the checks are handed in, so it runs under test with fakes.
import type { AudioRole, Preferences, PreferencesPatch } from '../../shared/preferences';
import { errorText, type Result } from '../../shared/result';
import type { StoreApi } from 'zustand/vanilla';
import { i18n } from '../i18n/i18n';
import { words, type SettingsText } from '../store/settings-form';
import type { AppState } from '../store/store';
import { soundCheckError, type MicrophoneProbe, type SoundCheck } from '../sound/device-check';
import { EMPTY_DEVICE_LIST, ROLE_KIND, deviceIdOf, systemDefaultLabel, type AudioChoices, type AudioDevices, type DeviceEvent, type DeviceList } from '../webrtc/audio-devices';
import type { AudioRouting } from '../webrtc/media-engine';

/** The ringtone's output ('' = the system default). */
export interface RingerSink {
  setSinkId(deviceId: string): Promise<void>;
  /** A short ring on the ringer's own output path, so "Test ringer" proves what a real ring does. */
  playTest?(): Promise<void>;
}

/** The part of the media engine that places calls' audio. */
export interface AudioRoutingControls {
  useDevices(routing: AudioRouting | Promise<AudioRouting>): Promise<void>;
}

/**
 * A hot-swap notice: the devices it names, worded when shown (noticeText), so a change of language
 * re-words it. A fallback of null is the system default the system does not name.
 */
export type DeviceNotice = { kind: 'lost'; devices: { device: string; fallback: string | null }[] } | { kind: 'back'; devices: string[] };

export type MicrophoneTest = { kind: 'idle' } | { kind: 'starting' } | { kind: 'running'; level: number };

export interface AudioSettingsView {
  list: DeviceList;
  notice: DeviceNotice | null;
  microphoneTest: MicrophoneTest;
  /** The output check that plays now. */
  playing: 'speaker' | 'ringer' | null;
  /** Why the last check could not run (worded when shown: store/settings-form.ts settingsText). */
  checkError: SettingsText | null;
}

export interface DeviceActionsDeps {
  store: StoreApi<AppState>;
  savePreferences(patch: PreferencesPatch): Promise<Result<Preferences>>;
  /** Without devices (a host with no media devices) the domain lists nothing and routes nothing. */
  devices?: AudioDevices | undefined;
  engine?: AudioRoutingControls | undefined;
  ringer?: RingerSink | undefined;
  soundCheck?: SoundCheck | undefined;
  /** How long "Test microphone" runs unless stopped. */
  microphoneTestMs?: number;
  levelEveryMs?: number;
}

const MICROPHONE_TEST_MS = 6_000;
const LEVEL_EVERY_MS = 100;

const t = i18n.getFixedT(null, 'settings');

export function noticeOf(events: readonly DeviceEvent[]): DeviceNotice | null {
  const lost: { device: string; fallback: string | null }[] = [];
  const back: string[] = [];
  // A headset that is both speaker and ringer vanishes once, not twice.
  for (const e of events) {
    // An unnamed default comes worded in the language of the moment: it is worded again when shown.
    const fallback = e.kind === 'lost' && e.fallback !== systemDefaultLabel() ? e.fallback : null;
    if (e.kind === 'lost' && !lost.some((l) => l.device === e.choice.label && l.fallback === fallback)) lost.push({ device: e.choice.label, fallback });
    if (e.kind === 'back' && !back.includes(e.device.label)) back.push(e.device.label);
  }
  if (lost.length > 0) return { kind: 'lost', devices: lost };
  if (back.length > 0) return { kind: 'back', devices: back };
  return null;
}

/** "Headset disconnected: using Speakers", one sentence per device, in the UI's language now. */
export function noticeText(notice: DeviceNotice): string {
  const sentences =
    notice.kind === 'lost'
      ? notice.devices.map(({ device, fallback }) => t('devices.lost', { device, fallback: fallback ?? systemDefaultLabel() }))
      : notice.devices.map((device) => t('devices.back', { device }));
  return sentences.join(t('devices.separator'));
}

export class DeviceActions {
  private readonly deps: DeviceActionsDeps;
  private current: AudioSettingsView = { list: EMPTY_DEVICE_LIST, notice: null, microphoneTest: { kind: 'idle' }, playing: null, checkError: null };
  private readonly listeners = new Set<() => void>();
  private probe: { stop(): void } | null = null;
  private ringerSink: string | undefined;

  constructor(deps: DeviceActionsDeps) {
    this.deps = deps;
  }

  /** For useSyncExternalStore: a new object after every change. */
  readonly view = (): AudioSettingsView => this.current;

  readonly subscribe = (listener: () => void): (() => void) => {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  };

  private update(patch: Partial<AudioSettingsView>): void {
    this.current = { ...this.current, ...patch };
    for (const listener of [...this.listeners]) listener();
  }

  private choices(): AudioChoices {
    return this.deps.store.getState().preferences.audio;
  }

  /** Follows the choices and the devices; the returned function undoes it and stops any check. */
  start(): () => void {
    const { devices, store } = this.deps;
    if (!devices) return () => undefined;
    devices.setChoices(this.choices());
    const stops: (() => void)[] = [];
    stops.push(
      store.subscribe((state, previous) => {
        if (state.preferences.audio === previous.preferences.audio) return;
        devices.setChoices(state.preferences.audio);
        this.route();
        // Choices that came with the first snapshot need labels to be matched.
        if (!devices.devices().labelled && Object.values(state.preferences.audio).some((c) => c !== null)) void devices.refresh({ unlock: true });
      }),
    );
    stops.push(
      devices.onList((list) => {
        this.update({ list });
        this.route();
      }),
    );
    stops.push(
      devices.onEvents((events) => {
        const notice = noticeOf(events);
        if (notice) this.update({ notice });
      }),
    );
    stops.push(devices.watch());
    // Labels need media permission. An agent who chose a device has granted it before, so asking
    // at start-up costs no prompt then; without a choice there is nothing to match yet.
    const hasChoice = Object.values(this.choices()).some((c) => c !== null);
    const first = devices.refresh({ unlock: hasChoice }).then((): AudioRouting => {
      const { microphone, speaker } = this.routingNow();
      return { microphone, speaker };
    });
    // Calls that start meanwhile wait for this rather than open the wrong microphone.
    void this.deps.engine?.useDevices(first);
    return () => {
      for (const stop of stops) stop();
      this.stopMicrophoneTest();
    };
  }

  /** Settings shows the lists: with labels, which need a permission the agent may grant now. */
  async openSettings(): Promise<void> {
    await this.deps.devices?.refresh({ unlock: true });
  }

  /** Saves the choice at once; '' is the system default. The routing follows the saved preferences. */
  async choose(role: AudioRole, deviceId: string): Promise<Result<Preferences>> {
    const device = this.current.list[ROLE_KIND[role]].devices.find((d) => d.id === deviceId);
    const stored = this.choices()[role];
    // The option of a stored device that is not here keeps its stored id.
    const choice = deviceId === '' ? null : device ? { id: device.id, label: device.label } : stored?.id === deviceId ? stored : null;
    return this.deps.savePreferences({ audio: { [role]: choice } });
  }

  dismissNotice(): void {
    this.update({ notice: null });
  }

  /** "Test microphone": a live level of the chosen microphone for a few seconds; pressed again, it stops. */
  async toggleMicrophoneTest(): Promise<void> {
    if (this.current.microphoneTest.kind !== 'idle') {
      this.stopMicrophoneTest();
      return;
    }
    const check = this.deps.soundCheck;
    if (!check) return;
    this.update({ microphoneTest: { kind: 'starting' }, checkError: null });
    const deviceId = this.deps.devices ? deviceIdOf(this.deps.devices.resolve('microphone')) : '';
    let probe: MicrophoneProbe;
    try {
      probe = await check.openMicrophone(deviceId);
    } catch (e) {
      this.update({ microphoneTest: { kind: 'idle' }, checkError: soundCheckError('microphone', e) });
      return;
    }
    // Stopped while the microphone was opening (read afresh: the await may have changed it).
    if (this.view().microphoneTest.kind !== 'starting') {
      probe.stop();
      return;
    }
    const every = setInterval(() => this.update({ microphoneTest: { kind: 'running', level: probe.level() } }), this.deps.levelEveryMs ?? LEVEL_EVERY_MS);
    const end = setTimeout(() => this.stopMicrophoneTest(), this.deps.microphoneTestMs ?? MICROPHONE_TEST_MS);
    this.probe = {
      stop: () => {
        clearInterval(every);
        clearTimeout(end);
        probe.stop();
      },
    };
    this.update({ microphoneTest: { kind: 'running', level: 0 } });
  }

  /** Stops "Test microphone" if it runs (e.g. the Audio settings closed). */
  stopMicrophoneTest(): void {
    this.probe?.stop();
    this.probe = null;
    if (this.current.microphoneTest.kind !== 'idle') this.update({ microphoneTest: { kind: 'idle' } });
  }

  /** "Test speaker" / "Test ringer": a short sound on that device. */
  async testOutput(role: 'speaker' | 'ringer'): Promise<void> {
    if (this.current.playing) return;
    const play = this.outputTest(role);
    if (!play) return;
    this.update({ playing: role, checkError: null });
    try {
      await play();
      this.update({ playing: null });
    } catch (e) {
      this.update({ playing: null, checkError: soundCheckError(role, e) });
    }
  }

  /** The ringer tests itself where it can: a chime on another path could pass while the ring is not heard. */
  private outputTest(role: 'speaker' | 'ringer'): (() => Promise<void>) | undefined {
    const ringerTest = role === 'ringer' ? this.deps.ringer?.playTest?.bind(this.deps.ringer) : undefined;
    if (ringerTest) return ringerTest;
    const check = this.deps.soundCheck;
    if (!check) return undefined;
    const sinkId = this.deps.devices ? deviceIdOf(this.deps.devices.resolve(role)) : '';
    return () => check.playTone(sinkId);
  }

  private routingNow(): AudioRouting & { ringer: string } {
    const routing = this.deps.devices?.routing() ?? { microphone: '', speaker: '', ringer: '' };
    return { microphone: routing.microphone, speaker: routing.speaker, ringer: routing.ringer };
  }

  /** Puts calls and the ringer on the devices the choices resolve to now. */
  private route(): void {
    const routing = this.routingNow();
    void this.deps.engine?.useDevices({ microphone: routing.microphone, speaker: routing.speaker });
    const ringer = this.deps.ringer;
    if (ringer && this.ringerSink !== routing.ringer) {
      this.ringerSink = routing.ringer;
      ringer.setSinkId(routing.ringer).catch((e: unknown) => {
        this.ringerSink = undefined;
        this.update({ checkError: words('audio.ringerNotSwitched', { detail: errorText(e) }) });
      });
    }
  }
}

// The audio devices this machine has, and which of them the agent's choices stand for. Device ids
// are not stable between sessions (and differ per origin), so a stored choice keeps its label too:
// same id, else same label, else the system default — and the caller learns which one it got.
// `devicechange` is watched so that a chosen device that vanishes falls back at once (a call must
// never go silent) and one that comes back is used again.
import type { AudioRole, DeviceChoice } from '../../shared/preferences';
import { AUDIO_ROLES } from '../../shared/preferences';
import { createLogger } from '../../shared/log';
import { errorText } from '../../shared/result';
import { i18n } from '../i18n/i18n';

const log = createLogger('devices');
const t = i18n.getFixedT(null, 'calls');

export type AudioDeviceKind = 'audioinput' | 'audiooutput';

export interface AudioDevice {
  id: string;
  label: string;
}

/** What enumerateDevices gives, reduced to what is read here (a fake in tests provides just this). */
export interface DeviceInfoLike {
  deviceId: string;
  groupId: string;
  kind: string;
  label: string;
}

/** navigator.mediaDevices, reduced to what is used here. */
export interface MediaDevicesLike {
  enumerateDevices(): Promise<readonly DeviceInfoLike[]>;
  getUserMedia(constraints: MediaStreamConstraints): Promise<{ getTracks(): readonly { stop(): void }[] }>;
  addEventListener(type: 'devicechange', listener: () => void): void;
  removeEventListener(type: 'devicechange', listener: () => void): void;
}

export interface DeviceKindList {
  /** Real devices only: the 'default' and 'communications' entries follow the system and are "System default" here. */
  devices: AudioDevice[];
  /**
   * What the system default is called, for "… disconnected: using <this>": its device's label, else
   * systemDefaultLabel() in the UI's language when read.
   */
  defaultLabel: string;
}

/** The words for a system default whose device is not known ("the system default"), in the UI's language. */
export const systemDefaultLabel = (): string => t('devices.systemDefault');

/** A list's part for one kind; without a known name, the default is worded each time it is read. */
function kindListOf(devices: AudioDevice[], defaultName: string | undefined): DeviceKindList {
  if (defaultName !== undefined) return { devices, defaultLabel: defaultName };
  return {
    devices,
    get defaultLabel() {
      return systemDefaultLabel();
    },
  };
}

export interface DeviceList {
  audioinput: DeviceKindList;
  audiooutput: DeviceKindList;
  /** False while the page has no media permission: devices then have no labels (and often no ids). */
  labelled: boolean;
}

export const EMPTY_DEVICE_LIST: DeviceList = {
  audioinput: kindListOf([], undefined),
  audiooutput: kindListOf([], undefined),
  labelled: false,
};

export const ROLE_KIND: Readonly<Record<AudioRole, AudioDeviceKind>> = { microphone: 'audioinput', speaker: 'audiooutput', ringer: 'audiooutput' };

/** How a stored choice was matched against the devices present now. */
export type DeviceResolution =
  | { via: 'default' }
  | { via: 'id'; device: AudioDevice }
  | { via: 'label'; device: AudioDevice }
  /** The chosen device is not here: the system default plays instead. */
  | { via: 'missing'; choice: DeviceChoice };

/** The id to hand to getUserMedia / setSinkId; '' is the system default. */
export function deviceIdOf(resolution: DeviceResolution): string {
  return resolution.via === 'id' || resolution.via === 'label' ? resolution.device.id : '';
}

export function resolveChoice(choice: DeviceChoice | null, list: DeviceKindList): DeviceResolution {
  if (!choice) return { via: 'default' };
  const byId = list.devices.find((d) => d.id === choice.id);
  if (byId) return { via: 'id', device: byId };
  // Labels can repeat (two identical headsets): the first one is as good a guess as any.
  const byLabel = choice.label !== '' ? list.devices.find((d) => d.label === choice.label) : undefined;
  if (byLabel) return { via: 'label', device: byLabel };
  return { via: 'missing', choice };
}

const PSEUDO_IDS = new Set(['default', 'communications']);

/**
 * Chromium names the default entry "Default - <device>" (or just "Default" on some Linux audio
 * servers). Undefined when the device behind the default is not known.
 */
function defaultNameOf(infos: readonly DeviceInfoLike[], devices: readonly DeviceInfoLike[]): string | undefined {
  const entry = infos.find((d) => d.deviceId === 'default');
  if (!entry) return devices[0]?.label || undefined;
  const stripped = entry.label.replace(/^Default\s*-\s*/, '');
  if (stripped !== '' && stripped !== 'Default') return stripped;
  const sameGroup = devices.find((d) => d.groupId !== '' && d.groupId === entry.groupId);
  return sameGroup?.label || undefined;
}

export function deviceListOf(infos: readonly DeviceInfoLike[]): DeviceList {
  const kindList = (kind: AudioDeviceKind): DeviceKindList => {
    const ofKind = infos.filter((d) => d.kind === kind);
    const real = ofKind.filter((d) => d.deviceId !== '' && !PSEUDO_IDS.has(d.deviceId));
    // Without media permission devices have no labels: they are numbered, in the language of the listing.
    const numbered = (n: number): string => (kind === 'audioinput' ? t('devices.microphoneN', { n }) : t('devices.speakerN', { n }));
    return kindListOf(
      real.map((d, i) => ({ id: d.deviceId, label: d.label || numbered(i + 1) })),
      defaultNameOf(ofKind, real),
    );
  };
  const audio = infos.filter((d) => d.kind === 'audioinput' || d.kind === 'audiooutput');
  return { audioinput: kindList('audioinput'), audiooutput: kindList('audiooutput'), labelled: audio.some((d) => d.label !== '') };
}

/** What changed for a chosen device on `devicechange`. */
export type DeviceEvent =
  | { kind: 'lost'; role: AudioRole; choice: DeviceChoice; fallback: string }
  | { kind: 'back'; role: AudioRole; device: AudioDevice };

export interface AudioDevicesOptions {
  mediaDevices: MediaDevicesLike;
}

export type AudioChoices = Record<AudioRole, DeviceChoice | null>;

/**
 * The device list and the agent's three choices. `refresh()` enumerates (unlocking labels once if
 * needed); every refresh compares each choice with the last one and reports the ones that vanished
 * or came back.
 */
export class AudioDevices {
  private readonly mediaDevices: MediaDevicesLike;
  private list: DeviceList = EMPTY_DEVICE_LIST;
  private choices: AudioChoices = { microphone: null, speaker: null, ringer: null };
  /** Whether each choice was present at the last refresh; undefined until a list was read with it. */
  private present: Partial<Record<AudioRole, boolean>> = {};
  private readonly eventListeners = new Set<(events: DeviceEvent[]) => void>();
  private readonly listListeners = new Set<(list: DeviceList) => void>();
  private unlockTried = false;
  private refreshing: Promise<DeviceList> | null = null;
  private refreshAgain = false;

  constructor(options: AudioDevicesOptions) {
    this.mediaDevices = options.mediaDevices;
  }

  devices(): DeviceList {
    return this.list;
  }

  resolve(role: AudioRole): DeviceResolution {
    return resolveChoice(this.choices[role], this.list[ROLE_KIND[role]]);
  }

  /** The device ids the three roles use now ('' = the system default). */
  routing(): Record<AudioRole, string> {
    return { microphone: deviceIdOf(this.resolve('microphone')), speaker: deviceIdOf(this.resolve('speaker')), ringer: deviceIdOf(this.resolve('ringer')) };
  }

  /** New choices (saved by the agent, or from another window). A changed choice starts afresh: no event. */
  setChoices(choices: AudioChoices): void {
    for (const role of AUDIO_ROLES) {
      const before = this.choices[role];
      const after = choices[role];
      if (before?.id !== after?.id || before?.label !== after?.label) delete this.present[role];
    }
    this.choices = { ...choices };
    this.noteChoices(false);
  }

  /** Device lists and chosen devices that vanished or came back. */
  onEvents(listener: (events: DeviceEvent[]) => void): () => void {
    this.eventListeners.add(listener);
    return () => this.eventListeners.delete(listener);
  }

  onList(listener: (list: DeviceList) => void): () => void {
    this.listListeners.add(listener);
    return () => this.listListeners.delete(listener);
  }

  /** Follows `devicechange` until the returned function is called. */
  watch(): () => void {
    const onChange = (): void => void this.refresh();
    this.mediaDevices.addEventListener('devicechange', onChange);
    return () => this.mediaDevices.removeEventListener('devicechange', onChange);
  }

  /**
   * Reads the devices. With `unlock`, and no labels yet, asks once for the microphone (stopped at
   * once) because browsers give labels only to a page that has media permission.
   * Concurrent refreshes share one read, and one more runs after it so no change is missed.
   */
  refresh(options: { unlock?: boolean } = {}): Promise<DeviceList> {
    if (this.refreshing) {
      this.refreshAgain = true;
      return this.refreshing;
    }
    this.refreshing = (async () => {
      try {
        let list = await this.read();
        if (!list.labelled && options.unlock && !this.unlockTried) {
          this.unlockTried = true;
          try {
            const stream = await this.mediaDevices.getUserMedia({ audio: true, video: false });
            stream.getTracks().forEach((t) => t.stop());
            list = await this.read();
          } catch (e) {
            log.info('device labels stay hidden: no microphone permission', { problem: errorText(e) });
          }
        }
        this.adopt(list);
        return list;
      } finally {
        this.refreshing = null;
        if (this.refreshAgain) {
          this.refreshAgain = false;
          void this.refresh();
        }
      }
    })();
    return this.refreshing;
  }

  private async read(): Promise<DeviceList> {
    try {
      return deviceListOf(await this.mediaDevices.enumerateDevices());
    } catch (e) {
      log.warn('the audio devices could not be listed', { problem: errorText(e) });
      return this.list;
    }
  }

  private adopt(list: DeviceList): void {
    this.list = list;
    for (const listener of [...this.listListeners]) listener(list);
    this.noteChoices(true);
  }

  private noteChoices(report: boolean): void {
    // Without labels (no permission yet) nothing can be told apart: wait for a labelled list.
    if (!this.list.labelled) return;
    const events: DeviceEvent[] = [];
    for (const role of AUDIO_ROLES) {
      const choice = this.choices[role];
      if (!choice) {
        delete this.present[role];
        continue;
      }
      const resolution = this.resolve(role);
      const here = resolution.via !== 'missing';
      const before = this.present[role];
      this.present[role] = here;
      if (!report || before === undefined || before === here) continue;
      if (resolution.via === 'id' || resolution.via === 'label') events.push({ kind: 'back', role, device: resolution.device });
      else events.push({ kind: 'lost', role, choice, fallback: this.list[ROLE_KIND[role]].defaultLabel });
    }
    if (events.length === 0) return;
    for (const listener of [...this.eventListeners]) listener(events);
  }
}

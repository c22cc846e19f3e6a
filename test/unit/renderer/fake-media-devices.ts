// navigator.mediaDevices as the audio-devices code sees it: a device list a test changes, a
// `devicechange` it fires, and a getUserMedia that records what it was asked and whether it was stopped.
import type { DeviceInfoLike, MediaDevicesLike } from '../../../renderer/webrtc/audio-devices';

export const input = (deviceId: string, label: string, groupId = `g-${deviceId}`): DeviceInfoLike => ({ deviceId, label, groupId, kind: 'audioinput' });
export const output = (deviceId: string, label: string, groupId = `g-${deviceId}`): DeviceInfoLike => ({ deviceId, label, groupId, kind: 'audiooutput' });

export class FakeMediaDevices extends EventTarget implements MediaDevicesLike {
  devices: DeviceInfoLike[];
  /** What enumerateDevices gives before permission: browsers hide the labels. */
  permission: boolean;
  readonly asked: MediaStreamConstraints[] = [];
  stopped = 0;
  enumerations = 0;

  constructor(devices: DeviceInfoLike[], options: { permission?: boolean } = {}) {
    super();
    this.devices = devices;
    this.permission = options.permission ?? true;
  }

  async enumerateDevices(): Promise<DeviceInfoLike[]> {
    this.enumerations++;
    return this.devices.map((d) => (this.permission ? { ...d } : { ...d, label: '' }));
  }

  async getUserMedia(constraints: MediaStreamConstraints): Promise<{ getTracks(): { stop(): void }[] }> {
    this.asked.push(constraints);
    this.permission = true;
    return { getTracks: () => [{ stop: () => void this.stopped++ }] };
  }

  /** A device plugged in or pulled out. */
  change(devices: DeviceInfoLike[]): void {
    this.devices = devices;
    this.dispatchEvent(new Event('devicechange'));
  }

  override addEventListener(type: 'devicechange', listener: () => void): void {
    super.addEventListener(type, listener);
  }

  override removeEventListener(type: 'devicechange', listener: () => void): void {
    super.removeEventListener(type, listener);
  }
}

/** A desk: the laptop's own devices (the system default) and a headset. */
export const DESK = {
  laptopMic: input('mic-laptop', 'Microphone Array (Realtek)', 'laptop'),
  headsetMic: input('mic-headset', 'Headset Microphone (Jabra)', 'jabra'),
  laptopSpeakers: output('out-laptop', 'Speakers (Realtek)', 'laptop'),
  headsetEar: output('out-headset', 'Headset Earphone (Jabra)', 'jabra'),
  monitor: output('out-monitor', 'DELL U2720Q (HDMI)', 'dell'),
};

export const deskDevices = (options: { headset?: boolean } = {}): DeviceInfoLike[] => [
  input('default', 'Default - Microphone Array (Realtek)', 'laptop'),
  input('communications', 'Communications - Microphone Array (Realtek)', 'laptop'),
  DESK.laptopMic,
  ...(options.headset === false ? [] : [DESK.headsetMic]),
  output('default', 'Default - Speakers (Realtek)', 'laptop'),
  DESK.laptopSpeakers,
  ...(options.headset === false ? [] : [DESK.headsetEar]),
  DESK.monitor,
  { deviceId: 'cam', label: 'HD Webcam', groupId: 'cam', kind: 'videoinput' },
];

export const settle = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 0));

// The Audio settings' checks: a short tone on one output device, and a live level of one microphone.
// Both open their own audio objects and release them when done, apart from any call.
import { deviceProblem } from '../webrtc/microphone';
import { words, type SettingsText } from '../store/settings-form';

const TONE_SECONDS = 1.2;
const TONE_VOLUME = 0.2;

/** A microphone opened for its level; stop() releases it. */
export interface MicrophoneProbe {
  /** 0..1, the RMS of the last few milliseconds. */
  level(): number;
  stop(): void;
}

export interface SoundCheck {
  /** Plays a short two-note chime on the output device ('' = the system default); resolves when it ends. */
  playTone(sinkId: string): Promise<void>;
  openMicrophone(deviceId: string): Promise<MicrophoneProbe>;
}

/**
 * The chime goes through an <audio> element fed by WebAudio, because setSinkId on an element is
 * older and wider supported than AudioContext.setSinkId.
 */
async function playTone(sinkId: string): Promise<void> {
  const ctx = new AudioContext();
  const audio = document.createElement('audio');
  try {
    const destination = ctx.createMediaStreamDestination();
    const gain = ctx.createGain();
    gain.connect(destination);
    const t0 = ctx.currentTime + 0.05;
    [660, 880].forEach((frequency, i) => {
      const start = t0 + i * (TONE_SECONDS / 2);
      const end = start + TONE_SECONDS / 2 - 0.05;
      const osc = ctx.createOscillator();
      osc.frequency.value = frequency;
      osc.connect(gain);
      gain.gain.setValueAtTime(0, start);
      gain.gain.linearRampToValueAtTime(TONE_VOLUME, start + 0.02);
      gain.gain.setValueAtTime(TONE_VOLUME, end - 0.03);
      gain.gain.linearRampToValueAtTime(0, end);
      osc.start(start);
      osc.stop(end);
    });
    if (sinkId !== '') await audio.setSinkId(sinkId);
    audio.srcObject = destination.stream;
    await ctx.resume();
    await audio.play();
    await new Promise((resolve) => setTimeout(resolve, (TONE_SECONDS + 0.1) * 1000));
  } finally {
    audio.pause();
    audio.srcObject = null;
    await ctx.close().catch(() => undefined);
  }
}

async function openMicrophone(deviceId: string): Promise<MicrophoneProbe> {
  const stream = await navigator.mediaDevices.getUserMedia({
    audio: deviceId === '' ? true : { deviceId: { exact: deviceId } },
    video: false,
  });
  const ctx = new AudioContext();
  const analyser = ctx.createAnalyser();
  analyser.fftSize = 1024;
  ctx.createMediaStreamSource(stream).connect(analyser);
  void ctx.resume().catch(() => undefined);
  const samples = new Float32Array(analyser.fftSize);
  return {
    level() {
      analyser.getFloatTimeDomainData(samples);
      let sum = 0;
      for (const v of samples) sum += v * v;
      return Math.sqrt(sum / samples.length);
    },
    stop() {
      stream.getTracks().forEach((t) => t.stop());
      ctx.close().catch(() => undefined);
    },
  };
}

export const browserSoundCheck: SoundCheck = { playTone, openMicrophone };

export type SoundCheckDevice = 'speaker' | 'ringer' | 'microphone';

/** Why a check could not run (settings.json soundCheck.<device>.<problem>), and the error's own words. */
export interface SoundCheckFailure {
  problem: 'noPermission' | 'notConnected' | 'failed';
  detail: string;
}

export function soundCheckFailure(e: unknown): SoundCheckFailure {
  const { kind, detail } = deviceProblem(e);
  switch (kind) {
    case 'denied':
      return { problem: 'noPermission', detail: '' };
    case 'missing':
      return { problem: 'notConnected', detail: '' };
    case 'busy':
    case 'failed':
      // The checks have no sentence of their own for a device another application holds.
      return { problem: 'failed', detail };
  }
}

/** Words for a check that could not run, as a sentence. */
export function soundCheckError(what: SoundCheckDevice, e: unknown): SettingsText {
  const { problem, detail } = soundCheckFailure(e);
  return words('soundCheck.sentence', { text: words(`soundCheck.${what}.${problem}`, { detail }) });
}

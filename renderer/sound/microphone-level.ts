// "Test my setup"'s microphone check: the chosen microphone opened with echo cancellation, noise
// suppression and automatic gain off, and the highest sample it delivers over a short window. With
// the processing on, noise suppression can make a working but quiet microphone read as silent and
// automatic gain a nearly muted one read as fine. ("Test microphone", device-check.ts, is the other
// check: a live meter of the microphone as calls hear it.) Everything opened here is released when
// the measurement ends or its signal aborts.
import { i18n } from '../i18n/i18n';

export interface MicrophoneReading {
  /** The highest sample over the window, 0..1 of full scale. */
  peak: number;
  /** The system reports the track muted (a mute switch, the system's own mute). */
  muted: boolean;
  /** The device that was opened, as the system names it ('' when it does not say). */
  label: string;
}

/** A 2048-sample analyser holds ~43 ms at 48 kHz: reading every 40 ms sees every sample. */
const FFT_SIZE = 2048;
const READ_EVERY_MS = 40;

/** `work`, unless the signal aborts first (then its reason is thrown): nothing here waits past a timeout. */
function untilAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    if (signal.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = (): void => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}

const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Opens the microphone ('' = the system default) and measures its peak for `ms`. */
export async function measureMicrophonePeak(deviceId: string, ms: number, signal: AbortSignal): Promise<MicrophoneReading> {
  const audio: MediaTrackConstraints = {
    echoCancellation: false,
    noiseSuppression: false,
    autoGainControl: false,
    ...(deviceId !== '' ? { deviceId: { exact: deviceId } } : {}),
  };
  const opening = navigator.mediaDevices.getUserMedia({ audio, video: false });
  // A permission prompt can hold getUserMedia for as long as the agent leaves it open: a microphone
  // granted after the check gave up is released at once.
  void opening.then(
    (stream) => {
      if (signal.aborted) stream.getTracks().forEach((t) => t.stop());
    },
    () => undefined,
  );
  const stream = await untilAborted(opening, signal);
  const track = stream.getAudioTracks()[0];
  let ctx: AudioContext | undefined;
  try {
    ctx = new AudioContext();
    const analyser = ctx.createAnalyser();
    analyser.fftSize = FFT_SIZE;
    ctx.createMediaStreamSource(stream).connect(analyser);
    await untilAborted(ctx.resume(), signal);
    // A context that does not run reads zeros: that is not a silent microphone.
    if (ctx.state !== 'running') throw new Error(i18n.t('soundCheck.audioNotStarted', { ns: 'settings' }));
    const samples = new Float32Array(analyser.fftSize);
    let peak = 0;
    const until = performance.now() + ms;
    for (;;) {
      const left = until - performance.now();
      if (left <= 0) break;
      await untilAborted(pause(Math.min(READ_EVERY_MS, left)), signal);
      analyser.getFloatTimeDomainData(samples);
      for (const v of samples) peak = Math.max(peak, Math.abs(v));
    }
    return { peak: Math.min(1, peak), muted: track?.muted ?? false, label: track?.label ?? '' };
  } finally {
    stream.getTracks().forEach((t) => t.stop());
    void ctx?.close().catch(() => undefined);
  }
}

// The microphone as calls and the Audio checks open it, and the one reading of why it could not be
// opened (getUserMedia's DOMException names), which each place words in its own sentences: the call's
// notice (rules:callMedia.mic*), "Test microphone" and the speaker and ringer checks
// (settings:soundCheck.*), "Test my setup" (settings:setup.microphone.*).
import { errorText } from '../../shared/result';
import { mediaProblem, type MediaText } from './media-text';

export const MIC_CONSTRAINTS: MediaStreamConstraints = {
  audio: { echoCancellation: true, noiseSuppression: true, autoGainControl: true },
  video: false,
};

/** A call's microphone: the device chosen ('' = the system default), with the call's processing. */
export function microphoneConstraints(deviceId: string): MediaStreamConstraints {
  if (deviceId === '') return MIC_CONSTRAINTS;
  return { ...MIC_CONSTRAINTS, audio: { ...(MIC_CONSTRAINTS.audio as MediaTrackConstraints), deviceId: { exact: deviceId } } };
}

/**
 * Why a device could not be opened:
 * - `denied`: the agent or a policy refused the permission (NotAllowedError, SecurityError);
 * - `missing`: no such device, or the chosen one is gone (NotFoundError, OverconstrainedError);
 * - `busy`: the system could not open it, another application may hold it (NotReadableError, AbortError);
 * - `failed`: anything else; `detail` has its own words.
 */
export type DeviceProblemKind = 'denied' | 'missing' | 'busy' | 'failed';

export interface DeviceProblem {
  kind: DeviceProblemKind;
  /** The error's own words (for `failed`, and for a check that has no sentence for `busy`). */
  detail: string;
}

const nameOf = (e: unknown): string => (typeof e === 'object' && e !== null && 'name' in e ? String(e.name) : '');

export function deviceProblem(e: unknown): DeviceProblem {
  const detail = errorText(e);
  switch (nameOf(e)) {
    case 'NotAllowedError':
    case 'SecurityError':
      return { kind: 'denied', detail };
    case 'NotFoundError':
    case 'OverconstrainedError':
      return { kind: 'missing', detail };
    case 'NotReadableError':
    case 'AbortError':
      return { kind: 'busy', detail };
    default:
      return { kind: 'failed', detail };
  }
}

/** The device a chosen microphone was opened on is gone (or never was): the default will do. */
export const isMissingDevice = (e: unknown): boolean => deviceProblem(e).kind === 'missing';

/** A call's microphone that could not be opened, in the calls' words. */
export function microphoneProblem(e: unknown): MediaText {
  const { kind, detail } = deviceProblem(e);
  switch (kind) {
    case 'denied':
      return mediaProblem('micDenied');
    case 'missing':
      return mediaProblem('micNotFound');
    case 'busy':
      return mediaProblem('micBusy');
    case 'failed':
      return mediaProblem('micUnavailable', { problem: detail });
  }
}

/**
 * A call's microphone: the device asked for, or the system default when that one is not here (a call
 * is never refused for want of a device the agent once chose). `device` is the one really opened.
 */
export async function captureMicrophone(
  getUserMedia: (constraints: MediaStreamConstraints) => Promise<MediaStream>,
  deviceId: string,
  onFallback: () => void = () => undefined,
): Promise<{ stream: MediaStream; device: string }> {
  if (deviceId !== '') {
    try {
      return { stream: await getUserMedia(microphoneConstraints(deviceId)), device: deviceId };
    } catch (e) {
      if (!isMissingDevice(e)) throw e;
      onFallback();
    }
  }
  return { stream: await getUserMedia(MIC_CONSTRAINTS), device: '' };
}

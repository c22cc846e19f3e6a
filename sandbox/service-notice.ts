// The legal notice the service plays to both sides of a call it records or transcribes (protocol.md
// "What the service added in 2026"): a two-note chime, then a spoken sentence
// (assets/service-notice.wav, 16 kHz mono 16-bit, made with espeak-ng). The customer's phone sends
// it toward the business before its own voice, so the agent hears it; the customer, whose phone
// plays it, counts as having heard it. One English sentence for every announcement language: the
// call report names the language asked for and the one spoken (sandbox/REFERENCE.md "The service's
// recording and transcript").
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { defaultVoicePath, encodeOpusFrames, FRAME_MS, FRAME_SAMPLES, parsePcmWavAnyRate, SAMPLE_RATE } from './customer-voice';

export const SERVICE_NOTICE_FILE = 'service-notice.wav';
/** What the bundled sentence says, word for word: the transcript's text for the notice. */
export const SERVICE_NOTICE_TEXT = 'This call may be recorded and transcribed.';
/** The language the sentence is spoken in, whatever `announcement_language` asked for. */
export const SERVICE_NOTICE_SPOKEN_LANGUAGE = 'en';
/**
 * The chime's two notes, 200 ms each: above every voicemail tone (500–1450 Hz), the probe tones
 * (720–1440 Hz) and the hold music's notes, so that a test tells the notice from any other sound.
 */
export const SERVICE_NOTICE_CHIME_HZ = [1600, 2000] as const;
const NOTE_SAMPLES = SAMPLE_RATE / 5;
/** Between the chime and the words. */
const GAP_SAMPLES = SAMPLE_RATE / 5;
/** The chime's peak, of full scale. */
const CHIME_AMPLITUDE = 0.25;
const FADE_SAMPLES = SAMPLE_RATE / 100;

export interface ServiceNotice {
  /** 20 ms Opus frames: the chime, a short pause, the sentence. Played once. */
  frames: readonly Buffer[];
  /** The first frames that hold the chime and the pause after it: no words. */
  chimeFrames: number;
  /** Spoken words, empty when the sentence could not be read (the chime alone is played). */
  text: string;
  spokenLanguage: string;
  /** Where the sentence came from: a file path, or "chime only". */
  source: string;
}

/** Beside the customers' voice: the bundled assets/ folder, or the folder a packaged app was given for the voice. */
export function defaultNoticePath(voicePath?: string): string {
  return voicePath === undefined ? defaultVoicePath(SERVICE_NOTICE_FILE) : join(dirname(voicePath), SERVICE_NOTICE_FILE);
}

function chime(): Int16Array {
  const samples = new Int16Array(SERVICE_NOTICE_CHIME_HZ.length * NOTE_SAMPLES + GAP_SAMPLES);
  SERVICE_NOTICE_CHIME_HZ.forEach((hz, note) => {
    for (let i = 0; i < NOTE_SAMPLES; i++) {
      const fade = Math.min(1, i / FADE_SAMPLES, (NOTE_SAMPLES - i) / FADE_SAMPLES);
      samples[note * NOTE_SAMPLES + i] = Math.round(32767 * CHIME_AMPLITUDE * fade * Math.sin((2 * Math.PI * hz * i) / SAMPLE_RATE));
    }
  });
  return samples;
}

/** Linear interpolation to 48 kHz: the sentence is kept at 16 kHz to keep the file small. */
function to48k(rate: number, samples: Int16Array): Int16Array {
  if (rate === SAMPLE_RATE) return samples;
  const at = (i: number) => samples[Math.min(i, samples.length - 1)]!;
  const out = new Int16Array(Math.floor((samples.length * SAMPLE_RATE) / rate));
  for (let i = 0; i < out.length; i++) {
    const t = (i * rate) / SAMPLE_RATE;
    const j = Math.floor(t);
    out[i] = Math.round(at(j) * (1 - (t - j)) + at(j + 1) * (t - j));
  }
  return out;
}

const cache = new Map<string, ServiceNotice>();

/** The notice, encoded once per path. An unreadable sentence leaves the chime alone, with `problem` saying why. */
export function loadServiceNotice(path = defaultNoticePath()): { notice: ServiceNotice; problem?: string } {
  const cached = cache.get(path);
  if (cached) return { notice: cached };
  const bell = chime();
  let speech: Int16Array | undefined;
  let problem: string | undefined;
  try {
    const wav = parsePcmWavAnyRate(readFileSync(path));
    if (wav.ok && wav.value.samples.length > 0) speech = to48k(wav.value.rate, wav.value.samples);
    else problem = wav.ok ? `notice file ${path}: no samples` : wav.error.message;
  } catch (e) {
    problem = `notice file: cannot read ${path}: ${(e as Error).message}`;
  }
  // One frame of silence more pushes the last words out of the encoder's lookahead.
  const samples = new Int16Array(bell.length + (speech?.length ?? 0) + FRAME_SAMPLES);
  samples.set(bell, 0);
  if (speech) samples.set(speech, bell.length);
  const notice: ServiceNotice = {
    frames: encodeOpusFrames(samples),
    chimeFrames: bell.length / FRAME_SAMPLES,
    text: speech ? SERVICE_NOTICE_TEXT : '',
    spokenLanguage: SERVICE_NOTICE_SPOKEN_LANGUAGE,
    source: speech ? path : 'chime only',
  };
  if (speech) cache.set(path, notice);
  return problem === undefined ? { notice } : { notice, problem };
}

/** How long the notice plays, ms. */
export const noticeMs = (notice: ServiceNotice): number => notice.frames.length * FRAME_MS;

// The consent notice a customer hears each time the team's bridge starts recording a call
// (relay/REFERENCE.md "Recordings"): one bundled per language of the service's (assets/record-notice/
// LANG.wav, made by scripts/make-record-notices.ts), or the team's own WAV file (`--record-notice`).
// Read once at start and handed to the nodes as 48 kHz mono PCM (shared/bridge-recording.ts).
import { open, readFile, stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { NOTICE_SAMPLE_RATE, RECORD_NOTICE_MAX_SECONDS } from '../shared/bridge-recording';
import { errorText, err, ok, type Result } from '../shared/result';
import type { AnnouncementLanguage } from '../shared/service-capture';
import { readPcmWav, readWavHeader, toMonoAt, type WavHeader } from '../shared/wav';

/** The folder of the bundled notices, under the project's (or the packaged app's) assets/. */
export const RECORD_NOTICE_DIR = 'record-notice';

/** What each bundled notice says, and the espeak-ng voice that says it (scripts/make-record-notices.ts). */
export const RECORD_NOTICE_WORDS: Readonly<Record<AnnouncementLanguage, { voice: string; text: string }>> = {
  en_US: { voice: 'en-us', text: 'This call is being recorded.' },
  en_GB: { voice: 'en-gb', text: 'This call is being recorded.' },
  es_ES: { voice: 'es', text: 'Esta llamada está siendo grabada.' },
  es_MX: { voice: 'es-419', text: 'Esta llamada está siendo grabada.' },
  pt_BR: { voice: 'pt-br', text: 'Esta chamada está sendo gravada.' },
  hi: { voice: 'hi', text: 'यह कॉल रिकॉर्ड की जा रही है।' },
  id: { voice: 'id', text: 'Panggilan ini sedang direkam.' },
  ar: { voice: 'ar', text: 'يتم تسجيل هذه المكالمة.' },
};

/** The rates a notice file may have: a telephone's to the bridge's own. */
export const RECORD_NOTICE_MIN_RATE = 8_000;
export const RECORD_NOTICE_MAX_RATE = 48_000;

/** How much of a file too large to read whole is read to judge its header. */
const HEADER_BYTES = 64 * 1024;
/**
 * The largest file read whole: the longest notice at the highest rate in stereo, and room for other
 * chunks (a LIST of tags, a cue sheet). A larger one is refused before it is read.
 */
const MAX_FILE_BYTES = RECORD_NOTICE_MAX_SECONDS * RECORD_NOTICE_MAX_RATE * 2 * 2 + 4 * 1024 * 1024;

/** The bundled notice of `language`: in `assetsDir` when given (the packaged app's), else the project's assets/ beside this module. */
export function bundledNoticePath(language: AnnouncementLanguage, assetsDir?: string): string {
  if (assetsDir !== undefined) return resolve(assetsDir, RECORD_NOTICE_DIR, `${language}.wav`);
  try {
    return fileURLToPath(new URL(`../assets/${RECORD_NOTICE_DIR}/${language}.wav`, import.meta.url));
  } catch {
    // A CommonJS bundle has no import.meta.url: the working directory's assets/.
    return resolve('assets', RECORD_NOTICE_DIR, `${language}.wav`);
  }
}

/** The rule a notice breaks by its channels, rate or length (as its header says them), or undefined. */
export function noticeHeaderProblem(audio: Pick<WavHeader, 'channels' | 'sampleRate' | 'frames'>): string | undefined {
  const { channels, sampleRate, frames } = audio;
  if (channels > 2) return `must be mono or stereo: this file has ${channels} channels`;
  if (sampleRate < RECORD_NOTICE_MIN_RATE || sampleRate > RECORD_NOTICE_MAX_RATE) {
    return `must have a sample rate from ${RECORD_NOTICE_MIN_RATE} to ${RECORD_NOTICE_MAX_RATE} Hz: this file's is ${sampleRate} Hz`;
  }
  if (frames === 0) return 'holds no samples: a notice says something';
  const seconds = frames / sampleRate;
  if (seconds > RECORD_NOTICE_MAX_SECONDS) return `must be at most ${RECORD_NOTICE_MAX_SECONDS} seconds long: this file lasts ${seconds.toFixed(1)} s`;
  return undefined;
}

/**
 * A notice WAV file as the bridge plays it: 16-bit PCM mono at NOTICE_SAMPLE_RATE. Refused, with the
 * rule it breaks, when it is no 16-bit PCM WAV file, has more than two channels, a rate outside 8 to
 * 48 kHz, no samples, or lasts longer than RECORD_NOTICE_MAX_SECONDS. A file too large to be such a
 * notice is judged by its header alone, never read whole. (readFile and stat read inside the
 * packaged app's archive too, where the bundled notices are.)
 */
export async function loadRecordNotice(path: string): Promise<Result<Int16Array>> {
  try {
    const { size } = await stat(path);
    if (size > MAX_FILE_BYTES) return err('invalid_input', await tooLargeProblem(path, size));
    const audio = readPcmWav(new Uint8Array(await readFile(path)));
    if (!audio.ok) return audio;
    const problem = noticeHeaderProblem(audio.value);
    if (problem !== undefined) return err('invalid_input', problem);
    return ok(toMonoAt(audio.value, NOTICE_SAMPLE_RATE));
  } catch (e) {
    return err('invalid_input', `cannot be read: ${errorText(e)}`);
  }
}

/** Why a file too large for a notice is not one: what its header says is wrong, else its size. */
async function tooLargeProblem(path: string, size: number): Promise<string> {
  const handle = await open(path, 'r');
  try {
    const head = new Uint8Array(HEADER_BYTES);
    const { bytesRead } = await handle.read(head, 0, HEADER_BYTES, 0);
    const header = readWavHeader(head.subarray(0, bytesRead), { whole: false });
    const problem = header.ok ? noticeHeaderProblem(header.value) : header.error.message;
    return problem ?? `is ${size} bytes: a notice of at most ${RECORD_NOTICE_MAX_SECONDS} seconds is far smaller (chunks other than its samples make it so large)`;
  } finally {
    await handle.close();
  }
}

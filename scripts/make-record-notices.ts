// Writes the bundled consent notices of the team's recordings (assets/record-notice/LANG.wav, one
// per language of RECORD_NOTICE_LANGUAGES): each sentence of RECORD_NOTICE_WORDS
// (relay/record-notice.ts) spoken by espeak-ng in its voice, then made 16 kHz mono 16-bit PCM by sox
// with the silence at both ends trimmed. Debian's espeak-ng and sox; run it after changing the
// words, and commit the files (their licence is the project's: they are made by its own tools).
//
//   npx tsx scripts/make-record-notices.ts          → writes every file and prints each path, size and length
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { RECORD_NOTICE_LANGUAGES } from '../shared/bridge-recording';
import { readWavHeader } from '../shared/wav';
import { RECORD_NOTICE_DIR, RECORD_NOTICE_WORDS } from '../relay/record-notice';

const run = promisify(execFile);

/** Where the files go: the project's assets folder. */
export const RECORD_NOTICES_PATH = join(dirname(fileURLToPath(import.meta.url)), '..', 'assets', RECORD_NOTICE_DIR);

/** The rate of the bundled files: speech needs no more, and the relay resamples to 48 kHz once at start. */
export const BUNDLED_NOTICE_RATE = 16_000;
/** espeak-ng's words a minute: a little slower than its default, for a notice said over a phone line. */
const WORDS_PER_MINUTE = 160;

async function makeOne(language: (typeof RECORD_NOTICE_LANGUAGES)[number], workDir: string): Promise<string> {
  const { voice, text } = RECORD_NOTICE_WORDS[language];
  const raw = join(workDir, `${language}.raw.wav`);
  const target = join(RECORD_NOTICES_PATH, `${language}.wav`);
  await run('espeak-ng', ['-v', voice, '-s', String(WORDS_PER_MINUTE), '-w', raw, text]);
  // Trim the silence espeak-ng leaves at both ends: the customer hears the words at once.
  await run('sox', [raw, '-r', String(BUNDLED_NOTICE_RATE), '-c', '1', '-b', '16', target, 'silence', '1', '0.02', '0.5%', 'reverse', 'silence', '1', '0.02', '0.5%', 'reverse']);
  const header = readWavHeader(new Uint8Array(await readFile(target)));
  if (!header.ok) throw new Error(`${target}: ${header.error.message}`);
  return `${target}: ${(await stat(target)).size} bytes, ${(header.value.frames / header.value.sampleRate).toFixed(2)} s`;
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await mkdir(RECORD_NOTICES_PATH, { recursive: true });
  const workDir = await mkdtemp(join(tmpdir(), 'record-notices-'));
  try {
    for (const language of RECORD_NOTICE_LANGUAGES) console.log(await makeOne(language, workDir));
  } finally {
    await rm(workDir, { recursive: true, force: true });
  }
}

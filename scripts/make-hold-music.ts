// Writes the hold music (assets/hold-music.wav) from its code (shared/hold-music-render.ts): mono,
// 16-bit PCM at 24 kHz, 8 s, meant to loop. Run it after changing the music, and commit both:
// test/unit/shared/hold-music.test.ts fails while the file and the code disagree.
//
//   npx tsx scripts/make-hold-music.ts        → writes the file and prints its path and size
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { HOLD_MUSIC_FILE } from '../shared/hold-music';
import { holdMusicWav } from '../shared/hold-music-render';

/** Where the file goes: the project's assets folder. */
export const HOLD_MUSIC_PATH = join(dirname(fileURLToPath(import.meta.url)), '..', 'assets', HOLD_MUSIC_FILE);

/** The file's bytes, as this script writes them. */
export const holdMusicFileBytes = (): Uint8Array => holdMusicWav();

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const bytes = holdMusicFileBytes();
  writeFileSync(HOLD_MUSIC_PATH, bytes);
  console.log(`${HOLD_MUSIC_PATH}: ${bytes.length} bytes`);
}

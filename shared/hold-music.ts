// The hold music: what a customer on hold hears (assets/hold-music.wav, written by
// scripts/make-hold-music.ts from the music's code in hold-music-render.ts; its licence is in
// assets/README.md). It is built only from the notes below, so a listener that knows them — the
// sandbox's customers — can tell it from a voice: the music's energy sits on these pitches and
// their octave above, speech spreads its energy elsewhere.

/** The notes of the hold music, in Hz: C major pentatonic from C4 to A5. */
export const HOLD_MUSIC_NOTES_HZ: readonly number[] = [261.63, 293.66, 329.63, 392.0, 440.0, 523.25, 587.33, 659.25, 783.99, 880.0];

/** The asset, relative to the app's assets folder. */
export const HOLD_MUSIC_FILE = 'hold-music.wav';

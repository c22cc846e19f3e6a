// A real, small voicemail for the window tests: a sine tone as 16-bit mono PCM in a WAV file, base64
// as getVoicemail hands a file over. Chromium decodes it, so a test can see the player load it.

/** `seconds` of a `hz` tone at 8 kHz, as a WAV file in base64. */
export function toneWavBase64(seconds: number, hz = 440, rate = 8000): string {
  const samples = Math.round(seconds * rate);
  const file = Buffer.alloc(44 + samples * 2);
  file.write('RIFF', 0, 'ascii');
  file.writeUInt32LE(36 + samples * 2, 4);
  file.write('WAVEfmt ', 8, 'ascii');
  file.writeUInt32LE(16, 16); // the fmt chunk's size
  file.writeUInt16LE(1, 20); // PCM
  file.writeUInt16LE(1, 22); // mono
  file.writeUInt32LE(rate, 24);
  file.writeUInt32LE(rate * 2, 28); // bytes a second
  file.writeUInt16LE(2, 32); // bytes a frame
  file.writeUInt16LE(16, 34); // bits a sample
  file.write('data', 36, 'ascii');
  file.writeUInt32LE(samples * 2, 40);
  for (let i = 0; i < samples; i++) file.writeInt16LE(Math.round(12_000 * Math.sin((2 * Math.PI * hz * i) / rate)), 44 + i * 2);
  return file.toString('base64');
}

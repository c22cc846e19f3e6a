// What a customer says on a voicemail (POST /control/voicemail): about 4 s of the customer's own
// tone (sandboxVoicemailToneHz, shared/sandbox.ts), mono, 48 kHz, in 20 ms Opus packets in an Ogg
// Opus file, as the service delivers voicemails (protocol.md: audio/ogg; codecs=opus). The packets
// are encoded once per tone; each file gets its own stream serial, so no two voicemails are the same
// bytes (nor the same sha256), as no two real ones are.
import { OGG_OPUS_MIME_TYPE, oggOpusFile } from '../shared/ogg-opus';
import { sandboxVoicemailToneHz } from '../shared/sandbox';
import { encodeOpusFrames, FRAME_SAMPLES, SAMPLE_RATE } from './customer-voice';

export const VOICEMAIL_MIME_TYPE = OGG_OPUS_MIME_TYPE;
/** The message's length: what a player plays, exactly. */
export const VOICEMAIL_SAMPLES = 4 * SAMPLE_RATE;
/** The tone's peak, of full scale: clearly heard, far from clipping after Opus. */
const AMPLITUDE = 0.3;
/** Fades in and out over 10 ms, so that the message starts and stops without a click. */
const FADE_SAMPLES = SAMPLE_RATE / 100;

const packetsByTone = new Map<number, Buffer[]>();

function tonePackets(hz: number): Buffer[] {
  const cached = packetsByTone.get(hz);
  if (cached) return cached;
  // One frame of silence more pushes the encoder's lookahead out; the file's end trimming drops it.
  const samples = new Int16Array(VOICEMAIL_SAMPLES + FRAME_SAMPLES);
  for (let i = 0; i < VOICEMAIL_SAMPLES; i++) {
    const fade = Math.min(1, i / FADE_SAMPLES, (VOICEMAIL_SAMPLES - i) / FADE_SAMPLES);
    samples[i] = Math.round(32767 * AMPLITUDE * fade * Math.sin((2 * Math.PI * hz * i) / SAMPLE_RATE));
  }
  const packets = encodeOpusFrames(samples);
  packetsByTone.set(hz, packets);
  return packets;
}

/** The Ogg Opus file of a customer's voicemail: its tone for VOICEMAIL_SAMPLES. */
export function voicemailAudio(number: string): Uint8Array {
  const file = oggOpusFile(tonePackets(sandboxVoicemailToneHz(number)), {
    channels: 1,
    samples: VOICEMAIL_SAMPLES,
    vendor: 'softphone sandbox',
    comments: ['TITLE=Voicemail'],
  });
  // The packets are libopus's own: a refusal would be a fault of this module.
  if (!file.ok) throw new Error(`voicemail audio: ${file.error.message}`);
  return file.value;
}

// The business side of a call for sandbox tests: a second real werift peer with full ICE (never
// ice-lite), DTLS client when answering (a=setup:active), sending a 440 Hz tone as Opus (or any
// 48 kHz sound it is given: the hold music, the agent's recorded voice) and measuring what it
// hears from the customer. Muted, it sends encoded silence as a muted browser track does; paused,
// it sends nothing at all.
import { readFileSync } from 'node:fs';
import OpusScript from 'opusscript';
import { RTCPeerConnection, RTCRtpCodecParameters, RtpHeader, RtpPacket, type RTCRtpSender } from 'werift';
import { HOLD_MUSIC_NOTES_HZ } from '../../../shared/hold-music';
import { FRAME_SAMPLES, parsePcmWavAnyRate, SAMPLE_RATE } from '../../../sandbox/customer-voice';

/** A 16-bit PCM mono WAV of any rate, at 48 kHz (linear interpolation, as a fake microphone resamples). */
export function readWavAt48k(path: string): Int16Array {
  const wav = parsePcmWavAnyRate(readFileSync(path));
  if (!wav.ok) throw new Error(`${path}: ${wav.error.message}`);
  const { rate, samples } = wav.value;
  const source = (i: number) => samples[Math.min(i, samples.length - 1)]!;
  const out = new Int16Array(Math.floor((samples.length * SAMPLE_RATE) / rate));
  for (let i = 0; i < out.length; i++) {
    const t = (i * rate) / SAMPLE_RATE;
    const j = Math.floor(t);
    out[i] = Math.round(source(j) * (1 - (t - j)) + source(j + 1) * (t - j));
  }
  return out;
}

/**
 * A melody on the hold music's notes other than the app's (shared/hold-music-render.ts): soft sines
 * on the notes, each with its octave above, of uneven lengths (so notes start and stop anywhere in
 * a 500 ms window) over a slow pad of lower notes. 48 kHz, peaks under half scale.
 */
export function syntheticHoldMusic(seconds: number): Int16Array {
  const out = new Float64Array(Math.round(SAMPLE_RATE * seconds));
  const note = (index: number) => HOLD_MUSIC_NOTES_HZ[index % HOLD_MUSIC_NOTES_HZ.length]!;
  const add = (hz: number, startS: number, lengthS: number, level: number, envelope: (t: number) => number) => {
    const start = Math.round(startS * SAMPLE_RATE);
    for (let n = 0; n < lengthS * SAMPLE_RATE && start + n < out.length; n++) {
      const t = n / SAMPLE_RATE;
      out[start + n]! += level * envelope(t) * (Math.sin(2 * Math.PI * hz * t) + 0.35 * Math.sin(2 * Math.PI * 2 * hz * t));
    }
  };
  const melody = [4, 5, 7, 6, 4, 2, 3, 5, 8, 7, 9, 6, 5, 3, 1, 4];
  const lengths = [0.45, 0.3, 0.6, 0.35, 0.5, 0.25, 0.4, 0.55];
  for (let i = 0, at = 0; at < seconds; at += lengths[i % lengths.length]!, i++) {
    // A soft attack, then a slow decay that rings on under the next note.
    add(note(melody[i % melody.length]!), at, lengths[i % lengths.length]! + 0.3, 0.18, (t) => Math.min(1, t / 0.03) * Math.exp(-t / 0.35));
  }
  for (let i = 0; i * 2 < seconds; i++) add(note([0, 3, 4, 2][i % 4]!), i * 2, 2, 0.06, (t) => Math.min(1, t / 0.2, (2 - t) / 0.2));
  return Int16Array.from(out, (x) => Math.round(Math.max(-1, Math.min(1, x)) * 32767));
}

export class BusinessPeer {
  readonly pc = new RTCPeerConnection({
    iceUseIpv4: false,
    iceUseIpv6: false,
    iceAdditionalHostAddresses: ['127.0.0.1'],
    iceInterfaceAddresses: { udp4: '127.0.0.1' },
    bundlePolicy: 'max-bundle',
    codecs: {
      audio: [
        new RTCRtpCodecParameters({ mimeType: 'audio/opus', clockRate: 48000, channels: 2, payloadType: 111, parameters: 'minptime=10;useinbandfec=1' }),
        new RTCRtpCodecParameters({ mimeType: 'audio/telephone-event', clockRate: 8000, payloadType: 126 }),
      ],
    },
  });
  private readonly encoder = new OpusScript(48000, 1, OpusScript.Application.VOIP);
  private readonly decoder = new OpusScript(48000, 1, OpusScript.Application.VOIP);
  private sender: RTCRtpSender | undefined;
  private readonly digits: number[] = [];
  private timer: NodeJS.Timeout | undefined;
  framesHeard = 0;
  /** Sends Opus frames of silence instead of the tone (a disabled track in a browser). */
  muted = false;
  /** Sends no RTP at all (a removed track, a dead sender). */
  paused = false;
  /** 48 kHz mono PCM looped in place of the tone; may change mid-call (an agent who holds the call). */
  sound: Int16Array | undefined;
  private soundAt = 0;
  private sumSquares = 0;
  private samples = 0;

  private readonly heardChunks: Buffer[] = [];

  /**
   * `silent`: connects but never sends audio (to test the service's media timeouts). `keepHeard`:
   * keeps every decoded sample, in arrival order (`heard()`).
   */
  constructor(private readonly options: { silent?: boolean; keepHeard?: boolean } = {}) {
    this.pc.onTrack.subscribe((track) =>
      track.onReceiveRtp.subscribe((rtp) => {
        if (rtp.header.payloadType !== 111) return;
        const pcm = this.decoder.decode(rtp.payload);
        if (this.options.keepHeard) this.heardChunks.push(Buffer.from(pcm));
        for (let i = 0; i + 1 < pcm.length; i += 2) {
          const s = pcm.readInt16LE(i) / 32768;
          this.sumSquares += s * s;
        }
        this.samples += pcm.length / 2;
        this.framesHeard++;
      }),
    );
    this.pc.connectionStateChange.subscribe((state) => {
      if (state === 'connected' && !this.options.silent) this.startTone();
    });
  }

  /** Everything decoded so far (48 kHz mono), when kept. */
  heard(): Int16Array {
    const bytes = Buffer.concat(this.heardChunks);
    const out = new Int16Array(bytes.length >> 1);
    for (let i = 0; i < out.length; i++) out[i] = bytes.readInt16LE(i * 2);
    return out;
  }

  get heardRms(): number {
    return this.samples === 0 ? 0 : Math.sqrt(this.sumSquares / this.samples);
  }

  /** Answers a customer's offer; returns the complete answer SDP. */
  async answer(offer: string): Promise<string> {
    this.sender = this.pc.addTransceiver('audio', { direction: 'sendrecv' }).sender;
    await this.pc.setRemoteDescription({ type: 'offer', sdp: offer });
    await this.pc.setLocalDescription(await this.pc.createAnswer());
    return this.complete();
  }

  /** A business-initiated call's offer. */
  async offer(): Promise<string> {
    this.sender = this.pc.addTransceiver('audio', { direction: 'sendrecv' }).sender;
    await this.pc.setLocalDescription(await this.pc.createOffer());
    return this.complete();
  }

  async applyAnswer(sdp: string): Promise<void> {
    await this.pc.setRemoteDescription({ type: 'answer', sdp });
  }

  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.pc.close();
    this.encoder.delete();
    this.decoder.delete();
  }

  /** Queues an RFC 4733 digit (0-9): three telephone-event packets, the last with the end bit. */
  sendDigit(digit: number): void {
    this.digits.push(digit);
  }

  private async complete(): Promise<string> {
    if (this.pc.iceGatheringState !== 'complete') {
      await new Promise<void>((resolve) => this.pc.iceGatheringStateChange.subscribe((s) => s === 'complete' && resolve()));
    }
    return this.pc.localDescription!.sdp;
  }

  private startTone(): void {
    let n = 0;
    let seq = 1;
    let ts = 0;
    const send = (payloadType: number, payload: Buffer, timestamp: number, marker = false) => {
      const sender = this.sender;
      if (!sender?.codec) return;
      // werift stamps every packet with the sender's codec: swap it for the synchronous part of sendRtp.
      const audio = sender.codec;
      if (payloadType !== audio.payloadType) sender.codec = this.pc.getTransceivers()[0]!.codecs.find((c) => c.payloadType === payloadType) ?? audio;
      void sender.sendRtp(new RtpPacket(new RtpHeader({ payloadType, sequenceNumber: seq++ & 0xffff, timestamp: timestamp >>> 0, marker }), payload));
      sender.codec = audio;
    };
    this.timer = setInterval(() => {
      if (this.paused) return;
      ts += FRAME_SAMPLES;
      const digit = this.digits.shift();
      if (digit !== undefined) {
        for (let i = 0; i < 3; i++) send(126, Buffer.from([digit, (i === 2 ? 0x80 : 0) | 10, 0, 160 * (i + 1)]), ts, i === 0);
        return;
      }
      const pcm = Buffer.alloc(FRAME_SAMPLES * 2);
      const sound = this.sound;
      if (!this.muted && sound && sound.length > 0) {
        for (let i = 0; i < FRAME_SAMPLES; i++) pcm.writeInt16LE(sound[(this.soundAt + i) % sound.length]!, i * 2);
        this.soundAt = (this.soundAt + FRAME_SAMPLES) % sound.length;
      } else if (!this.muted) {
        for (let i = 0; i < FRAME_SAMPLES; i++) pcm.writeInt16LE(Math.round(8000 * Math.sin((2 * Math.PI * 440 * (n * FRAME_SAMPLES + i)) / 48000)), i * 2);
      }
      n++;
      send(111, Buffer.from(this.encoder.encode(pcm, FRAME_SAMPLES)), ts);
    }, 20);
  }
}

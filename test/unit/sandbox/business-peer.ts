// The business side of a call for sandbox tests: a second real werift peer with full ICE (never
// ice-lite), DTLS client when answering (a=setup:active), sending a 440 Hz tone as Opus and
// measuring what it hears from the customer. Muted, it sends encoded silence as a muted browser
// track does; paused, it sends nothing at all.
import OpusScript from 'opusscript';
import { RTCPeerConnection, RTCRtpCodecParameters, RtpHeader, RtpPacket, type RTCRtpSender } from 'werift';

const FRAME = 960;

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
  private sumSquares = 0;
  private samples = 0;

  /** `silent`: connects but never sends audio (to test the service's media timeouts). */
  constructor(private readonly options: { silent?: boolean } = {}) {
    this.pc.onTrack.subscribe((track) =>
      track.onReceiveRtp.subscribe((rtp) => {
        if (rtp.header.payloadType !== 111) return;
        const pcm = this.decoder.decode(rtp.payload);
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
      ts += FRAME;
      const digit = this.digits.shift();
      if (digit !== undefined) {
        for (let i = 0; i < 3; i++) send(126, Buffer.from([digit, (i === 2 ? 0x80 : 0) | 10, 0, 160 * (i + 1)]), ts, i === 0);
        return;
      }
      const pcm = Buffer.alloc(FRAME * 2);
      if (!this.muted) for (let i = 0; i < FRAME; i++) pcm.writeInt16LE(Math.round(8000 * Math.sin((2 * Math.PI * 440 * (n * FRAME + i)) / 48000)), i * 2);
      n++;
      send(111, Buffer.from(this.encoder.encode(pcm, FRAME)), ts);
    }, 20);
  }
}

// A simulated customer's phone: a real werift WebRTC peer shaped like the real service's
// (protocol.md "Media"): ICE-lite, complete descriptions (no trickle), host candidates on one local
// address, BUNDLE, one audio m-line with Opus 111 and telephone-event 126. It plays the customer's
// voice and records what it hears, so tests can prove the business's audio arrived.
import OpusScript from 'opusscript';
import sdpTransform from 'sdp-transform';
import { RTCPeerConnection, RTCRtpCodecParameters, RtpHeader, RtpPacket, type MediaStreamTrack, type RTCRtpSender } from 'werift';
import type { Logger } from '../shared/log';
import { err, ok, type Result } from '../shared/result';
import type { SandboxHeardLogEntry, SandboxHeardSound, SandboxRtpReport } from '../shared/sandbox';
import { CUSTOMER_PLACEHOLDER, type CaptureSink, type Utterance } from './call-recorder';
import type { CustomerNetwork } from './customer-network';
import { FRAME_MS, FRAME_SAMPLES, SAMPLE_RATE, type CustomerVoice } from './customer-voice';
import { HeardAudio, SILENCE_RMS } from './heard-audio';
import { RtpContinuity } from './rtp-continuity';
import { ToneProbe } from './tone-probe';

export const OPUS_PAYLOAD_TYPE = 111;
export const TELEPHONE_EVENT_PAYLOAD_TYPE = 126;
/** Frames sent at once to catch up after the event loop stalled; beyond this the clock resyncs. */
const MAX_CATCH_UP_FRAMES = 5;
/** The gathering wait is capped (protocol.md); host candidates on a local address take milliseconds. */
const GATHERING_CAP_MS = 3_000;
/** `recentRms` looks back this far, by arrival time: long enough to span jitter, short enough to see a mute at once. */
const RECENT_WINDOW_MS = 500;
const DTMF_DIGITS = '0123456789*#ABCD';

export interface CustomerMediaReport {
  /** When the first packet of any kind (an ICE check included) arrived from the business, unix ms. */
  firstPacketAt?: number;
  /**
   * The ICE username fragment of every peer that sent the customer a check, in order of first
   * contact. One entry for an answered call: in a team, only the agent who won the call.
   */
  checkedBy: string[];
  /** When the first non-silent frame from the business was decoded, unix ms. */
  firstHeardAt?: number;
  /**
   * When the last RTP packet of any payload type from the business arrived, unix ms. The media
   * timeouts go by this: a muted agent still sends (silent) RTP, and that is media (protocol.md).
   */
  lastRtpAt?: number;
  /** Every decoded Opus frame, silent ones included. */
  framesHeard: number;
  /** RMS energy (0..1) over every decoded sample heard. */
  heardRms: number;
  /** RMS energy (0..1) over the frames decoded in the last 500 ms; 0 when none arrived then. */
  recentRms: number;
  framesSent: number;
  /** RFC 4733 digits heard from the business, in order. */
  digitsHeard: string;
  /** The last complete 500 ms window: silence, the hold music, or a voice (heard-audio.ts); silence when nothing arrived for a second. */
  heardNow: SandboxHeardSound;
  /** Milliseconds of decoded audio judged as each. */
  heardMs: Record<SandboxHeardSound, number>;
  /** Each change of what is heard, oldest first; the last 50. */
  heardLog: SandboxHeardLogEntry[];
  /** The business's stream as a phone's RTP stack sees it, once a packet came. */
  rtp?: SandboxRtpReport;
  /** How loud each probe tone was in the last half second (tone-probe.ts), keyed by Hz. */
  tonesHeard: Record<string, number>;
}

/** What a phone that has heard nothing yet reports. */
export function emptyMediaReport(): CustomerMediaReport {
  return {
    checkedBy: [],
    framesHeard: 0,
    heardRms: 0,
    recentRms: 0,
    framesSent: 0,
    digitsHeard: '',
    heardNow: 'silence',
    heardMs: { silence: 0, music: 0, voice: 0 },
    heardLog: [],
    tonesHeard: {},
  };
}

export interface CustomerPeerOptions {
  /** The local address of the only host candidate (only 127.0.0.1 traffic leaves this machine's tests). */
  host: string;
  voice: CustomerVoice;
  logger: Logger;
  /** The network the phone is on: every packet it sends or receives passes through it. */
  network?: CustomerNetwork;
  /** The first audio frame went out: media flows (used for the ACCEPTED status, protocol.md). */
  onFirstFrameSent?: () => void;
  /** ICE or DTLS failed, or the peer closed under the call. */
  onFailed?: (reason: string) => void;
  /** Every RTP packet that arrives from the business, as it comes (tests read the stream's numbering). */
  onRtp?: (packet: RtpPacket) => void;
  /**
   * `service` (default): the phone faces the business as the service does (ICE-lite, its SDP shape).
   * `window`: the peer faces a team's bridge as an agent's window does (full ICE, werift's own
   * descriptions): the sandbox's simulated colleagues (colleagues.ts).
   */
  shape?: 'service' | 'window';
}

const codecs = () => [
  new RTCRtpCodecParameters({
    mimeType: 'audio/opus',
    clockRate: SAMPLE_RATE,
    channels: 2,
    payloadType: OPUS_PAYLOAD_TYPE,
    parameters: 'minptime=10;useinbandfec=1',
  }),
  new RTCRtpCodecParameters({ mimeType: 'audio/telephone-event', clockRate: 8000, payloadType: TELEPHONE_EVENT_PAYLOAD_TYPE }),
];

/**
 * Reshapes werift's description into the real service's form: `a=ice-lite` at session level,
 * `a=ptime:20`, no `a=ice-options:trickle` (the service never trickles). Credentials, fingerprint
 * and candidates are untouched, so the peer's own state still matches what is sent.
 */
export function shapeServiceSdp(sdp: string): string {
  const session = sdpTransform.parse(sdp);
  session.icelite = 'ice-lite';
  for (const media of session.media) {
    delete (media as { icelite?: string }).icelite;
    delete media.iceOptions;
    if (media.type === 'audio') media.ptime = FRAME_MS;
  }
  delete session.iceOptions;
  return sdpTransform.write(session).replace(/\r?\n/g, '\r\n');
}

export class CustomerPeer {
  private readonly pc: RTCPeerConnection;
  private readonly sender: RTCRtpSender;
  private readonly decoder = new OpusScript(SAMPLE_RATE, 1, OpusScript.Application.VOIP);
  private readonly report: CustomerMediaReport = emptyMediaReport();
  /** Music or voice, judged on every 500 ms of what was decoded. */
  private readonly heard = new HeardAudio(SAMPLE_RATE);
  /** SSRCs, sequence gaps and timestamp jumps of what the business sent. */
  private readonly continuity = new RtpContinuity(OPUS_PAYLOAD_TYPE, SAMPLE_RATE);
  private readonly tones = new ToneProbe(SAMPLE_RATE);
  private sumSquares = 0;
  private samplesHeard = 0;
  /** The frames of the last RECENT_WINDOW_MS, oldest first. */
  private readonly recent: { at: number; squares: number; samples: number }[] = [];
  private lastDtmfTimestamp: number | undefined;
  /** Frames played once before the voice goes on (the service's notice), and what the recorder is told of each. */
  private prelude: { frames: readonly Buffer[]; next: number; utterance: (index: number) => Utterance; done?: () => void } | undefined;
  private capture: CaptureSink | undefined;
  private sendTimer: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(private readonly options: CustomerPeerOptions) {
    const { host } = options;
    this.pc = new RTCPeerConnection({
      iceLite: options.shape !== 'window',
      // Only the one configured address: no interface scan, no STUN, nothing but local traffic.
      iceUseIpv4: false,
      iceUseIpv6: false,
      iceAdditionalHostAddresses: [host],
      iceInterfaceAddresses: host.includes(':') ? { udp6: host } : { udp4: host },
      iceServers: [],
      bundlePolicy: 'max-bundle',
      codecs: { audio: codecs(), video: [] },
      headerExtensions: { audio: [], video: [] },
      // Every STUN request passes here first: the earliest sign that the business reached the customer.
      iceFilterStunResponse: (message) => {
        this.notePacket();
        this.noteChecker(message.getAttributeValue('USERNAME'));
        return true;
      },
    });
    this.pc.onTrack.subscribe((track) => this.listen(track));
    this.pc.connectionStateChange.subscribe((state) => {
      if (state === 'connected') this.startSending();
      if (state === 'failed' && !this.closed) this.options.onFailed?.('connection failed');
    });
    this.sender = this.pc.addTransceiver('audio', { direction: 'sendrecv' }).sender;
  }

  /** An incoming call's offer: complete, ICE-lite, a=setup:actpass. */
  async makeOffer(): Promise<Result<string>> {
    try {
      await this.pc.setLocalDescription(await this.pc.createOffer());
      return ok(shapeServiceSdp(await this.completeLocalSdp()));
    } catch (e) {
      return err('media_failed', `customer offer: ${(e as Error).message}`);
    }
  }

  /** The business's answer to our offer (accept). */
  async applyAnswer(sdp: string): Promise<Result<void>> {
    try {
      await this.pc.setRemoteDescription({ type: 'answer', sdp });
      return ok(undefined);
    } catch (e) {
      return err('invalid_input', `session.sdp: the answer could not be applied: ${(e as Error).message}`, { field: 'session.sdp' });
    }
  }

  /** A business-initiated call's answer: complete, ICE-lite, a=setup:passive (the customer is the DTLS server). */
  async answerOffer(sdp: string): Promise<Result<string>> {
    try {
      await this.pc.setRemoteDescription({ type: 'offer', sdp });
      for (const transceiver of this.pc.getTransceivers()) transceiver.dtlsTransport.role = 'server';
      await this.pc.setLocalDescription(await this.pc.createAnswer());
      return ok(shapeServiceSdp(await this.completeLocalSdp()));
    } catch (e) {
      return err('media_failed', `customer answer: ${(e as Error).message}`);
    }
  }

  /** A window's answer to a bridge's offer (shape `window`): complete, full ICE, as the peer made it. */
  async answerAsWindow(sdp: string): Promise<Result<string>> {
    try {
      await this.pc.setRemoteDescription({ type: 'offer', sdp });
      await this.pc.setLocalDescription(await this.pc.createAnswer());
      return ok(await this.completeLocalSdp());
    } catch (e) {
      return err('media_failed', `colleague answer: ${(e as Error).message}`);
    }
  }

  /**
   * The service records or transcribes the call: `frames` (its notice) go out next, before the voice
   * goes on, and from the first of them `capture` hears every frame sent and decoded. `done` is
   * called once the last notice frame went out.
   */
  captureWith(capture: CaptureSink, notice: { frames: readonly Buffer[]; utterance: (index: number) => Utterance; done?: () => void }): void {
    if (this.closed) return;
    this.capture = capture;
    this.prelude = { ...notice, next: 0 };
  }

  media(): CustomerMediaReport {
    const now = Date.now();
    return {
      ...this.report,
      checkedBy: [...this.report.checkedBy],
      heardRms: this.samplesHeard === 0 ? 0 : Math.sqrt(this.sumSquares / this.samplesHeard),
      recentRms: this.recentRms(now),
      ...this.heard.report(now),
      tonesHeard: this.tones.report(now),
      ...(this.report.lastRtpAt === undefined ? {} : { rtp: this.continuity.report() }),
    };
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.sendTimer) clearInterval(this.sendTimer);
    this.sendTimer = undefined;
    await this.pc.close().catch((e: unknown) => this.options.logger.debug('peer close failed', { error: e }));
    this.decoder.delete();
  }

  private async completeLocalSdp(): Promise<string> {
    if (this.pc.iceGatheringState !== 'complete') {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(done, GATHERING_CAP_MS);
        const sub = this.pc.iceGatheringStateChange.subscribe((state) => {
          if (state === 'complete') done();
        });
        function done() {
          clearTimeout(timer);
          sub.unSubscribe();
          resolve();
        }
      });
    }
    const sdp = this.pc.localDescription?.sdp;
    if (!sdp) throw new Error('no local description');
    // Before the description leaves: no peer can send to these sockets yet.
    this.options.network?.attach(this.pc);
    return sdp;
  }

  private notePacket(): void {
    this.report.firstPacketAt ??= Date.now();
  }

  /** USERNAME is "<our ufrag>:<their ufrag>" (RFC 8445 7.2.2). */
  private noteChecker(username: unknown): void {
    if (typeof username !== 'string') return;
    const theirs = username.slice(username.indexOf(':') + 1);
    if (theirs !== '' && !this.report.checkedBy.includes(theirs)) this.report.checkedBy.push(theirs);
  }

  private listen(track: MediaStreamTrack): void {
    track.onReceiveRtp.subscribe((rtp) => {
      if (this.closed) return;
      this.notePacket();
      this.report.lastRtpAt = Date.now();
      this.continuity.observe(rtp.header, this.report.lastRtpAt);
      this.options.onRtp?.(rtp);
      if (rtp.header.payloadType === OPUS_PAYLOAD_TYPE) this.hear(rtp.payload);
      else if (rtp.header.payloadType === TELEPHONE_EVENT_PAYLOAD_TYPE) this.hearDtmf(rtp.header.timestamp, rtp.payload);
    });
  }

  private hear(payload: Buffer): void {
    let pcm: Buffer;
    try {
      pcm = this.decoder.decode(payload);
    } catch (e) {
      this.options.logger.debug('undecodable Opus frame', { error: e });
      return;
    }
    const samples = Math.floor(pcm.length / 2);
    const frame = new Int16Array(samples);
    let frameSquares = 0;
    for (let i = 0; i < samples; i++) {
      frame[i] = pcm.readInt16LE(i * 2);
      const s = frame[i]! / 32768;
      frameSquares += s * s;
    }
    const now = Date.now();
    this.heard.push(frame, now);
    this.tones.push(frame, now);
    this.capture?.heard(frame);
    this.report.framesHeard++;
    this.sumSquares += frameSquares;
    this.samplesHeard += samples;
    this.recent.push({ at: now, squares: frameSquares, samples });
    this.dropOldFrames(now);
    if (samples > 0 && Math.sqrt(frameSquares / samples) > SILENCE_RMS) this.report.firstHeardAt ??= now;
  }

  private recentRms(now: number): number {
    this.dropOldFrames(now);
    let squares = 0;
    let samples = 0;
    for (const frame of this.recent) {
      squares += frame.squares;
      samples += frame.samples;
    }
    return samples === 0 ? 0 : Math.sqrt(squares / samples);
  }

  private dropOldFrames(now: number): void {
    while (this.recent.length > 0 && now - this.recent[0]!.at > RECENT_WINDOW_MS) this.recent.shift();
  }

  /** RFC 4733: one event is several packets sharing an RTP timestamp; count it once. */
  private hearDtmf(timestamp: number, payload: Buffer): void {
    if (payload.length < 4 || timestamp === this.lastDtmfTimestamp) return;
    const digit = DTMF_DIGITS[payload[0] ?? 255];
    if (digit === undefined) return;
    this.lastDtmfTimestamp = timestamp;
    this.report.digitsHeard += digit;
  }

  private startSending(): void {
    if (this.sendTimer || this.closed) return;
    const frames = this.options.voice.frames;
    const voiceUtterance = (loop: number): Utterance => ({ key: `voice:${loop}`, ...(this.options.voice.words === undefined ? { text: CUSTOMER_PLACEHOLDER, confidence: 0 } : { text: this.options.voice.words, confidence: 1 }) });
    let next = 0;
    let sequenceNumber = Math.floor(Math.random() * 0xffff);
    let timestamp = Math.floor(Math.random() * 0xffffffff);
    let clockStart = performance.now();
    let due = 0;
    const send = () => {
      if (this.sender.dtlsTransport?.state !== 'connected') return;
      const prelude = this.prelude;
      let payload: Buffer | undefined;
      let utterance: Utterance | undefined;
      if (prelude && prelude.next < prelude.frames.length) {
        utterance = prelude.utterance(prelude.next);
        payload = prelude.frames[prelude.next++];
        if (prelude.next === prelude.frames.length) prelude.done?.();
      } else {
        if (frames.length === 0) return;
        payload = frames[next % frames.length];
        if (this.capture) utterance = voiceUtterance(Math.floor(next / frames.length));
        next++;
      }
      if (!payload) return;
      const header = new RtpHeader({ payloadType: OPUS_PAYLOAD_TYPE, sequenceNumber, timestamp, marker: this.report.framesSent === 0 });
      sequenceNumber = (sequenceNumber + 1) & 0xffff;
      timestamp = (timestamp + FRAME_SAMPLES) >>> 0;
      this.sender.sendRtp(new RtpPacket(header, payload)).catch((e: unknown) => this.options.logger.debug('RTP send failed', { error: e }));
      if (utterance) this.capture?.sent(payload, utterance);
      this.report.framesSent++;
      if (this.report.framesSent === 1) this.options.onFirstFrameSent?.();
    };
    // A wall-clock schedule: timers drift and bunch up, the RTP clock must not.
    const tick = () => {
      const target = Math.floor((performance.now() - clockStart) / FRAME_MS) + 1;
      if (target - due > MAX_CATCH_UP_FRAMES) {
        clockStart = performance.now();
        due = 0;
        send();
        due = 1;
        return;
      }
      while (due < target) {
        send();
        due++;
      }
    };
    tick();
    this.sendTimer = setInterval(tick, FRAME_MS / 2);
  }
}

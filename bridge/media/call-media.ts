// The media of one bridged call: who hears whom (listening.ts) applied to the packets that arrive
// and to the ticks of the node's media clock. Each connected participant is a listener with one
// outbound stream (rtp-output.ts) and a source of packets.
//
// - Forwarding (one source): each packet goes out the moment it arrives, undecoded, telephone events
//   included (DTMF from an agent's window reaches the customer). No timer in the way. Should the
//   source fall silent on the wire (a leg that stalls), silence frames keep the listener's stream
//   alive until it speaks again. Audio that comes too late to be of use (a node that fell behind)
//   is not passed on, so that the node catches up instead of delaying the call (lateness.ts).
// - Mixing (two or more, or a voice with the music): each mixed source is decoded once, whoever
//   hears it; on every tick each mixing listener gets the sum of its sources' frames, never its
//   own, encoded for it alone. Telephone events of a mixed source go into the listener's stream on
//   the mix's clock.
// - The hold music and silence are frames made here, on the same ticks.
// - A notice over the customer's listening (a recording's consent notice): while its frames last,
//   the customer hears it mixed over whatever it would hear otherwise (a forwarded source is mixed
//   instead of forwarded, the music or silence under it), then its listening returns. Its stream
//   stays one, as across every change of source.
// - A tap on the customer's leg (a recording, call-recorder.ts): every audio packet sent to the
//   customer and every one taken from it, and the ticks. No tap, no cost.
import { performance } from 'node:perf_hooks';
import { CUSTOMER, type ParticipantId, type Routes } from '../../shared/bridge';
import type { Logger } from '../../shared/log';
import { FRAME_SAMPLES, type PacketKind } from './audio-format';
import { GeneratedStream } from './generated-stream';
import { Lateness } from './lateness';
import type { HoldMusic } from './hold-music';
import { defaultRoutes, listeningOf, sameListening, type Listening } from './listening';
import type { MediaClock } from './media-clock';
import { mixFrames } from './mixer';
import { encodeFrame, newEncoder, silenceFrame, type OpusEncoder } from './opus';
import type { SourcePacket } from './outbound-stream';
import type { RtpOutput } from './rtp-output';
import { SourceDecoder } from './source-decoder';

/** One RTP packet a leg received, by the codec its payload type was negotiated for. */
export interface InboundPacket {
  kind: PacketKind;
  ssrc: number;
  sequenceNumber: number;
  timestamp: number;
  marker: boolean;
  payload: Buffer;
}

/**
 * A forwarded source that sent nothing for this long has stalled: silence frames fill in. Longer
 * than any jitter a call survives, so that a late packet is still forwarded rather than replaced.
 */
export const STALL_MS = 200;
/**
 * A customer whose forwarded agent has sent nothing for this long hears the hold music until the
 * agent's media is back: a window gone (a reload, a crash, a network change) is dead air otherwise
 * until its leg fails. Longer than any jitter a call survives.
 */
export const CUSTOMER_MUSIC_AFTER_MS = 1_000;
/** Late packets are logged once, then every this many. */
const LATE_LOGGED_EVERY = 250;

const NO_FRAMES: ReadonlyMap<ParticipantId, Int16Array | undefined> = new Map();

/** What listens in on the customer's leg both ways (a recording): called on the media path, it must be quick and never throw. */
export interface CustomerTap {
  /** An audio packet sent to the customer, forwarded or made. */
  outbound(payload: Uint8Array): void;
  /** An audio packet taken from the customer (in time to be heard). */
  inbound(payload: Uint8Array): void;
  /** After each tick's frames went out. */
  tick(): void;
}

/** What the bridge makes for one listener: each its own numbering (generated-stream.ts). */
interface Made {
  silence: GeneratedStream;
  music: GeneratedStream;
  mix: GeneratedStream;
}

interface Listener {
  output: RtpOutput;
  listening: Listening;
  made: Made;
  /** When a forwarded packet last went out (or the forwarding began). */
  forwardedAt: number;
  /** The listener's own encoder while it hears a mix. */
  encoder: OpusEncoder | undefined;
}

export class CallMedia {
  /** The relay's routes; undefined until it sends some (then defaultRoutes apply). */
  private explicitRoutes: Routes | undefined;
  private readonly listeners = new Map<ParticipantId, Listener>();
  /** Agents in the order their legs connected (the default routes take the first). */
  private readonly connectedAgents: string[] = [];
  /** How late each participant's packets come (lateness.ts). */
  private readonly lateness = new Map<ParticipantId, Lateness>();
  /** Late packets of participants gone since. */
  private lateOfGone = 0;
  /** The decoder of each participant someone hears in a mix. */
  private readonly decoders = new Map<ParticipantId, SourceDecoder>();
  private ticks = 0;
  /** Participants whose output sends nothing at all any more (release): no RTP, no sender reports. */
  private readonly muted = new Set<ParticipantId>();
  /** The notice the customer hears over its listening, and how far it has played (samples). */
  private notice: { pcm: Int16Array; at: number } | undefined;
  private tap: CustomerTap | undefined;
  private readonly stopClock: () => void;

  constructor(
    clock: MediaClock,
    private readonly music: HoldMusic,
    private readonly logger: Logger,
  ) {
    this.stopClock = clock.subscribe((now) => this.tick(now));
  }

  /** The routes in force: the relay's, or the defaults until it sends some. */
  get routes(): Routes {
    return this.explicitRoutes ?? defaultRoutes(this.connectedAgents);
  }

  setRoutes(routes: Routes): void {
    this.explicitRoutes = structuredClone(routes);
    this.reconcile();
  }

  /** A participant's leg is connected: it hears and is heard from now on. */
  connect(participant: ParticipantId, output: RtpOutput): void {
    if (this.listeners.get(participant)?.output === output) return;
    this.listeners.set(participant, {
      output,
      listening: { kind: 'silence' },
      made: { silence: new GeneratedStream('silence'), music: new GeneratedStream('music'), mix: new GeneratedStream('mix') },
      forwardedAt: performance.now(),
      encoder: undefined,
    });
    if (participant !== CUSTOMER && !this.connectedAgents.includes(participant)) this.connectedAgents.push(participant);
    this.reconcile();
  }

  /** A participant's leg is gone (failed or closed). */
  disconnect(participant: ParticipantId): void {
    const listener = this.listeners.get(participant);
    if (!listener) return;
    listener.encoder?.delete();
    this.listeners.delete(participant);
    this.lateOfGone += this.lateness.get(participant)?.late ?? 0;
    this.lateness.delete(participant);
    const at = this.connectedAgents.indexOf(participant);
    if (at >= 0) this.connectedAgents.splice(at, 1);
    this.reconcile();
  }

  /**
   * The participant's leg hears nothing more, not even the sender reports that say a stream is
   * alive, while its connection stays up: the service on the other side then ends the call for
   * lack of media, as no agent is left to end it (bridge/REFERENCE.md "Release").
   */
  silence(participant: ParticipantId): void {
    this.muted.add(participant);
  }

  /**
   * The customer hears `pcm` (16-bit mono, 48 kHz) over what it hears now, from the next tick until
   * it ends; a notice playing already gives way to this one. Nothing for a customer let go.
   */
  overlayCustomer(pcm: Int16Array): void {
    if (pcm.length === 0 || this.muted.has(CUSTOMER)) return;
    this.notice = { pcm, at: 0 };
    this.reconcile();
  }

  /** The notice stops where it is; the customer's listening returns. */
  endOverlay(): void {
    if (!this.notice) return;
    this.notice = undefined;
    this.reconcile();
  }

  /** Listens in on the customer's leg from now on (undefined: no more). */
  tapCustomer(tap: CustomerTap | undefined): void {
    this.tap = tap;
  }

  /** A packet a participant's leg received. */
  receive(from: ParticipantId, packet: InboundPacket): void {
    if (!this.listeners.has(from)) return;
    const now = performance.now();
    if (packet.kind === 'audio' && !this.inTime(from, packet, now)) return;
    if (from === CUSTOMER && packet.kind === 'audio') this.tap?.inbound(packet.payload);
    for (const [id, listener] of this.listeners) {
      if (id === from || this.muted.has(id)) continue;
      const { listening } = listener;
      if (listening.kind === 'forward' && listening.source === from) {
        if (listener.output.send({ ...packet, source: from }, now)) {
          listener.forwardedAt = now;
          if (id === CUSTOMER && packet.kind === 'audio') this.tap?.outbound(packet.payload);
        }
      } else if (listening.kind === 'mix' && packet.kind === 'event' && listening.sources.includes(from)) {
        listener.output.send(listener.made.mix.event(from, packet.ssrc, packet.timestamp, packet.marker, packet.payload), now);
      }
    }
    if (packet.kind === 'audio') this.decoders.get(from)?.push(packet.payload);
  }

  /** Audio packets not passed on for coming too late (lateness.ts), over the call so far. */
  get lateDropped(): number {
    let late = this.lateOfGone;
    for (const lateness of this.lateness.values()) late += lateness.late;
    return late;
  }

  /** Whether an audio packet comes in time to be heard (lateness.ts); a late one is neither forwarded nor mixed. */
  private inTime(from: ParticipantId, packet: InboundPacket, now: number): boolean {
    let lateness = this.lateness.get(from);
    if (!lateness) this.lateness.set(from, (lateness = new Lateness()));
    if (lateness.inTime(packet.ssrc, packet.timestamp, now)) return true;
    if (lateness.late % LATE_LOGGED_EVERY === 1) this.logger.info('late packets not passed on', { from, late: lateness.late });
    return false;
  }

  close(): void {
    this.stopClock();
    this.tap = undefined;
    this.notice = undefined;
    for (const listener of this.listeners.values()) listener.encoder?.delete();
    this.listeners.clear();
    for (const decoder of this.decoders.values()) decoder.close();
    this.decoders.clear();
  }

  private tick(now: number): void {
    const index = this.ticks++ % this.music.frames.length;
    // Each mixed source gives one frame a tick, whoever hears it.
    let frames = NO_FRAMES;
    if (this.decoders.size > 0) frames = new Map([...this.decoders].map(([participant, decoder]) => [participant, decoder.take()]));
    const notice = this.noticeFrame();
    for (const [id, listener] of this.listeners) {
      const { output, listening, made } = listener;
      if (this.muted.has(id)) {
        // Let go: what it receives is still reported, nothing says its own stream is alive.
        output.tick(now, false);
        continue;
      }
      if (output.ready) {
        switch (listening.kind) {
          case 'silence':
            this.sendMade(id, output, made.silence.frame(silenceFrame()), now);
            break;
          case 'music':
            this.sendMade(id, output, made.music.frame(this.music.frames[index]!), now);
            break;
          case 'forward': {
            const stalled = now - listener.forwardedAt;
            if (id === CUSTOMER && stalled > CUSTOMER_MUSIC_AFTER_MS) this.sendMade(id, output, made.music.frame(this.music.frames[index]!), now);
            else if (stalled > STALL_MS) this.sendMade(id, output, made.silence.frame(silenceFrame()), now);
            break;
          }
          case 'mix':
            this.sendMade(id, output, made.mix.frame(this.mixFor(listener, listening, frames, index, id === CUSTOMER ? notice : undefined)), now);
            break;
        }
      }
      output.tick(now);
    }
    this.tap?.tick();
    // The notice's last frame went out: the customer's own listening again from the next tick.
    if (this.notice && this.notice.at >= this.notice.pcm.length) this.endOverlay();
  }

  /** A frame made here goes out; the customer's is tapped. */
  private sendMade(id: ParticipantId, output: RtpOutput, packet: SourcePacket, now: number): void {
    if (output.send(packet, now) && id === CUSTOMER) this.tap?.outbound(packet.payload);
  }

  /** The notice's next 20 ms for the customer (its last frame padded with silence), when it hears one now. */
  private noticeFrame(): Int16Array | undefined {
    const notice = this.notice;
    const customer = this.listeners.get(CUSTOMER);
    if (!notice || !customer?.output.ready) return undefined;
    const frame = notice.pcm.subarray(notice.at, notice.at + FRAME_SAMPLES);
    notice.at += FRAME_SAMPLES;
    if (frame.length === FRAME_SAMPLES) return frame;
    const padded = new Int16Array(FRAME_SAMPLES);
    padded.set(frame);
    return padded;
  }

  private mixFor(listener: Listener, listening: Extract<Listening, { kind: 'mix' }>, frames: ReadonlyMap<ParticipantId, Int16Array | undefined>, index: number, over?: Int16Array): Buffer {
    const inputs = listening.sources.map((source) => frames.get(source));
    if (listening.music) inputs.push(this.music.pcm.subarray(index * FRAME_SAMPLES, (index + 1) * FRAME_SAMPLES));
    if (over) inputs.push(over);
    const { frame, clipped } = mixFrames(inputs);
    if (clipped > 0) this.logger.debug('mix clipped', { samples: clipped });
    listener.encoder ??= newEncoder();
    return encodeFrame(listener.encoder, frame);
  }

  /** Every listener's listening from the routes in force and who is connected; decoders for what is mixed. */
  private reconcile(): void {
    const routes = this.routes;
    const connected = new Set(this.listeners.keys());
    const mixed = new Set<ParticipantId>();
    const now = performance.now();
    for (const [id, listener] of this.listeners) {
      const next = id === CUSTOMER && this.notice ? underNotice(listeningOf(routes, id, connected)) : listeningOf(routes, id, connected);
      if (next.kind === 'mix') for (const source of next.sources) mixed.add(source);
      if (sameListening(listener.listening, next)) continue;
      listener.listening = next;
      if (next.kind === 'forward') listener.forwardedAt = now;
      if (next.kind !== 'mix' && listener.encoder) {
        listener.encoder.delete();
        listener.encoder = undefined;
      }
    }
    for (const [participant, decoder] of this.decoders) {
      if (mixed.has(participant)) continue;
      decoder.close();
      this.decoders.delete(participant);
    }
    for (const participant of mixed) if (!this.decoders.has(participant)) this.decoders.set(participant, new SourceDecoder());
  }
}

/** What the customer hears while a notice plays: whatever it would hear, as a mix the notice joins. */
function underNotice(listening: Listening): Extract<Listening, { kind: 'mix' }> {
  switch (listening.kind) {
    case 'silence':
      return { kind: 'mix', sources: [], music: false };
    case 'music':
      return { kind: 'mix', sources: [], music: true };
    case 'forward':
      return { kind: 'mix', sources: [listening.source], music: false };
    case 'mix':
      return listening;
  }
}

// Node has no WebRTC and no WebAudio: the peer connection, its sender, the tracks, the remote <audio>
// and the hold music here are small fakes that record what the media engine asks of them, so that
// the gateway's contract can be checked: one sender, no renegotiation, the microphone never sent
// while held, RTP going on (a track on the sender at all times), nothing sent before the accept.
import type { CallState } from '../../../shared/call-state';
import type { HoldMusicPlayer, HoldMusicSource } from '../../../renderer/webrtc/hold-music';
import { MediaEngine, type MediaEngineOptions } from '../../../renderer/webrtc/media-engine';
import { mediaText } from '../../../renderer/webrtc/media-text';
import { chromiumAnswer, chromiumOffer, customerOffer } from '../../fixtures/sdp';
import { active, ringing, T0 } from './fixtures';

export class FakeTrack extends EventTarget {
  readonly kind = 'audio';
  enabled = true;
  readyState: MediaStreamTrackState = 'live';
  constructor(
    readonly id: string,
    readonly deviceId = '',
  ) {
    super();
  }
  get label(): string {
    return `track ${this.id}`;
  }
  getSettings(): MediaTrackSettings {
    return { deviceId: this.deviceId };
  }
  stop(): void {
    this.readyState = 'ended';
  }
}

export class FakeStream {
  constructor(private readonly tracks: FakeTrack[]) {}
  getAudioTracks(): FakeTrack[] {
    return this.tracks;
  }
  getTracks(): FakeTrack[] {
    return this.tracks;
  }
}

export class FakeSender {
  readonly replaced: (FakeTrack | null)[] = [];
  dtmf = null;
  /** The next replaceTrack calls reject (as Chromium's does for a track it cannot take). */
  failReplace = 0;
  constructor(public track: FakeTrack | null) {}
  async replaceTrack(track: FakeTrack | null): Promise<void> {
    await Promise.resolve();
    if (this.failReplace > 0) {
      this.failReplace -= 1;
      throw new Error('InvalidModificationError: the track cannot be taken');
    }
    this.replaced.push(track);
    this.track = track;
  }
}

/** Counts every step that (re)negotiates: after connect none may come (the gateway has no renegotiation). */
export class FakePeerConnection extends EventTarget {
  readonly senders: FakeSender[] = [];
  readonly calls = { createOffer: 0, createAnswer: 0, setLocalDescription: 0, setRemoteDescription: 0, addTrack: 0 };
  /** Every remote candidate ICE was given, in order: none may come before the call is this agent's. */
  readonly candidates: RTCIceCandidateInit[] = [];
  connectionState: RTCPeerConnectionState = 'new';
  iceConnectionState: RTCIceConnectionState = 'new';
  iceGatheringState: RTCIceGatheringState = 'new';
  signalingState: RTCSignalingState = 'stable';
  localDescription: RTCSessionDescriptionInit | null = null;
  remoteDescription: RTCSessionDescriptionInit | null = null;
  readonly remote = new FakeStream([new FakeTrack('customer')]);
  /** The customer's packets so far (inbound-rtp packetsReceived). */
  inboundPackets = 100;

  constructor(readonly config: RTCConfiguration = {}) {
    super();
  }

  addTrack(track: FakeTrack): FakeSender {
    this.calls.addTrack += 1;
    const sender = new FakeSender(track);
    this.senders.push(sender);
    return sender;
  }
  getSenders(): FakeSender[] {
    return this.senders;
  }
  getTransceivers(): { sender: FakeSender }[] {
    return this.senders.map((sender) => ({ sender }));
  }
  async createOffer(): Promise<RTCSessionDescriptionInit> {
    this.calls.createOffer += 1;
    return { type: 'offer', sdp: chromiumOffer };
  }
  async createAnswer(): Promise<RTCSessionDescriptionInit> {
    this.calls.createAnswer += 1;
    return { type: 'answer', sdp: chromiumAnswer };
  }
  async setRemoteDescription(description: RTCSessionDescriptionInit): Promise<void> {
    this.calls.setRemoteDescription += 1;
    this.remoteDescription = description;
    // The customer's sendrecv audio: Chromium fires `track` while applying the offer (or the answer).
    this.dispatchEvent(Object.assign(new Event('track'), { track: this.remote.getAudioTracks()[0], streams: [this.remote] }));
  }
  async setLocalDescription(description: RTCSessionDescriptionInit): Promise<void> {
    this.calls.setLocalDescription += 1;
    this.localDescription = description;
    // Gathering is over at once: no STUN or TURN server, the host candidates are in the SDP.
    setTimeout(() => {
      this.iceGatheringState = 'complete';
      this.gathered(null);
    }, 0);
  }
  /**
   * One of our own candidates gathered, with the protocol Chromium's RTCIceCandidate reads from its
   * line; null is the end-of-candidates.
   */
  gathered(line: string | null): void {
    const candidate = line === null ? null : { candidate: line, protocol: /\b(udp|tcp)\b/i.exec(line)?.[1]?.toLowerCase() };
    this.dispatchEvent(Object.assign(new Event('icecandidate'), { candidate }));
  }
  /** Gathering is over, said by the state alone (no end-of-candidates). */
  gatheringComplete(): void {
    this.iceGatheringState = 'complete';
    this.dispatchEvent(new Event('icegatheringstatechange'));
  }
  async addIceCandidate(candidate: RTCIceCandidateInit): Promise<void> {
    this.candidates.push(candidate);
  }
  /** What the statistics say: the microphone (media-source) and the customer (inbound-rtp) both sound. */
  async getStats(): Promise<Map<string, unknown>> {
    return new Map<string, unknown>([
      ['source', { type: 'media-source', kind: 'audio', audioLevel: 0.5 }],
      ['inbound', { type: 'inbound-rtp', kind: 'audio', audioLevel: 0.25, packetsReceived: this.inboundPackets }],
    ]);
  }
  /** ICE and DTLS are through. */
  connect(): void {
    this.setState('connected', 'connected');
  }
  setState(connection: RTCPeerConnectionState, ice: RTCIceConnectionState): void {
    this.connectionState = connection;
    this.iceConnectionState = ice;
    this.dispatchEvent(new Event('connectionstatechange'));
  }
  close(): void {
    this.connectionState = 'closed';
  }
}

export class FakeAudioElement {
  autoplay = false;
  muted = false;
  paused = true;
  plays = 0;
  srcObject: unknown = null;
  sinkId = '';
  isConnected = false;
  readonly dataset: Record<string, string> = {};
  async play(): Promise<void> {
    this.plays += 1;
    this.paused = false;
  }
  pause(): void {
    this.paused = true;
  }
  async setSinkId(id: string): Promise<void> {
    this.sinkId = id;
  }
  remove(): void {
    this.isConnected = false;
  }
}

/** Hold music whose readiness the test decides. */
export class FakeHoldMusic implements HoldMusicSource {
  readonly players: { track: FakeTrack; stopped: boolean; start(plays: boolean): void }[] = [];
  fail = false;
  /** New players are ready at once (the decoded buffer is at hand). */
  readyAtOnce = true;
  play(): HoldMusicPlayer {
    if (this.fail) throw new Error('no WebAudio');
    const track = new FakeTrack(`music-${this.players.length + 1}`);
    let start: (plays: boolean) => void = () => undefined;
    const ready = new Promise<boolean>((resolve) => (start = resolve));
    const player = { track, stopped: false, start };
    this.players.push(player);
    if (this.readyAtOnce) start(true);
    return {
      track: track as unknown as MediaStreamTrack,
      ready,
      stop: () => {
        player.stopped = true;
        track.stop();
      },
    };
  }
}

export const settle = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 0));

export async function waitFor(what: string, check: () => boolean, ms = 2_000): Promise<void> {
  const until = Date.now() + ms;
  while (!check()) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}

export const ID = 'wacid.1';
export const LOCAL = `in:${ID}`;
export const ringingCall = (): Extract<CallState, { phase: 'ringing' }> => ({ ...ringing(ID), offerSdp: customerOffer });
/** The call as the main process pushes it once its accept went through. */
export const connectingCall = (): CallState => ({ ...ringingCall(), phase: 'connecting', answeredAt: T0 + 2000 });
export const activeCall = (): CallState => ({ ...active(ID), offerSdp: customerOffer }) as CallState;
/** The call as the main process pushes it while held (CallState `heldSince`). */
export const heldCall = (): CallState => Object.assign(activeCall(), { heldSince: T0 + 60_000 });
/** The call as the main process pushes it once the agent muted it (CallState `muted`), held or not. */
export const callAs = (wish: { held: boolean; muted: boolean }): CallState => ({ ...(wish.held ? heldCall() : activeCall()), ...(wish.muted ? { muted: true } : {}) }) as CallState;

const engines: MediaEngine[] = [];
/** For afterEach: every engine made by mediaEngine() closes its calls. */
export function closeEngines(): void {
  for (const engine of engines.splice(0)) engine.closeAll();
}

/** A real MediaEngine on the fakes; `notices` holds what it said on calls' panels, in English. */
export function mediaEngine(options: { music?: FakeHoldMusic } & Pick<MediaEngineOptions, 'disconnectGraceMs' | 'bridgedDisconnectGraceMs' | 'iceConfig'> = {}) {
  const music = options.music ?? new FakeHoldMusic();
  const peers: FakePeerConnection[] = [];
  const mics: FakeTrack[] = [];
  const audios: FakeAudioElement[] = [];
  const notices: string[] = [];
  /** Devices that getUserMedia refuses, by id ('' = the default), with the DOMException name it throws. */
  const refuse = new Map<string, string>();
  const engine = new MediaEngine({
    getUserMedia: async (constraints) => {
      const audio = constraints.audio as MediaTrackConstraints;
      const exact = (audio.deviceId as ConstrainDOMStringParameters | undefined)?.exact;
      const refused = refuse.get(typeof exact === 'string' ? exact : '');
      if (refused) throw Object.assign(new Error(`${refused}: refused`), { name: refused });
      const track = new FakeTrack(`mic-${mics.length + 1}`, typeof exact === 'string' ? exact : 'default');
      mics.push(track);
      return new FakeStream([track]) as unknown as MediaStream;
    },
    createPeerConnection: (config) => {
      const pc = new FakePeerConnection(config);
      peers.push(pc);
      return pc as unknown as RTCPeerConnection;
    },
    createAudioElement: () => {
      const audio = new FakeAudioElement();
      audios.push(audio);
      return audio as unknown as HTMLAudioElement;
    },
    audioParent: () => ({ append: (el: FakeAudioElement) => void (el.isConnected = true) }) as unknown as HTMLElement,
    holdMusic: music,
    ...(options.disconnectGraceMs !== undefined ? { disconnectGraceMs: options.disconnectGraceMs } : {}),
    ...(options.bridgedDisconnectGraceMs !== undefined ? { bridgedDisconnectGraceMs: options.bridgedDisconnectGraceMs } : {}),
    ...(options.iceConfig ? { iceConfig: options.iceConfig } : {}),
  });
  engine.onNotice(({ text }) => notices.push(mediaText(text)));
  engines.push(engine);

  /** Ringing, answered, pushed in connecting, through: the call as the agent talks on it. */
  const connectCall = async () => {
    engine.onCall(ringingCall());
    const answered = await engine.answerFor(ringingCall());
    if (!answered.ok) throw new Error(`no answer: ${mediaText(answered.error.problem)}`);
    engine.onCall(connectingCall());
    const pc = peers[0]!;
    pc.connect();
    engine.onCall(activeCall());
    await settle();
    return { pc, sender: pc.senders[0]!, mic: mics[0]!, audio: audios[0]! };
  };
  return { engine, music, peers, mics, audios, notices, refuse, connectCall };
}

/** The call's media as describe() reports it (window.__softphoneMedia.sessions), with its microphone's route. */
export const media = (engine: MediaEngine, localId = LOCAL) => ({ ...engine.describe().find((m) => m.localId === localId), ...engine.audioRouteOf(localId) });

// What the bridge's call tests share: the service's side (the sandbox's CustomerPeer, which plays a
// recorded voice, with every RTP packet it receives logged and decoded here too), agents' windows
// (agent-window.ts), a node on 127.0.0.1, and the rules every description must pass.
import OpusScript from 'opusscript';
import sdpTransform from 'sdp-transform';
import type { RtpPacket } from 'werift';
import { afterEach, expect } from 'vitest';
import { BridgeNode, type BridgeNodeEvent, type BridgeNodeOptions } from '../../../bridge/bridge-node';
import type { Logger } from '../../../shared/log';
import { checkAnswerSdp, checkOfferSdp, describeOffer } from '../../../shared/sdp';
import { CustomerPeer } from '../../../sandbox/customer-peer';
import { loadCustomerVoice } from '../../../sandbox/customer-voice';
import { sessionProblems } from '../../../sandbox/session-rules';
import { AgentWindow, toneShare } from './agent-window';

export const HOST = '127.0.0.1';
export const TONE_A = 720;
export const TONE_B = 960;

export const quietLogger: Logger = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };

export async function eventually<T>(what: string, check: () => T | undefined | false | Promise<T | undefined | false>, timeoutMs = 8_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** One RTP packet as the customer received it. */
export interface ReceivedPacket {
  sequenceNumber: number;
  timestamp: number;
  payloadType: number;
  ssrc: number;
  marker: boolean;
  at: number;
}

/** The service's side of a call: the sandbox's customer, and what it received, packet by packet. */
export class ServiceCustomer {
  readonly peer: CustomerPeer;
  readonly packets: ReceivedPacket[] = [];
  private readonly decoder = new OpusScript(48_000, 1, OpusScript.Application.VOIP);
  private readonly heard = new Float32Array(24_000);
  private heardAt = 0;

  constructor() {
    this.peer = new CustomerPeer({ host: HOST, voice: loadCustomerVoice().voice, logger: quietLogger, onRtp: (rtp) => this.onRtp(rtp) });
  }

  /** Share of the last half second's energy at `hz`. */
  hears(hz: number): number {
    return toneShare(Float32Array.from({ length: this.heard.length }, (_, i) => this.heard[(this.heardAt + i) % this.heard.length]!), hz);
  }

  async close(): Promise<void> {
    await this.peer.close();
    this.decoder.delete();
  }

  private onRtp(rtp: RtpPacket): void {
    const { sequenceNumber, timestamp, payloadType, ssrc, marker } = rtp.header;
    this.packets.push({ sequenceNumber, timestamp, payloadType, ssrc, marker, at: Date.now() });
    if (payloadType !== 111) return;
    const pcm = this.decoder.decode(rtp.payload);
    for (let i = 0; i + 1 < pcm.length; i += 2) {
      this.heard[this.heardAt] = pcm.readInt16LE(i) / 32768;
      this.heardAt = (this.heardAt + 1) % this.heard.length;
    }
  }
}

/** A node on 127.0.0.1 and every event it told. */
export function startNode(options: BridgeNodeOptions = {}): { node: BridgeNode; events: BridgeNodeEvent[] } {
  const events: BridgeNodeEvent[] = [];
  const node = new BridgeNode({ bindAddress: HOST, logger: quietLogger, onEvent: (event) => events.push(event), ...options });
  return { node, events };
}

/** An incoming call the node answered, the customer holding the node's answer (nothing flows until connectCustomer). */
export async function incomingCall(node: BridgeNode, callId: string): Promise<ServiceCustomer> {
  const customer = new ServiceCustomer();
  const offer = await customer.peer.makeOffer();
  if (!offer.ok) throw new Error(offer.error.message);
  const prepared = await node.prepareIncoming(callId, offer.value);
  if (!prepared.ok) throw new Error(prepared.error.message);
  expectServiceFacing(prepared.value.answer, 'answer');
  const applied = await customer.peer.applyAnswer(prepared.value.answer);
  if (!applied.ok) throw new Error(applied.error.message);
  return customer;
}

/** An agent's leg offered by the node and answered by a window playing `toneHz`. */
export async function agentByNodeOffer(node: BridgeNode, callId: string, legId: string, toneHz: number): Promise<AgentWindow> {
  const offer = await node.offerAgentLeg(callId, legId);
  if (!offer.ok) throw new Error(offer.error.message);
  expectWindowFacing(offer.value.offer, 'actpass');
  const window = new AgentWindow(toneHz);
  const applied = await node.applyAgentAnswer(callId, legId, await window.answer(offer.value.offer));
  if (!applied.ok) throw new Error(applied.error.message);
  return window;
}

/** What the service demands of a business's descriptions (sandbox/session-rules.ts), and the app's own rules (shared/sdp.ts). */
export function expectServiceFacing(sdp: string, role: 'offer' | 'answer'): void {
  expect(sessionProblems(sdp, role)).toEqual([]);
  expect(role === 'answer' ? checkAnswerSdp(sdp) : checkOfferSdp(sdp)).toEqual({ ok: true, value: null });
  expect(sdp).not.toMatch(/\r?\nm=(video|application)/);
  // CRLF line ends and nothing else (protocol.md).
  expect(sdp).not.toMatch(/[^\r]\n/);
  expect(sdp.endsWith('\r\n')).toBe(true);
}

/**
 * A node's description toward a window, in the service's shape (protocol.md "Media"): ice-lite at
 * session level, one audio m-line with Opus 111 and telephone-event 126, a=ptime:20, complete,
 * sha-256, and the DTLS role asked for.
 */
export function expectWindowFacing(sdp: string, setup: 'actpass' | 'passive'): void {
  const described = describeOffer(sdp);
  expect(described.ok).toBe(true);
  if (!described.ok) return;
  expect(described.value).toMatchObject({ iceLite: true, setup, fingerprintType: 'sha-256', telephoneEventPayload: 126, candidateTransports: ['udp'] });
  expect(described.value.codecs.slice(0, 2)).toEqual([
    { payload: 111, name: 'opus', rate: 48000, channels: 2 },
    { payload: 126, name: 'telephone-event', rate: 8000 },
  ]);
  expect(described.value.candidateCount).toBeGreaterThan(0);
  const session = sdpTransform.parse(sdp);
  expect(session.media[0]!.ptime).toBe(20);
  expect(sdp).not.toContain('a=ice-options:trickle');
  if (setup === 'actpass') expect(checkOfferSdp(sdp)).toEqual({ ok: true, value: null });
}

/** What a test file's tests open (peers, nodes) is closed after each test: Node will not exit while one is open. Returns `track`. */
export function closedAfterEach(): <T extends { close(): Promise<void> }>(peer: T) => T {
  const open: { close(): Promise<void> }[] = [];
  afterEach(async () => {
    await Promise.all(open.splice(0).map((peer) => peer.close()));
  });
  return (peer) => {
    open.push(peer);
    return peer;
  };
}

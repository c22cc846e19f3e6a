// A bridge node: the media of many bridged calls in one process, controlled through BridgeControl
// (shared/bridge.ts). The relay calls this object directly when the bridge runs in its process, or
// over the node's control API otherwise. The node owns its calls' media and nothing else: who is in
// a call and who hears whom is the relay's to say (ARCHITECTURE.md). Its contract in short rows is
// bridge/REFERENCE.md.
import { cpuUsage } from 'node:process';
import { performance } from 'node:perf_hooks';
import type { RTCIceServer } from 'werift';
import { CUSTOMER, HOLD_MUSIC, LEG_ID_PATTERN, routesSchema, type BridgeControl, type BridgedCallReport, type Routes } from '../shared/bridge';
import type { BridgeNodeLoad } from '../shared/bridge-nodes';
import { NOTICE_SAMPLE_RATE, RECORD_NOTICE_MAX_SECONDS, type RecordingSink } from '../shared/bridge-recording';
import { createLogger, type Logger } from '../shared/log';
import { err, errorText, ok, type Result } from '../shared/result';
import { BridgedCall, type BridgeNodeEvent } from './bridged-call';
import { GatheringTurns } from './legs/gathering';
import type { LegContext } from './legs/leg-peer';
import { networkProblems, type LegNetwork } from './legs/peer-config';
import { holdMusic } from './media/hold-music';
import { MediaClock } from './media/media-clock';

export type { BridgeNodeEvent } from './bridged-call';

export interface BridgeNodeOptions {
  /** The address in the node's candidates (an IP address); the bound address, or the interfaces', when absent. */
  publicAddress?: string;
  /** The one local address the node's sockets bind; all interfaces when absent. */
  bindAddress?: string;
  /** The UDP ports the node's media may use, both ends included. */
  rtpPorts?: { from: number; to: number };
  /** STUN and TURN servers for the node's own candidates. */
  iceServers?: RTCIceServer[];
  logger?: Logger;
  /** A connected leg that receives nothing for this long has failed (default 15 s, legs/leg-peer.ts). */
  mediaTimeoutMs?: number;
  /** What happened to a call's legs, for the relay. Called synchronously; it must not throw. */
  onEvent?: (event: BridgeNodeEvent) => void;
  /**
   * Where each finished recording goes (the relay's store in its own process, an upload to the
   * relay for a remote node). Without it the node refuses to record (`not_configured`).
   */
  recordings?: RecordingSink;
}

/** Ended calls remembered, so that a late command for one is refused rather than starting it again. */
const ENDED_KEPT = 10_000;
const MAX_CALL_ID = 256;
const MAX_SDP = 64 * 1024;
/** The longest notice, with a frame to spare for a resampled one's rounding. */
const MAX_NOTICE_SAMPLES = RECORD_NOTICE_MAX_SECONDS * NOTICE_SAMPLE_RATE + NOTICE_SAMPLE_RATE / 50;

const invalid = (field: string, rule: string): Result<never> => err('invalid_input', `${field}: ${rule}`, { field });
const unknownCall = (callId: string): Result<never> => err('not_found', `no call ${callId} on this node`);

function checkCallId(callId: string, field = 'callId'): Result<null> {
  if (typeof callId !== 'string' || callId.length === 0) return invalid(field, 'must not be empty');
  if (callId.length > MAX_CALL_ID) return invalid(field, `must be at most ${MAX_CALL_ID} characters`);
  return ok(null);
}

function checkLegId(legId: string, field = 'legId'): Result<null> {
  if (typeof legId !== 'string' || !LEG_ID_PATTERN.test(legId)) return invalid(field, 'must be 1–128 letters, digits or ._:- , starting with a letter or digit');
  if (legId === CUSTOMER || legId === HOLD_MUSIC) return invalid(field, `must not be "${legId}", a participant of every call`);
  return ok(null);
}

function checkSdp(sdp: string): Result<null> {
  if (typeof sdp !== 'string' || sdp.trim() === '') return invalid('sdp', 'SDP: is empty');
  if (sdp.length > MAX_SDP) return invalid('sdp', `SDP: must be at most ${MAX_SDP} characters`);
  return ok(null);
}

function checkRoutes(routes: Routes): Result<null> {
  if (!routesSchema.safeParse(routes).success) return invalid('routes', 'must map each listener to a list of at most 16 participants');
  for (const [listener, heard] of Object.entries(routes)) {
    if (listener !== CUSTOMER && !LEG_ID_PATTERN.test(listener)) return invalid(`routes.${listener}`, 'a listener is "customer" or a leg id');
    for (const participant of heard) {
      if (participant !== CUSTOMER && participant !== HOLD_MUSIC && !LEG_ID_PATTERN.test(participant)) {
        return invalid(`routes.${listener}`, `"${participant}" is neither "customer", "music" nor a leg id`);
      }
    }
  }
  return ok(null);
}

export class BridgeNode implements BridgeControl {
  /** Calls by the service's id, and outgoing calls by the relay's reference until they are placed. */
  private readonly calls = new Map<string, BridgedCall>();
  /** A placed outgoing call's reference → its call id (a repeated bind is no error). */
  private readonly placed = new Map<string, string>();
  private readonly ended = new Set<string>();
  private readonly clock = new MediaClock();
  private readonly context: LegContext;
  private readonly logger: Logger;
  private cpuMark = { at: performance.now(), usage: cpuUsage() };
  private closed = false;

  constructor(private readonly options: BridgeNodeOptions = {}) {
    const network: LegNetwork = {};
    if (options.publicAddress !== undefined) network.publicAddress = options.publicAddress;
    if (options.bindAddress !== undefined) network.bindAddress = options.bindAddress;
    if (options.rtpPorts !== undefined) network.rtpPorts = options.rtpPorts;
    if (options.iceServers !== undefined) network.iceServers = options.iceServers;
    const problems = networkProblems(network);
    if (problems.length > 0) throw new RangeError(`bridge node: ${problems.join('; ')}`);
    this.logger = options.logger ?? createLogger('bridge');
    this.context = { network, turns: new GatheringTurns(network.rtpPorts !== undefined), logger: this.logger };
    if (options.mediaTimeoutMs !== undefined) this.context.mediaTimeoutMs = options.mediaTimeoutMs;
    // Made now, while no call waits for it: about half a second of encoding, once per process.
    holdMusic();
  }

  async prepareIncoming(callId: string, offer: string): Promise<Result<{ answer: string }>> {
    const checked = this.checkNew(callId, offer);
    if (!checked.ok) return checked;
    const call = this.calls.get(callId) ?? this.newCall(callId);
    const answer = await call.answerCustomer(offer);
    if (!answer.ok) {
      await this.dropIfEmpty(callId, call);
      return answer;
    }
    return ok({ answer: answer.value });
  }

  async connectCustomer(callId: string): Promise<Result<null>> {
    const call = this.callFor(callId);
    return call.ok ? call.value.connectCustomer() : call;
  }

  async prepareOutgoing(ref: string): Promise<Result<{ offer: string }>> {
    const idChecked = checkLegId(ref, 'ref');
    if (!idChecked.ok) return idChecked;
    if (this.closed) return err('not_available', 'the bridge node is closing');
    if (this.ended.has(ref)) return err('invalid_state', `call ${ref} has ended`);
    const call = this.calls.get(this.placed.get(ref) ?? ref) ?? this.newCall(ref);
    const offer = await call.offerCustomer();
    if (!offer.ok) {
      await this.dropIfEmpty(ref, call);
      return offer;
    }
    return ok({ offer: offer.value });
  }

  async bindOutgoing(ref: string, callId: string): Promise<Result<null>> {
    const checked = checkCallId(callId);
    if (!checked.ok) return checked;
    const boundTo = this.placed.get(ref);
    if (boundTo !== undefined) return boundTo === callId ? ok(null) : err('invalid_state', `reference ${ref} is call ${boundTo} already`);
    const call = this.calls.get(ref);
    if (!call) return unknownCall(ref);
    if (this.calls.has(callId)) return err('invalid_state', `call ${callId} is on this node already`);
    this.calls.delete(ref);
    this.calls.set(callId, call);
    this.placed.set(ref, callId);
    call.callId = callId;
    return ok(null);
  }

  async applyCustomerAnswer(callId: string, answer: string): Promise<Result<null>> {
    const sdp = checkSdp(answer);
    if (!sdp.ok) return sdp;
    const call = this.callFor(callId);
    return call.ok ? call.value.applyCustomerAnswer(answer) : call;
  }

  async offerAgentLeg(callId: string, legId: string): Promise<Result<{ offer: string }>> {
    const leg = checkLegId(legId);
    if (!leg.ok) return leg;
    const call = this.callFor(callId);
    if (!call.ok) return call;
    const offer = await call.value.offerAgent(legId);
    return offer.ok ? ok({ offer: offer.value }) : offer;
  }

  async applyAgentAnswer(callId: string, legId: string, answer: string): Promise<Result<null>> {
    const checked = [checkLegId(legId), checkSdp(answer)].find((r) => !r.ok);
    if (checked && !checked.ok) return checked;
    const call = this.callFor(callId);
    return call.ok ? call.value.applyAgentAnswer(legId, answer) : call;
  }

  async answerAgentLeg(callId: string, legId: string, offer: string): Promise<Result<{ answer: string }>> {
    const checked = [checkLegId(legId), checkSdp(offer)].find((r) => !r.ok);
    if (checked && !checked.ok) return checked;
    const call = this.callFor(callId);
    if (!call.ok) return call;
    const answer = await call.value.answerAgent(legId, offer);
    return answer.ok ? ok({ answer: answer.value }) : answer;
  }

  async setRoutes(callId: string, routes: Routes): Promise<Result<null>> {
    const checked = checkRoutes(routes);
    if (!checked.ok) return checked;
    const call = this.callFor(callId);
    return call.ok ? call.value.setRoutes(routes) : call;
  }

  async closeAgentLeg(callId: string, legId: string): Promise<Result<null>> {
    const leg = checkLegId(legId);
    if (!leg.ok) return leg;
    const call = this.callFor(callId);
    if (!call.ok) return this.ended.has(callId) ? ok(null) : call;
    await call.value.closeAgent(legId);
    return ok(null);
  }

  async endCall(callId: string): Promise<Result<null>> {
    const id = this.placed.get(callId) ?? callId;
    const call = this.calls.get(id);
    if (!call) return ok(null);
    this.calls.delete(id);
    // The call's reference ends with it: a late command under either name finds it ended.
    for (const [ref, placedId] of this.placed) {
      if (placedId !== id) continue;
      this.placed.delete(ref);
      this.remember(ref);
    }
    this.remember(id);
    await call.end();
    return ok(null);
  }

  async releaseCustomer(callId: string): Promise<Result<null>> {
    const call = this.callFor(callId);
    return call.ok ? call.value.releaseCustomer() : call;
  }

  async startRecording(callId: string, notice?: Int16Array): Promise<Result<null>> {
    const checked = checkCallId(callId);
    if (!checked.ok) return checked;
    if (notice !== undefined && !(notice instanceof Int16Array)) return invalid('notice', 'must be 16-bit PCM');
    if (notice !== undefined && notice.length > MAX_NOTICE_SAMPLES) return invalid('notice', `must be at most ${RECORD_NOTICE_MAX_SECONDS} s of ${NOTICE_SAMPLE_RATE / 1000} kHz PCM`);
    const call = this.callFor(callId);
    return call.ok ? call.value.startRecording(notice) : call;
  }

  async stopRecording(callId: string): Promise<Result<null>> {
    const call = this.callFor(callId);
    return call.ok ? call.value.stopRecording() : call;
  }

  async report(callId: string): Promise<Result<BridgedCallReport>> {
    const call = this.callFor(callId);
    return call.ok ? ok(await call.value.report()) : call;
  }

  /** The calls held now and the share of one core the process used since the last look. */
  load(): BridgeNodeLoad {
    const now = performance.now();
    const usage = cpuUsage(this.cpuMark.usage);
    const elapsedMs = now - this.cpuMark.at;
    this.cpuMark = { at: now, usage: cpuUsage() };
    const load: BridgeNodeLoad = { calls: this.calls.size };
    if (elapsedMs > 0) load.cpuPercent = Math.min(100, Math.max(0, ((usage.user + usage.system) / 1000 / elapsedMs) * 100));
    return load;
  }

  /** Audio packets the calls held now did not pass on for coming too late (media/lateness.ts): a node that fell behind. */
  lateDropped(): number {
    let late = 0;
    for (const call of this.calls.values()) late += call.lateDropped;
    return late;
  }

  /** Every call ends and every peer connection closes. */
  async close(): Promise<void> {
    this.closed = true;
    const calls = [...this.calls.values()];
    for (const id of this.calls.keys()) this.remember(id);
    for (const ref of this.placed.keys()) this.remember(ref);
    this.calls.clear();
    this.placed.clear();
    await Promise.all(calls.map((call) => call.end().catch((e: unknown) => this.logger.warn('a call did not end cleanly', { error: errorText(e) }))));
    this.clock.stop();
  }

  private checkNew(callId: string, offer: string): Result<null> {
    const checks = [checkCallId(callId), checkSdp(offer)];
    const failed = checks.find((r) => !r.ok);
    if (failed) return failed;
    if (this.closed) return err('not_available', 'the bridge node is closing');
    if (this.ended.has(callId)) return err('invalid_state', `call ${callId} has ended`);
    return ok(null);
  }

  private newCall(id: string): BridgedCall {
    const call = new BridgedCall(id, {
      context: this.context,
      clock: this.clock,
      music: holdMusic(),
      onEvent: (event) => this.tell(event),
      ...(this.options.recordings !== undefined ? { recordings: this.options.recordings } : {}),
    });
    this.calls.set(id, call);
    return call;
  }

  /** A call whose customer leg could not be made holds nothing: it goes, and the same id may be tried again. */
  private async dropIfEmpty(id: string, call: BridgedCall): Promise<void> {
    if (this.calls.get(id) !== call || !call.isEmpty()) return;
    this.calls.delete(id);
    await call.end();
  }

  private callFor(callId: string): Result<BridgedCall> {
    const call = this.calls.get(this.placed.get(callId) ?? callId);
    if (call) return ok(call);
    return this.ended.has(callId) ? err('invalid_state', `call ${callId} has ended`) : unknownCall(callId);
  }

  private remember(callId: string): void {
    this.ended.add(callId);
    if (this.ended.size > ENDED_KEPT) this.ended.delete(this.ended.values().next().value!);
  }

  private tell(event: BridgeNodeEvent): void {
    try {
      this.options.onEvent?.(event);
    } catch (e) {
      this.logger.warn('the event handler threw', { kind: event.kind, error: errorText(e) });
    }
  }
}

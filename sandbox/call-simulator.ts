// The calling service and its customers, behind the gateway's call endpoints: every call's state,
// the customers' phones (CustomerPeer), the timers of the real service (ringing, media timeouts)
// and the webhooks each step produces (protocol.md "Events").
import { randomBytes } from 'node:crypto';
import { RING_TIMEOUT_MS } from '../shared/call-state';
import type { AcceptCallRequest, InitiateCallRequest, RejectCallRequest, TerminateCallRequest } from '../shared/gateway';
import type { Logger } from '../shared/log';
import { normalisePhoneNumber } from '../shared/phone';
import { assertNever, err, ok, type Result } from '../shared/result';
import { OGG_OPUS_MIME_TYPE } from '../shared/ogg-opus';
import type { SandboxCallReport, SandboxCaptureReport, SandboxCustomer, SandboxNetworkImpairment, SandboxNetworkReport } from '../shared/sandbox';
import type { ServiceCaptureRequest } from '../shared/service-capture';
import type { CallRecordingAvailableItem, CallTranscriptionAvailableItem } from '../shared/webhook';
import { CallRecorder, type Utterance } from './call-recorder';
import { CustomerNetwork } from './customer-network';
import { CustomerPeer, emptyMediaReport, type CustomerMediaReport } from './customer-peer';
import type { CustomerVoice } from './customer-voice';
import { findCustomer } from './customers';
import { invalidParameter, type GraphFailure } from './graph-error';
import type { ServedMedia } from './media-store';
import type { ServiceNotice } from './service-notice';
import { sessionProblems } from './session-rules';
import { unixSeconds, type WebhookSender } from './webhook-sender';

export interface SandboxTimeouts {
  /**
   * An unanswered call ends after this (protocol.md: the user sees "Not answered" after 30–60 s);
   * by default the app's own ring timeout, which the call records also count on.
   */
  ringTimeoutMs: number;
  /** No media from the business this long after the call connects ends it with 138021 (protocol.md). */
  mediaStartTimeoutMs: number;
  /** No media from the business this long mid-call ends it with 138022 (protocol.md). */
  mediaGapTimeoutMs: number;
  /** How long a webhook is retried while the relay is unreachable. */
  webhookRetryWindowMs: number;
  /** The service's recording and transcript are announced this long after the terminate (protocol.md: typically under a minute). */
  captureReadyMs: number;
}

export const DEFAULT_TIMEOUTS: SandboxTimeouts = {
  ringTimeoutMs: RING_TIMEOUT_MS,
  mediaStartTimeoutMs: 20_000,
  mediaGapTimeoutMs: 30_000,
  webhookRetryWindowMs: 60_000,
  captureReadyMs: 3_000,
};

/** A gateway answer: the success body, or a Graph error. `callId` names the call for the request log. */
export type GatewayOutcome = { ok: true; body: unknown; callId?: string } | { ok: false; failure: GraphFailure; callId?: string };

type Direction = SandboxCallReport['direction'];
type CallState = SandboxCallReport['state'];

/**
 * Why a call ended. A customer may leave a voicemail only after an incoming call the business
 * `rejected` or that `rang_out` unanswered (protocol.md "Voicemail": on reject or timeout).
 */
type CallEnding = 'rejected' | 'rang_out' | 'customer_rejected' | 'customer_hung_up' | 'business_terminated' | 'failed';

interface Call {
  id: string;
  customer: SandboxCustomer;
  direction: Direction;
  state: CallState;
  /** The customer's phone; a business-initiated call gets one when the customer picks up. */
  peer?: CustomerPeer;
  /** The network the customer's phone is on: the customer's own, until POST /control/network replaces it. */
  network: CustomerNetwork;
  requests: { action: string; at: number }[];
  answeredAt?: number;
  ending?: CallEnding;
  /** The media id of the voicemail the customer left: one a call. */
  voicemail?: string;
  /** What accept or connect carried in `biz_opaque_callback_data`: echoed on the call's statuses and terminate. */
  opaque?: string;
  /** The service's recording and transcript, when accept or connect asked for either. */
  capture?: Capture;
  timers: Set<NodeJS.Timeout>;
  /** Gateway requests and timers act on a call one at a time, in arrival order. */
  queue: Promise<unknown>;
}

interface Capture {
  recording?: ServiceCaptureRequest;
  transcription?: ServiceCaptureRequest;
  recorder?: CallRecorder;
  noticeStartedAt?: number;
  noticeEndedAt?: number;
  capturedMs?: number;
  recordingMediaId?: string;
  transcriptMediaId?: string;
  sentAt?: number;
}

/** Where the sandbox keeps the files it made of a call, as the service keeps media (media-store.ts). */
export interface CaptureMediaKeeper {
  keep(bytes: Uint8Array, mimeType: string): ServedMedia;
  /** The file's download url, signed now: it lives 5 minutes. */
  url(id: string): string;
}

interface EndOutcome {
  status: 'COMPLETED' | 'FAILED';
  errors?: { code: number; message: string; details: string }[];
}

export interface CallSimulatorOptions {
  customers: readonly SandboxCustomer[];
  product: string;
  /** The business's number (digits with country code), the other end of every call. */
  businessNumber: string;
  webhooks: WebhookSender;
  voice: CustomerVoice;
  mediaHost: string;
  ringMs: number;
  timeouts: SandboxTimeouts;
  logger: Logger;
  /** The notice played before the service records or transcribes (service-notice.ts). */
  notice: ServiceNotice;
  media: CaptureMediaKeeper;
}

/** Ended calls kept for reports; older ones are forgotten. */
const MAX_ENDED_CALLS = 500;
const WATCHDOG_MS = 500;

const newCallId = () => `wacid.${randomBytes(24).toString('base64url')}`;
const unknownCall = (id: string): GraphFailure => invalidParameter('call_id', `unknown call id "${id}"`, `No call with id ${id} exists for this business number`);
/** protocol.md: error 100 with the SDP's problems in error_data. */
const badSession = (kind: 'answer' | 'offer', problems: string[]): GraphFailure =>
  invalidParameter('session.sdp', `not a valid SDP ${kind}: ${problems[0] ?? 'invalid'}`, problems.join('; '));
/** Why a call cannot have a voicemail, or undefined when it can. */
function voicemailRefusal(call: Call): string | undefined {
  if (call.direction !== 'USER_INITIATED') return 'was placed by the business: only a customer who called leaves a voicemail';
  if (call.state !== 'ended') return `is still ${call.state}: a voicemail follows a call that was rejected or rang out`;
  if (call.ending !== 'rejected' && call.ending !== 'rang_out') {
    return call.answeredAt === undefined ? 'ended before it was rejected or rang out (the customer hung up, or it failed)' : 'was answered';
  }
  if (call.voicemail !== undefined) return `already has a voicemail (media ${call.voicemail})`;
  return undefined;
}
const wrongState = (call: Call, action: string, why: string): GraphFailure =>
  invalidParameter('call_id', `cannot ${action} this call: ${why}`, `Call ${call.id} is ${call.direction === 'USER_INITIATED' ? 'user' : 'business'}-initiated and ${call.state}`);

export class CallSimulator {
  private readonly calls = new Map<string, Call>();
  private readonly watchdog: NodeJS.Timeout;
  private closed = false;

  constructor(private readonly options: CallSimulatorOptions) {
    this.watchdog = setInterval(() => this.checkMedia(), WATCHDOG_MS);
    this.watchdog.unref();
  }

  // ── Control API: the customer's side ────────────────────────────────────────────────────────

  /**
   * A customer calls the business: an ICE-lite offer in a signed connect webhook. `ctaPayload` is
   * set when the customer pressed a voice_call button: its payload rides on the connect (protocol.md).
   */
  async incoming(number: string, options: { ctaPayload?: string } = {}): Promise<Result<{ callId: string }>> {
    if (this.closed) return err('not_available', 'the sandbox is closed');
    const customer = findCustomer(this.options.customers, number);
    const call = this.register(customer, 'USER_INITIATED');
    const peer = this.newPeer(call);
    call.peer = peer;
    const offer = await peer.makeOffer();
    if (!offer.ok || this.closed) {
      this.forget(call);
      await peer.close();
      return offer.ok ? err('not_available', 'the sandbox is closed') : offer;
    }
    this.whileRinging(call, this.options.timeouts.ringTimeoutMs, () => this.end(call, { status: 'COMPLETED' }, 'rang_out', 'missed: nobody answered'));
    this.options.logger.info('incoming call', { callId: call.id, from: customer.number });
    this.options.webhooks.send({
      contacts: [this.contact(customer)],
      calls: [
        {
          ...this.parties(call),
          event: 'connect',
          timestamp: unixSeconds(Date.now()),
          direction: 'USER_INITIATED',
          session: { sdp_type: 'offer', sdp: offer.value },
          ...(options.ctaPayload === undefined ? {} : { cta_payload: options.ctaPayload }),
        },
      ],
    });
    return ok({ callId: call.id });
  }

  /** The customer hangs up (or gives up while it rings). */
  hangup(callId: string): Promise<Result<Record<string, never>>> {
    const call = this.calls.get(callId);
    if (!call) return Promise.resolve(err('not_found', `no call ${callId}`, { field: 'callId' }));
    return this.serial(call, async () => {
      if (call.state === 'ended') return err<Record<string, never>>('invalid_state', `call ${callId} has already ended`, { field: 'callId' });
      await this.end(call, { status: 'COMPLETED' }, 'customer_hung_up', 'the customer hung up');
      return ok({});
    });
  }

  /** The customer's network goes bad, or clean again (POST /control/network): ringing or connected calls only. */
  setNetwork(callId: string, impairment: SandboxNetworkImpairment): Result<SandboxNetworkReport> {
    const call = this.calls.get(callId);
    if (!call || call.state === 'ended' || this.closed) {
      return err('not_found', call && call.state === 'ended' ? `call ${callId} has ended` : `no call ${callId}`, { field: 'callId' });
    }
    this.options.logger.info('customer network changed', { callId, ...impairment });
    return ok(call.network.replace(impairment, Date.now()));
  }

  reports(): SandboxCallReport[] {
    return [...this.calls.values()].map((call) => this.report(call));
  }

  callReport(callId: string): SandboxCallReport | undefined {
    const call = this.calls.get(callId);
    return call && this.report(call);
  }

  /**
   * The call a customer leaves a voicemail for (POST /control/voicemail): `callId`, or the number's
   * last incoming call the business rejected or let ring out. Any other call is refused
   * (invalid_state), as is a second voicemail for the same call.
   */
  voicemailCall(target: { callId: string } | { number: string }): Result<{ callId: string; customer: SandboxCustomer }> {
    if ('callId' in target) {
      const call = this.calls.get(target.callId);
      if (!call) return err('not_found', `no call ${target.callId}`, { field: 'callId' });
      const refusal = voicemailRefusal(call);
      return refusal ? err('invalid_state', `call ${call.id} ${refusal}`, { field: 'callId' }) : ok({ callId: call.id, customer: call.customer });
    }
    const incoming = [...this.calls.values()].filter((c) => c.customer.number === target.number && c.direction === 'USER_INITIATED');
    if (incoming.length === 0) return err('not_found', `no call from ${target.number}`, { field: 'number' });
    const missed = incoming.findLast((c) => c.state === 'ended' && (c.ending === 'rejected' || c.ending === 'rang_out'));
    if (!missed) return err('invalid_state', `${target.number} has no incoming call that was rejected or rang out unanswered`, { field: 'number' });
    const refusal = voicemailRefusal(missed);
    return refusal ? err('invalid_state', `call ${missed.id} ${refusal}`, { field: 'callId' }) : ok({ callId: missed.id, customer: missed.customer });
  }

  /** The voicemail of `callId` was left (voicemailCall allowed it): it is its only one. */
  voicemailLeft(callId: string, mediaId: string): void {
    const call = this.calls.get(callId);
    if (call) call.voicemail = mediaId;
  }

  /**
   * The call a customer's callback request is about (POST /control/callback-request): `callId`, which
   * must be one of the customer's, or else the customer's last call, either way and in any state.
   */
  customerCall(number: string, callId?: string): Result<{ callId: string; customer: SandboxCustomer }> {
    if (callId !== undefined) {
      const call = this.calls.get(callId);
      if (!call) return err('not_found', `no call ${callId}`, { field: 'callId' });
      if (call.customer.number !== number) return err('invalid_state', `call ${callId} is not a call of ${number}`, { field: 'callId' });
      return ok({ callId, customer: call.customer });
    }
    const last = [...this.calls.values()].findLast((c) => c.customer.number === number);
    return last ? ok({ callId: last.id, customer: last.customer }) : err('invalid_state', `${number} has no call to be called back about`, { field: 'number' });
  }

  // ── Gateway endpoints: the business's side (gateway-spec.md 4.2) ──────────────────────────────

  accept(req: AcceptCallRequest, at: number): Promise<GatewayOutcome> {
    return this.onCall(req.call_id, 'accept', at, async (call) => {
      if (call.direction !== 'USER_INITIATED') return this.refuse(call, 'accept', 'only calls from a customer can be accepted');
      if (call.state !== 'ringing') return this.refuse(call, 'accept', `it is already ${call.state}`);
      const problems = sessionProblems(req.session.sdp, 'answer');
      if (problems.length > 0) return { ok: false, callId: call.id, failure: badSession('answer', problems) };
      // Applied before answering the request: media setup starts at once (protocol.md: late setup clips audio).
      const applied = await call.peer!.applyAnswer(req.session.sdp);
      if (!applied.ok) return { ok: false, callId: call.id, failure: badSession('answer', [applied.error.message]) };
      this.clearTimers(call);
      call.state = 'connected';
      call.answeredAt = Date.now();
      if (req.biz_opaque_callback_data !== undefined) call.opaque = req.biz_opaque_callback_data;
      this.askCapture(call, req);
      this.startCapture(call, call.peer!);
      this.options.logger.info('call accepted', { callId: call.id });
      return this.success(call);
    });
  }

  reject(req: RejectCallRequest, at: number): Promise<GatewayOutcome> {
    return this.onCall(req.call_id, 'reject', at, async (call) => {
      if (call.direction !== 'USER_INITIATED') return this.refuse(call, 'reject', 'only calls from a customer can be rejected; terminate it');
      if (call.state !== 'ringing') return this.refuse(call, 'reject', `it is already ${call.state}`);
      await this.end(call, { status: 'COMPLETED' }, 'rejected', 'rejected by the business');
      return this.success(call);
    });
  }

  terminate(req: TerminateCallRequest, at: number): Promise<GatewayOutcome> {
    return this.onCall(req.call_id, 'terminate', at, async (call) => {
      if (call.state === 'ended') return this.refuse(call, 'terminate', 'it has already ended');
      if (call.direction === 'USER_INITIATED' && call.state === 'ringing') {
        return this.refuse(call, 'terminate', 'it was not accepted; reject it instead');
      }
      await this.end(call, { status: 'COMPLETED' }, 'business_terminated', 'terminated by the business');
      return this.success(call);
    });
  }

  async initiate(req: InitiateCallRequest, at: number): Promise<GatewayOutcome> {
    if (this.closed) return { ok: false, failure: { status: 503, code: 2, message: 'Service temporarily unavailable' } };
    const problems = sessionProblems(req.session.sdp, 'offer');
    if (problems.length > 0) return { ok: false, failure: badSession('offer', problems) };
    if (!normalisePhoneNumber(`+${req.to}`).ok) {
      return {
        ok: false,
        failure: { status: 400, code: 138001, message: '(#138001) Receiver is incapable of receiving this call', details: `${req.to} is not a number that can be called` },
      };
    }
    const customer = findCustomer(this.options.customers, req.to);
    if (customer.behaviour === 'no_permission') {
      return {
        ok: false,
        failure: { status: 400, code: 138006, message: '(#138006) Cannot call this user: no call permission from the user', details: 'The user has not granted the business permission to call, or it expired' },
      };
    }
    const busy = customer.behaviour === 'busy' || [...this.calls.values()].some((c) => c.customer.number === customer.number && c.state !== 'ended');
    if (busy) {
      return {
        ok: false,
        failure: { status: 400, code: 138003, message: '(#138003) A call with this user is already in progress', details: `User ${customer.number} is already in a call` },
      };
    }
    const call = this.register(customer, 'BUSINESS_INITIATED');
    call.requests.push({ action: 'initiate', at });
    if (req.biz_opaque_callback_data !== undefined) call.opaque = req.biz_opaque_callback_data;
    this.askCapture(call, req);
    this.options.logger.info('outgoing call', { callId: call.id, to: customer.number, behaviour: customer.behaviour });
    // The call's webhooks follow the response that names the call.
    setImmediate(() => this.ring(call, req.session.sdp));
    return { ok: true, callId: call.id, body: { messaging_product: this.options.product, calls: [{ id: call.id }] } };
  }

  /** Closes every customer's peer and stops every timer; no more webhooks are sent. */
  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.watchdog);
    const peers: Promise<void>[] = [];
    for (const call of this.calls.values()) {
      this.clearTimers(call);
      call.network.close();
      if (call.peer) peers.push(call.peer.close());
    }
    await Promise.all(peers);
    // Frees the recorders' codecs; nothing is sent any more.
    for (const call of this.calls.values()) call.capture?.recorder?.finish();
  }

  // ── Outgoing calls: the customer's phone rings ────────────────────────────────────────────────

  private ring(call: Call, offer: string): void {
    if (call.state === 'ended' || this.closed) return;
    this.status(call, 'RINGING');
    const { ringMs, timeouts } = this.options;
    switch (call.customer.behaviour) {
      case 'answers':
        this.whileRinging(call, ringMs, () => this.pickUp(call, offer));
        break;
      case 'rejects':
        this.whileRinging(call, ringMs, async () => {
          this.status(call, 'REJECTED');
          await this.end(call, { status: 'COMPLETED' }, 'customer_rejected', 'rejected by the customer');
        });
        break;
      case 'no_answer':
      case 'no_permission':
      case 'busy':
        this.whileRinging(call, timeouts.ringTimeoutMs, () => this.end(call, { status: 'COMPLETED' }, 'rang_out', 'not answered'));
        break;
      default:
        assertNever(call.customer.behaviour, 'customer behaviour');
    }
  }

  private async pickUp(call: Call, offer: string): Promise<void> {
    const peer = this.newPeer(call);
    call.peer = peer;
    this.startCapture(call, peer);
    const answer = await peer.answerOffer(offer);
    if (call.state !== 'ringing') return;
    if (!answer.ok) {
      await this.end(call, { status: 'FAILED', errors: [{ code: 138019, message: 'Call setup failed', details: answer.error.message }] }, 'failed', 'the customer could not answer');
      return;
    }
    this.clearTimers(call);
    call.state = 'connected';
    call.answeredAt = Date.now();
    this.options.logger.info('customer answered', { callId: call.id });
    this.options.webhooks.send({
      calls: [{ ...this.parties(call), event: 'connect', timestamp: unixSeconds(Date.now()), direction: 'BUSINESS_INITIATED', session: { sdp_type: 'answer', sdp: answer.value } }],
    });
  }

  // ── Shared steps ──────────────────────────────────────────────────────────────────────────────

  private register(customer: SandboxCustomer, direction: Direction): Call {
    const call: Call = {
      id: newCallId(),
      customer,
      direction,
      state: 'ringing',
      network: new CustomerNetwork(customer.network),
      requests: [],
      timers: new Set(),
      queue: Promise.resolve(),
    };
    this.calls.set(call.id, call);
    this.prune();
    return call;
  }

  private forget(call: Call): void {
    this.clearTimers(call);
    call.network.close();
    this.calls.delete(call.id);
  }

  private prune(): void {
    const ended = [...this.calls.values()].filter((c) => c.state === 'ended');
    for (const call of ended.slice(0, Math.max(0, ended.length - MAX_ENDED_CALLS))) this.calls.delete(call.id);
  }

  private newPeer(call: Call): CustomerPeer {
    return new CustomerPeer({
      host: this.options.mediaHost,
      voice: this.options.voice,
      logger: this.options.logger,
      network: call.network,
      onFirstFrameSent: () => {
        call.network.mediaStarted(Date.now());
        // protocol.md: ACCEPTED often arrives after media already flows.
        if (call.direction === 'BUSINESS_INITIATED' && call.state === 'connected') this.status(call, 'ACCEPTED');
      },
      onFailed: (reason) => {
        void this.serial(call, async () => {
          if (call.state === 'ended') return;
          await this.end(call, { status: 'FAILED', errors: [{ code: 138004, message: 'Connection error', details: `The media connection failed: ${reason}` }] }, 'failed', reason);
        });
      },
    });
  }

  /** Runs `op` on a known call in arrival order, recording the request first. */
  private onCall(callId: string, action: string, at: number, op: (call: Call) => Promise<GatewayOutcome>): Promise<GatewayOutcome> {
    const call = this.calls.get(callId);
    if (!call || this.closed) return Promise.resolve({ ok: false, failure: unknownCall(callId), callId });
    call.requests.push({ action, at });
    return this.serial(call, () => op(call));
  }

  private serial<T>(call: Call, op: () => Promise<T>): Promise<T> {
    const run = call.queue.then(op, op);
    call.queue = run.catch(() => undefined);
    return run;
  }

  /** Runs `op` after `ms` if the call still rings then: an answer that won the race cancels it. */
  private whileRinging(call: Call, ms: number, op: () => Promise<void> | void): void {
    const timer = setTimeout(() => {
      call.timers.delete(timer);
      void this.serial(call, async () => {
        if (call.state === 'ringing' && !this.closed) await op();
      });
    }, ms);
    call.timers.add(timer);
  }

  private clearTimers(call: Call): void {
    for (const timer of call.timers) clearTimeout(timer);
    call.timers.clear();
  }

  private success(call: Call): GatewayOutcome {
    return { ok: true, callId: call.id, body: { messaging_product: this.options.product, success: true } };
  }

  private refuse(call: Call, action: string, why: string): GatewayOutcome {
    return { ok: false, callId: call.id, failure: wrongState(call, action, why) };
  }

  /** Ends the call: a terminate webhook (with times only when it was answered), then the peer closes. */
  private async end(call: Call, outcome: EndOutcome, ending: CallEnding, why: string): Promise<void> {
    if (call.state === 'ended') return;
    this.clearTimers(call);
    call.state = 'ended';
    call.ending = ending;
    const now = Date.now();
    const times =
      call.answeredAt === undefined
        ? {}
        : { start_time: unixSeconds(call.answeredAt), end_time: unixSeconds(now), duration: Math.max(0, Math.round((now - call.answeredAt) / 1000)) };
    this.options.logger.info('call ended', { callId: call.id, why, status: outcome.status });
    if (!this.closed) {
      this.options.webhooks.send({
        ...(call.direction === 'USER_INITIATED' ? { contacts: [this.contact(call.customer)] } : {}),
        calls: [
          {
            ...this.parties(call),
            event: 'terminate',
            direction: call.direction,
            timestamp: unixSeconds(now),
            status: outcome.status,
            ...times,
            ...(call.opaque !== undefined ? { biz_opaque_callback_data: call.opaque } : {}),
            ...(outcome.errors ? { errors: outcome.errors.map((e) => ({ code: e.code, message: e.message, error_data: { details: e.details } })) } : {}),
          },
        ],
      });
    }
    await call.peer?.close();
    call.network.close();
    this.captured(call);
  }

  // ── The service's recording and transcript (protocol.md "What the service added in 2026") ───

  private askCapture(call: Call, req: { recording?: ServiceCaptureRequest; transcription?: ServiceCaptureRequest }): void {
    if (!req.recording && !req.transcription) return;
    call.capture = { ...(req.recording ? { recording: req.recording } : {}), ...(req.transcription ? { transcription: req.transcription } : {}) };
  }

  /** The peer plays the notice toward the business first, and the recorder listens from its first frame. */
  private startCapture(call: Call, peer: CustomerPeer): void {
    const capture = call.capture;
    if (!capture || capture.recorder) return;
    const recorder = new CallRecorder({ audio: capture.recording !== undefined });
    capture.recorder = recorder;
    const { notice } = this.options;
    const chime: Utterance = { key: 'chime', text: null, confidence: 1 };
    const words: Utterance = { key: 'notice', text: notice.text === '' ? null : notice.text, confidence: 1 };
    peer.captureWith(recorder, {
      frames: notice.frames,
      utterance: (index) => {
        if (index === 0) capture.noticeStartedAt = Date.now();
        return index < notice.chimeFrames ? chime : words;
      },
      done: () => {
        capture.noticeEndedAt = Date.now();
      },
    });
    this.options.logger.info('the service records the call', { callId: call.id, recording: capture.recording !== undefined, transcription: capture.transcription !== undefined });
  }

  /** After the call: the recording and the transcript are kept as media and announced a few seconds later. */
  private captured(call: Call): void {
    const capture = call.capture;
    const recorder = capture?.recorder;
    if (!capture || !recorder) return;
    const result = recorder.finish();
    capture.capturedMs = recorder.recordedMs;
    // A call that never got media has no recording, as the service has none.
    if (recorder.startedAt === undefined || this.closed) return;
    const timer = setTimeout(() => {
      call.timers.delete(timer);
      if (this.closed) return;
      const now = Date.now();
      const timestamp = unixSeconds(now);
      const { id, from, to } = this.parties(call);
      if (capture.recording && result.file) {
        const media = this.options.media.keep(result.file, OGG_OPUS_MIME_TYPE);
        capture.recordingMediaId = media.id;
        const item: CallRecordingAvailableItem = {
          id,
          from,
          to,
          event: 'call_recording_available',
          timestamp,
          call_recording: { type: 'audio', audio: { id: media.id, sha256: media.sha256, mime_type: OGG_OPUS_MIME_TYPE, url: this.options.media.url(media.id) } },
        };
        this.options.webhooks.send({ calls: [item] });
      }
      if (capture.transcription) {
        const document = new TextEncoder().encode(JSON.stringify({ transcript: { segments: result.segments } }));
        const media = this.options.media.keep(document, 'application/json');
        capture.transcriptMediaId = media.id;
        const item: CallTranscriptionAvailableItem = {
          id,
          from,
          to,
          event: 'call_transcription_available',
          timestamp,
          call_transcript: { document: { id: media.id, sha256: media.sha256, mime_type: 'application/json', url: this.options.media.url(media.id) } },
        };
        this.options.webhooks.send({ calls: [item] });
      }
      capture.sentAt = now;
      this.options.logger.info('the service’s recording and transcript are ready', { callId: call.id, recording: capture.recordingMediaId, transcript: capture.transcriptMediaId });
    }, this.options.timeouts.captureReadyMs);
    call.timers.add(timer);
  }

  private captureReport(capture: Capture): SandboxCaptureReport {
    const asked = (r: ServiceCaptureRequest) => ({ purpose: r.purpose, announcementLanguage: r.announcement_language });
    const { notice } = this.options;
    return {
      ...(capture.recording ? { recording: asked(capture.recording) } : {}),
      ...(capture.transcription ? { transcription: asked(capture.transcription) } : {}),
      notice: {
        text: notice.text,
        spokenLanguage: notice.spokenLanguage,
        askedLanguage: (capture.recording ?? capture.transcription)!.announcement_language,
        ...(capture.noticeStartedAt === undefined ? {} : { startedAt: capture.noticeStartedAt }),
        ...(capture.noticeEndedAt === undefined ? {} : { endedAt: capture.noticeEndedAt }),
        heardByCustomer: capture.noticeEndedAt !== undefined,
      },
      capturedMs: capture.capturedMs ?? capture.recorder?.recordedMs ?? 0,
      ...(capture.recordingMediaId === undefined ? {} : { recordingMediaId: capture.recordingMediaId }),
      ...(capture.transcriptMediaId === undefined ? {} : { transcriptMediaId: capture.transcriptMediaId }),
      ...(capture.sentAt === undefined ? {} : { sentAt: capture.sentAt }),
    };
  }

  private status(call: Call, status: 'RINGING' | 'ACCEPTED' | 'REJECTED'): void {
    if (this.closed) return;
    this.options.webhooks.send({
      statuses: [
        {
          id: call.id,
          type: 'call',
          status,
          timestamp: unixSeconds(Date.now()),
          recipient_id: call.customer.number,
          ...(call.opaque !== undefined ? { biz_opaque_callback_data: call.opaque } : {}),
        },
      ],
    });
  }

  private parties(call: Call): { id: string; from: string; to: string } {
    const business = this.options.businessNumber;
    const customer = call.customer.number;
    return call.direction === 'USER_INITIATED' ? { id: call.id, from: customer, to: business } : { id: call.id, from: business, to: customer };
  }

  private contact(customer: SandboxCustomer) {
    return { profile: { name: customer.name }, wa_id: customer.number };
  }

  /**
   * protocol.md: no media from the business for 20 s at call start, or 30 s mid-call, ends the call.
   * Media is any RTP: a muted agent's silence keeps the call up.
   */
  private checkMedia(): void {
    const now = Date.now();
    const { mediaStartTimeoutMs, mediaGapTimeoutMs } = this.options.timeouts;
    for (const call of this.calls.values()) {
      if (call.state !== 'connected' || !call.peer || call.answeredAt === undefined) continue;
      const { lastRtpAt } = call.peer.media();
      const failure =
        lastRtpAt === undefined
          ? now - call.answeredAt > mediaStartTimeoutMs && { code: 138021, message: 'Media receive timeout', details: `No audio from the business within ${mediaStartTimeoutMs / 1000} s of the call start` }
          : now - lastRtpAt > mediaGapTimeoutMs && { code: 138022, message: 'Media receive timeout', details: `No audio from the business for ${mediaGapTimeoutMs / 1000} s` };
      if (failure) {
        void this.serial(call, () => this.end(call, { status: 'FAILED', errors: [failure] }, 'failed', failure.details));
      }
    }
  }

  private report(call: Call): SandboxCallReport {
    const media: CustomerMediaReport = call.peer?.media() ?? emptyMediaReport();
    return {
      callId: call.id,
      number: call.customer.number,
      direction: call.direction,
      state: call.state,
      requests: [...call.requests],
      ...(media.firstPacketAt === undefined ? {} : { firstPacketAt: media.firstPacketAt }),
      ...(media.firstHeardAt === undefined ? {} : { firstHeardAt: media.firstHeardAt }),
      ...(media.lastRtpAt === undefined ? {} : { lastRtpAt: media.lastRtpAt }),
      checkedBy: [...media.checkedBy],
      framesHeard: media.framesHeard,
      heardRms: media.heardRms,
      recentRms: media.recentRms,
      framesSent: media.framesSent,
      digitsHeard: media.digitsHeard,
      heardNow: media.heardNow,
      heardMs: media.heardMs,
      heardLog: media.heardLog,
      tonesHeard: media.tonesHeard,
      network: call.network.report(Date.now()),
      ...(media.rtp === undefined ? {} : { rtp: media.rtp }),
      ...(call.capture ? { capture: this.captureReport(call.capture) } : {}),
    };
  }
}

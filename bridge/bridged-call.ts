// One bridged call on a node: the customer's leg, one leg per agent (keyed by the relay's leg ids),
// and the call's media between them (media/call-media.ts). The relay decides who is in the call and
// who hears whom; the call carries it out and says what happened to each leg. When the relay says
// so it records the call (media/call-recorder.ts), and hands the file to the node's sink once the
// call ends or its customer is gone.
import { CUSTOMER, type BridgedCallReport, type LegReport, type ParticipantId, type Routes } from '../shared/bridge';
import type { RecordingSink } from '../shared/bridge-recording';
import { err, errorText, ok, type Result } from '../shared/result';
import { normaliseSdp } from '../shared/sdp';
import { CallMedia, type InboundPacket } from './media/call-media';
import { CallRecorder } from './media/call-recorder';
import type { HoldMusic } from './media/hold-music';
import type { MediaClock } from './media/media-clock';
import { AgentLeg } from './legs/agent-leg';
import { CustomerLeg } from './legs/customer-leg';
import type { LegContext, LegPeer, LegPeerEvents, LegState } from './legs/leg-peer';

/** What a node tells the relay of its calls' legs (bridge/REFERENCE.md "Events"). */
export type BridgeNodeEvent =
  | { kind: 'leg_connected'; callId: string; legId: string }
  /** `lastPacketAt`: when the leg last received a packet (unix ms), if it ever did: when its agent went. */
  | { kind: 'leg_failed' | 'leg_closed'; callId: string; legId: string; lastPacketAt?: number }
  | { kind: 'customer_connected' | 'customer_failed'; callId: string };

export interface BridgedCallSetup {
  context: LegContext;
  clock: MediaClock;
  music: HoldMusic;
  onEvent: (event: BridgeNodeEvent) => void;
  /** Where a finished recording goes; a node without one records nothing. */
  recordings?: RecordingSink;
}

const NO_LEG: LegReport = { state: 'new', packetsReceived: 0, packetsLost: 0 };
const callEnded = (): Result<never> => err('invalid_state', 'the call has ended');

export class BridgedCall {
  /** The customer's leg as it is made; `offer`: the service's, when the leg answered it (incoming). */
  private customer: { made: Promise<Result<CustomerLeg>>; offer?: string } | undefined;
  /** Each agent's leg as it is made (a repeated command waits for the same one). */
  private readonly agents = new Map<string, Promise<Result<AgentLeg>>>();
  private readonly media: CallMedia;
  private ended = false;
  /** Whether the customer's leg is connected now: recording starts only then. */
  private customerConnected = false;
  /** Made when recording first starts; handed over (and undefined again) once the call's recording is finished. */
  private recorder: CallRecorder | undefined;
  /** The recording was finished and handed to the sink: the call records no more. */
  private recordingDone = false;

  constructor(
    /** The service's call id; for an outgoing call not placed yet, the relay's reference. */
    public callId: string,
    private readonly setup: BridgedCallSetup,
  ) {
    this.media = new CallMedia(setup.clock, setup.music, setup.context.logger);
  }

  /** Incoming: our answer to the service's offer. The same offer again gives the same answer. */
  async answerCustomer(offer: string): Promise<Result<string>> {
    const remote = normaliseSdp(offer);
    if (!this.customer) this.customer = { made: this.made(CustomerLeg.answerOffer(remote, this.setup.context, this.legEvents(CUSTOMER))), offer: remote };
    else if (this.customer.offer !== remote) return err('invalid_state', `call ${this.callId} has its customer leg already, for another offer`);
    return this.customerDescription();
  }

  /** Outgoing: our offer for initiate. Asked again, the same offer. */
  async offerCustomer(): Promise<Result<string>> {
    if (!this.customer) this.customer = { made: this.made(CustomerLeg.makeOffer(this.setup.context, this.legEvents(CUSTOMER))) };
    else if (this.customer.offer !== undefined) return err('invalid_state', `call ${this.callId} is an incoming call: its customer leg answered the service`);
    return this.customerDescription();
  }

  async connectCustomer(): Promise<Result<null>> {
    const leg = await this.customerLeg();
    return leg.ok ? leg.value.connect() : leg;
  }

  async applyCustomerAnswer(answer: string): Promise<Result<null>> {
    const leg = await this.customerLeg();
    return leg.ok ? leg.value.applyAnswer(answer) : leg;
  }

  /** The node's offer for an agent's window. Asked again for the same leg, the same offer. */
  async offerAgent(legId: string): Promise<Result<string>> {
    const existing = this.agents.get(legId);
    const made = existing ?? this.addAgent(legId, AgentLeg.makeOffer(legId, this.setup.context, this.legEvents(legId)));
    const leg = await made;
    if (!leg.ok) return leg;
    if (leg.value.offerer !== 'node') return err('invalid_state', `leg ${legId} was offered by its window; the node answered it`);
    return ok(leg.value.description);
  }

  async applyAgentAnswer(legId: string, answer: string): Promise<Result<null>> {
    const leg = await this.agents.get(legId);
    if (!leg) return err('not_found', `no leg ${legId} in call ${this.callId}`);
    return leg.ok ? leg.value.applyAnswer(answer) : leg;
  }

  /** The node's answer to a window's offer. The same offer again gives the same answer. */
  async answerAgent(legId: string, offer: string): Promise<Result<string>> {
    const existing = this.agents.get(legId);
    const made = existing ?? this.addAgent(legId, AgentLeg.answerOffer(legId, offer, this.setup.context, this.legEvents(legId)));
    const leg = await made;
    if (!leg.ok) return leg;
    if (!leg.value.answers(offer)) return err('invalid_state', `leg ${legId} exists already with another description`);
    return ok(leg.value.description);
  }

  /** Whether the call holds no leg: its customer leg could not be made, and no agent joined. */
  isEmpty(): boolean {
    return this.customer === undefined && this.agents.size === 0;
  }

  setRoutes(routes: Routes): Result<null> {
    if (this.ended) return callEnded();
    this.media.setRoutes(routes);
    return ok(null);
  }

  /** One agent's leg goes; the call goes on. An unknown or closed leg is no error. */
  async closeAgent(legId: string): Promise<void> {
    const made = this.agents.get(legId);
    if (!made) return;
    this.agents.delete(legId);
    this.media.disconnect(legId);
    const leg = await made;
    if (leg.ok) await leg.value.close();
  }

  /**
   * The customer is let go without ending the call: every agent's leg closes and the customer hears
   * nothing more, while its leg stays connected (bridge/REFERENCE.md "Release"). The call stays
   * until the relay ends it.
   */
  async releaseCustomer(): Promise<Result<null>> {
    if (this.ended) return callEnded();
    this.media.silence(CUSTOMER);
    await Promise.all([...this.agents.keys()].map((legId) => this.closeAgent(legId)));
    return ok(null);
  }

  /**
   * Recording starts (or resumes): from the next tick every frame the customer hears and says goes
   * into the call's file, `notice` first to the customer (and so into the file). A call recording
   * already goes on, and plays no notice again.
   */
  startRecording(notice?: Int16Array): Result<null> {
    if (this.ended) return callEnded();
    if (!this.setup.recordings) return err('not_configured', 'this bridge node has nowhere to keep recordings');
    if (!this.customerConnected || this.recordingDone) return err('invalid_state', `call ${this.callId}: the customer's leg is not connected`);
    if (this.recorder?.recording) return ok(null);
    if (!this.recorder) {
      try {
        this.recorder = new CallRecorder();
      } catch (e) {
        // Its codecs could not be made (the node's Opus memory): the call goes on unrecorded.
        this.setup.context.logger.error('could not start a recording', { callId: this.callId, error: errorText(e) });
        return err('internal', `call ${this.callId}: the recording could not start (${errorText(e)})`);
      }
    }
    if (this.recorder.failure !== undefined) return err('internal', `call ${this.callId}: its recording failed (${this.recorder.failure})`);
    this.media.tapCustomer(this.recorder);
    this.recorder.start();
    if (notice !== undefined && notice.length > 0) this.media.overlayCustomer(notice);
    return ok(null);
  }

  /** Recording pauses: nothing is written until it starts again; a notice playing stops too, being no longer true. */
  stopRecording(): Result<null> {
    if (this.ended) return callEnded();
    if (!this.recorder?.recording) return ok(null);
    this.recorder.stop();
    this.media.endOverlay();
    return ok(null);
  }

  /** Every leg closes; the call's media stops; a recording is finished and handed over. */
  async end(): Promise<void> {
    if (this.ended) return;
    this.ended = true;
    this.media.close();
    this.finishRecording();
    const legs: Promise<Result<{ close(): Promise<void> }>>[] = [...this.agents.values()];
    if (this.customer) legs.push(this.customer.made);
    this.agents.clear();
    await Promise.all(legs.map(async (made) => {
      const leg = await made;
      if (leg.ok) await leg.value.close();
    }));
  }

  /** Audio packets the call's media did not pass on for coming too late (media/lateness.ts). */
  get lateDropped(): number {
    return this.media.lateDropped;
  }

  async report(): Promise<BridgedCallReport> {
    const customer = await this.customer?.made;
    const agents: Record<string, LegReport> = {};
    for (const [legId, made] of this.agents) {
      const leg = await made;
      if (leg.ok) agents[legId] = leg.value.peer.report();
    }
    return { callId: this.callId, customer: customer?.ok ? customer.value.peer.report() : { ...NO_LEG }, agents, routes: structuredClone(this.media.routes) };
  }

  private async customerLeg(): Promise<Result<CustomerLeg>> {
    if (this.ended) return callEnded();
    const leg = await this.customer?.made;
    return leg ?? err('invalid_state', `call ${this.callId} has no customer leg yet`);
  }

  /** The customer leg's description; a leg that could not be made leaves no trace, so that it may be tried again. */
  private async customerDescription(): Promise<Result<string>> {
    const customer = this.customer;
    const leg = await customer?.made;
    if (!leg) return err('invalid_state', `call ${this.callId} has no customer leg`);
    if (!leg.ok && this.customer === customer) this.customer = undefined;
    return leg.ok ? ok(leg.value.description) : leg;
  }

  private addAgent(legId: string, making: Promise<Result<AgentLeg>>): Promise<Result<AgentLeg>> {
    const made = this.made(making).then((leg) => {
      // A leg that could not be made leaves no trace: the same id may be tried again.
      if (!leg.ok && this.agents.get(legId) === made) this.agents.delete(legId);
      return leg;
    });
    this.agents.set(legId, made);
    return made;
  }

  /** A leg made after the call ended is closed at once. */
  private async made<L extends { close(): Promise<void> }>(making: Promise<Result<L>>): Promise<Result<L>> {
    if (this.ended) return callEnded();
    const leg = await making;
    if (leg.ok && this.ended) {
      await leg.value.close();
      return callEnded();
    }
    return leg;
  }

  /**
   * The call's recording, if it ever recorded, is finished and handed to the sink, once: at the
   * call's end, or when its customer's leg is gone (nothing more could be recorded). Never waited
   * for: the sink keeps or uploads it in its own time, and says in the log what became of it.
   */
  private finishRecording(): void {
    const recorder = this.recorder;
    if (!recorder || this.recordingDone) return;
    this.recordingDone = true;
    this.recorder = undefined;
    this.media.tapCustomer(undefined);
    this.media.endOverlay();
    const { file, durationMs } = recorder.finish();
    const { callId } = this;
    const { logger } = this.setup.context;
    if (recorder.full) logger.warn('a recording reached its longest and stopped growing', { callId, durationMs });
    if (recorder.failure !== undefined) logger.error('a recording failed and stopped; what it held is kept', { callId, durationMs, error: recorder.failure });
    const sink = this.setup.recordings;
    if (!sink) return;
    sink.store(callId, file, durationMs).then(
      (stored) => {
        if (stored.ok) logger.info('recording handed over', { callId, durationMs, bytes: file.length });
        else logger.error('the recording could not be kept', { callId, durationMs, bytes: file.length, code: stored.error.code, error: stored.error.message });
      },
      (e: unknown) => logger.error('the recording could not be kept', { callId, durationMs, bytes: file.length, error: errorText(e) }),
    );
  }

  private legEvents(participant: ParticipantId): LegPeerEvents {
    return {
      packet: (packet: InboundPacket) => this.media.receive(participant, packet),
      stateChanged: (state: LegState, peer: LegPeer) => {
        if (state === 'connected' && peer.output) this.media.connect(participant, peer.output);
        if (state === 'failed' || state === 'closed') this.media.disconnect(participant);
        if (participant === CUSTOMER) {
          this.customerConnected = state === 'connected';
          if (state === 'failed' || state === 'closed') this.finishRecording();
        }
        this.tell(participant, state, peer.report().lastPacketAt);
      },
    };
  }

  private tell(participant: ParticipantId, state: LegState, lastPacketAt: number | undefined): void {
    if (this.ended) return;
    const { callId } = this;
    if (participant === CUSTOMER) {
      if (state === 'connected') this.setup.onEvent({ kind: 'customer_connected', callId });
      else if (state === 'failed' || state === 'closed') this.setup.onEvent({ kind: 'customer_failed', callId });
      return;
    }
    if (state === 'connected') this.setup.onEvent({ kind: 'leg_connected', callId, legId: participant });
    else if (state === 'failed' || state === 'closed') {
      this.setup.onEvent({ kind: state === 'failed' ? 'leg_failed' : 'leg_closed', callId, legId: participant, ...(lastPacketAt !== undefined ? { lastPacketAt } : {}) });
    }
  }
}

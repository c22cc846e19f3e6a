// The app's side of bridged calls (bridge/REFERENCE.md "The agent's side"). In a bridged team the
// customer's media ends on the team's bridge: the window answers (or offers) a leg of its own toward
// the bridge, and main still calls the gateway, with the bridge's description instead of the
// window's. All of that happens here, around the gateway's call control and the relay's events, so
// that the call reducer and the window's media engine work as they do for a direct call:
// - a ring the relay marks `bridged` reaches the coordinator carrying this agent's leg offer,
// - accept hands the window's answer to the bridge and accepts with the bridge's answer,
// - initiate gets the bridge's offer for the window's, and the customer's answer event reaches the
//   coordinator carrying the bridge's answer to the window,
// - hold and resume tell the bridge, which plays the hold music to the customer.
import { z } from 'zod';
import { BRIDGE_AGENT_PATHS, dialReplySchema, legReplySchema, sdpReplySchema } from '../../shared/bridge';
import { isHeld, type CallState } from '../../shared/call-state';
import type { RelayEnvelope } from '../../shared/events';
import type { Logger } from '../../shared/log';
import { ok, type Result } from '../../shared/result';
import type { CallControl } from './gateway-client';

/** What bridged calls need from the relay; RelayClient is the real one. */
export interface BridgeRelay {
  me(): Promise<Result<{ agentId: string; bridged: boolean }>>;
  bridgeRequest<S extends z.ZodType>(what: string, path: string, body: unknown, schema: S): Promise<Result<z.infer<S>>>;
}

/** This agent's leg of one bridged call. */
interface Leg {
  legId: string;
  /** An incoming call's: the bridge's offer to the window (a replayed ring carries it again). */
  legOffer?: string;
  /** An outgoing call's: the bridge's answer to the window's offer, delivered when the customer answers. */
  windowAnswer?: string;
  /** Whether the bridge plays the hold music to the customer now (as last told). */
  held: boolean;
}

const okReply = z.object({}).passthrough();

export class BridgedCallControl implements CallControl {
  private readonly legs = new Map<string, Leg>();
  /** Whether the relay says the team's calls are bridged; undefined until it has said. */
  private bridged: boolean | undefined;
  /** Per call, the events still being prepared, so that a call's events reach the coordinator in order. */
  private readonly queues = new Map<string, Promise<void>>();

  constructor(
    private readonly gateway: CallControl,
    private readonly relay: BridgeRelay,
    private readonly log: Logger,
  ) {}

  /** What GET /me said (the runtime asks it on connect). */
  setBridged(bridged: boolean): void {
    if (this.bridged !== bridged) this.log.info(bridged ? 'the team’s calls go through its bridge' : 'calls are direct');
    this.bridged = bridged;
  }

  isBridgedCall(callId: string | undefined): boolean {
    return callId !== undefined && this.legs.has(callId);
  }

  /**
   * Hands each relay event on in its call's order, a bridged ring with this agent's leg offer in
   * place of the service's, and a bridged call's answer with the bridge's answer to the window.
   */
  deliver(envelope: RelayEnvelope, next: (envelope: RelayEnvelope) => void): void {
    const event = envelope.event;
    if (!('callId' in event)) return next(envelope);
    const { callId } = event;
    const previous = this.queues.get(callId);
    if (previous === undefined && !(event.type === 'call.incoming' && event.bridged === true)) return next(this.withWindowAnswer(envelope));
    const run = (previous ?? Promise.resolve())
      .then(async () => next(await this.translated(envelope)))
      .catch((error: unknown) => this.log.error('a bridged call’s event could not be delivered', { callId, error }));
    this.queues.set(callId, run);
    void run.finally(() => {
      if (this.queues.get(callId) === run) this.queues.delete(callId);
    });
  }

  private async translated(envelope: RelayEnvelope): Promise<RelayEnvelope> {
    const event = envelope.event;
    if (event.type !== 'call.incoming' || event.bridged !== true) return this.withWindowAnswer(envelope);
    const known = this.legs.get(event.callId)?.legOffer;
    if (known !== undefined) return { ...envelope, event: { ...event, sdp: known } };
    const leg = await this.relay.bridgeRequest('bridge leg', BRIDGE_AGENT_PATHS.leg(event.callId), {}, legReplySchema);
    if (!leg.ok) {
      // The call still rings: answered with the window's own answer, it goes direct.
      this.log.warn('no leg on the bridge for a ringing call; it is answered direct if answered here', { callId: event.callId, reason: leg.error.message });
      return envelope;
    }
    this.legs.set(event.callId, { legId: leg.value.legId, legOffer: leg.value.offer, held: false });
    return { ...envelope, event: { ...event, sdp: leg.value.offer } };
  }

  private withWindowAnswer(envelope: RelayEnvelope): RelayEnvelope {
    const event = envelope.event;
    if (event.type !== 'call.answered') return envelope;
    const answer = this.legs.get(event.callId)?.windowAnswer;
    return answer === undefined ? envelope : { ...envelope, event: { ...event, sdp: answer } };
  }

  async accept(callId: string, sdp: string): Promise<Result<null>> {
    const leg = this.legs.get(callId);
    if (leg === undefined) return this.gateway.accept(callId, sdp);
    const bridgeAnswer = await this.relay.bridgeRequest('bridge answer', BRIDGE_AGENT_PATHS.answer(callId), { legId: leg.legId, sdp }, sdpReplySchema);
    if (!bridgeAnswer.ok) return bridgeAnswer;
    const accepted = await this.gateway.accept(callId, bridgeAnswer.value.sdp);
    if (!accepted.ok) return accepted;
    const connected = await this.relay.bridgeRequest('bridge connect', BRIDGE_AGENT_PATHS.accepted(callId), {}, okReply);
    if (!connected.ok) {
      // Accepted at the gateway, but the bridge will not carry the media: the customer would hear nothing.
      this.log.warn('the bridge did not connect an accepted call; ending it', { callId, reason: connected.error.message });
      await this.gateway.terminate(callId);
      return connected;
    }
    return ok(null);
  }

  async initiate(to: string, sdp: string): Promise<Result<{ callId: string }>> {
    if (!(await this.teamIsBridged())) return this.gateway.initiate(to, sdp);
    const dial = await this.relay.bridgeRequest('bridge dial', BRIDGE_AGENT_PATHS.dial, { sdp }, dialReplySchema);
    if (!dial.ok) {
      if (dial.error.httpStatus !== 503) return dial;
      this.log.warn('no bridge node is live: the call goes direct', { reason: dial.error.message });
      return this.gateway.initiate(to, sdp);
    }
    const placed = await this.gateway.initiate(to, dial.value.offer);
    if (!placed.ok) return placed;
    const { callId } = placed.value;
    // Known before the customer can answer: the answer's event finds the window's answer waiting.
    this.legs.set(callId, { legId: dial.value.legId, windowAnswer: dial.value.answer, held: false });
    const bound = await this.relay.bridgeRequest('bridge placed', BRIDGE_AGENT_PATHS.placed(dial.value.ref), { callId }, okReply);
    if (!bound.ok) {
      this.log.warn('the bridge did not take a placed call; ending it', { callId, reason: bound.error.message });
      this.legs.delete(callId);
      await this.gateway.terminate(callId);
      return bound;
    }
    return placed;
  }

  reject(callId: string): Promise<Result<null>> {
    return this.gateway.reject(callId);
  }

  terminate(callId: string): Promise<Result<null>> {
    return this.gateway.terminate(callId);
  }

  /** A call changed: hold and resume reach the bridge; an ended call's leg is forgotten. */
  callChanged(call: CallState): void {
    const { callId } = call;
    const leg = callId === undefined ? undefined : this.legs.get(callId);
    if (callId === undefined || leg === undefined) return;
    if (call.phase === 'ended') {
      this.legs.delete(callId);
      return;
    }
    if (call.phase !== 'active' || isHeld(call) === leg.held) return;
    const held = isHeld(call);
    leg.held = held;
    void this.relay.bridgeRequest(held ? 'bridge hold' : 'bridge resume', BRIDGE_AGENT_PATHS.hold(callId), { held }, okReply).then((told) => {
      if (!told.ok) this.log.warn('the bridge was not told of a hold or resume', { callId, held, reason: told.error.message });
    });
  }

  private async teamIsBridged(): Promise<boolean> {
    if (this.bridged !== undefined) return this.bridged;
    const me = await this.relay.me();
    if (me.ok) this.setBridged(me.value.bridged);
    return this.bridged === true;
  }
}

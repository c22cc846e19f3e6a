// The sandbox's simulated colleagues: agents of the team, each with its own token on the relay, whose
// "window" is a werift peer shaped as an agent's window is toward the team's bridge. A colleague
// keeps its event stream open and reports itself available; a transfer or consult that rings it is
// answered after about two seconds (a named transfer while it is on a call is declined), and it
// talks — its voice is assets/colleague-voice.wav — until the call, the transfer or the consult ends.
// So one window can try a transfer, a consult and a three-way call with nobody else around.
import { relayEnvelopeSchema, RELAY_PATHS, type RelayEnvelope } from '../shared/events';
import type { Logger } from '../shared/log';
import { SseParser, type SseMessage } from '../shared/sse';
import { TRANSFER_PATHS, type TransferKind } from '../shared/transfer';
import { CustomerPeer, type CustomerMediaReport } from './customer-peer';
import type { CustomerVoice } from './customer-voice';

/** How long a colleague lets a transfer ring before it answers. */
export const COLLEAGUE_ANSWER_AFTER_MS = 2_000;
/** The relay forgets a presence after a minute; a colleague says it again well before. */
const PRESENCE_EVERY_MS = 20_000;
const RECONNECT_MIN_MS = 200;
const RECONNECT_MAX_MS = 5_000;
/** The calls a colleague remembers for its report. */
const REPORTED_CALLS = 20;

export interface SimulatedColleagueOptions {
  relayUrl: string;
  agentToken: string;
  /** Its name on the team (the relay's agents list says the same): for the logs. */
  name: string;
  voice: CustomerVoice;
  logger: Logger;
  /** The address of its only host candidate. Default 127.0.0.1. */
  host?: string;
  /** Default COLLEAGUE_ANSWER_AFTER_MS. */
  answerAfterMs?: number;
}

/** One transfer or consult that rang a colleague, as its report says it. */
export interface ColleagueCall {
  callId: string;
  transferId: string;
  kind: TransferKind;
  /** What came of it, so far. */
  outcome: 'ringing' | 'declined' | 'answered' | 'answer_refused' | 'cancelled' | 'answered_elsewhere' | 'ended';
  /** What the colleague heard and sent, once it answered. */
  media?: CustomerMediaReport;
}

interface Held {
  call: ColleagueCall;
  answerTimer?: NodeJS.Timeout;
  peer?: CustomerPeer;
}

export class SimulatedColleague {
  private readonly held = new Map<string, Held>();
  private readonly past: ColleagueCall[] = [];
  private readonly answerAfterMs: number;
  private stream: AbortController | undefined;
  private presenceTimer: NodeJS.Timeout | undefined;
  private lastEventId: string | undefined;
  private stopped = false;
  private running: Promise<void> = Promise.resolve();

  constructor(private readonly options: SimulatedColleagueOptions) {
    this.answerAfterMs = options.answerAfterMs ?? COLLEAGUE_ANSWER_AFTER_MS;
  }

  get name(): string {
    return this.options.name;
  }

  /** Opens its event stream (again after any failure) and reports itself available. */
  start(): void {
    this.running = this.listen();
    void this.reportPresence();
    this.presenceTimer = setInterval(() => void this.reportPresence(), PRESENCE_EVERY_MS);
    this.presenceTimer.unref();
  }

  /** Its calls, the live ones first, then the last ones it had. */
  calls(): ColleagueCall[] {
    const live = [...this.held.values()].map((h) => ({ ...h.call, ...(h.peer ? { media: h.peer.media() } : {}) }));
    return [...live, ...this.past.map((c) => ({ ...c }))];
  }

  async close(): Promise<void> {
    this.stopped = true;
    clearInterval(this.presenceTimer);
    this.stream?.abort();
    await this.running;
    await Promise.all([...this.held.keys()].map((callId) => this.drop(callId, 'ended')));
  }

  private async listen(): Promise<void> {
    let backoff = RECONNECT_MIN_MS;
    while (!this.stopped) {
      const opened = await this.readStream().catch((error: unknown) => {
        if (!this.stopped) this.options.logger.debug('a simulated colleague’s event stream broke', { name: this.name, error });
        return false;
      });
      if (this.stopped) return;
      backoff = opened ? RECONNECT_MIN_MS : Math.min(RECONNECT_MAX_MS, backoff * 2);
      await new Promise((resolve) => setTimeout(resolve, backoff).unref());
    }
  }

  /** One connection of the event stream, until it ends; whether it opened at all. */
  private async readStream(): Promise<boolean> {
    this.stream = new AbortController();
    const headers: Record<string, string> = { authorization: `Bearer ${this.options.agentToken}`, accept: 'text/event-stream' };
    if (this.lastEventId !== undefined) headers['last-event-id'] = this.lastEventId;
    const response = await fetch(new URL(RELAY_PATHS.events, this.options.relayUrl), { headers, signal: this.stream.signal });
    if (!response.ok || response.body === null) {
      this.options.logger.warn('the relay refused a simulated colleague’s event stream', { name: this.name, status: response.status });
      return false;
    }
    const decoder = new TextDecoder();
    const parser = new SseParser();
    for await (const chunk of response.body) {
      for (const message of parser.push(decoder.decode(chunk as Uint8Array, { stream: true }))) this.message(message);
    }
    return true;
  }

  /** One server-sent event; a named one (`event: close`) is not an envelope. */
  private message({ id, event, data }: SseMessage): void {
    if (event !== 'message') return;
    let json: unknown;
    try {
      json = JSON.parse(data);
    } catch {
      return;
    }
    const envelope = relayEnvelopeSchema.safeParse(json);
    if (!envelope.success) return;
    if (id !== undefined) this.lastEventId = id;
    this.handle(envelope.data);
  }

  private handle({ event }: RelayEnvelope): void {
    switch (event.type) {
      case 'call.transfer_ring': {
        if (this.held.has(event.callId)) return;
        const call: ColleagueCall = { callId: event.callId, transferId: event.transferId, kind: event.kind, outcome: 'ringing' };
        const busy = this.held.size > 0;
        const held: Held = { call };
        held.answerTimer = setTimeout(() => {
          held.answerTimer = undefined;
          if (busy) void this.decline(event.callId);
          else void this.answer(event.callId, event.legId, event.sdp);
        }, this.answerAfterMs);
        this.held.set(event.callId, held);
        this.options.logger.info('a transfer rings a simulated colleague', { name: this.name, callId: event.callId, kind: event.kind, by: event.by.name });
        return;
      }
      case 'call.transfer_update':
        if (event.state === 'cancelled' || event.state === 'answered_elsewhere') void this.drop(event.callId, event.state, event.transferId);
        return;
      case 'call.terminated':
      case 'call.bridge_failed':
        void this.drop(event.callId, 'ended');
        return;
      default:
        return;
    }
  }

  private async answer(callId: string, legId: string, offer: string): Promise<void> {
    const held = this.held.get(callId);
    if (held === undefined) return;
    const peer = new CustomerPeer({ host: this.options.host ?? '127.0.0.1', voice: this.options.voice, logger: this.options.logger, shape: 'window' });
    held.peer = peer;
    const answer = await peer.answerAsWindow(offer);
    if (!answer.ok) {
      this.options.logger.warn('a simulated colleague could not answer its leg', { name: this.name, callId, reason: answer.error.message });
      await this.decline(callId);
      return;
    }
    const taken = await this.post(TRANSFER_PATHS.answer(callId, held.call.transferId), { legId, sdp: answer.value });
    if (this.held.get(callId) !== held) return;
    if (!taken) {
      await this.drop(callId, 'answer_refused');
      return;
    }
    held.call.outcome = 'answered';
    void this.reportPresence();
  }

  private async decline(callId: string): Promise<void> {
    const held = this.held.get(callId);
    if (held === undefined) return;
    await this.post(TRANSFER_PATHS.decline(callId, held.call.transferId), {});
    await this.drop(callId, 'declined');
  }

  /** The call is over for this colleague: its peer closes, and it is available again. */
  private async drop(callId: string, outcome: ColleagueCall['outcome'], transferId?: string): Promise<void> {
    const held = this.held.get(callId);
    if (held === undefined || (transferId !== undefined && held.call.transferId !== transferId)) return;
    this.held.delete(callId);
    clearTimeout(held.answerTimer);
    const media = held.peer?.media();
    await held.peer?.close();
    held.call.outcome = outcome;
    this.past.unshift({ ...held.call, ...(media ? { media } : {}) });
    this.past.splice(REPORTED_CALLS);
    if (!this.stopped) void this.reportPresence();
  }

  private async reportPresence(): Promise<void> {
    if (this.stopped) return;
    const status = this.held.size > 0 && [...this.held.values()].some((h) => h.peer !== undefined) ? 'on_call' : 'available';
    await this.send('PUT', '/presence', { status });
  }

  private post(path: string, body: unknown): Promise<boolean> {
    return this.send('POST', path, body);
  }

  private async send(method: string, path: string, body: unknown): Promise<boolean> {
    try {
      const response = await fetch(new URL(path, this.options.relayUrl), {
        method,
        headers: { authorization: `Bearer ${this.options.agentToken}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(10_000),
      });
      if (!response.ok) this.options.logger.info('the relay refused a simulated colleague', { name: this.name, method, path, status: response.status, body: (await response.text()).slice(0, 300) });
      else await response.arrayBuffer();
      return response.ok;
    } catch (error) {
      if (!this.stopped) this.options.logger.warn('a simulated colleague could not reach the relay', { name: this.name, method, path, error });
      return false;
    }
  }
}

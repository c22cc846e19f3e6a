// A node's requests to the relay (relay/REFERENCE.md "Bridge nodes"): register, report the load,
// leave, post an event. Each resolves to what came of it, within its deadline, and never throws;
// the bridge token travels only in the Authorization header.
import { z } from 'zod';
import { BRIDGE_NODE_PATHS, bridgeNodeRegisteredSchema, type BridgeNodeEventBody, type BridgeNodeLoad, type BridgeNodeRegistered, type BridgeNodeRegistration } from '../shared/bridge-nodes';
import { describeFailure, HttpExchange, jsonOfText, type HttpMethod } from './http-exchange';

/** What came of a request: the relay's answer, its refusal, or no answer at all. */
export type RelayAnswer<T> =
  | { kind: 'ok'; value: T }
  /** The relay answered with an error status; `code` from its error body when it sent one. */
  | { kind: 'refused'; status: number; code?: string; message: string }
  /** No answer: the relay could not be reached, or did not answer within the deadline. */
  | { kind: 'unreachable'; reason: string };

/** What the registration and the events need from the relay: RelayLink is the real one. */
export interface RelayNodeApi {
  register(registration: BridgeNodeRegistration): Promise<RelayAnswer<BridgeNodeRegistered>>;
  reportLoad(nodeId: string, load: BridgeNodeLoad): Promise<RelayAnswer<BridgeNodeRegistered>>;
  leave(nodeId: string): Promise<RelayAnswer<null>>;
  postEvent(nodeId: string, event: BridgeNodeEventBody): Promise<RelayAnswer<null>>;
}

export interface RelayLinkOptions {
  relayUrl: string;
  bridgeToken: string;
  /** Per request. Default 5 s: a heartbeat that takes longer is better tried again at the next one. */
  timeoutMs?: number;
}

const DEFAULT_TIMEOUT_MS = 5_000;
/** None of the relay's answers to a node is anywhere near this. */
const BODY_READ_LIMIT = 64 * 1024;
const errorEnvelopeSchema = z.object({ error: z.object({ code: z.string(), message: z.string() }) });

export class RelayLink implements RelayNodeApi {
  private readonly http: HttpExchange;
  private readonly timeoutMs: number;

  constructor(options: RelayLinkOptions) {
    this.http = new HttpExchange({ baseUrl: options.relayUrl, token: options.bridgeToken, agent: { connections: 2 } });
    this.timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  }

  register(registration: BridgeNodeRegistration): Promise<RelayAnswer<BridgeNodeRegistered>> {
    return this.send('POST', BRIDGE_NODE_PATHS.nodes, registration, bridgeNodeRegisteredSchema);
  }

  reportLoad(nodeId: string, load: BridgeNodeLoad): Promise<RelayAnswer<BridgeNodeRegistered>> {
    return this.send('PUT', BRIDGE_NODE_PATHS.load(nodeId), load, bridgeNodeRegisteredSchema);
  }

  leave(nodeId: string): Promise<RelayAnswer<null>> {
    return this.send('DELETE', BRIDGE_NODE_PATHS.node(nodeId), undefined, undefined);
  }

  postEvent(nodeId: string, event: BridgeNodeEventBody): Promise<RelayAnswer<null>> {
    return this.send('POST', BRIDGE_NODE_PATHS.events(nodeId), event, undefined);
  }

  async close(): Promise<void> {
    await this.http.close();
  }

  private send(method: HttpMethod, path: string, json: unknown, schema: undefined): Promise<RelayAnswer<null>>;
  private send<T>(method: HttpMethod, path: string, json: unknown, schema: z.ZodType<T>): Promise<RelayAnswer<T>>;
  private async send<T>(method: HttpMethod, path: string, json: unknown, schema: z.ZodType<T> | undefined): Promise<RelayAnswer<T | null>> {
    const outcome = await this.http.exchange({ method, path, json, deadlineMs: this.timeoutMs, bodyLimit: BODY_READ_LIMIT });
    switch (outcome.kind) {
      case 'timeout':
        return { kind: 'unreachable', reason: `no answer within ${this.timeoutMs} ms` };
      case 'network':
        return { kind: 'unreachable', reason: describeFailure(outcome.failure) };
      case 'response': {
        const body = jsonOfText(outcome.body);
        if (outcome.status < 200 || outcome.status >= 300) {
          const envelope = errorEnvelopeSchema.safeParse(body);
          return envelope.success
            ? { kind: 'refused', status: outcome.status, code: envelope.data.error.code, message: this.http.scrub(envelope.data.error.message) }
            : { kind: 'refused', status: outcome.status, message: `HTTP ${outcome.status}` };
        }
        if (schema === undefined) return { kind: 'ok', value: null };
        const parsed = schema.safeParse(body);
        return parsed.success ? { kind: 'ok', value: parsed.data } : { kind: 'refused', status: outcome.status, message: 'the relay answered with an unexpected body' };
      }
    }
  }
}

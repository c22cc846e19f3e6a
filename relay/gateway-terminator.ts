// The relay's own end of a call at the gateway, for the calls no agent can end any more (an agent
// that never came back, a node gone, a customer leg failed): `POST {url}/{product}/calls/terminate`
// with the team's key (relay/REFERENCE.md "Rejoining"). relay/ does not use the app's gateway
// client (electron/core), so this is its own, for this one request. The key travels in the API-KEY
// header only and is taken out of every word that leaves this file.
import { Agent, request } from 'undici';
import { jsonOfText, readLimited } from '../bridge/http-exchange';
import { BoundedSet } from './bounded-set';
import { callActionSuccessSchema, callRequestSchemas, DEFAULT_PRODUCT, graphErrorSchema } from '../shared/gateway';
import type { Logger } from '../shared/log';
import { classifyNetworkError } from '../shared/network-error';
import { err, ok, type Result } from '../shared/result';

/** Where the gateway is and the key it takes. */
export interface GatewayTarget {
  url: string;
  apiKey: string;
  /** The product word of the paths and bodies; DEFAULT_PRODUCT when absent. */
  product?: string;
}

export interface GatewayTerminatorOptions {
  /** Read at each terminate: a gateway that starts after the relay may be named late. */
  target: () => GatewayTarget | undefined;
  logger: Logger;
  /** Further attempts after a network failure or a 5xx; default 3. */
  retries?: number;
  /** The pause before the first retry, doubling after each; default 250 ms. */
  firstPauseMs?: number;
  /** Everything, retries included, within this long; default 10 s. */
  deadlineMs?: number;
}

const BODY_LIMIT = 16 * 1024;
/** Calls this relay ended at the gateway, remembered this many: an agent's later hang-up ends none again. */
const ENDED_KEPT = 4_096;

type Attempt = { kind: 'done' } | { kind: 'refused'; status: number; message: string; gatewayCode?: number } | { kind: 'retry'; message: string; httpStatus?: number };

export class GatewayTerminator {
  private readonly agent = new Agent({ keepAliveTimeout: 4_000, connect: { timeout: 5_000 } });
  private readonly log: Logger;
  private readonly endedHere = new BoundedSet(ENDED_KEPT);
  private readonly ending = new Map<string, Promise<Result<null>>>();
  private closed = false;

  constructor(private readonly options: GatewayTerminatorOptions) {
    this.log = options.logger;
  }

  /** Whether a gateway is named now: without one, the relay lets customers go instead (releaseCustomer). */
  get configured(): boolean {
    return this.options.target() !== undefined;
  }

  /**
   * Ends the call at the gateway. Retried on network failures and 5xx only (terminate is idempotent);
   * a Graph error (the call is over already, say) is the gateway's word and is not retried. A
   * terminate of a call already under way here is that one, not a second.
   */
  terminate(callId: string): Promise<Result<null>> {
    const under = this.ending.get(callId);
    if (under !== undefined) return under;
    const ending = this.send(callId)
      .then((result) => {
        if (result.ok) this.endedHere.add(callId);
        return result;
      })
      .finally(() => this.ending.delete(callId));
    this.ending.set(callId, ending);
    return ending;
  }

  /**
   * Whether this relay ended the call at the gateway, once a terminate of it under way is answered:
   * an agent that hangs up such a call owes the gateway nothing.
   */
  async endedAtGateway(callId: string): Promise<boolean> {
    await this.ending.get(callId);
    return this.endedHere.has(callId);
  }

  private async send(callId: string): Promise<Result<null>> {
    const target = this.options.target();
    if (target === undefined) return err('not_available', 'no gateway is configured for the relay');
    const product = target.product ?? DEFAULT_PRODUCT;
    const body = { messaging_product: product, call_id: callId, action: 'terminate' };
    const checked = callRequestSchemas(product).terminate.safeParse(body);
    if (!checked.success) return err('invalid_input', `call_id: ${checked.error.issues[0]?.message ?? 'is invalid'}`, { field: 'call_id' });
    const url = `${target.url.replace(/\/+$/, '')}/${encodeURIComponent(product)}/calls/terminate`;
    const deadline = Date.now() + (this.options.deadlineMs ?? 10_000);
    const retries = Math.max(0, this.options.retries ?? 3);
    let pauseMs = this.options.firstPauseMs ?? 250;
    for (let attempt = 0; ; attempt++) {
      const outcome = await this.attempt(url, target.apiKey, checked.data, deadline);
      if (outcome.kind === 'done') {
        this.log.info('the relay ended a call at the gateway', { callId });
        return ok(null);
      }
      if (outcome.kind === 'refused') {
        this.log.warn('the gateway refused the relay’s terminate', { callId, httpStatus: outcome.status, gatewayCode: outcome.gatewayCode, reason: outcome.message });
        return err('gateway_error', outcome.message, { httpStatus: outcome.status, ...(outcome.gatewayCode !== undefined ? { gatewayCode: outcome.gatewayCode } : {}) });
      }
      const left = deadline - Date.now();
      if (attempt >= retries || left <= pauseMs || this.closed) {
        this.log.warn('the relay could not reach the gateway to end a call', { callId, attempts: attempt + 1, reason: outcome.message });
        return err('gateway_unreachable', outcome.message, outcome.httpStatus !== undefined ? { httpStatus: outcome.httpStatus } : {});
      }
      this.log.warn('terminate failed, retrying', { callId, attempt: attempt + 1, pauseMs, reason: outcome.message });
      await new Promise((resolve) => setTimeout(resolve, pauseMs).unref());
      pauseMs *= 2;
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.agent.close().catch(() => undefined);
  }

  private async attempt(url: string, apiKey: string, body: unknown, deadline: number): Promise<Attempt> {
    const scrub = (text: string): string => (apiKey.length > 0 ? text.split(apiKey).join('[redacted]') : text);
    const abort = new AbortController();
    const timer = setTimeout(() => abort.abort(), Math.max(1, deadline - Date.now()));
    try {
      const res = await request(url, {
        method: 'POST',
        headers: { 'API-KEY': apiKey, accept: 'application/json', 'content-type': 'application/json' },
        body: JSON.stringify(body),
        signal: abort.signal,
        dispatcher: this.agent,
      });
      const text = scrub(await readLimited(res.body, BODY_LIMIT));
      const json = jsonOfText(text);
      if (res.statusCode >= 200 && res.statusCode < 300 && callActionSuccessSchema.safeParse(json).success) return { kind: 'done' };
      const graph = graphErrorSchema.safeParse(json);
      if (res.statusCode >= 500) return { kind: 'retry', message: graph.success ? scrub(graph.data.error.message) : `HTTP ${res.statusCode}`, httpStatus: res.statusCode };
      if (graph.success) return { kind: 'refused', status: res.statusCode, message: scrub(graph.data.error.message), gatewayCode: graph.data.error.code };
      return { kind: 'refused', status: res.statusCode, message: `HTTP ${res.statusCode}: an answer that is neither a success nor a Graph error` };
    } catch (e) {
      if (abort.signal.aborted) return { kind: 'retry', message: 'no answer in time' };
      return { kind: 'retry', message: scrub(classifyNetworkError(e).message) };
    } finally {
      clearTimeout(timer);
    }
  }
}

// Gateway-style webhooks to the relay (protocol.md "Events"): the Cloud API envelope, signed with
// X-Hub-Signature-256 over the exact bytes sent, retried with back-off while the relay is down or
// answers non-2xx. Like the real service, a retry may duplicate a delivery; the relay de-duplicates.
import { createHmac } from 'node:crypto';
import { RELAY_PATHS } from '../shared/events';
import type { Logger } from '../shared/log';

/** The business account the sandbox plays: who the webhooks are about. */
export interface BusinessIdentity {
  wabaId: string;
  phoneNumberId: string;
  /** Digits with country code. */
  displayPhoneNumber: string;
}

export interface WebhookSenderOptions {
  relayUrl: string;
  appSecret?: string;
  product: string;
  business: BusinessIdentity;
  logger: Logger;
  /** How long one webhook is retried before it is given up. */
  retryWindowMs: number;
}

const FIRST_RETRY_MS = 200;
const MAX_RETRY_MS = 10_000;
const ATTEMPT_TIMEOUT_MS = 5_000;

export const signBody = (appSecret: string, body: string | Buffer): string => `sha256=${createHmac('sha256', appSecret).update(body).digest('hex')}`;

/** Unix seconds as a string, as the real payloads carry them. */
export const unixSeconds = (ms: number): string => String(Math.floor(ms / 1000));

export class WebhookSender {
  private readonly url: string;
  private readonly stop = new AbortController();
  private readonly pending = new Set<Promise<void>>();

  constructor(private readonly options: WebhookSenderOptions) {
    this.url = options.relayUrl.replace(/\/+$/, '') + RELAY_PATHS.webhook;
  }

  /** Sends one `calls` change; `value` gets messaging_product and metadata added. Returns at once. */
  send(value: Record<string, unknown>): void {
    void this.post(value, 'calls');
  }

  /**
   * Sends one change of `field` ("calls" or "messages": message statuses and inbound messages come
   * under "messages", protocol.md); resolves when it was delivered or given up. Never rejects.
   */
  post(value: Record<string, unknown>, field: 'calls' | 'messages'): Promise<void> {
    const { product, business } = this.options;
    const body = JSON.stringify({
      object: `${product}_business_account`,
      entry: [
        {
          id: business.wabaId,
          changes: [
            {
              field,
              value: {
                messaging_product: product,
                metadata: { display_phone_number: business.displayPhoneNumber, phone_number_id: business.phoneNumberId },
                ...value,
              },
            },
          ],
        },
      ],
    });
    const delivery: Promise<void> = this.deliver(body)
      .catch((e: unknown) => this.options.logger.error('webhook delivery failed', { error: e }))
      .finally(() => this.pending.delete(delivery));
    this.pending.add(delivery);
    return delivery;
  }

  /** Resolves when every webhook sent so far was delivered or given up. */
  async idle(): Promise<void> {
    while (this.pending.size > 0) await Promise.allSettled([...this.pending]);
  }

  /** Stops every retry; deliveries in flight are aborted. */
  async close(): Promise<void> {
    this.stop.abort();
    await this.idle();
  }

  private async deliver(body: string): Promise<void> {
    const headers: Record<string, string> = { 'Content-Type': 'application/json' };
    if (this.options.appSecret) headers['X-Hub-Signature-256'] = signBody(this.options.appSecret, body);
    const deadline = Date.now() + this.options.retryWindowMs;
    let wait = FIRST_RETRY_MS;
    for (let attempt = 1; ; attempt++) {
      if (this.stop.signal.aborted) return;
      let problem: string;
      try {
        const res = await fetch(this.url, {
          method: 'POST',
          headers,
          body,
          signal: AbortSignal.any([this.stop.signal, AbortSignal.timeout(ATTEMPT_TIMEOUT_MS)]),
        });
        await res.arrayBuffer().catch(() => undefined);
        if (res.ok) return;
        problem = `HTTP ${res.status}`;
      } catch (e) {
        if (this.stop.signal.aborted) return;
        problem = (e as Error).cause instanceof Error ? ((e as Error).cause as Error).message : (e as Error).message;
      }
      if (Date.now() + wait > deadline) {
        this.options.logger.error('webhook given up', { attempt, problem });
        return;
      }
      this.options.logger.warn('webhook delivery failed, retrying', { attempt, problem, retryInMs: wait });
      await this.sleep(wait);
      wait = Math.min(wait * 2, MAX_RETRY_MS);
    }
  }

  private sleep(ms: number): Promise<void> {
    const signal = this.stop.signal;
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        signal.removeEventListener('abort', done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      signal.addEventListener('abort', done, { once: true });
    });
  }
}

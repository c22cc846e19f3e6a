// The relay's counters and the `GET /metrics` text (Prometheus exposition format 0.0.4), rendered by
// prom-client; names, types, labels and help texts as relay/REFERENCE.md "Metrics" lists them — dashboards
// depend on them. Counted per instance; Prometheus sums instances.
import { Counter, Gauge, Histogram, Registry } from 'prom-client';

export type WebhookRejection = 'signature' | 'too_large' | 'malformed';
export type EventDropReason = 'duplicate' | 'tombstoned' | 'stale';
export type BridgeFailureReason = 'node_gone' | 'customer_leg_failed' | 'agent_not_back';

const WEBHOOK_REJECTIONS: readonly WebhookRejection[] = ['signature', 'too_large', 'malformed'];
const EVENT_DROP_REASONS: readonly EventDropReason[] = ['duplicate', 'tombstoned', 'stale'];
const BRIDGE_FAILURE_REASONS: readonly BridgeFailureReason[] = ['node_gone', 'customer_leg_failed', 'agent_not_back'];

/** Upper bounds of the delivery-latency histogram, in seconds (1 ms … 1 s). */
export const LATENCY_BUCKETS_SECONDS = [0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1] as const;

/** What a `new Registry()` renders: the text format 0.0.4. */
export const METRICS_CONTENT_TYPE = Registry.PROMETHEUS_CONTENT_TYPE;

/** Values read when `/metrics` is scraped rather than counted as they change. */
export interface ScrapedGauges {
  /** Open agent event streams on this instance. */
  connectedAgents(): number;
  /** Live bridge nodes of the team (every instance sees the same); undefined keeps the last value. */
  bridgeNodes(): Promise<number | undefined>;
}

export class RelayMetrics {
  /**
   * One registry per instance, not prom-client's global one: several relays may run in one process
   * (tests, embedded use), and each must count only its own traffic.
   */
  private readonly registry = new Registry();
  private readonly received: Counter;
  private readonly rejected: Counter<'reason'>;
  private readonly stored: Counter;
  private readonly dropped: Counter<'reason'>;
  private readonly delivered: Counter;
  private readonly latency: Histogram;
  private readonly authFailures: Counter;
  private readonly rateLimited: Counter;
  private readonly bridgeFailures: Counter<'reason'>;
  /** prom-client reads its counters only asynchronously; `stats()` answers synchronously from these. */
  private readonly tally = { received: 0, rejected: 0, stored: 0, dropped: 0, delivered: 0, authFailures: 0, rateLimited: 0 };

  constructor(gauges: ScrapedGauges) {
    const registers = [this.registry];
    this.received = new Counter({ name: 'relay_webhooks_received_total', help: 'Webhooks accepted (answered 200).', registers });
    this.rejected = new Counter({ name: 'relay_webhooks_rejected_total', help: 'Webhooks refused, by reason.', labelNames: ['reason'], registers });
    this.stored = new Counter({ name: 'relay_events_stored_total', help: 'Events that passed the delivery rules and were stored.', registers });
    this.dropped = new Counter({ name: 'relay_events_dropped_total', help: 'Events dropped by the delivery rules, by reason.', labelNames: ['reason'], registers });
    this.delivered = new Counter({ name: 'relay_events_delivered_total', help: 'Events written to agent streams, once per session.', registers });
    new Gauge({
      name: 'relay_connected_agents',
      help: 'Open agent event streams (sessions) on this instance.',
      registers,
      collect() {
        this.set(gauges.connectedAgents());
      },
    });
    this.latency = new Histogram({
      name: 'relay_delivery_latency_seconds',
      help: 'From receiving a webhook to writing its event to an agent stream (live deliveries).',
      buckets: [...LATENCY_BUCKETS_SECONDS],
      registers,
    });
    this.authFailures = new Counter({ name: 'relay_auth_failures_total', help: 'Agent requests refused for a missing or unknown token (answered 401).', registers });
    this.rateLimited = new Counter({ name: 'relay_rate_limited_total', help: 'Agent requests refused because their address failed authentication too often (answered 429).', registers });
    new Gauge({
      name: 'relay_bridge_nodes',
      help: 'Live bridge nodes registered with the team (every instance counts the same nodes).',
      registers,
      async collect() {
        const live = await gauges.bridgeNodes();
        if (live !== undefined) this.set(live);
      },
    });
    this.bridgeFailures = new Counter({
      name: 'relay_bridge_calls_failed_total',
      help: 'Bridged calls ended because the bridge lost them, by reason (counted by the instance that told their agents).',
      labelNames: ['reason'],
      registers,
    });
    // The name and help of prom-client's default process metric, without its other default metrics.
    new Gauge({
      name: 'process_resident_memory_bytes',
      help: 'Resident memory size in bytes.',
      registers,
      collect() {
        this.set(process.memoryUsage.rss());
      },
    });
    // Every reason is listed from the start, at 0, so that a rate() over a reason has a first sample.
    for (const reason of WEBHOOK_REJECTIONS) this.rejected.inc({ reason }, 0);
    for (const reason of EVENT_DROP_REASONS) this.dropped.inc({ reason }, 0);
    for (const reason of BRIDGE_FAILURE_REASONS) this.bridgeFailures.inc({ reason }, 0);
  }

  get webhooksReceived(): number {
    return this.tally.received;
  }

  get webhooksRejectedTotal(): number {
    return this.tally.rejected;
  }

  get eventsStored(): number {
    return this.tally.stored;
  }

  get eventsDroppedTotal(): number {
    return this.tally.dropped;
  }

  get eventsDelivered(): number {
    return this.tally.delivered;
  }

  get authFailuresTotal(): number {
    return this.tally.authFailures;
  }

  get rateLimitedTotal(): number {
    return this.tally.rateLimited;
  }

  countAuthFailure(): void {
    this.authFailures.inc();
    this.tally.authFailures += 1;
  }

  countRateLimited(): void {
    this.rateLimited.inc();
    this.tally.rateLimited += 1;
  }

  countWebhookReceived(): void {
    this.received.inc();
    this.tally.received += 1;
  }

  countWebhookRejected(reason: WebhookRejection): void {
    this.rejected.inc({ reason });
    this.tally.rejected += 1;
  }

  countEventStored(): void {
    this.stored.inc();
    this.tally.stored += 1;
  }

  countEventDropped(reason: EventDropReason): void {
    this.dropped.inc({ reason });
    this.tally.dropped += 1;
  }

  countEventDelivered(): void {
    this.delivered.inc();
    this.tally.delivered += 1;
  }

  /** A bridged call ended because its node is gone or its customer leg failed, once its agents' event was stored. */
  countBridgeFailure(reason: BridgeFailureReason): void {
    this.bridgeFailures.inc({ reason });
  }

  /** From the relay receiving the webhook to the event being written to an agent's stream. */
  observeLatency(milliseconds: number): void {
    this.latency.observe(Math.max(0, milliseconds) / 1000);
  }

  /** The `/metrics` text; the gauges are read now. */
  render(): Promise<string> {
    return this.registry.metrics();
  }
}

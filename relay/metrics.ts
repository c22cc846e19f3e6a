// The relay's counters and the `GET /metrics` text (Prometheus exposition format 0.0.4), names and
// labels as relay/README.md "Metrics" lists them. Counted per instance; Prometheus sums instances.

export type WebhookRejection = 'signature' | 'too_large' | 'malformed';
export type EventDropReason = 'duplicate' | 'tombstoned' | 'stale';

/** Upper bounds of the delivery-latency histogram, in seconds (1 ms … 1 s). */
export const LATENCY_BUCKETS_SECONDS = [0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1] as const;

export const METRICS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

export class RelayMetrics {
  webhooksReceived = 0;
  readonly webhooksRejected: Record<WebhookRejection, number> = { signature: 0, too_large: 0, malformed: 0 };
  eventsStored = 0;
  readonly eventsDropped: Record<EventDropReason, number> = { duplicate: 0, tombstoned: 0, stale: 0 };
  eventsDelivered = 0;
  /** Cumulative per bucket is computed at render time; here each observation lands in one bucket. */
  private readonly latencyBuckets = new Array<number>(LATENCY_BUCKETS_SECONDS.length + 1).fill(0);
  private latencySum = 0;
  private latencyCount = 0;

  get webhooksRejectedTotal(): number {
    return this.webhooksRejected.signature + this.webhooksRejected.too_large + this.webhooksRejected.malformed;
  }

  get eventsDroppedTotal(): number {
    return this.eventsDropped.duplicate + this.eventsDropped.tombstoned + this.eventsDropped.stale;
  }

  /** From the relay receiving the webhook to the event being written to an agent's stream. */
  observeLatency(milliseconds: number): void {
    const seconds = Math.max(0, milliseconds) / 1000;
    let bucket = LATENCY_BUCKETS_SECONDS.findIndex((bound) => seconds <= bound);
    if (bucket < 0) bucket = LATENCY_BUCKETS_SECONDS.length;
    this.latencyBuckets[bucket]! += 1;
    this.latencySum += seconds;
    this.latencyCount += 1;
  }

  render(gauges: { connectedAgents: number; residentMemoryBytes: number }): string {
    const lines: string[] = [];
    const metric = (name: string, type: 'counter' | 'gauge' | 'histogram', help: string) => lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`);

    metric('relay_webhooks_received_total', 'counter', 'Webhooks accepted (answered 200).');
    lines.push(`relay_webhooks_received_total ${this.webhooksReceived}`);
    metric('relay_webhooks_rejected_total', 'counter', 'Webhooks refused, by reason.');
    for (const [reason, n] of Object.entries(this.webhooksRejected)) lines.push(`relay_webhooks_rejected_total{reason="${reason}"} ${n}`);
    metric('relay_events_stored_total', 'counter', 'Events that passed the delivery rules and were stored.');
    lines.push(`relay_events_stored_total ${this.eventsStored}`);
    metric('relay_events_dropped_total', 'counter', 'Events dropped by the delivery rules, by reason.');
    for (const [reason, n] of Object.entries(this.eventsDropped)) lines.push(`relay_events_dropped_total{reason="${reason}"} ${n}`);
    metric('relay_events_delivered_total', 'counter', 'Events written to agent streams, once per session.');
    lines.push(`relay_events_delivered_total ${this.eventsDelivered}`);
    metric('relay_connected_agents', 'gauge', 'Open agent event streams (sessions) on this instance.');
    lines.push(`relay_connected_agents ${gauges.connectedAgents}`);

    metric('relay_delivery_latency_seconds', 'histogram', 'From receiving a webhook to writing its event to an agent stream (live deliveries).');
    let cumulative = 0;
    LATENCY_BUCKETS_SECONDS.forEach((bound, i) => {
      cumulative += this.latencyBuckets[i]!;
      lines.push(`relay_delivery_latency_seconds_bucket{le="${bound}"} ${cumulative}`);
    });
    lines.push(`relay_delivery_latency_seconds_bucket{le="+Inf"} ${this.latencyCount}`);
    lines.push(`relay_delivery_latency_seconds_sum ${formatNumber(this.latencySum)}`);
    lines.push(`relay_delivery_latency_seconds_count ${this.latencyCount}`);

    metric('process_resident_memory_bytes', 'gauge', 'Resident memory size in bytes.');
    lines.push(`process_resident_memory_bytes ${gauges.residentMemoryBytes}`);
    return `${lines.join('\n')}\n`;
  }
}

function formatNumber(n: number): string {
  return Number.isFinite(n) ? String(Number(n.toFixed(6))) : '0';
}

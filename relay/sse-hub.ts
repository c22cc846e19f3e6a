// Fan-out of retained events to connected agents over server-sent events (relay/README.md).
// Each agent's response is written on its own: a slow agent only grows its own buffer, and once
// that passes the limit it is dropped; it reconnects with Last-Event-ID and loses nothing.
import type { ServerResponse } from 'node:http';
import type { Logger } from '../shared/log';
import type { RetainedEvent } from './event-store';

export interface SseHubOptions {
  heartbeatMs: number;
  /** Bytes queued for one agent beyond which that agent is disconnected. */
  maxBufferBytes: number;
  logger: Logger;
}

interface AgentStream {
  res: ServerResponse;
  /** Which configured token it used (1-based), for logs: tokens themselves are never logged. */
  agent: number;
}

/** One SSE event: `id: <cursor>` and the envelope as one `data:` line (JSON has no raw newlines). */
export function formatSseEvent(event: RetainedEvent): string {
  return `id: ${event.envelope.id}\ndata: ${event.json}\n\n`;
}

export const SSE_HEARTBEAT = ': hb\n\n';

export class SseHub {
  private readonly streams = new Set<AgentStream>();
  private readonly heartbeat: NodeJS.Timeout;
  private delivered = 0;

  constructor(private readonly options: SseHubOptions) {
    this.heartbeat = setInterval(() => {
      for (const stream of this.streams) this.write(stream, SSE_HEARTBEAT);
    }, options.heartbeatMs);
    this.heartbeat.unref();
  }

  get connected(): number {
    return this.streams.size;
  }

  get eventsDelivered(): number {
    return this.delivered;
  }

  /**
   * Opens the stream, writes the backlog, then joins the live fan-out. Backlog and registration
   * happen in one synchronous step, so no event can fall between the replay and the live stream.
   */
  open(res: ServerResponse, agent: number, backlog: readonly RetainedEvent[]): void {
    res.writeHead(200, {
      'Content-Type': 'text/event-stream; charset=utf-8',
      'Cache-Control': 'no-cache, no-store, no-transform',
      Connection: 'keep-alive',
      // Proxies such as nginx would otherwise buffer the stream.
      'X-Accel-Buffering': 'no',
      'X-Content-Type-Options': 'nosniff',
    });
    res.socket?.setNoDelay(true);
    res.socket?.setKeepAlive(true);
    res.socket?.setTimeout(0);
    const stream: AgentStream = { res, agent };
    this.streams.add(stream);
    res.on('close', () => {
      if (this.streams.delete(stream)) this.options.logger.info('agent disconnected', { agent, connectedAgents: this.streams.size });
    });
    // A comment first, so the agent sees the stream open even when there is nothing to replay.
    if (!this.write(stream, ': connected\n\n')) return;
    for (const event of backlog) {
      if (!this.write(stream, formatSseEvent(event))) return;
      this.delivered += 1;
    }
    this.options.logger.info('agent connected', { agent, replayed: backlog.length, connectedAgents: this.streams.size });
  }

  broadcast(event: RetainedEvent): void {
    const frame = formatSseEvent(event);
    for (const stream of this.streams) {
      if (this.write(stream, frame)) this.delivered += 1;
    }
  }

  /** Ends every stream (relay shutdown); agents reconnect to the next relay with their cursor. */
  closeAll(): void {
    clearInterval(this.heartbeat);
    for (const stream of this.streams) stream.res.end();
    this.streams.clear();
  }

  /**
   * False when the stream is gone or was just dropped for being too slow. The check comes before
   * the write: a healthy agent may briefly queue one large event, a slow one queues many.
   */
  private write(stream: AgentStream, chunk: string): boolean {
    const { res } = stream;
    if (res.destroyed || res.writableEnded) {
      this.streams.delete(stream);
      return false;
    }
    if (res.writableLength > this.options.maxBufferBytes) {
      this.streams.delete(stream);
      this.options.logger.warn('dropped a slow agent', { agent: stream.agent, bufferedBytes: res.writableLength });
      res.destroy();
      return false;
    }
    res.write(chunk);
    return true;
  }
}

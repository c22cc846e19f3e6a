// The window's log records go to the main process, which writes them to its rotating log files
// (electron/core/log-files.ts), so that "Export diagnostics" holds what the media engine saw: ICE
// states, media stopping, quality. Records are redacted where they are made (shared/log.ts) and
// again in main. Sent in batches; a host that cannot take them costs the window nothing more than
// the records dropped, and a failure to send is told on the console only (logging it would loop).
import type { SoftphoneApi } from '../../shared/api';
import { addLogDestination, type LogLevel, type LogRecord } from '../../shared/log';

export interface LogForwarderOptions {
  /** Records from this level up are sent. Default 'info'. */
  level?: LogLevel;
  /** How often a batch goes. Default 2 s. */
  flushMs?: number;
  /** Records waiting beyond this are dropped, oldest first, and counted. Default 200. */
  maxQueued?: number;
}

const BATCH = 50;

type Outgoing = Parameters<SoftphoneApi['writeLogs']>[0]['records'][number];

export class LogForwarder {
  private queue: Outgoing[] = [];
  private dropped = 0;
  private sending = false;
  private readonly level: LogLevel;
  private readonly flushMs: number;
  private readonly maxQueued: number;

  constructor(
    private readonly api: Pick<SoftphoneApi, 'writeLogs'>,
    options: LogForwarderOptions = {},
  ) {
    this.level = options.level ?? 'info';
    this.flushMs = options.flushMs ?? 2_000;
    this.maxQueued = options.maxQueued ?? 200;
  }

  /** Starts taking the window's records; the returned function stops (and sends what is left). */
  start(): () => void {
    const stopTaking = addLogDestination({ level: this.level, write: (record) => this.take(record) });
    const timer = setInterval(() => void this.flush(), this.flushMs);
    return () => {
      stopTaking();
      clearInterval(timer);
      void this.flush();
    };
  }

  take(record: LogRecord): void {
    const { t, level, logger, msg, ...fields } = record;
    this.queue.push({ t: t.slice(0, 40), level, logger: logger.slice(0, 64), msg: msg.slice(0, 2000), ...(Object.keys(fields).length > 0 ? { fields: bounded(fields) } : {}) });
    if (this.queue.length > this.maxQueued) {
      this.dropped += this.queue.length - this.maxQueued;
      this.queue.splice(0, this.queue.length - this.maxQueued);
    }
  }

  /** Sends what waits, a batch at a time. */
  async flush(): Promise<void> {
    if (this.sending) return;
    this.sending = true;
    try {
      if (this.dropped > 0) {
        this.queue.unshift({ t: new Date().toISOString(), level: 'warn', logger: 'log-forwarder', msg: `${this.dropped} window log records were dropped: the host was not taking them` });
        this.dropped = 0;
      }
      while (this.queue.length > 0) {
        const batch = this.queue.slice(0, BATCH);
        const sent = await this.api.writeLogs({ records: batch });
        if (!sent.ok) {
          console.warn(`window log records not sent: ${sent.error.message}`);
          return;
        }
        this.queue.splice(0, batch.length);
      }
    } finally {
      this.sending = false;
    }
  }
}

/** Fields as the command takes them: at most 4096 characters of JSON, else a note of what was cut. */
function bounded(all: Record<string, unknown>): Record<string, unknown> {
  const fields = Object.fromEntries(Object.entries(all).filter(([key]) => key.length <= 64));
  const json = JSON.stringify(fields);
  return json.length <= 4096 ? fields : { cut: `${json.length} characters of fields`, head: json.slice(0, 3000) };
}

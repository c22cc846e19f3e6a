// A remote node's recordings on their way to the relay (shared/bridge-recording.ts
// BRIDGE_RECORDING_UPLOAD_PATH): each finished file is PUT to the relay with the bridge token, and
// tried again after a growing pause until the relay takes it (2xx). Meanwhile it waits in memory;
// a node that stops loses what it could not hand over, and says so in its log, file by file. The
// files waiting are bounded: past the bound the oldest goes (said in the log too), never the node.
import { BRIDGE_RECORDING_UPLOAD_PATH, type RecordingSink } from '../shared/bridge-recording';
import { createLogger, type Logger } from '../shared/log';
import { OGG_OPUS_MIME_TYPE } from '../shared/ogg-opus';
import { err, ok, type Result } from '../shared/result';
import { describeFailure, HttpExchange, type HttpOutcome } from './http-exchange';

export interface RecordingUploaderOptions {
  relayUrl: string;
  bridgeToken: string;
  logger?: Logger;
  /** The pause before the next try: doubling from `firstDelayMs` up to `maxDelayMs`. Default 1 s to 60 s. */
  retry?: { firstDelayMs?: number; maxDelayMs?: number };
  /** Bytes of recordings waiting at most; a file past it drops the oldest waiting. Default 512 MiB. */
  maxWaitingBytes?: number;
}

/** The header that carries the recording's length (ms) beside the file. */
export const RECORDING_DURATION_HEADER = 'X-Recording-Duration-Ms';

const DEFAULT_RETRY = { firstDelayMs: 1_000, maxDelayMs: 60_000 };
const DEFAULT_MAX_WAITING_BYTES = 512 * 1024 * 1024;
/** Per try: a base, and a second for every 100 kB, so that a long call's file has time on a slow link. */
const BASE_DEADLINE_MS = 15_000;
const BYTES_A_SECOND = 100_000;
/** The relay's answer to an upload is a small JSON body at most. */
const ANSWER_LIMIT = 16 * 1024;
/** How long closing waits for an upload under way. */
const CLOSE_WAIT_MS = 2_000;
/** The media type of the upload: Ogg, as the contract says it (the codec is in the file). */
const CONTENT_TYPE = OGG_OPUS_MIME_TYPE.split(';')[0]!;

interface Waiting {
  callId: string;
  file: Uint8Array;
  durationMs: number;
  /** Settles the store() that queued it. */
  settle: (result: Result<null>) => void;
  /** Wakes its pause between two tries. */
  wake: () => void;
  done: boolean;
}

export class RecordingUploader implements RecordingSink {
  private readonly http: HttpExchange;
  private readonly log: Logger;
  private readonly retry: { firstDelayMs: number; maxDelayMs: number };
  private readonly maxWaitingBytes: number;
  /** Files not handed over yet, oldest first. */
  private readonly waiting: Waiting[] = [];
  private closed = false;

  constructor(options: RecordingUploaderOptions) {
    this.http = new HttpExchange({ baseUrl: options.relayUrl, token: options.bridgeToken, agent: { connections: 4 } });
    this.log = options.logger ?? createLogger('bridge-recordings');
    this.retry = { ...DEFAULT_RETRY, ...options.retry };
    this.maxWaitingBytes = options.maxWaitingBytes ?? DEFAULT_MAX_WAITING_BYTES;
  }

  /** Files waiting for the relay now. */
  get pending(): number {
    return this.waiting.length;
  }

  /** Resolves once the relay took the file, or with the reason it never will (the node stopped, or it was dropped). */
  store(callId: string, file: Uint8Array, durationMs: number): Promise<Result<null>> {
    if (this.closed) {
      this.log.error('a recording finished after the node stopped was lost', { callId, durationMs, bytes: file.length });
      return Promise.resolve(err('not_available', 'the node is stopping: the recording was not handed over'));
    }
    return new Promise((resolve) => {
      const entry: Waiting = { callId, file, durationMs, settle: resolve, wake: () => undefined, done: false };
      this.waiting.push(entry);
      this.bound();
      void this.deliver(entry);
    });
  }

  /** Resolves once nothing waits, or after `timeoutMs`. */
  async flush(timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (this.waiting.length > 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, Math.min(100, Math.max(1, deadline - Date.now()))));
  }

  /** Tries nothing more: every file still waiting is lost, each said in the log. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const entry of [...this.waiting]) {
      this.log.error('the relay had not taken a recording when the node stopped: it is lost', { callId: entry.callId, durationMs: entry.durationMs, bytes: entry.file.length });
      this.settle(entry, err('not_available', 'the node stopped before the relay took the recording'));
    }
    // An upload under way may take long on a slow link; the node does not wait for it to stop.
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([this.http.close(), new Promise<void>((resolve) => (timer = setTimeout(resolve, CLOSE_WAIT_MS)))]);
    clearTimeout(timer);
  }

  private async deliver(entry: Waiting): Promise<void> {
    for (let attempt = 1; !entry.done && !this.closed; attempt++) {
      const outcome = await this.http.exchange({
        method: 'PUT',
        path: BRIDGE_RECORDING_UPLOAD_PATH(entry.callId),
        bytes: { body: entry.file, contentType: CONTENT_TYPE, headers: { [RECORDING_DURATION_HEADER]: String(Math.round(entry.durationMs)) } },
        deadlineMs: BASE_DEADLINE_MS + Math.ceil((entry.file.length / BYTES_A_SECOND) * 1_000),
        bodyLimit: ANSWER_LIMIT,
      });
      if (entry.done) return;
      if (outcome.kind === 'response' && outcome.status >= 200 && outcome.status < 300) {
        this.log.info('recording handed to the relay', { callId: entry.callId, durationMs: entry.durationMs, bytes: entry.file.length, ...(attempt > 1 ? { attempts: attempt } : {}) });
        this.settle(entry, ok(null));
        return;
      }
      const delayMs = this.backOff(attempt);
      const fields = { callId: entry.callId, bytes: entry.file.length, attempt, retryInMs: delayMs, reason: reasonOf(outcome, this.http) };
      if (outcome.kind === 'response' && outcome.status >= 400 && outcome.status < 500 && outcome.status !== 408 && outcome.status !== 429) {
        // A refusal may never pass (a wrong token, a relay that keeps no recordings); it is tried on
        // all the same, since the file is lost otherwise, and said loudly.
        this.log.error('the relay refused a recording; trying again', fields);
      } else if (attempt === 1 || attempt % 10 === 0) this.log.warn('could not hand a recording to the relay; trying again', fields);
      else this.log.debug('could not hand a recording to the relay; trying again', fields);
      await this.pause(entry, delayMs);
    }
  }

  /** Past the bound, the oldest files go first (the newest call is the one still remembered). */
  private bound(): void {
    let bytes = this.waiting.reduce((sum, w) => sum + w.file.length, 0);
    while (bytes > this.maxWaitingBytes && this.waiting.length > 1) {
      const oldest = this.waiting[0]!;
      bytes -= oldest.file.length;
      this.log.error('too many recordings waiting for the relay; the oldest is lost', { callId: oldest.callId, durationMs: oldest.durationMs, bytes: oldest.file.length, waiting: this.waiting.length - 1 });
      this.settle(oldest, err('not_available', 'too many recordings waited for the relay: this one was dropped'));
    }
  }

  private settle(entry: Waiting, result: Result<null>): void {
    if (entry.done) return;
    entry.done = true;
    const at = this.waiting.indexOf(entry);
    if (at >= 0) this.waiting.splice(at, 1);
    entry.wake();
    entry.settle(result);
  }

  private pause(entry: Waiting, ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, ms);
      entry.wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }

  /** Doubling from the first delay up to the last, each wait drawn from its upper half. */
  private backOff(attempt: number): number {
    const ceiling = Math.min(this.retry.maxDelayMs, this.retry.firstDelayMs * 2 ** Math.min(attempt - 1, 30));
    return Math.round(ceiling / 2 + (Math.random() * ceiling) / 2);
  }
}

function reasonOf(outcome: HttpOutcome, http: HttpExchange): string {
  switch (outcome.kind) {
    case 'timeout':
      return 'no answer in time';
    case 'network':
      return describeFailure(outcome.failure);
    case 'response':
      return `HTTP ${outcome.status}${outcome.body !== '' ? `: ${http.scrub(outcome.body.slice(0, 200))}` : ''}`;
  }
}

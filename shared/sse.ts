// An incremental text/event-stream parser (WHATWG HTML "Server-sent events" parsing rules), for
// every reader of the relay's event stream: the app's main process and the sandbox's colleagues.
import { text } from './i18n/text';
import { TextError } from './result';

/** Longest line the parser accepts; webhooks are at most 3 MB, so a longer line is a broken stream. */
const MAX_LINE_CHARS = 8 * 1024 * 1024;

/** One dispatched server-sent event. */
export interface SseMessage {
  /** The last event id at dispatch (SSE: it carries over from earlier events when a block has none). */
  id: string | undefined;
  event: string;
  data: string;
}

/**
 * An incremental text/event-stream parser (WHATWG HTML "Server-sent events" parsing rules). Chunks
 * may split anywhere, including between the CR and LF of a line break.
 */
export class SseParser {
  private buffer = '';
  /** Index up to which `buffer` is known to hold no line break. */
  private scanned = 0;
  private skipLeadingLf = false;
  private data: string[] = [];
  private eventType = '';
  private lastId: string | undefined;

  /** Feeds decoded text; returns the events it completed. Throws when a line is absurdly long. */
  push(chunk: string): SseMessage[] {
    if (this.skipLeadingLf && chunk.startsWith('\n')) chunk = chunk.slice(1);
    this.skipLeadingLf = false;
    this.buffer += chunk;
    const out: SseMessage[] = [];
    let start = 0;
    const buf = this.buffer;
    for (let i = this.scanned; i < buf.length; i += 1) {
      const c = buf.charCodeAt(i);
      if (c !== 10 && c !== 13) continue;
      this.line(buf.slice(start, i), out);
      if (c === 13) {
        if (i + 1 < buf.length) {
          if (buf.charCodeAt(i + 1) === 10) i += 1;
        } else {
          this.skipLeadingLf = true;
        }
      }
      start = i + 1;
    }
    this.buffer = buf.slice(start);
    this.scanned = this.buffer.length;
    if (this.buffer.length > MAX_LINE_CHARS) throw new TextError(text('stream.lineTooLong'));
    return out;
  }

  private line(line: string, out: SseMessage[]): void {
    if (line === '') {
      if (this.data.length > 0) out.push({ id: this.lastId, event: this.eventType || 'message', data: this.data.join('\n') });
      this.data = [];
      this.eventType = '';
      return;
    }
    if (line.startsWith(':')) return; // a comment: heartbeats
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    switch (field) {
      case 'data':
        this.data.push(value);
        break;
      case 'id':
        if (!value.includes('\0')) this.lastId = value;
        break;
      case 'event':
        this.eventType = value;
        break;
      default:
        // `retry` and unknown fields: the client has its own backoff.
        break;
    }
  }
}

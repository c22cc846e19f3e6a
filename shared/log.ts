// Named, redacting loggers (style.md 9). Secrets never reach a log line; phone numbers are shortened.
// Every record goes to the console sink (stdout/stderr in Node, the devtools console in the window)
// and to any destination a host adds: the main process adds rotating files (electron/core/log-files.ts).
export type LogLevel = 'debug' | 'info' | 'warn' | 'error';
export type LogFields = Record<string, unknown>;
export interface Logger {
  debug(msg: string, fields?: LogFields): void;
  info(msg: string, fields?: LogFields): void;
  warn(msg: string, fields?: LogFields): void;
  error(msg: string, fields?: LogFields): void;
}

/** One log record as every sink and destination sees it: already redacted and scrubbed. */
export interface LogRecord {
  t: string;
  level: LogLevel;
  logger: string;
  msg: string;
  [field: string]: unknown;
}

/** Somewhere besides the console that records go, from `level` up. */
export interface LogDestination {
  level: LogLevel;
  write(record: LogRecord): void;
}

export type LogSink = (line: string, level: LogLevel) => void;

// An SDP carries ICE credentials and the DTLS fingerprint; its type ("offer"/"answer") is only diagnostic.
const SECRET_KEY = /(api[-_]?key|token|secret|password|credential|pwd|authorization|signature|cookie|sdp(?!_?type))/i;
const PHONE_KEY = /^(to|from|number|phone|wa_id|recipient_id|recipientId|input)$/i;

// Names that mark a secret inside free text: `token=…`, `"apiKey":"…"`, `Authorization: Bearer …`,
// an SDP's `a=ice-pwd:…`. Signed links put theirs in the query (`sig`, `X-Amz-Signature`,
// `X-Amz-Credential`, `key`).
const SECRET_WORDS = 'api[-_]?key|token|secret|passw(?:or)?d|authorization|signature|cookie|credential|ice-pwd';
const SECRET_QUERY_NAME = /(token|key|secret|signature|^sig$|passw(or)?d|^pwd$|credential|auth)/i;
// `scheme://user:password@host`; like the names below, a scheme starts where a word does and is
// bounded, so that a long run of letters and dots costs one scan, not one per letter.
const URL_PASSWORD = /(?<![a-z0-9+.-])([a-z][a-z0-9+.-]{0,30}:\/\/[^\s/?#:@]*:)[^\s/?#@]+@/gi;
// `?name=value`, `&name=value`, `#name=value` (OAuth puts tokens in the fragment), `;name=value`
const QUERY_PARAM = /([?&#;])([^=&#?;\s"'<>]+)=([^&#;\s"'<>]*)/g;
// `name: value`, `name=value`, `"name":"value"` where the name says secret. A name starts where a
// word does and is bounded, so that a long word costs a bounded scan, not one per letter. An HTTP
// scheme word (`Bearer`, `Basic`) is part of the value it introduces.
const NAMED_VALUE = new RegExp(
  `(?<![\\w.-])([\\w.-]{0,40}?(?:${SECRET_WORDS})[\\w.-]{0,40})("?\\s*[:=]\\s*"?)(?!\\[redacted\\])(?:(?:bearer|basic|digest|token)\\s+)?[^\\s"',;&)}\\]]+`,
  'gi',
);
const BEARER = /\b(bearer)\s+[\w\-.~+/]+=*/gi;
// A number written as a number with "+" and a country code (E.164), the only form safe to tell apart
// from call ids and counters in free text.
const PHONE_IN_TEXT = /(?<![\w+])\+\d(?:[ .-]?\d){6,14}(?![\w])/g;

/**
 * A message or a free-text field with the secrets it may quote taken out: secret query parameters of
 * links, passwords in links, `name: value` pairs whose name says secret, bearer tokens; and
 * international phone numbers shortened. Used on every message and string field of a record.
 */
export function scrubText(text: string): string {
  return text
    .replace(URL_PASSWORD, '$1[redacted]@')
    .replace(QUERY_PARAM, (whole: string, sep: string, name: string, value: string) =>
      value !== '' && SECRET_QUERY_NAME.test(name) ? `${sep}${name}=[redacted]` : whole,
    )
    .replace(NAMED_VALUE, '$1$2[redacted]')
    .replace(BEARER, '$1 [redacted]')
    .replace(PHONE_IN_TEXT, (number: string) => shortenPhone(number));
}

export function shortenPhone(value: string): string {
  const digits = value.replace(/\D/g, '');
  return digits.length <= 6 ? '…' : `${digits.slice(0, 2)}…${digits.slice(-4)}`;
}

export function redact(value: unknown, key = '', depth = 0): unknown {
  if (SECRET_KEY.test(key)) return value === undefined || value === '' ? value : '[redacted]';
  if (typeof value === 'string') return PHONE_KEY.test(key) ? shortenPhone(value) : scrubText(value);
  // A number typed as a number is still a phone number.
  if (typeof value === 'number') return PHONE_KEY.test(key) ? shortenPhone(String(value)) : value;
  // JSON.stringify throws on bigint: the logger must never throw.
  if (typeof value === 'bigint') return value.toString();
  if (value === null || typeof value !== 'object') return value;
  if (depth > 6) return '[deep]';
  if (Array.isArray(value)) return value.map((v) => redact(v, key, depth + 1));
  // An error's message often quotes the request that failed, link and headers included.
  if (value instanceof Error) return errorFields(value);
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? 'Invalid Date' : value.toISOString();
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, redact(v, k, depth + 1)]));
}

/**
 * What an error may carry beside its message that says what failed: a system call's code, a
 * database's SQLSTATE and which constraint, table and column. Not a database's `detail`: it may
 * quote a whole row, customers' numbers included.
 */
export const ERROR_DETAILS = ['code', 'syscall', 'constraint', 'table', 'column'] as const;

/** An error's name and message, and the details above it carries as text (scrubbed as messages are). */
function errorFields(error: Error): Record<string, string> {
  const fields: Record<string, string> = { name: error.name, message: scrubText(error.message) };
  for (const key of ERROR_DETAILS) {
    const detail = (error as unknown as Record<string, unknown>)[key];
    if (typeof detail === 'string' && detail !== '') fields[key] = scrubText(detail);
  }
  return fields;
}

const order: Record<LogLevel, number> = { debug: 0, info: 1, warn: 2, error: 3 };
const consoleSink: LogSink = (line, level) => (level === 'error' || level === 'warn' ? console.error(line) : console.log(line));
let minLevel: LogLevel = 'info';
let sink: LogSink = consoleSink;
const destinations = new Set<LogDestination>();

/**
 * Sets the console's level and sink; returns the configuration it replaces, so that whoever
 * changes it for a while can put it back.
 */
export function configureLogging(options: { level?: LogLevel; sink?: LogSink }): { level: LogLevel; sink: LogSink } {
  const previous = { level: minLevel, sink };
  if (options.level) minLevel = options.level;
  if (options.sink) sink = options.sink;
  return previous;
}

/** Sends every record from `destination.level` up to it as well; returns the function that stops it. */
export function addLogDestination(destination: LogDestination): () => void {
  destinations.add(destination);
  return () => {
    destinations.delete(destination);
  };
}

export function createLogger(name: string): Logger {
  const write = (level: LogLevel, msg: string, fields?: LogFields) => {
    const toConsole = order[level] >= order[minLevel];
    const targets = destinations.size === 0 ? [] : [...destinations].filter((d) => order[level] >= order[d.level]);
    if (!toConsole && targets.length === 0) return;
    const record: LogRecord = { t: new Date().toISOString(), level, logger: name, msg: scrubText(String(msg)) };
    // A field may not pass itself off as the record's level, logger or message: it keeps a "_" prefix.
    for (const [k, v] of Object.entries(fields ? (redact(fields) as LogFields) : {})) record[k in record ? `_${k}` : k] = v;
    if (toConsole) {
      try {
        sink(JSON.stringify(record), level);
      } catch {
        // A log line is never worth a crash (a closed stdout throws EPIPE).
      }
    }
    for (const destination of targets) {
      try {
        destination.write(record);
      } catch {
        // Nor is a full disk.
      }
    }
  };
  return {
    debug: (m, f) => write('debug', m, f),
    info: (m, f) => write('info', m, f),
    warn: (m, f) => write('warn', m, f),
    error: (m, f) => write('error', m, f),
  };
}

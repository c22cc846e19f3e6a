// Named, redacting loggers (style.md 9). Secrets never reach a log line; phone numbers are shortened.
export type LogLevel = 'debug' | 'info' | 'warn' | 'error';
export type LogFields = Record<string, unknown>;
export interface Logger {
  debug(msg: string, fields?: LogFields): void;
  info(msg: string, fields?: LogFields): void;
  warn(msg: string, fields?: LogFields): void;
  error(msg: string, fields?: LogFields): void;
}

// An SDP carries ICE credentials and the DTLS fingerprint; its type ("offer"/"answer") is only diagnostic.
const SECRET_KEY = /(api[-_]?key|token|secret|password|authorization|signature|cookie|sdp(?!_?type))/i;
const PHONE_KEY = /^(to|from|number|phone|wa_id|recipient_id|recipientId|input)$/i;

export function shortenPhone(value: string): string {
  const digits = value.replace(/\D/g, '');
  return digits.length <= 6 ? '…' : `${digits.slice(0, 2)}…${digits.slice(-4)}`;
}

export function redact(value: unknown, key = '', depth = 0): unknown {
  if (SECRET_KEY.test(key)) return value === undefined || value === '' ? value : '[redacted]';
  if (typeof value === 'string') return PHONE_KEY.test(key) ? shortenPhone(value) : value;
  // A number typed as a number is still a phone number.
  if (typeof value === 'number') return PHONE_KEY.test(key) ? shortenPhone(String(value)) : value;
  // JSON.stringify throws on bigint: the logger must never throw.
  if (typeof value === 'bigint') return value.toString();
  if (value === null || typeof value !== 'object') return value;
  if (depth > 6) return '[deep]';
  if (Array.isArray(value)) return value.map((v) => redact(v, key, depth + 1));
  if (value instanceof Error) return { name: value.name, message: value.message };
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? 'Invalid Date' : value.toISOString();
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, redact(v, k, depth + 1)]));
}

let minLevel: LogLevel = 'info';
const order: Record<LogLevel, number> = { debug: 0, info: 1, warn: 2, error: 3 };
let sink: (line: string, level: LogLevel) => void = (line, level) => (level === 'error' || level === 'warn' ? console.error(line) : console.log(line));

export function configureLogging(options: { level?: LogLevel; sink?: (line: string, level: LogLevel) => void }): void {
  if (options.level) minLevel = options.level;
  if (options.sink) sink = options.sink;
}

export function createLogger(name: string): Logger {
  const write = (level: LogLevel, msg: string, fields?: LogFields) => {
    if (order[level] < order[minLevel]) return;
    const record: LogFields = { t: new Date().toISOString(), level, logger: name, msg };
    // A field may not pass itself off as the record's level, logger or message: it keeps a "_" prefix.
    for (const [k, v] of Object.entries(fields ? (redact(fields) as LogFields) : {})) record[k in record ? `_${k}` : k] = v;
    try {
      sink(JSON.stringify(record), level);
    } catch {
      // A log line is never worth a crash (a closed stdout throws EPIPE).
    }
  };
  return {
    debug: (m, f) => write('debug', m, f),
    info: (m, f) => write('info', m, f),
    warn: (m, f) => write('warn', m, f),
    error: (m, f) => write('error', m, f),
  };
}

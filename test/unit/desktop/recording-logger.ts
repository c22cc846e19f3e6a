// A Logger that keeps its records for assertions instead of printing them.
import type { LogFields, Logger, LogLevel } from '../../../shared/log';

export interface LogRecord {
  level: LogLevel;
  msg: string;
  fields: LogFields | undefined;
}

export function recordingLogger(): Logger & { records: LogRecord[] } {
  const records: LogRecord[] = [];
  const at = (level: LogLevel) => (msg: string, fields?: LogFields) => {
    records.push({ level, msg, fields });
  };
  return { records, debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}

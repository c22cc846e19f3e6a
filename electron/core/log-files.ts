// The main process's log on disk, for support: every record of shared/log.ts also goes, through
// pino, to rotating files in a folder of the data directory (`<dataDir>/logs/softphone.log`).
//
// Records arrive already redacted and scrubbed by shared/log.ts, the same rules as the window's
// console; pino's own `redact` takes fixed paths and could not follow a secret under any key.
// pino writes in-process to a rotating-file-stream (no worker-thread transport): the Electron main
// process is an esbuild bundle, where a transport's worker file would have to be shipped apart.
// Rotation is logrotate's: `softphone.log` is the newest, `softphone.log.1` the one before, and so
// on; a file is rotated once it reaches the size limit, and at midnight.
import { mkdir, open, readdir, rm, type FileHandle } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { pino } from 'pino';
import { createStream } from 'rotating-file-stream';
import { z } from 'zod';
import { addLogDestination, configureLogging, createLogger, type LogLevel, type LogRecord } from '../../shared/log';
import { errorText } from '../../shared/result';
import { nonEmptyString, parseWith } from '../../shared/validation';

export const LOG_FILE_NAME = 'softphone.log';
export const DEFAULT_MAX_FILE_BYTES = 5 * 1024 * 1024;
export const DEFAULT_MAX_FILES = 5;
/** Lines waiting for the disk beyond this are dropped (and counted) rather than held in memory. */
const MAX_PENDING_BYTES = 4 * 1024 * 1024;
// Keys pino writes itself: a field of the same name keeps a "_" prefix, as shared/log.ts does for its own.
const PINO_KEYS = new Set(['level', 'time', 'pid', 'msg']);

const levelSchema = z.enum(['debug', 'info', 'warn', 'error'], { error: 'must be one of "debug", "info", "warn", "error"' });
const optionsSchema = z.strictObject(
  {
    dir: nonEmptyString(),
    level: levelSchema.optional(),
    maxFileBytes: z
      .number({ error: 'must be a number of bytes' })
      .int('must be a whole number of bytes')
      .min(1024, 'must be at least 1024 bytes')
      .max(1024 ** 3, 'must be at most 1 GiB')
      .optional(),
    // logrotate keeps at least one rotated file besides the current one.
    maxFiles: z.number({ error: 'must be a number of files' }).int('must be a whole number of files').min(2, 'must be at least 2').max(100, 'must be at most 100').optional(),
    alsoConsole: z.boolean({ error: 'must be true or false' }).optional(),
  },
  { error: (issue) => (issue.code === 'unrecognized_keys' ? `file logging does not take ${issue.keys.map((k) => `"${k}"`).join(', ')}` : 'must be an object') },
);

export interface FileLoggingOptions {
  /** The folder of the log files, created if missing (`<dataDir>/logs`). */
  dir: string;
  /** The lowest level written to the files; `info` unless given. */
  level?: LogLevel;
  /** A file is rotated once it holds this many bytes (the line that crosses it stays whole). */
  maxFileBytes?: number;
  /** Files kept, the current one included; older ones are removed. */
  maxFiles?: number;
  /** Whether records still go to stdout/stderr as well; `true` unless given. */
  alsoConsole?: boolean;
}

export interface FileLogging {
  readonly dir: string;
  /** The log files once what was logged so far is in them, oldest first; the current one (`softphone.log`) last. */
  files(): Promise<string[]>;
  /** The newest log text, at most `maxBytes` bytes, across files, newest last; starts on a whole line. */
  recentLines(maxBytes: number): Promise<string>;
  /** Resolves once every record logged so far is in the file. */
  flush(): Promise<void>;
  /** Stops writing to the files, after what was logged so far is in them. */
  stop(): Promise<void>;
}

/** `softphone.log` → 0, `softphone.log.3` → 3, anything else → null. */
function rotationIndex(name: string): number | null {
  if (name === LOG_FILE_NAME) return 0;
  const match = /^softphone\.log\.([1-9]\d{0,5})$/.exec(name);
  return match ? Number(match[1]) : null;
}

async function logFiles(dir: string): Promise<{ path: string; index: number }[]> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw e;
  }
  return names
    .map((name) => ({ path: join(dir, name), index: rotationIndex(name) }))
    .filter((f): f is { path: string; index: number } => f.index !== null)
    .sort((a, b) => b.index - a.index);
}

/** The last `length` bytes of a file, or null when it is gone (rotated away meanwhile). */
async function readTail(path: string, length: number): Promise<{ bytes: Buffer; whole: boolean } | null> {
  let handle: FileHandle;
  try {
    handle = await open(path, 'r');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw e;
  }
  try {
    const { size } = await handle.stat();
    const wanted = Math.min(size, length);
    const bytes = Buffer.alloc(wanted);
    let filled = 0;
    while (filled < wanted) {
      const { bytesRead } = await handle.read(bytes, filled, wanted - filled, size - wanted + filled);
      if (bytesRead === 0) break;
      filled += bytesRead;
    }
    return { bytes: bytes.subarray(0, filled), whole: wanted === size };
  } finally {
    await handle.close();
  }
}

/**
 * Starts writing every log record to rotating files in `options.dir`. Bad options reject with an
 * error naming the option and its rule.
 */
export async function startFileLogging(options: FileLoggingOptions): Promise<FileLogging> {
  const parsed = parseWith(optionsSchema, options);
  if (!parsed.ok) throw new Error(`file logging: ${parsed.error.message}`);
  const { level = 'info', maxFileBytes = DEFAULT_MAX_FILE_BYTES, maxFiles = DEFAULT_MAX_FILES, alsoConsole = true } = parsed.value;
  const dir = resolve(parsed.value.dir);
  const log = createLogger('log-files');

  try {
    await mkdir(dir, { recursive: true, mode: 0o700 });
  } catch (e) {
    throw new Error(`file logging: cannot create the folder ${dir}: ${errorText(e)}`, { cause: e });
  }
  // Files beyond the count, left by a run with a larger one, would otherwise stay for good: the
  // rotation only renames up to its own count.
  for (const file of await logFiles(dir)) if (file.index >= maxFiles) await rm(file.path, { force: true });

  const stream = createStream(LOG_FILE_NAME, {
    path: dir,
    size: `${maxFileBytes}B`,
    interval: '1d',
    rotate: maxFiles - 1,
    // The lines hold no secret, but they do hold who called when.
    mode: 0o600,
  });
  const logger = pino(
    {
      level,
      base: { pid: process.pid },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      // Errors were already reduced to their name and message by shared/log.ts.
      serializers: {},
    },
    stream,
  );

  let dropped = 0;
  const write = (record: LogRecord): void => {
    if (stream.destroyed || stream.writableEnded) return;
    if (stream.writableLength > MAX_PENDING_BYTES) {
      dropped += 1;
      return;
    }
    if (dropped > 0) {
      logger.warn({ logger: 'log-files', dropped }, 'log lines dropped: the disk was too slow');
      dropped = 0;
    }
    const { t: _t, level: recordLevel, logger: name, msg, ...fields } = record;
    const line: Record<string, unknown> = { logger: name };
    for (const [k, v] of Object.entries(fields)) line[PINO_KEYS.has(k) ? `_${k}` : k] = v;
    logger[recordLevel](line, msg);
  };

  let removeDestination = (): void => undefined;
  let restoreConsole = (): void => undefined;
  // An error ends a rotating-file-stream for good; without a listener it would end the process.
  stream.on('error', (e) => {
    removeDestination();
    restoreConsole();
    log.error('log files stopped: writing them failed', { dir, error: errorText(e) });
  });
  stream.on('warning', (e) => log.warn('log file rotation', { dir, error: errorText(e) }));
  await new Promise<void>((opened, failed) => {
    const onOpen = () => {
      stream.off('error', onError);
      opened();
    };
    const onError = (e: Error) => {
      stream.off('open', onOpen);
      failed(new Error(`file logging: cannot write ${join(dir, LOG_FILE_NAME)}: ${errorText(e)}`, { cause: e }));
    };
    stream.once('open', onOpen);
    stream.once('error', onError);
  });

  removeDestination = addLogDestination({ level, write });
  if (!alsoConsole) {
    const previous = configureLogging({ sink: () => undefined });
    restoreConsole = () => {
      configureLogging({ sink: previous.sink });
      restoreConsole = () => undefined;
    };
  }

  const flush = (): Promise<void> =>
    new Promise((done) => {
      if (stream.destroyed || stream.writableEnded) return done();
      // Writes reach the file in order: once an empty one is through, every earlier one is.
      stream.write('', () => done());
    });

  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> => {
    stopping ??= new Promise<void>((done) => {
      removeDestination();
      restoreConsole();
      if (stream.destroyed || stream.writableFinished) return done();
      stream.end(() => done());
    });
    return stopping;
  };

  return {
    dir,
    files: async () => {
      await flush();
      return (await logFiles(dir)).map((f) => f.path);
    },
    recentLines: async (maxBytes: number) => {
      if (!Number.isInteger(maxBytes) || maxBytes < 1) throw new Error(`recentLines: maxBytes must be a whole number of bytes, at least 1 (got ${String(maxBytes)})`);
      await flush();
      const parts: Buffer[] = [];
      let remaining = maxBytes;
      let startsMidLine = false;
      for (const file of (await logFiles(dir)).reverse()) {
        if (remaining === 0) break;
        const tail = await readTail(file.path, remaining);
        if (!tail) continue;
        parts.unshift(tail.bytes);
        remaining -= tail.bytes.length;
        if (!tail.whole) {
          startsMidLine = true;
          break;
        }
      }
      let text = Buffer.concat(parts);
      // Rotation never splits a line between files, so only a cut inside a file leaves a partial one.
      if (startsMidLine) {
        const newline = text.indexOf(0x0a);
        if (newline >= 0) text = text.subarray(newline + 1);
      }
      return text.toString('utf8');
    },
    flush,
    stop,
  };
}

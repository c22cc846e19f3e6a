import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startFileLogging, type FileLogging, type FileLoggingOptions } from '../../../electron/core/log-files';
import { configureLogging, createLogger, scrubText, type LogLevel } from '../../../shared/log';
import { chromiumAnswer, withLine } from '../../fixtures/sdp';

const API_KEY = 'sk_live_5f1e0c7a9b2d4e6f';
const AGENT_TOKEN = 'agt_93ab0f72c1d84e55';
const TURN_PASSWORD = 'turnpass_0c9d8e7f';
const LINK_SIGNATURE = 'f00dfacecafe1234';
/** A real answer, with an ICE password that is easy to look for. */
const SDP = withLine(chromiumAnswer, 'a=ice-pwd:', 'a=ice-pwd:verysecretpassword0123');

// What the console sink receives while a test runs; nothing reaches the real stdout.
let consoleLines: { line: string; level: LogLevel }[] = [];
const dirs: string[] = [];
const running: FileLogging[] = [];

beforeEach(() => {
  consoleLines = [];
  configureLogging({ level: 'info', sink: (line, level) => consoleLines.push({ line, level }) });
});
afterEach(async () => {
  for (const logging of running.splice(0)) await logging.stop();
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'softphone-logs-'));
  dirs.push(dir);
  return dir;
}

async function start(options: Partial<FileLoggingOptions> = {}): Promise<FileLogging> {
  const logging = await startFileLogging({ dir: join(await tempDir(), 'logs'), ...options });
  running.push(logging);
  return logging;
}

async function fileText(logging: FileLogging): Promise<string> {
  const texts = await Promise.all((await logging.files()).map((f) => readFile(f, 'utf8')));
  return texts.join('');
}

const parse = (text: string) =>
  text
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Record<string, unknown>);

/** Numbered lines of about 150 bytes each, so that sizes in the tests are easy to reason about. */
function writeNumbered(count: number, from = 0): void {
  const log = createLogger('rotation');
  for (let n = from; n < from + count; n++) log.info(`line ${n}`, { n, pad: 'x'.repeat(40) });
}

const numbers = (text: string) => parse(text).map((r) => r.n as number);
const consecutive = (list: number[]) => list.every((n, i) => i === 0 || n === list[i - 1]! + 1);

describe('startFileLogging: the lines', () => {
  it('writes each record as one JSON line with level, time, logger, message and fields', async () => {
    const logging = await start();
    createLogger('gateway').info('call accepted', { callId: 'wacid.1', status: 200 });
    createLogger('relay').warn('stream reconnecting', { attempt: 2 });
    await logging.flush();
    const text = await readFile(join(logging.dir, 'softphone.log'), 'utf8');
    expect(text.endsWith('\n')).toBe(true);
    const records = parse(text);
    expect(records).toEqual([
      { level: 'info', time: expect.any(String), pid: process.pid, logger: 'gateway', msg: 'call accepted', callId: 'wacid.1', status: 200 },
      { level: 'warn', time: expect.any(String), pid: process.pid, logger: 'relay', msg: 'stream reconnecting', attempt: 2 },
    ]);
    for (const r of records) expect(Number.isNaN(Date.parse(r.time as string))).toBe(false);
  });

  it('writes from its own level up, whatever the console shows', async () => {
    const infoUp = await start();
    const log = createLogger('levels');
    log.debug('not in the file at info');
    log.info('in the file at info');
    await infoUp.flush();
    expect(parse(await fileText(infoUp)).map((r) => r.msg)).toEqual(['in the file at info']);
    await infoUp.stop();

    const debugUp = await start({ level: 'debug' });
    log.debug('a debug detail');
    await debugUp.flush();
    expect(parse(await fileText(debugUp)).map((r) => [r.level, r.msg])).toEqual([['debug', 'a debug detail']]);
    // The console keeps its own level: info.
    expect(consoleLines.map((l) => JSON.parse(l.line).msg as string)).toEqual(['in the file at info']);
    await debugUp.stop();

    const warnUp = await start({ level: 'warn' });
    log.info('console only');
    log.error('both');
    await warnUp.flush();
    expect(parse(await fileText(warnUp)).map((r) => r.msg)).toEqual(['both']);
    expect(consoleLines.map((l) => JSON.parse(l.line).msg as string).slice(-2)).toEqual(['console only', 'both']);
  });

  it('never writes a secret: fields under any name and depth, links, headers and errors in the text', async () => {
    const logging = await start({ level: 'debug' });
    const log = createLogger('gateway');
    log.info('POST accept', {
      headers: { 'API-KEY': API_KEY, authorization: `Bearer ${AGENT_TOKEN}` },
      body: { call_id: 'wacid.1', session: { sdp_type: 'answer', sdp: SDP } },
      relay: { agents: [{ id: 'a1', token: AGENT_TOKEN }] },
      settings: { apiKey: API_KEY, turnPassword: TURN_PASSWORD },
    });
    log.warn(`GET https://relay.example.com/events?agent=a1&token=${AGENT_TOKEN} failed`);
    log.error('relay refused', { error: new Error(`401 from https://relay.example.com/me (Authorization: Bearer ${AGENT_TOKEN})`) });
    log.info('media link', { link: `https://cdn.example.com/a.png?X-Amz-Signature=${LINK_SIGNATURE}&X-Amz-Date=20250101` });
    log.debug(`raw answer ${JSON.stringify({ apiKey: API_KEY })} with ${SDP}`);
    log.info(`turn://agent:${TURN_PASSWORD}@turn.example.com rejected`);
    await logging.flush();
    const text = await fileText(logging);
    for (const secret of [API_KEY, AGENT_TOKEN, TURN_PASSWORD, LINK_SIGNATURE, 'verysecretpassword0123']) expect(text).not.toContain(secret);
    const records = parse(text);
    expect(records).toHaveLength(6);
    expect(records[0]).toMatchObject({
      headers: { 'API-KEY': '[redacted]', authorization: '[redacted]' },
      body: { call_id: 'wacid.1', session: { sdp_type: 'answer', sdp: '[redacted]' } },
      settings: { apiKey: '[redacted]', turnPassword: '[redacted]' },
    });
    // What is not secret stays readable for support.
    expect(records[1]!.msg).toBe('GET https://relay.example.com/events?agent=a1&token=[redacted] failed');
    expect(records[2]).toMatchObject({ error: { name: 'Error', message: '401 from https://relay.example.com/me (Authorization: [redacted])' } });
    expect(records[3]!.link).toBe('https://cdn.example.com/a.png?X-Amz-Signature=[redacted]&X-Amz-Date=20250101');
    expect(records[5]!.msg).toBe('turn://agent:[redacted]@turn.example.com rejected');
  });

  it('shortens phone numbers in fields and in the message', async () => {
    const logging = await start();
    createLogger('coordinator').info('dialing +44 20 7946 0958', { to: '442079460958', peer: { number: 12025550143, name: 'Ada' } });
    await logging.flush();
    const text = await fileText(logging);
    for (const full of ['442079460958', '7946 0958', '12025550143']) expect(text).not.toContain(full);
    expect(parse(text)[0]).toMatchObject({ msg: 'dialing 44…0958', to: '44…0958', peer: { number: '12…0143', name: 'Ada' } });
  });

  it("keeps pino's own keys its own: a field named time or pid keeps a \"_\" prefix", async () => {
    const logging = await start();
    createLogger('clash').info('fields with reserved names', { time: 5, pid: 'p', level: 'debug', msg: 'fake' });
    await logging.flush();
    expect(parse(await fileText(logging))[0]).toEqual({
      level: 'info',
      time: expect.any(String),
      pid: process.pid,
      logger: 'clash',
      msg: 'fields with reserved names',
      _time: 5,
      _pid: 'p',
      _level: 'debug',
      _msg: 'fake',
    });
  });
});

describe('startFileLogging: rotation', () => {
  it('rotates a file once it reaches the size limit and removes files beyond maxFiles', async () => {
    const maxFileBytes = 2048;
    const logging = await start({ maxFileBytes, maxFiles: 3 });
    writeNumbered(200);
    await logging.flush();
    const files = await logging.files();
    expect(files.map((f) => basename(f))).toEqual(['softphone.log.2', 'softphone.log.1', 'softphone.log']);
    expect((await readdir(logging.dir)).sort()).toEqual(['softphone.log', 'softphone.log.1', 'softphone.log.2']);
    const longestLine = Math.max(...(await fileText(logging)).split('\n').map((l) => Buffer.byteLength(l) + 1));
    for (const rotated of files.slice(0, 2)) {
      const { size } = await stat(rotated);
      // Rotated right after the line that reached the limit: never split, never much over.
      expect(size).toBeGreaterThanOrEqual(maxFileBytes);
      expect(size).toBeLessThan(maxFileBytes + longestLine);
    }
    expect((await stat(files[2]!)).size).toBeLessThan(maxFileBytes);
    // Oldest file first, the lines in order and without a gap up to the last; the first ones are gone.
    const kept = numbers(await fileText(logging));
    expect(consecutive(kept)).toBe(true);
    expect(kept.at(-1)).toBe(199);
    expect(kept[0]).toBeGreaterThan(0);
  });

  it('continues the current file of an earlier run and removes rotated files beyond maxFiles that it left', async () => {
    const dir = join(await tempDir(), 'logs');
    const earlier = await startFileLogging({ dir, maxFiles: 5 });
    createLogger('earlier').info('before the restart');
    await earlier.stop();
    await writeFile(join(dir, 'softphone.log.3'), '{"msg":"old 3"}\n');
    await writeFile(join(dir, 'softphone.log.7'), '{"msg":"old 7"}\n');
    await writeFile(join(dir, 'notes.txt'), 'not a log file\n');

    const logging = await startFileLogging({ dir, maxFiles: 3 });
    running.push(logging);
    createLogger('later').info('after the restart');
    await logging.flush();
    expect((await readdir(dir)).sort()).toEqual(['notes.txt', 'softphone.log']);
    expect(parse(await fileText(logging)).map((r) => r.msg)).toEqual(['before the restart', 'after the restart']);
  });
});

describe('startFileLogging: recentLines', () => {
  it('gives the newest lines across files, newest last, whole lines only, within the bound', async () => {
    const logging = await start({ maxFileBytes: 1024, maxFiles: 5 });
    writeNumbered(60);
    const files = await logging.files();
    expect(files.length).toBeGreaterThan(2);
    const current = numbers(await readFile(files.at(-1)!, 'utf8'));

    const recent = await logging.recentLines(1500);
    expect(Buffer.byteLength(recent)).toBeLessThanOrEqual(1500);
    expect(recent.endsWith('\n')).toBe(true);
    const got = numbers(recent);
    expect(consecutive(got)).toBe(true);
    expect(got.at(-1)).toBe(59);
    // More than the current file holds: the older lines come from the file before it.
    expect(got[0]).toBeLessThan(current[0]!);
    expect(got.length).toBeGreaterThan(current.length);

    const everything = numbers(await logging.recentLines(10 * 1024 * 1024));
    expect(everything).toEqual(numbers(await fileText(logging)));
    expect(everything.at(-1)).toBe(59);
  });

  it('includes what was logged just before it was asked', async () => {
    const logging = await start();
    createLogger('export').info('right before the export');
    expect(parse(await logging.recentLines(4096)).map((r) => r.msg)).toEqual(['right before the export']);
  });

  it('gives nothing rather than half a line when the bound is shorter than the last line', async () => {
    const logging = await start({ maxFileBytes: 1024, maxFiles: 2 });
    writeNumbered(20);
    expect(await logging.recentLines(10)).toBe('');
  });

  it('refuses a bound that is not a whole positive number of bytes', async () => {
    const logging = await start();
    for (const bad of [0, -1, 1.5, Number.NaN]) await expect(logging.recentLines(bad)).rejects.toThrow(/maxBytes must be a whole number of bytes, at least 1/);
  });
});

describe('startFileLogging: stopping and the console', () => {
  it('stop() resolves once every line is in the file, and nothing is written after it', async () => {
    const logging = await start({ maxFileBytes: 64 * 1024 });
    writeNumbered(500);
    await logging.stop();
    const kept = numbers(await fileText(logging));
    expect(kept).toHaveLength(500);
    expect(kept.at(-1)).toBe(499);
    writeNumbered(1, 500);
    await new Promise((r) => setTimeout(r, 50));
    expect(numbers(await fileText(logging)).at(-1)).toBe(499);
    // A second stop, and flushing a stopped logger, are harmless.
    await logging.stop();
    await logging.flush();
    expect(numbers(await logging.recentLines(1024)).at(-1)).toBe(499);
  });

  it('writes to the console as well by default, and alone to the files with alsoConsole: false until stopped', async () => {
    const both = await start();
    createLogger('console').info('to both');
    await both.stop();
    expect(consoleLines.map((l) => JSON.parse(l.line).msg as string)).toEqual(['to both']);

    const filesOnly = await start({ alsoConsole: false });
    createLogger('console').info('to the file only');
    await filesOnly.flush();
    expect(parse(await fileText(filesOnly)).map((r) => r.msg)).toEqual(['to the file only']);
    await filesOnly.stop();
    createLogger('console').info('to the console again');
    expect(consoleLines.map((l) => JSON.parse(l.line).msg as string)).toEqual(['to both', 'to the console again']);
  });
});

describe('startFileLogging: bad options', () => {
  it.each([
    [{ maxFiles: 1 }, /maxFiles: must be at least 2/],
    [{ maxFiles: 2.5 }, /maxFiles: must be a whole number of files/],
    [{ maxFileBytes: 100 }, /maxFileBytes: must be at least 1024 bytes/],
    [{ maxFileBytes: '5M' }, /maxFileBytes: must be a number of bytes/],
    [{ level: 'verbose' }, /level: must be one of "debug", "info", "warn", "error"/],
    [{ alsoConsole: 'yes' }, /alsoConsole: must be true or false/],
    [{ dir: '' }, /dir: must not be empty/],
    [{ rotateEvery: 'hour' }, /does not take "rotateEvery"/],
  ])('refuses %o, naming the option and its rule', async (bad, message) => {
    const dir = join(await tempDir(), 'logs');
    await expect(startFileLogging({ dir, ...bad } as unknown as FileLoggingOptions)).rejects.toThrow(message);
    // Nothing was started: the console is as it was, and no file was made.
    createLogger('after').info('still to the console');
    expect(consoleLines).toHaveLength(1);
  });

  it('says which folder it cannot create', async () => {
    const parent = await tempDir();
    await writeFile(join(parent, 'a-file'), 'in the way\n');
    await expect(startFileLogging({ dir: join(parent, 'a-file', 'logs') })).rejects.toThrow(/file logging: cannot create the folder .*a-file\/logs/);
  });
});

describe('scrubText', () => {
  it('leaves ordinary text alone', () => {
    for (const text of [
      'call wacid.442079460958 ended at 2025-06-01T00:00:00.000Z with code 138006',
      'no app secret configured: webhook signatures are not checked',
      'turn:turn.example.com:3478?transport=tcp',
      'https://gateway.example.com/restapi/v1/chatapp/calls/accept?action=accept',
    ])
      expect(scrubText(text)).toBe(text);
  });

  it('stays fast on long text that looks a little like a secret everywhere', () => {
    const started = Date.now();
    scrubText(`${'a.'.repeat(100_000)}${'token'.repeat(20_000)}${'a://b:'.repeat(20_000)}${'?x=y&'.repeat(20_000)}`);
    expect(Date.now() - started).toBeLessThan(2000);
  });
});

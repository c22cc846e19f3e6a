import { beforeEach, describe, expect, it } from 'vitest';
import { configureLogging, createLogger, redact, shortenPhone, type LogLevel } from '../../../shared/log';
import { chromiumAnswer, withLine } from '../../fixtures/sdp';

const API_KEY = 'sk_live_5f1e0c7a9b2d4e6f';
const AGENT_TOKEN = 'agt_93ab0f72c1d84e55';
const APP_SECRET = 'appsecret_77e1a0b3';
/** A real answer, with an ICE password that is easy to look for. */
const SDP = withLine(chromiumAnswer, 'a=ice-pwd:', 'a=ice-pwd:verysecretpassword0123');

describe('redact: secrets', () => {
  it.each([
    'API-KEY',
    'api-key',
    'apiKey',
    'api_key',
    'APIKEY',
    'token',
    'agentToken',
    'accessToken',
    'hub.verify_token',
    'authorization',
    'Authorization',
    'proxy-authorization',
    'secret',
    'appSecret',
    'client_secret',
    'password',
    'x-hub-signature-256',
    'signature',
    'cookie',
    'set-cookie',
    'sdp',
    'offerSdp',
    'answerSdp',
  ])('hides %s', (key) => {
    expect(redact({ [key]: 'hunter2-value' })).toEqual({ [key]: '[redacted]' });
  });

  it('hides secrets at any depth, in arrays too, and whole objects under a secret name', () => {
    const input = {
      request: {
        headers: { 'API-KEY': API_KEY, 'Content-Type': 'application/json' },
        body: { messaging_product: 'chatapp', call_id: 'wacid.1', action: 'accept', session: { sdp_type: 'answer', sdp: SDP } },
      },
      relay: { agents: [{ id: 'a1', token: AGENT_TOKEN }, { id: 'a2', token: AGENT_TOKEN }] },
      credentials: { secret: { app: APP_SECRET } },
      deep: { a: { b: { c: { d: { authorization: `Bearer ${AGENT_TOKEN}` } } } } },
    };
    expect(redact(input)).toEqual({
      request: {
        headers: { 'API-KEY': '[redacted]', 'Content-Type': 'application/json' },
        body: { messaging_product: 'chatapp', call_id: 'wacid.1', action: 'accept', session: { sdp_type: 'answer', sdp: '[redacted]' } },
      },
      relay: { agents: [{ id: 'a1', token: '[redacted]' }, { id: 'a2', token: '[redacted]' }] },
      credentials: '[redacted]',
      deep: { a: { b: { c: { d: { authorization: '[redacted]' } } } } },
    });
  });

  it('hides every element of an array held under a secret name', () => {
    expect(redact({ tokens: [AGENT_TOKEN, AGENT_TOKEN] })).toEqual({ tokens: '[redacted]' });
  });

  it('shows that a secret is missing rather than hiding nothing', () => {
    expect(redact({ apiKey: '', agentToken: undefined })).toEqual({ apiKey: '', agentToken: undefined });
  });

  it('cuts off beyond a depth instead of walking forever, so even a cycle cannot leak or hang', () => {
    const cyclic: Record<string, unknown> = { name: 'loop' };
    cyclic.self = cyclic;
    const out = JSON.stringify(redact(cyclic));
    expect(out).toContain('[deep]');
    let deep: Record<string, unknown> = { apiKey: API_KEY };
    for (let i = 0; i < 12; i++) deep = { next: deep };
    expect(JSON.stringify(redact(deep))).not.toContain(API_KEY);
  });

  it('does not change the value it was given', () => {
    const input = { headers: { 'API-KEY': API_KEY }, to: '442079460958' };
    const copy = structuredClone(input);
    redact(input);
    expect(input).toEqual(copy);
  });

  it('keeps what is harmless as it is', () => {
    expect(redact({ callId: 'wacid.HBgL', status: 200, ok: true, nothing: null, list: [1, 'two'] })).toEqual({
      callId: 'wacid.HBgL',
      status: 200,
      ok: true,
      nothing: null,
      list: [1, 'two'],
    });
    expect(redact('plain')).toBe('plain');
    expect(redact(5)).toBe(5);
  });

  it('keeps the details that say what failed: a system call’s code, a database’s SQLSTATE, constraint and table; not its detail, which may quote a row', () => {
    const refused = Object.assign(new Error('duplicate key value violates unique constraint "call_facts_pkey"'), {
      code: '23505',
      detail: 'Key (call_id)=(wacid.1 from 447700900123) already exists.',
      constraint: 'call_facts_pkey',
      table: 'call_facts',
      column: undefined,
      severity: 'ERROR',
      config: { apiKey: API_KEY },
    });
    expect(redact({ error: refused })).toEqual({
      error: {
        name: 'Error',
        message: 'duplicate key value violates unique constraint "call_facts_pkey"',
        code: '23505',
        constraint: 'call_facts_pkey',
        table: 'call_facts',
      },
    });
    const refusedConnection = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED', syscall: 'connect', errno: -111 });
    expect(redact({ error: refusedConnection })).toEqual({ error: { name: 'Error', message: 'connect ECONNREFUSED 127.0.0.1:5432', code: 'ECONNREFUSED', syscall: 'connect' } });
  });

  it('reduces errors to their name and message', () => {
    const error = Object.assign(new TypeError('fetch failed'), { config: { apiKey: API_KEY } });
    expect(redact({ err: error })).toEqual({ err: { name: 'TypeError', message: 'fetch failed' } });
  });

  it('writes dates as ISO strings and bigints as digits, never failing on them', () => {
    expect(redact({ at: new Date(Date.UTC(2025, 5, 1)), bad: new Date(Number.NaN), big: 2n ** 70n })).toEqual({
      at: '2025-06-01T00:00:00.000Z',
      bad: 'Invalid Date',
      big: '1180591620717411303424',
    });
  });
});

describe('redact: phone numbers are shortened', () => {
  it.each(['to', 'from', 'number', 'phone', 'wa_id', 'recipient_id', 'recipientId', 'input', 'TO'])('under %s', (key) => {
    expect(redact({ [key]: '442079460958' })).toEqual({ [key]: '44…0958' });
  });

  it('also when written with "+", spaces or as a number, and in arrays and nested objects', () => {
    expect(redact({ to: '+44 20 7946 0958', peer: { number: 12025550143 }, contacts: [{ wa_id: '447911123456', input: '+447911123456' }] })).toEqual({
      to: '44…0958',
      peer: { number: '12…0143' },
      contacts: [{ wa_id: '44…3456', input: '44…3456' }],
    });
    expect(redact({ from: ['442079460958', '12025550143'] })).toEqual({ from: ['44…0958', '12…0143'] });
  });

  it('hides short numbers entirely, since a shortened short number is the whole number', () => {
    expect(shortenPhone('123456')).toBe('…');
    expect(shortenPhone('')).toBe('…');
    expect(shortenPhone('1234567')).toBe('12…4567');
  });

  it('leaves other fields with digits alone', () => {
    expect(redact({ callId: 'wacid.442079460958', code: 138006, durationSec: 61 })).toEqual({ callId: 'wacid.442079460958', code: 138006, durationSec: 61 });
  });
});

describe('createLogger', () => {
  let lines: { line: string; level: LogLevel }[] = [];
  const records = () => lines.map(({ line }) => JSON.parse(line) as Record<string, unknown>);

  beforeEach(() => {
    lines = [];
    configureLogging({ level: 'debug', sink: (line, level) => lines.push({ line, level }) });
  });

  it('writes one JSON line per call, with time, level, logger name, message and fields', () => {
    const log = createLogger('gateway');
    log.info('call accepted', { callId: 'wacid.1', status: 200 });
    expect(lines).toHaveLength(1);
    expect(lines[0]!.level).toBe('info');
    expect(lines[0]!.line).not.toContain('\n');
    const [record] = records();
    expect(record).toEqual({ t: expect.any(String), level: 'info', logger: 'gateway', msg: 'call accepted', callId: 'wacid.1', status: 200 });
    expect(Number.isNaN(Date.parse(record!.t as string))).toBe(false);
  });

  it('writes each level through the sink with that level', () => {
    const log = createLogger('relay');
    log.debug('d');
    log.info('i');
    log.warn('w');
    log.error('e');
    expect(lines.map((l) => l.level)).toEqual(['debug', 'info', 'warn', 'error']);
    expect(records().map((r) => [r.level, r.msg, r.logger])).toEqual([
      ['debug', 'd', 'relay'],
      ['info', 'i', 'relay'],
      ['warn', 'w', 'relay'],
      ['error', 'e', 'relay'],
    ]);
  });

  it('drops lines below the configured level', () => {
    configureLogging({ level: 'warn' });
    const log = createLogger('relay');
    log.debug('d');
    log.info('i');
    log.warn('w');
    log.error('e');
    expect(lines.map((l) => l.level)).toEqual(['warn', 'error']);
  });

  it('never writes a secret value, whatever the field is called or how deep it sits', () => {
    const log = createLogger('gateway');
    log.info('POST accept', {
      url: 'https://gateway.example.com/restapi/v1/chatapp/calls/accept',
      headers: { 'API-KEY': API_KEY, 'content-type': 'application/json' },
      body: { messaging_product: 'chatapp', call_id: 'wacid.1', action: 'accept', session: { sdp_type: 'answer', sdp: SDP } },
    });
    log.warn('relay refused', { authorization: `Bearer ${AGENT_TOKEN}`, agentToken: AGENT_TOKEN });
    log.error('webhook', { appSecret: APP_SECRET, 'x-hub-signature-256': 'sha256=abcdef', nested: [{ config: { apiKey: API_KEY } }] });
    const all = lines.map((l) => l.line).join('\n');
    for (const secret of [API_KEY, AGENT_TOKEN, APP_SECRET, 'verysecretpassword0123', 'sha256=abcdef']) expect(all).not.toContain(secret);
    expect(records()[0]).toMatchObject({ headers: { 'API-KEY': '[redacted]' }, body: { session: { sdp: '[redacted]', sdp_type: 'answer' } } });
  });

  it('shortens phone numbers in the fields', () => {
    createLogger('coordinator').info('dialing', { to: '12025550143', peer: { number: '442079460958', name: 'Ada' } });
    expect(lines[0]!.line).not.toContain('12025550143');
    expect(lines[0]!.line).not.toContain('442079460958');
    expect(records()[0]).toMatchObject({ to: '12…0143', peer: { number: '44…0958', name: 'Ada' } });
  });

  it("does not let a field pass itself off as the record's level, logger or message", () => {
    createLogger('settings').warn('saved', { level: 'debug', logger: 'other', msg: 'fake', t: 0 });
    expect(records()[0]).toEqual({
      t: expect.any(String),
      level: 'warn',
      logger: 'settings',
      msg: 'saved',
      _level: 'debug',
      _logger: 'other',
      _msg: 'fake',
      _t: 0,
    });
  });

  it('never throws: not on odd fields, not when the sink fails', () => {
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    const log = createLogger('odd');
    expect(() => log.info('odd fields', { cyclic, big: 10n, fn: () => 1, sym: Symbol('s') })).not.toThrow();
    expect(records()[0]).toMatchObject({ big: '10' });
    configureLogging({
      sink: () => {
        throw new Error('EPIPE');
      },
    });
    expect(() => log.error('into a closed pipe')).not.toThrow();
  });

  it('writes a line without fields when none are given', () => {
    createLogger('app').info('ready');
    expect(records()[0]).toEqual({ t: expect.any(String), level: 'info', logger: 'app', msg: 'ready' });
  });
});

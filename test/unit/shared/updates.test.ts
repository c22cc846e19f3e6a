// The update settings' rules (shared/updates.ts): which feed addresses may be used, and the status
// union as the renderer parses it.
import { describe, expect, it } from 'vitest';
import { english } from '../../../shared/i18n/text';
import { feedUrlProblem, updateSettingsSchema, updateStatusSchema } from '../../../shared/updates';
import { parseWith } from '../../../shared/validation';

describe('the update feed address', () => {
  it.each([
    '',
    'https://updates.example.com/softphone/',
    'https://updates.example.com:8443/softphone',
    'HTTPS://UPDATES.EXAMPLE.COM/',
    'http://127.0.0.1:8080/feed/',
    'http://127.8.9.10/',
    'http://localhost:5000/',
    'http://LOCALHOST/',
    'http://[::1]:9000/feed',
  ])('takes %j', (url) => {
    expect(feedUrlProblem(url)).toBeUndefined();
  });

  it.each([
    ['http://updates.example.com/', 'plain http:// would let anyone on the way replace the update'],
    ['http://127.0.0.1.nip.io/', 'plain http:// would let anyone on the way replace the update'],
    ['http://localhost.example.com/', 'plain http:// would let anyone on the way replace the update'],
    ['http://192.168.1.10/', 'plain http:// would let anyone on the way replace the update'],
    ['ftp://updates.example.com/', 'must be an https:// address'],
    ['file:///srv/feed/', 'must be an https:// address'],
    ['updates.example.com/feed', 'must be an https:// address'],
    ['https://', 'must be an https:// address'],
    ['https://admin:secret@updates.example.com/', 'must not contain a user name or password'],
    ['https://token@updates.example.com/', 'must not contain a user name or password'],
    ['https://updates.example.com/feed?channel=beta', 'must not have a query'],
    ['https://updates.example.com/feed#latest', 'must not have a query'],
  ])('refuses %j', (url, rule) => {
    const problem = feedUrlProblem(url);
    expect(problem).toBeDefined();
    expect(english(problem!)).toContain(rule);
  });

  it('trims the address, and names the field of a refusal', () => {
    expect(parseWith(updateSettingsSchema, { feedUrl: '  https://updates.example.com/  ', channel: 'beta' })).toEqual({ ok: true, value: { feedUrl: 'https://updates.example.com/', channel: 'beta' } });
    const refused = parseWith(updateSettingsSchema, { feedUrl: 'http://updates.example.com', channel: 'stable', extra: 1 });
    expect(refused.ok).toBe(false);
    if (!refused.ok) expect(refused.error).toMatchObject({ code: 'invalid_input', field: 'feedUrl' });
  });
});

describe('the update status', () => {
  it.each([
    { kind: 'off' },
    { kind: 'idle' },
    { kind: 'idle', checkedAt: 1_750_000_000_000 },
    { kind: 'checking' },
    { kind: 'available', version: '1.2.0' },
    { kind: 'downloading', version: '1.2.0', percent: 42 },
    { kind: 'ready', version: '1.2.0-beta.1' },
    { kind: 'error', message: 'The update feed answered HTTP 500', at: 1_750_000_000_000 },
    { kind: 'unsupported', reason: 'runs from source' },
  ])('reads %j', (status) => {
    expect(parseWith(updateStatusSchema, status)).toEqual({ ok: true, value: status });
  });

  it.each([
    [{ kind: 'installing' }, 'kind'],
    [{ kind: 'ready' }, 'version'],
    [{ kind: 'downloading', version: '1.2.0', percent: 140 }, 'percent'],
    [{ kind: 'off', version: '1.2.0' }, '(root)'],
  ])('refuses %j, naming %s', (status, field) => {
    const parsed = parseWith(updateStatusSchema, status);
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.error.field).toBe(field);
  });
});

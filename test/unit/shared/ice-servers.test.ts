// The network a call's media takes (shared/ice-servers.ts): the URL grammar of RFC 7064 / 7065 that
// the Network section, `--ice-servers` and the relay's TURN URLs share, the schemas that refuse a
// bad server naming the field and the rule, and the saved settings as RTCIceServers.
import { describe, expect, it } from 'vitest';
import {
  describeIceUrl,
  ICE_URL_RULE,
  iceConfigSchema,
  iceServerSchema,
  iceServersFromSettings,
  iceServersSchema,
  iceServerUrls,
  iceTransportPolicySchema,
  iceUrlKind,
  isTurnUrl,
  MAX_ICE_SERVERS,
  networkSettingsInputSchema,
  storedNetworkSchema,
} from '../../../shared/ice-servers';
import { parseWith } from '../../../shared/validation';

function refusal(schema: Parameters<typeof parseWith>[0], input: unknown): { field: string | undefined; message: string } {
  const result = parseWith(schema, input);
  if (result.ok) throw new Error(`expected a refusal of ${JSON.stringify(input)}`);
  expect(result.error.code).toBe('invalid_input');
  return { field: result.error.field, message: result.error.message };
}

const servers = (n: number) => Array.from({ length: n }, (_, i) => `stun:stun${i}.example.com:3478`);

describe('iceUrlKind: stun:/stuns: (RFC 7064) and turn:/turns: (RFC 7065)', () => {
  it.each([
    ['stun:stun.l.google.com:19302', 'stun'],
    ['stun:stun.example.com', 'stun'],
    ['stuns:stun.example.com:5349', 'stun'],
    ['stun:198.51.100.7', 'stun'],
    ['stun:[2001:db8::1]:3478', 'stun'],
    ['stun:localhost', 'stun'],
    ['turn:turn.example.com', 'turn'],
    ['turn:turn.example.com:3478', 'turn'],
    ['turn:turn.example.com:3478?transport=udp', 'turn'],
    // protocol.md: where outbound UDP is blocked, TURN over TCP or TLS on 443 is the way out.
    ['turn:turn.example.com:443?transport=tcp', 'turn'],
    ['turns:turn.example.com:443', 'turn'],
    ['turns:turn.example.com:443?transport=tcp', 'turn'],
    ['turn:127.0.0.1:3478?transport=udp', 'turn'],
    ['turns:[::1]:5349', 'turn'],
    ['turn:t.example.com:1', 'turn'],
    ['turn:t.example.com:65535', 'turn'],
  ])('%s is a %s URL', (url, kind) => {
    expect(iceUrlKind(url)).toBe(kind);
    expect(isTurnUrl(url)).toBe(kind === 'turn');
  });

  it.each([
    // STUN has no transport parameter.
    'stun:stun.example.com:3478?transport=udp',
    'stuns:stun.example.com?transport=tcp',
    'turn:turn.example.com:3478?transport=sctp',
    'turn:turn.example.com:3478?transport=',
    'turn:turn.example.com:3478?proto=tcp',
    'turn:turn.example.com:0',
    'turn:turn.example.com:65536',
    'stun:stun.example.com:99999',
    'turn:turn.example.com:port',
    'turn://turn.example.com:3478',
    'stun://stun.example.com',
    'TURN:turn.example.com',
    'turn:',
    'stun:',
    'turn:turn.example.com/path',
    'turn:alice:hunter2@turn.example.com',
    'turn:[not-ipv6]:3478',
    'turn:[12345]:3478',
    'turn:-bad-.example.com',
    'turn:turn..example.com',
    'turn:turn_example.com',
    ` stun:stun.example.com`,
    'https://turn.example.com',
    'sip:turn.example.com',
    '',
  ])('%j is no ICE server URL', (url) => {
    expect(iceUrlKind(url)).toBeUndefined();
    expect(isTurnUrl(url)).toBe(false);
  });

  it('quotes a refused URL, shortened, but never one that carries a user name or password', () => {
    expect(describeIceUrl('stun:x')).toBe('"stun:x"');
    expect(describeIceUrl('turn:alice:hunter2@turn.example.com')).toBe('a URL with a user name or password in it');
    const long = `turn:${'a'.repeat(200)}.example.com`;
    expect(describeIceUrl(long)).toBe(`"${long.slice(0, 80)}…"`);
  });
});

describe('iceServerSchema: one RTCIceServer of --ice-servers', () => {
  it.each([
    [{ urls: 'stun:stun.example.com:3478' }],
    [{ urls: ['stun:a.example.com', 'stuns:b.example.com'] }],
    [{ urls: 'turn:turn.example.com:443?transport=tcp', username: 'agent', credential: 's3cret' }],
    [{ urls: ['stun:a.example.com', 'turns:turn.example.com:443'], username: 'agent', credential: 's3cret' }],
    // A STUN server may carry credentials; the browser ignores them.
    [{ urls: 'stun:a.example.com', username: 'u', credential: 'p' }],
    [{ urls: servers(MAX_ICE_SERVERS) }],
  ])('accepts %j', (server) => {
    expect(parseWith(iceServerSchema, server)).toEqual({ ok: true, value: server });
  });

  it('trims the URLs it is given', () => {
    expect(parseWith(iceServerSchema, { urls: ' stun:stun.example.com ' })).toEqual({ ok: true, value: { urls: 'stun:stun.example.com' } });
    expect(parseWith(iceServerSchema, { urls: [' turn:t.example.com\n'], username: 'u', credential: 'p' })).toEqual({
      ok: true,
      value: { urls: ['turn:t.example.com'], username: 'u', credential: 'p' },
    });
  });

  it.each<[unknown, string, string?]>([
    [{ urls: 'turn:turn.example.com' }, 'credential', 'a TURN server needs its username and credential'],
    [{ urls: 'turns:turn.example.com', username: 'agent' }, 'credential', 'a TURN server needs its username and credential'],
    [{ urls: ['stun:a.example.com', 'turn:t.example.com'], credential: 'p' }, 'credential', 'a TURN server needs its username and credential'],
    [{ urls: [] }, 'urls', 'must list at least one URL'],
    [{ urls: 3478 }, 'urls', 'must be a URL or a list of URLs'],
    [{}, 'urls', 'must be a URL or a list of URLs'],
    [{ urls: 'https://turn.example.com' }, 'urls', `${ICE_URL_RULE} (got "https://turn.example.com")`],
    [{ urls: ['stun:a.example.com', 'stun:b.example.com?transport=udp'] }, 'urls[1]', ICE_URL_RULE],
    [{ urls: 'stun:a.example.com', username: '' }, 'username', 'the username must not be empty'],
    [{ urls: 'stun:a.example.com', credential: 42 }, 'credential', 'the credential must be a string'],
    [{ urls: 'stun:a.example.com', username: 'u'.repeat(513) }, 'username', 'the username is too long (512 characters at most)'],
    [{ urls: 'stun:a.example.com', credentialType: 'oauth' }, '(root)', 'Unrecognized key: "credentialType"'],
    ['stun:a.example.com', '(root)'],
  ])('refuses %j, naming %s and the rule', (server, field, rule) => {
    const { field: named, message } = refusal(iceServerSchema, server);
    expect(named).toBe(field);
    if (rule !== undefined) expect(message).toContain(rule);
  });

  it(`refuses more than ${MAX_ICE_SERVERS} URLs in one server`, () => {
    expect(refusal(iceServerSchema, { urls: servers(MAX_ICE_SERVERS + 1) }).field).toBe('urls');
  });

  it('never repeats a password written into a URL', () => {
    const { field, message } = refusal(iceServerSchema, { urls: ['stun:a.example.com', 'turn:alice:hunter2@turn.example.com'], username: 'alice', credential: 'x' });
    expect(field).toBe('urls[1]');
    expect(message).toContain('(got a URL with a user name or password in it)');
    expect(message).not.toContain('hunter2');
  });
});

describe('iceServersSchema: the --ice-servers array', () => {
  it('accepts none, one or several servers', () => {
    expect(parseWith(iceServersSchema, [])).toEqual({ ok: true, value: [] });
    const list = [{ urls: 'stun:a.example.com' }, { urls: ['turn:t.example.com:3478?transport=udp', 'turns:t.example.com:443'], username: 'u', credential: 'p' }];
    expect(parseWith(iceServersSchema, list)).toEqual({ ok: true, value: list });
  });

  it('refuses what is not an array, naming the shape it wants', () => {
    for (const value of [{ urls: 'stun:a.example.com' }, 'stun:a.example.com', null]) {
      const { field, message } = refusal(iceServersSchema, value);
      expect(field).toBe('(root)');
      expect(message).toContain('must be a JSON array of ICE servers');
    }
  });

  it('names the server at fault by its place in the list', () => {
    expect(refusal(iceServersSchema, [{ urls: 'stun:a.example.com' }, { urls: 'turns:t.example.com' }])).toMatchObject({
      field: '[1].credential',
      message: expect.stringContaining('a TURN server needs its username and credential') as unknown,
    });
    expect(refusal(iceServersSchema, [{ urls: 'stun:ok.example.com' }, { urls: ['stun:ok.example.com', 'bad'] }]).field).toBe('[1].urls[1]');
  });

  it(`refuses more than ${MAX_ICE_SERVERS} servers: each costs gathering time on every call`, () => {
    const many = servers(MAX_ICE_SERVERS + 1).map((urls) => ({ urls }));
    expect(refusal(iceServersSchema, many)).toEqual({ field: '(root)', message: `(root): must list at most ${MAX_ICE_SERVERS} servers` });
    expect(parseWith(iceServersSchema, many.slice(1)).ok).toBe(true);
  });
});

describe('iceTransportPolicySchema', () => {
  it('takes all or relay, and nothing else', () => {
    expect(parseWith(iceTransportPolicySchema, 'all')).toEqual({ ok: true, value: 'all' });
    expect(parseWith(iceTransportPolicySchema, 'relay')).toEqual({ ok: true, value: 'relay' });
    for (const value of ['none', 'RELAY', '', 1, undefined]) expect(refusal(iceTransportPolicySchema, value).message).toBe('(root): must be all or relay');
  });
});

describe('networkSettingsInputSchema: what Settings → Network submits', () => {
  it('accepts an empty section, and a full one with blanks for what stays as it is', () => {
    expect(parseWith(networkSettingsInputSchema, { servers: [], relayOnly: false })).toEqual({ ok: true, value: { servers: [], relayOnly: false } });
    const full = { servers: ['stun:stun.example.com', 'turn:turn.example.com:443?transport=tcp'], turnUsername: 'agent-7', turnPassword: 'pa ss', relayOnly: true };
    expect(parseWith(networkSettingsInputSchema, full)).toEqual({ ok: true, value: full });
    expect(parseWith(networkSettingsInputSchema, { ...full, turnUsername: '', turnPassword: '' }).ok).toBe(true);
    expect(parseWith(networkSettingsInputSchema, { servers: [' stun:stun.example.com '], relayOnly: false })).toEqual({
      ok: true,
      value: { servers: ['stun:stun.example.com'], relayOnly: false },
    });
  });

  it.each<[unknown, string, string?]>([
    [{ servers: 'stun:stun.example.com', relayOnly: false }, 'servers', 'must be a list of server URLs'],
    [{ relayOnly: false }, 'servers', 'must be a list of server URLs'],
    [{ servers: ['stun:ok.example.com', 'turn:t.example.com?transport=quic'], relayOnly: false }, 'servers[1]', `${ICE_URL_RULE} (got "turn:t.example.com?transport=quic")`],
    [{ servers: servers(MAX_ICE_SERVERS + 1), relayOnly: false }, 'servers', `must list at most ${MAX_ICE_SERVERS} servers`],
    [{ servers: [] }, 'relayOnly', 'must be true or false'],
    [{ servers: [], relayOnly: 'yes' }, 'relayOnly', 'must be true or false'],
    [{ servers: [], relayOnly: false, turnPassword: 'p'.repeat(513) }, 'turnPassword', 'the TURN password is too long (512 characters at most)'],
    [{ servers: [], relayOnly: false, turnUsername: 'u'.repeat(513) }, 'turnUsername', 'the TURN username is too long (512 characters at most)'],
    [{ servers: [], relayOnly: false, turnUsername: 7 }, 'turnUsername'],
    [{ servers: [], relayOnly: false, iceTransportPolicy: 'relay' }, '(root)', 'Unrecognized key: "iceTransportPolicy"'],
  ])('refuses %j, naming %s and the rule', (input, field, rule) => {
    const { field: named, message } = refusal(networkSettingsInputSchema, input);
    expect(named).toBe(field);
    if (rule !== undefined) expect(message).toContain(rule);
  });

  it('never quotes the password it refuses', () => {
    const password = `hunter2-${'x'.repeat(600)}`;
    expect(refusal(networkSettingsInputSchema, { servers: [], relayOnly: false, turnPassword: password }).message).not.toContain('hunter2');
  });
});

describe('storedNetworkSchema: network.json', () => {
  it('holds no password, and refuses a file with a URL it could not use', () => {
    expect(parseWith(storedNetworkSchema, { servers: ['turn:t.example.com'], turnUsername: 'u', relayOnly: true }).ok).toBe(true);
    expect(refusal(storedNetworkSchema, { servers: ['http://t.example.com'], relayOnly: true }).field).toBe('servers[0]');
    expect(refusal(storedNetworkSchema, { servers: [] }).field).toBe('relayOnly');
  });
});

describe('iceConfigSchema: the answer of getIceConfig', () => {
  it('accepts servers, a policy and an optional expiry', () => {
    const config = { iceServers: [{ urls: ['turn:t.example.com'], username: '1700000000:alice', credential: 'c2VjcmV0' }], iceTransportPolicy: 'relay', expiresAt: 1_700_000_000_000 };
    expect(parseWith(iceConfigSchema, config)).toEqual({ ok: true, value: config });
    expect(parseWith(iceConfigSchema, { iceServers: [], iceTransportPolicy: 'all' }).ok).toBe(true);
  });

  it.each([
    [{ iceServers: [], iceTransportPolicy: 'none' }, 'iceTransportPolicy'],
    [{ iceServers: [], iceTransportPolicy: 'all', expiresAt: -1 }, 'expiresAt'],
    [{ iceServers: [], iceTransportPolicy: 'all', expiresAt: 1.5 }, 'expiresAt'],
    [{ iceServers: [{ urls: 'turn:t.example.com' }], iceTransportPolicy: 'all' }, 'iceServers[0].credential'],
    [{ iceTransportPolicy: 'all' }, 'iceServers'],
    [{ iceServers: [], iceTransportPolicy: 'all', iceCandidatePoolSize: 4 }, '(root)'],
  ])('refuses %j, naming %s', (config, field) => {
    expect(refusal(iceConfigSchema, config).field).toBe(field);
  });
});

describe('iceServersFromSettings', () => {
  const STUN = ['stun:a.example.com:3478', 'stun:b.example.com'];
  const TURN = ['turn:t.example.com:3478?transport=udp', 'turns:t.example.com:443?transport=tcp'];

  it('groups the STUN URLs in one server and the TURN URLs with the TURN credentials in another, in the order given', () => {
    const stored = { servers: [TURN[0]!, STUN[0]!, TURN[1]!, STUN[1]!], turnUsername: 'agent-7', relayOnly: true };
    expect(iceServersFromSettings(stored, 'pw-1')).toEqual([
      { urls: STUN },
      { urls: TURN, username: 'agent-7', credential: 'pw-1' },
    ]);
  });

  it('leaves out the TURN servers while their username or password is missing', () => {
    expect(iceServersFromSettings({ servers: [...STUN, ...TURN], turnUsername: 'agent-7', relayOnly: false }, undefined)).toEqual([{ urls: STUN }]);
    expect(iceServersFromSettings({ servers: [...STUN, ...TURN], relayOnly: false }, 'pw-1')).toEqual([{ urls: STUN }]);
  });

  it('gives TURN alone, or nothing, when that is all there is', () => {
    expect(iceServersFromSettings({ servers: TURN, turnUsername: 'u', relayOnly: true }, 'p')).toEqual([{ urls: TURN, username: 'u', credential: 'p' }]);
    expect(iceServersFromSettings({ servers: [], relayOnly: false }, 'p')).toEqual([]);
  });

  it('builds servers the iceServers schema accepts', () => {
    const built = iceServersFromSettings({ servers: [...STUN, ...TURN], turnUsername: 'u', relayOnly: true }, 'p');
    expect(parseWith(iceServersSchema, built)).toEqual({ ok: true, value: built });
    expect(built.flatMap(iceServerUrls)).toEqual([...STUN, ...TURN]);
  });

  it('lists the URLs of a server given as one URL or several', () => {
    expect(iceServerUrls({ urls: 'stun:a.example.com' })).toEqual(['stun:a.example.com']);
    expect(iceServerUrls({ urls: STUN })).toEqual(STUN);
  });
});

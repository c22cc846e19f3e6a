import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { configureLogging } from '../../../shared/log';
import { AgentDirectory, hashAgentToken, legacyAgents } from '../../../relay/agent-directory';
import { addAgentToFile, parseAgentsFile, readAgentsFile } from '../../../relay/agents-file';
import { startRelay, type RelayServer } from '../../../relay/server';
import { getMe, team } from './agent-fixtures';
import { openSse } from './sse-test-client';
import { APP_SECRET } from './webhook-fixtures';

configureLogging({ level: 'error' });

const root = resolve(import.meta.dirname, '../../..');
let dir: string;
const relays: RelayServer[] = [];

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'relay-agents-'));
});
afterEach(async () => {
  await Promise.all(relays.splice(0).map((r) => r.close()));
  await rm(dir, { recursive: true, force: true });
});

describe('agents file', () => {
  it('reads agents with hashed tokens', () => {
    const hash = hashAgentToken('secret-token-1');
    expect(parseAgentsFile('agents.json', JSON.stringify({ agents: [{ id: 'alice', name: 'Alice Agent', tokenSha256: hash.toUpperCase() }] }))).toEqual({
      ok: true,
      value: [{ id: 'alice', name: 'Alice Agent', tokenSha256: hash }],
    });
  });

  it.each([
    ['not JSON', '{agents', 'agents.json is not valid JSON'],
    ['no list', '{}', 'agents:'],
    ['a bad id', JSON.stringify({ agents: [{ id: 'al ice', name: 'A', tokenSha256: 'a'.repeat(64) }] }), 'agents[0].id'],
    ['a plain token instead of a hash', JSON.stringify({ agents: [{ id: 'alice', name: 'A', tokenSha256: 'my-token' }] }), 'agents[0].tokenSha256'],
    ['an empty name', JSON.stringify({ agents: [{ id: 'alice', name: ' ', tokenSha256: 'a'.repeat(64) }] }), 'agents[0].name'],
    [
      'a repeated id',
      JSON.stringify({ agents: [{ id: 'alice', name: 'A', tokenSha256: 'a'.repeat(64) }, { id: 'alice', name: 'B', tokenSha256: 'b'.repeat(64) }] }),
      'agents[1].id: "alice" is listed twice',
    ],
    [
      'a shared token',
      JSON.stringify({ agents: [{ id: 'alice', name: 'A', tokenSha256: 'a'.repeat(64) }, { id: 'bob', name: 'B', tokenSha256: 'A'.repeat(64) }] }),
      'agents[1].tokenSha256: is the same token as another agent',
    ],
  ])('refuses %s, naming the field', (_, text, expected) => {
    const parsed = parseAgentsFile('agents.json', text);
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.error.message).toContain(expected);
  });

  it('reports a missing file', async () => {
    const read = await readAgentsFile(join(dir, 'missing.json'));
    expect(read).toMatchObject({ ok: false, error: { code: 'invalid_input' } });
    if (!read.ok) expect(read.error.message).toContain('no such file');
  });

  it('adds agents with fresh tokens, stores only their hashes, mode 0600, and refuses a repeated id', async () => {
    const path = join(dir, 'agents.json');
    const alice = await addAgentToFile(path, 'alice', 'Alice Agent');
    const bob = await addAgentToFile(path, 'bob', 'Bob Agent');
    if (!alice.ok || !bob.ok) throw new Error('adding failed');
    expect(alice.value.token).not.toBe(bob.value.token);
    expect(alice.value.token.length).toBeGreaterThanOrEqual(40);
    const text = await readFile(path, 'utf8');
    expect(text).not.toContain(alice.value.token);
    expect(JSON.parse(text)).toEqual({
      agents: [
        { id: 'alice', name: 'Alice Agent', tokenSha256: createHash('sha256').update(alice.value.token).digest('hex') },
        { id: 'bob', name: 'Bob Agent', tokenSha256: createHash('sha256').update(bob.value.token).digest('hex') },
      ],
    });
    expect((await stat(path)).mode & 0o777).toBe(0o600);
    expect(await addAgentToFile(path, 'alice', 'Again')).toMatchObject({ ok: false, error: { field: '--id' } });
    expect(await addAgentToFile(path, 'bad id', 'X')).toMatchObject({ ok: false, error: { field: '--id' } });
  });
});

describe('agent directory', () => {
  const directory = new AgentDirectory([...team('alice', 'bob').agents, ...legacyAgents(['legacy-token-1', 'legacy-token-2'])]);

  it('finds the agent of a bearer token, and nobody for anything else', () => {
    expect(directory.authenticate('Bearer token-alice-0123456789')).toEqual({ id: 'alice', name: 'Alice Agent', role: 'agent' });
    expect(directory.authenticate('bearer   token-bob-0123456789 ')).toEqual({ id: 'bob', name: 'Bob Agent', role: 'agent' });
    expect(directory.authenticate('Bearer legacy-token-2')).toEqual({ id: 'agent-2', name: 'Agent 2', role: 'agent' });
    for (const header of [undefined, '', 'Bearer', 'Bearer ', 'Basic token-alice-0123456789', 'token-alice-0123456789', 'Bearer token-alice-012345678', 'Bearer token-alice-0123456789x', `Bearer ${hashAgentToken('token-alice-0123456789')}`]) {
      expect(directory.authenticate(header), String(header)).toBeUndefined();
    }
  });

  it('refuses a configuration that lists an id twice', () => {
    expect(() => new AgentDirectory([...team('alice').agents, ...team('alice').agents])).toThrow(/alice/);
  });

  it('reads a hash in either case; of two agents given one token, the first listed signs in', () => {
    const hash = hashAgentToken('shared-token-0123456789');
    const shared = new AgentDirectory([
      { id: 'first', name: 'First', tokenSha256: hash.toUpperCase() },
      { id: 'second', name: 'Second', tokenSha256: hash },
    ]);
    expect(shared.authenticate('Bearer shared-token-0123456789')?.id).toBe('first');
    expect(shared.size).toBe(2);
  });

  it('finds each of 10 000 agents by its own token after a reload', () => {
    const many = Array.from({ length: 10_000 }, (_, i) => ({ id: `a${i}`, name: `Agent ${i}`, tokenSha256: hashAgentToken(`token-${i}-0123456789`) }));
    const big = new AgentDirectory([]);
    expect(big.authenticate('Bearer token-7-0123456789')).toBeUndefined();
    big.replace(many);
    for (const i of [0, 1, 4_999, 9_999]) expect(big.authenticate(`Bearer token-${i}-0123456789`)?.id).toBe(`a${i}`);
    big.replace(many.slice(0, 10));
    expect(big.authenticate('Bearer token-9999-0123456789')).toBeUndefined();
  });
});

describe('relay: agents', () => {
  it('answers /me for agents from the file and for legacy tokens; 401 with an error code otherwise', async () => {
    const { agents, tokens } = team('alice');
    const relay = await startRelay({ port: 0, appSecret: APP_SECRET, agents, agentTokens: ['legacy-token-1-0123456789abcdef0123'] });
    relays.push(relay);
    expect(await getMe(relay.url, tokens.alice)).toEqual({ status: 200, body: { agentId: 'alice', name: 'Alice Agent', role: 'agent' } });
    expect(await getMe(relay.url, 'legacy-token-1-0123456789abcdef0123')).toEqual({ status: 200, body: { agentId: 'agent-1', name: 'Agent 1', role: 'agent' } });
    const refused = await getMe(relay.url, 'nobody-token-123');
    expect(refused.status).toBe(401);
    expect(refused.body).toMatchObject({ error: { code: 'unauthorized' } });
    expect((await getMe(relay.url, undefined)).status).toBe(401);
    const sse = await openSse(relay.url, { token: 'nobody-token-123' });
    expect(sse.status).toBe(401);
    expect(JSON.parse(sse.body)).toMatchObject({ error: { code: 'unauthorized' } });
  });

  it('takes a new agents list while running', async () => {
    const first = team('alice');
    const relay = await startRelay({ port: 0, appSecret: APP_SECRET, agents: first.agents });
    relays.push(relay);
    const next = team('bob');
    relay.setAgents(next.agents);
    expect((await getMe(relay.url, next.tokens.bob)).status).toBe(200);
    expect((await getMe(relay.url, first.tokens.alice)).status).toBe(401);
  });

  it('add-agent prints the token once; a relay started with the file knows the agent by it', async () => {
    const path = join(dir, 'agents.json');
    const added = await runCli(['add-agent', '--agents', path, '--id', 'alice', '--name', 'Alice Agent']);
    expect(added.code).toBe(0);
    const token = /^token: (\S+)$/m.exec(added.stdout)?.[1];
    expect(token).toBeDefined();
    expect(added.stdout.split(token!).length - 1).toBe(1);
    expect(await readFile(path, 'utf8')).not.toContain(token!);

    const again = await runCli(['add-agent', '--agents', path, '--id', 'alice']);
    expect(again.code).toBe(2);
    expect(again.stderr.trim().split('\n')).toHaveLength(1);
    expect(again.stderr).toContain('--id');

    const read = await readAgentsFile(path);
    if (!read.ok) throw new Error(read.error.message);
    const relay = await startRelay({ port: 0, appSecret: APP_SECRET, agents: read.value });
    relays.push(relay);
    expect(await getMe(relay.url, token)).toEqual({ status: 200, body: { agentId: 'alice', name: 'Alice Agent', role: 'agent' } });
  });

  it('add-agent --supervisor writes the role, which the relay reads; a file without roles makes agents, and an unknown role is refused naming its field', async () => {
    const path = join(dir, 'agents.json');
    const supervisor = await runCli(['add-agent', '--agents', path, '--id', 'sam', '--name', 'Sam Supervisor', '--supervisor']);
    expect(supervisor.code).toBe(0);
    expect(supervisor.stdout).toContain(`added supervisor "sam" (Sam Supervisor) to ${path}`);
    const agent = await runCli(['add-agent', '--agents', path, '--id', 'alice']);
    expect(agent.code).toBe(0);
    expect(agent.stdout).toContain(`added agent "alice" (alice) to ${path}`);
    const file = JSON.parse(await readFile(path, 'utf8')) as { agents: Record<string, unknown>[] };
    expect(file.agents.map((a) => [a.id, a.role])).toEqual([
      ['sam', 'supervisor'],
      ['alice', undefined],
    ]);
    expect(file.agents[1]).not.toHaveProperty('role');

    const read = await readAgentsFile(path);
    if (!read.ok) throw new Error(read.error.message);
    const relay = await startRelay({ port: 0, appSecret: APP_SECRET, agents: read.value });
    relays.push(relay);
    const token = /^token: (\S+)$/m.exec(supervisor.stdout)![1]!;
    expect(await getMe(relay.url, token)).toEqual({ status: 200, body: { agentId: 'sam', name: 'Sam Supervisor', role: 'supervisor' } });

    const hash = hashAgentToken('token-x-0123456789');
    expect(parseAgentsFile('agents.json', JSON.stringify({ agents: [{ id: 'a', name: 'A', tokenSha256: hash, role: 'agent' }] }))).toEqual({
      ok: true,
      value: [{ id: 'a', name: 'A', tokenSha256: hash, role: 'agent' }],
    });
    expect(parseAgentsFile('agents.json', JSON.stringify({ agents: [{ id: 'a', name: 'A', tokenSha256: hash, role: 'boss' }] }))).toMatchObject({
      ok: false,
      error: { message: 'agents.json: agents[0].role: must be one of agent, supervisor', field: 'agents[0].role' },
    });
  });

  it.each([
    [['add-agent', '--id', 'alice'], '--agents'],
    [['add-agent', '--agents', 'x.json'], '--id'],
    [['add-agent', '--agents', 'x.json', '--id', 'a b'], '--id'],
    [['add-agent', '--agents', 'x.json', '--id', 'alice', '--colour'], '--colour'],
  ])('add-agent names the bad flag and exits 2: %j', async (args, flag) => {
    const run = await runCli(args);
    expect(run.code).toBe(2);
    expect(run.stderr.trim().split('\n')).toHaveLength(1);
    expect(run.stderr).toContain(flag);
  });

  it('refuses to start with a broken agents file, naming --agents, exit 2', async () => {
    const path = join(dir, 'broken.json');
    await writeFile(path, JSON.stringify({ agents: [{ id: 'alice', name: 'A', tokenSha256: 'plain-token' }] }));
    const run = await runCli(['--app-secret', 'app-secret-1', '--agents', path, '--port', '0']);
    expect(run.code).toBe(2);
    expect(run.stderr.trim().split('\n')).toHaveLength(1);
    expect(run.stderr).toMatch(/^relay: --agents: .*agents\[0\]\.tokenSha256/);
  });
});

/** `npm run relay` in the checkout; a relay (not add-agent) keeps its files in the test's folder. */
function runCli(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const command = args[0] === 'add-agent' ? args : [...args, '--data-dir', join(dir, 'relay-data')];
  return new Promise((done) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'relay/cli.ts', ...command], {
      cwd: root,
      env: Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('RELAY_'))),
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('exit', (code) => done({ code, stdout, stderr }));
  });
}

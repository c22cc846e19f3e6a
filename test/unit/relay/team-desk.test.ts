// The team's desk at the relay (relay/REFERENCE.md "Team settings", "Presence"): each agent's role,
// the team's settings and their `team` event, and breaks and after-call work as presence, on one
// memory relay and on two relays sharing Redis.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { configureLogging } from '../../../shared/log';
import { DEFAULT_TEAM_SETTINGS, type TeamSettings } from '../../../shared/team-settings';
import { startRelay, type RelayOptions, type RelayServer } from '../../../relay/server';
import { TeamSettingsSource } from '../../../relay/team-settings-source';
import { startRedis, uniquePrefix, type RedisHandle } from '../../support/redis-server';
import { eventKeys, hasMessage, putPresence, team } from './agent-fixtures';
import { openSse, type TestSseStream } from './sse-test-client';
import { APP_SECRET, inboundText, incomingCall, postWebhook } from './webhook-fixtures';

configureLogging({ level: 'error' });

const { agents: plainAgents, tokens } = team('alice', 'bob', 'carol');
/** carol is the team's supervisor. */
const agents = plainAgents.map((agent) => (agent.id === 'carol' ? { ...agent, role: 'supervisor' as const } : agent));
const relays: RelayServer[] = [];
const streams: TestSseStream[] = [];

afterEach(async () => {
  for (const s of streams.splice(0)) s.close();
  await Promise.all(relays.splice(0).map((r) => r.close()));
});

async function relayWith(options: Partial<RelayOptions> = {}): Promise<RelayServer> {
  const relay = await startRelay({ port: 0, appSecret: APP_SECRET, agents, heartbeatMs: 60_000, ...options });
  relays.push(relay);
  return relay;
}

async function connect(relay: RelayServer, agentId: string, lastEventId?: string): Promise<TestSseStream> {
  const stream = await openSse(relay.url, { token: tokens[agentId], ...(lastEventId !== undefined ? { lastEventId } : {}) });
  expect(stream.status).toBe(200);
  streams.push(stream);
  return stream;
}

async function ask(relay: RelayServer, agentId: string | undefined, path: string, method = 'GET'): Promise<{ status: number; body: Record<string, unknown>; allow: string | null }> {
  const res = await fetch(`${relay.url}${path}`, { method, headers: agentId === undefined ? {} : { authorization: `Bearer ${tokens[agentId]}` } });
  return { status: res.status, body: (await res.json()) as Record<string, unknown>, allow: res.headers.get('allow') };
}

let markers = 0;
/** Posts a message and waits until every stream has it: whatever was written to them before has come by then. */
async function settle(relay: RelayServer, ...on: TestSseStream[]): Promise<string> {
  markers += 1;
  const id = `wamid.team-marker-${markers}`;
  expect((await postWebhook(relay.url, inboundText(id, 'marker'))).status).toBe(200);
  await Promise.all(on.map((s) => s.waitFor(hasMessage(id), `marker ${id}`)));
  return `message.inbound:${id}`;
}

const LUNCH_ONLY: TeamSettings = { ...DEFAULT_TEAM_SETTINGS, breakReasons: ['Lunch', 'Coffee'], afterCallWorkSeconds: 45 };
const teamEvent = (agentId: string, role: string, settings: TeamSettings) => ({ event: 'team', data: JSON.stringify({ agentId, role, settings }) });
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('the team settings and roles', () => {
  it('GET /team/settings answers the agent’s role and the settings in force; /me says the role', async () => {
    const relay = await relayWith();
    expect(await ask(relay, 'alice', '/team/settings')).toEqual({ status: 200, body: { agentId: 'alice', role: 'agent', settings: DEFAULT_TEAM_SETTINGS }, allow: null });
    expect((await ask(relay, 'carol', '/team/settings')).body).toEqual({ agentId: 'carol', role: 'supervisor', settings: DEFAULT_TEAM_SETTINGS });
    expect((await ask(relay, 'carol', '/me')).body).toEqual({ agentId: 'carol', name: 'Carol Agent', role: 'supervisor' });
    expect((await ask(relay, 'alice', '/me')).body).toEqual({ agentId: 'alice', name: 'Alice Agent', role: 'agent' });
    expect((await ask(relay, undefined, '/team/settings')).status).toBe(401);
    const put = await ask(relay, 'alice', '/team/settings', 'PUT');
    expect(put).toMatchObject({ status: 405, body: { error: { code: 'method_not_allowed' } }, allow: 'GET' });
    // The relay's own holder without the option; the caller's when given.
    expect(relay.teamSettings.current()).toEqual(DEFAULT_TEAM_SETTINGS);
    const settings = new TeamSettingsSource(LUNCH_ONLY);
    const withSettings = await relayWith({ teamSettings: settings });
    expect(withSettings.teamSettings).toBe(settings);
    expect((await ask(withSettings, 'bob', '/team/settings')).body).toEqual({ agentId: 'bob', role: 'agent', settings: LUNCH_ONLY });
    settings.replace(DEFAULT_TEAM_SETTINGS);
    expect((await ask(withSettings, 'bob', '/team/settings')).body).toEqual({ agentId: 'bob', role: 'agent', settings: DEFAULT_TEAM_SETTINGS });
  });

  it('a change of the settings reaches every open stream as `event: team` with its agent’s role, without an id: the resume point stays', async () => {
    const settings = new TeamSettingsSource();
    const relay = await relayWith({ teamSettings: settings });
    const alice = await connect(relay, 'alice');
    const carol = await connect(relay, 'carol');
    await settle(relay, alice, carol);
    const lastId = alice.ids.at(-1)!;

    expect(settings.replace(LUNCH_ONLY)).toBe(true);
    await alice.waitFor((s) => s.named.length === 1, 'alice’s team event');
    await carol.waitFor((s) => s.named.length === 1, 'carol’s team event');
    expect(alice.named).toEqual([teamEvent('alice', 'agent', LUNCH_ONLY)]);
    expect(carol.named).toEqual([teamEvent('carol', 'supervisor', LUNCH_ONLY)]);
    // The same settings again (a reload of an unchanged file) tell nobody.
    expect(settings.replace({ ...LUNCH_ONLY, breakReasons: ['Lunch', 'Coffee'] })).toBe(false);
    const marker = await settle(relay, alice, carol);
    expect(alice.named).toHaveLength(1);
    expect(eventKeys(alice).at(-1)).toBe(marker);

    // A stream resumed from the id before the team event misses nothing and gets nothing twice.
    const again = await connect(relay, 'alice', lastId);
    await again.waitFor((s) => s.envelopes.length === 1, 'the marker after the resume point');
    expect(eventKeys(again)).toEqual([marker]);
    expect(again.named).toEqual([]);
  });

  it('a reloaded agents file that changes an agent’s role tells that agent’s streams, and nobody else', async () => {
    const relay = await relayWith();
    const alice = await connect(relay, 'alice');
    const bob = await connect(relay, 'bob');
    const carol = await connect(relay, 'carol');
    relay.setAgents(agents.map((agent) => (agent.id === 'alice' ? { ...agent, role: 'supervisor' as const } : agent)));
    await alice.waitFor((s) => s.named.length === 1, 'alice’s team event');
    expect(alice.named).toEqual([teamEvent('alice', 'supervisor', DEFAULT_TEAM_SETTINGS)]);
    // Reloaded again unchanged, and carol's role written out as the default: no change for anyone.
    relay.setAgents(agents.map((agent) => (agent.id === 'alice' ? { ...agent, role: 'supervisor' as const } : agent)));
    await settle(relay, alice, bob, carol);
    expect(bob.named).toEqual([]);
    expect(carol.named).toEqual([]);
    expect(alice.named).toHaveLength(1);
    expect((await ask(relay, 'alice', '/me')).body).toMatchObject({ role: 'supervisor' });
    // carol back to an agent: the role left out of the file.
    relay.setAgents(agents.map((agent) => ({ id: agent.id, name: agent.name, tokenSha256: agent.tokenSha256 })));
    await carol.waitFor((s) => s.named.length === 1, 'carol’s team event');
    expect(carol.named).toEqual([teamEvent('carol', 'agent', DEFAULT_TEAM_SETTINGS)]);
    await alice.waitFor((s) => s.named.length === 2, 'alice’s second team event');
    expect(alice.named[1]).toEqual(teamEvent('alice', 'agent', DEFAULT_TEAM_SETTINGS));
    expect(bob.named).toEqual([]);
  });
});

describe('PUT /presence: breaks and after-call work', () => {
  const refused = (field: string, message: string) => ({ status: 400, body: { error: expect.objectContaining({ code: 'invalid_input', message, field }) } });

  it('a break takes one of the team’s break reasons; a reason comes with a break only', async () => {
    const settings = new TeamSettingsSource(LUNCH_ONLY);
    const relay = await relayWith({ teamSettings: settings });
    const { url } = relay;
    const missing = await putPresence(url, tokens.alice!, { status: 'break' });
    expect(missing).toEqual(refused('reason', 'reason: is required'));
    expect((missing.body as { error: { text: unknown } }).error.text).toEqual({ code: 'common.fieldRule', values: { field: 'reason', rule: { code: 'common.required' } } });
    const notTheTeams = refused('reason', "reason: must be one of the team's break reasons: Lunch, Coffee");
    expect(await putPresence(url, tokens.alice!, { status: 'break', reason: 'Short break' })).toEqual(notTheTeams);
    expect(await putPresence(url, tokens.alice!, { status: 'break', reason: 'lunch' })).toEqual(notTheTeams);
    expect(await putPresence(url, tokens.alice!, { status: 'break', reason: 7 })).toEqual(notTheTeams);
    for (const status of ['available', 'on_call', 'call_waiting', 'dnd', 'after_call_work']) {
      expect(await putPresence(url, tokens.alice!, { status, reason: 'Lunch' }), status).toEqual(refused('reason', 'reason: is given with a break only'));
    }
    expect(await putPresence(url, tokens.alice!, { status: 'break', reason: 'Coffee' })).toEqual({ status: 200, body: { agentId: 'alice', status: 'break', reason: 'Coffee', since: expect.any(Number) } });
    // The reasons in force are the ones the holder has now.
    settings.replace(DEFAULT_TEAM_SETTINGS);
    expect(await putPresence(url, tokens.alice!, { status: 'break', reason: 'Coffee' })).toEqual(
      refused('reason', "reason: must be one of the team's break reasons: Lunch, Short break, Meeting, Training"),
    );
    expect((await putPresence(url, tokens.alice!, { status: 'break', reason: 'Training' })).status).toBe(200);
  });

  it('after-call work takes the call it follows; another status ignores a call id', async () => {
    const relay = await relayWith();
    const { url } = relay;
    expect(await putPresence(url, tokens.bob!, { status: 'after_call_work', callId: 'wacid.acw1' })).toEqual({
      status: 200,
      body: { agentId: 'bob', status: 'after_call_work', since: expect.any(Number) },
    });
    for (const callId of ['', 'x'.repeat(513), 12]) {
      expect(await putPresence(url, tokens.bob!, { status: 'after_call_work', callId })).toEqual(refused('callId', 'callId: must be 1 to 512 characters'));
    }
    expect((await putPresence(url, tokens.bob!, { status: 'after_call_work', callId: 'x'.repeat(512) })).status).toBe(200);
    expect(await putPresence(url, tokens.bob!, { status: 'available', callId: 'wacid.acw1' })).toEqual({ status: 200, body: { agentId: 'bob', status: 'available', since: expect.any(Number) } });
    expect(await putPresence(url, tokens.bob!, { status: 'dnd', callId: '' })).toEqual({ status: 200, body: { agentId: 'bob', status: 'dnd', since: expect.any(Number) } });
  });

  it('says since when the agent is in its state: a refresh keeps it, a new state or reason starts it again', async () => {
    const relay = await relayWith();
    const { url } = relay;
    const sinceOf = async (body: unknown) => ((await putPresence(url, tokens.alice!, body)).body as { since: number }).since;
    const before = Date.now();
    const lunch = await sinceOf({ status: 'break', reason: 'Lunch' });
    expect(lunch).toBeGreaterThanOrEqual(before);
    await pause(5);
    expect(await sinceOf({ status: 'break', reason: 'Lunch' })).toBe(lunch);
    const meeting = await sinceOf({ status: 'break', reason: 'Meeting' });
    expect(meeting).toBeGreaterThan(lunch);
    await pause(5);
    const work = await sinceOf({ status: 'after_call_work', callId: 'wacid.s1' });
    expect(work).toBeGreaterThan(meeting);
    await pause(5);
    // The app's refresh of after-call work, with its call or without it, is the same state.
    expect(await sinceOf({ status: 'after_call_work', callId: 'wacid.s1' })).toBe(work);
    expect(await sinceOf({ status: 'after_call_work' })).toBe(work);
    const available = await sinceOf({ status: 'available' });
    expect(available).toBeGreaterThan(work);
  });

  it('GET /team shows a break with its reason, and since when each agent is in its reported state', async () => {
    const relay = await relayWith();
    const lunch = (await putPresence(relay.url, tokens.alice!, { status: 'break', reason: 'Lunch' })).body as { since: number };
    const work = (await putPresence(relay.url, tokens.bob!, { status: 'after_call_work', callId: 'wacid.t1' })).body as { since: number };
    const alice = await connect(relay, 'alice');
    expect(alice.status).toBe(200);
    expect(await ask(relay, 'carol', '/team')).toEqual({
      status: 200,
      allow: null,
      body: {
        agents: [
          { agentId: 'alice', name: 'Alice Agent', presence: 'break', reason: 'Lunch', since: lunch.since },
          { agentId: 'bob', name: 'Bob Agent', presence: 'after_call_work', since: work.since },
          { agentId: 'carol', name: 'Carol Agent', presence: 'offline', self: true },
        ],
      },
    });
  });

  it('never rings an agent on a break or in after-call work, and gives neither a voice_call head start', async () => {
    const relay = await relayWith();
    await putPresence(relay.url, tokens.alice!, { status: 'break', reason: 'Lunch' });
    await putPresence(relay.url, tokens.bob!, { status: 'after_call_work', callId: 'wacid.before' });
    const alice = await connect(relay, 'alice');
    const bob = await connect(relay, 'bob');
    const carol = await connect(relay, 'carol');
    // A voice_call of alice's: she is not free, so nobody waits for her and carol rings at once.
    await postWebhook(relay.url, incomingCall('wacid.r1', { cta_payload: JSON.stringify({ v: 1, agentId: 'alice' }) }));
    await postWebhook(relay.url, incomingCall('wacid.r2'));
    const marker = await settle(relay, alice, bob, carol);
    expect(eventKeys(carol)).toEqual(['call.incoming:wacid.r1', 'call.incoming:wacid.r2', marker]);
    expect(eventKeys(alice)).toEqual([marker]);
    expect(eventKeys(bob)).toEqual([marker]);
    // Back at the desk: the next call rings.
    await putPresence(relay.url, tokens.alice!, { status: 'available' });
    await postWebhook(relay.url, incomingCall('wacid.r3'));
    const second = await settle(relay, alice, bob);
    expect(eventKeys(alice)).toEqual([marker, 'call.incoming:wacid.r3', second]);
    expect(eventKeys(bob)).toEqual([marker, second]);
  });
});

describe('breaks across two relays on one Redis', () => {
  let redis: RedisHandle;
  let prefix: string;

  beforeAll(async () => {
    redis = await startRedis();
    prefix = uniquePrefix('relay-team-desk');
  });
  afterAll(async () => {
    await Promise.all(relays.splice(0).map((r) => r.close()));
    await redis.removeKeys(prefix);
    await redis.stop();
  });

  it('keeps since when the refresh reaches the other instance, and shows the break on both', async () => {
    const a = await relayWith({ redisUrl: redis.url, redisPrefix: prefix });
    const b = await relayWith({ redisUrl: redis.url, redisPrefix: prefix });
    const first = (await putPresence(a.url, tokens.alice!, { status: 'break', reason: 'Meeting' })).body as { since: number };
    await pause(5);
    expect(await putPresence(b.url, tokens.alice!, { status: 'break', reason: 'Meeting' })).toEqual({ status: 200, body: { agentId: 'alice', status: 'break', reason: 'Meeting', since: first.since } });
    const atA = ((await ask(a, 'bob', '/team')).body.agents as { agentId: string }[]).find((agent) => agent.agentId === 'alice');
    expect(atA).toEqual({ agentId: 'alice', name: 'Alice Agent', presence: 'break', reason: 'Meeting', since: first.since });
    const changed = (await putPresence(a.url, tokens.alice!, { status: 'available' })).body as { since: number };
    expect(changed.since).toBeGreaterThan(first.since);
  });
});

// Callback requests through the relay (relay/REFERENCE.md "Callback requests"): the service's
// automatic permission reply puts the customer on the team's list, a reject or an answered call of
// the team's to them takes them off, and "Call back" takes a request for one agent — on one memory
// relay, and on two relays sharing Redis, where both show the same list and the same take.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { callbackChangeOf } from '../../../relay/callback-requests';
import { startRelay, type RelayOptions, type RelayServer } from '../../../relay/server';
import { CALL_PERMISSION_MS, CALLBACKS_PATH, callbacksReplySchema, takeCallbackPath, type CallbackRequest } from '../../../shared/callbacks';
import type { RelayEnvelope, RelayEvent } from '../../../shared/events';
import { configureLogging } from '../../../shared/log';
import { wallboardSchema } from '../../../shared/wallboard';
import { startRedis, uniquePrefix, type RedisHandle } from '../../support/redis-server';
import { postAsAgent, team } from './agent-fixtures';
import { APP_SECRET, BUSINESS, CUSTOMER, answeredCall, postWebhook, unixSeconds } from './webhook-fixtures';

configureLogging({ level: 'error' });

const { agents, tokens } = team('alice', 'bob');
const THIRD = '447700900555';
const OTHER = '447700900456';
const HIDDEN = 'US.13491208655302741918';

// ---------------------------------------------------------------------------------------------
// What each event does to the list.

describe('what an event does to the callback list', () => {
  const T = 1_764_000_000_000;
  const reply = (permissionReply: NonNullable<Extract<RelayEvent, { type: 'message.inbound' }>['permissionReply']>, extra: Partial<Extract<RelayEvent, { type: 'message.inbound' }>> = {}): RelayEvent => ({
    type: 'message.inbound',
    messageId: 'wamid.reply',
    from: CUSTOMER,
    name: 'Ada Customer',
    timestamp: T,
    messageType: 'interactive',
    contextId: 'wacid.asked',
    permissionReply,
    ...extra,
  });
  const nobody = () => undefined;

  it('adds an automatic accept that names a call, with its expiry, or the service’s 7 days, or none when permanent', () => {
    expect(callbackChangeOf(reply({ response: 'accept', isPermanent: false, expiresAt: T + 3_600_000, source: 'automatic' }), nobody)).toEqual({
      kind: 'add',
      request: { id: 'wacid.asked', number: CUSTOMER, name: 'Ada Customer', requestedAt: T, expiresAt: T + 3_600_000, permanent: false },
    });
    expect(callbackChangeOf(reply({ response: 'accept', source: 'automatic' }), nobody)).toMatchObject({ request: { expiresAt: T + CALL_PERMISSION_MS, permanent: false } });
    const permanent = callbackChangeOf(reply({ response: 'accept', isPermanent: true, expiresAt: T + 1_000, source: 'automatic' }), nobody);
    expect(permanent).toEqual({ kind: 'add', request: { id: 'wacid.asked', number: CUSTOMER, name: 'Ada Customer', requestedAt: T, permanent: true } });
    const hidden = callbackChangeOf(reply({ response: 'accept', source: 'automatic' }, { from: undefined, fromUserId: HIDDEN, name: undefined }), nobody);
    expect(hidden).toEqual({ kind: 'add', request: { id: 'wacid.asked', userId: HIDDEN, requestedAt: T, expiresAt: T + CALL_PERMISSION_MS, permanent: false } });
  });

  it('adds nothing for an accept the customer gave, one that names no call, or one from nobody it can name', () => {
    expect(callbackChangeOf(reply({ response: 'accept', isPermanent: false, expiresAt: T + 1_000 }), nobody)).toBeUndefined();
    expect(callbackChangeOf(reply({ response: 'accept', source: 'user_action' }), nobody)).toBeUndefined();
    expect(callbackChangeOf(reply({ response: 'accept', source: 'automatic' }, { contextId: undefined }), nobody)).toBeUndefined();
    expect(callbackChangeOf(reply({ response: 'accept', source: 'automatic' }, { from: undefined }), nobody)).toBeUndefined();
    expect(callbackChangeOf(reply({ response: 'accept', source: 'automatic' }, { contextId: 'x'.repeat(513) }), nobody)).toBeUndefined();
    expect(callbackChangeOf({ type: 'message.inbound', messageId: 'wamid.t', from: CUSTOMER, timestamp: T, messageType: 'text', text: 'Call me', contextId: 'wacid.asked' }, nobody)).toBeUndefined();
  });

  it('drops the customer’s request on a reject, whoever sent it', () => {
    expect(callbackChangeOf(reply({ response: 'reject', source: 'automatic' }, { contextId: undefined }), nobody)).toEqual({ kind: 'drop', customer: { number: CUSTOMER }, why: 'withdrawn' });
    expect(callbackChangeOf(reply({ response: 'reject' }, { fromUserId: HIDDEN }), nobody)).toEqual({ kind: 'drop', customer: { number: CUSTOMER, userId: HIDDEN }, why: 'withdrawn' });
  });

  it('drops it when an outgoing call to the customer is answered: its status’s recipient, else what the relay knows of the call', () => {
    const status = (value: 'RINGING' | 'ACCEPTED' | 'REJECTED', recipient: { recipientId?: string; recipientUserId?: string } = {}): RelayEvent => ({ type: 'call.status', callId: 'wacid.out', status: value, timestamp: T, ...recipient });
    const known = (callId: string) => (callId === 'wacid.out' ? { number: OTHER } : undefined);
    expect(callbackChangeOf(status('ACCEPTED', { recipientId: `+${CUSTOMER}` }), nobody)).toEqual({ kind: 'drop', customer: { number: CUSTOMER }, why: 'answered' });
    expect(callbackChangeOf(status('ACCEPTED', { recipientUserId: HIDDEN }), known)).toEqual({ kind: 'drop', customer: { number: OTHER, userId: HIDDEN }, why: 'answered' });
    expect(callbackChangeOf(status('ACCEPTED'), known)).toEqual({ kind: 'drop', customer: { number: OTHER }, why: 'answered' });
    expect(callbackChangeOf({ type: 'call.answered', callId: 'wacid.out', sdp: 'v=0', timestamp: T }, known)).toEqual({ kind: 'drop', customer: { number: OTHER }, why: 'answered' });
    expect(callbackChangeOf(status('ACCEPTED'), nobody)).toBeUndefined();
    expect(callbackChangeOf(status('RINGING', { recipientId: CUSTOMER }), nobody)).toBeUndefined();
    expect(callbackChangeOf(status('REJECTED', { recipientId: CUSTOMER }), nobody)).toBeUndefined();
  });
});

// ---------------------------------------------------------------------------------------------
// Through a real relay.

/** The service's automatic permission reply about `callId` (protocol.md "Callback requests"), as plain JSON. */
function callbackRequestWebhook(
  callId: string,
  options: { messageId?: string; number?: string; userId?: string; name?: string; expiresAt?: number | string; permanent?: boolean; response?: 'accept' | 'reject'; source?: string; at?: number } = {},
): unknown {
  const at = options.at ?? Date.now();
  const number = options.number ?? CUSTOMER;
  const permanent = options.permanent ?? false;
  return {
    object: 'chatapp_business_account',
    entry: [
      {
        id: '102290129340398',
        changes: [
          {
            field: 'messages',
            value: {
              messaging_product: 'chatapp',
              metadata: { display_phone_number: BUSINESS, phone_number_id: '106540352242922' },
              contacts: [{ profile: { name: options.name ?? 'Ada Customer' }, ...(options.userId !== undefined ? { user_id: options.userId } : { wa_id: number }) }],
              messages: [
                {
                  ...(options.userId !== undefined ? { from_user_id: options.userId } : { from: number }),
                  id: options.messageId ?? `wamid.cb-${callId}-${Math.random().toString(36).slice(2)}`,
                  timestamp: unixSeconds(at),
                  type: 'interactive',
                  ...(options.response === 'reject' ? {} : { context: { id: callId } }),
                  interactive: {
                    type: 'call_permission_reply',
                    call_permission_reply: {
                      response: options.response ?? 'accept',
                      is_permanent: permanent,
                      ...(permanent || options.response === 'reject' ? {} : { expiration_timestamp: options.expiresAt ?? Math.floor((at + CALL_PERMISSION_MS) / 1000) }),
                      response_source: options.source ?? 'automatic',
                    },
                  },
                },
              ],
            },
          },
        ],
      },
    ],
  };
}

function outgoingStatus(callId: string, status: 'RINGING' | 'ACCEPTED', recipient: { recipient_id?: string; recipient_user_id?: string }): unknown {
  return { object: 'chatapp_business_account', entry: [{ id: '1', changes: [{ field: 'calls', value: { statuses: [{ id: callId, type: 'call', status, timestamp: unixSeconds(), ...recipient }] } }] }] };
}

async function ask(relay: RelayServer, agentId: string | undefined, path: string, method = 'GET'): Promise<{ status: number; body: Record<string, unknown>; allow: string | null }> {
  const res = await fetch(`${relay.url}${path}`, { method, headers: agentId === undefined ? {} : { authorization: `Bearer ${tokens[agentId]}` } });
  return { status: res.status, body: (await res.json()) as Record<string, unknown>, allow: res.headers.get('allow') };
}

async function listOf(relay: RelayServer, agentId = 'alice'): Promise<CallbackRequest[]> {
  const answer = await ask(relay, agentId, CALLBACKS_PATH);
  expect(answer.status).toBe(200);
  return callbacksReplySchema.parse(answer.body).callbacks;
}

/** Waits until the relay's list satisfies `check` (the list changes just after the event is stored). */
async function listUntil(relay: RelayServer, check: (list: CallbackRequest[]) => boolean, what: string): Promise<CallbackRequest[]> {
  const deadline = Date.now() + 5_000;
  for (;;) {
    const list = await listOf(relay);
    if (check(list)) return list;
    if (Date.now() > deadline) throw new Error(`the callback list never showed ${what}: ${JSON.stringify(list)}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
const ids = (list: CallbackRequest[]) => list.map((r) => r.id);

/** Resolves once the relay stored an event of this type for this call or message id. */
function storedEvent(relay: RelayServer, match: (event: RelayEvent) => boolean): Promise<RelayEnvelope> {
  return new Promise((resolve) => {
    const stop = relay.onEvent((envelope) => {
      if (!match(envelope.event)) return;
      stop();
      resolve(envelope);
    });
  });
}

const relays: RelayServer[] = [];
afterEach(async () => {
  await Promise.all(relays.splice(0).map((r) => r.close()));
});
async function relayWith(options: Partial<RelayOptions> = {}): Promise<RelayServer> {
  const relay = await startRelay({ port: 0, appSecret: APP_SECRET, agents, heartbeatMs: 60_000, ...options });
  relays.push(relay);
  return relay;
}

describe('callback requests through a relay', () => {
  it('lists the customer who asked, the oldest request first, with the permission’s expiry and the contact’s name', async () => {
    const relay = await relayWith();
    expect(await listOf(relay)).toEqual([]);
    const at = Math.floor(Date.now() / 1000) * 1000 - 60_000;
    const expiresAt = Math.floor((at + CALL_PERMISSION_MS) / 1000);
    expect((await postWebhook(relay.url, callbackRequestWebhook('wacid.ada-asked', { at, expiresAt: String(expiresAt) }))).status).toBe(200);
    expect((await postWebhook(relay.url, callbackRequestWebhook('wacid.hidden-asked', { userId: HIDDEN, name: 'Hidden Number', permanent: true }))).status).toBe(200);
    const list = await listUntil(relay, (l) => l.length === 2, 'both requests');
    expect(list).toEqual([
      { id: 'wacid.ada-asked', number: CUSTOMER, name: 'Ada Customer', requestedAt: at, expiresAt: expiresAt * 1000, permanent: false },
      { id: 'wacid.hidden-asked', userId: HIDDEN, name: 'Hidden Number', requestedAt: expect.any(Number) as number, permanent: true },
    ]);
    // Every agent of the team sees the same.
    expect(await listOf(relay, 'bob')).toEqual(list);
  });

  it('adds nothing for a grant the customer gave, nor for one whose permission already ran out', async () => {
    const relay = await relayWith();
    for (const body of [
      callbackRequestWebhook('wacid.by-hand', { source: 'user_action' }),
      callbackRequestWebhook('wacid.ran-out', { number: OTHER, expiresAt: Math.floor(Date.now() / 1000) - 1 }),
    ]) {
      const stored = storedEvent(relay, (e) => e.type === 'message.inbound');
      expect((await postWebhook(relay.url, body)).status).toBe(200);
      await stored;
    }
    // The list's changes are made in the order their events came: once a request posted after them is
    // listed, they would have been.
    expect((await postWebhook(relay.url, callbackRequestWebhook('wacid.marker', { number: '447700900999' }))).status).toBe(200);
    expect(ids(await listUntil(relay, (l) => l.length > 0, 'the marker'))).toEqual(['wacid.marker']);
  });

  it('keeps one request per customer, the newest; the same request again changes nothing', async () => {
    const relay = await relayWith();
    await postWebhook(relay.url, callbackRequestWebhook('wacid.first', { at: Date.now() - 120_000 }));
    await listUntil(relay, (l) => ids(l).includes('wacid.first'), 'the first request');
    await postWebhook(relay.url, callbackRequestWebhook('wacid.second', { at: Date.now() - 60_000 }));
    const [second] = await listUntil(relay, (l) => ids(l).join() === 'wacid.second', 'the second request alone');
    expect(second).toMatchObject({ id: 'wacid.second', number: CUSTOMER });
    // The service says it again (another message id, the same call): the list stays as it is, taken or not.
    expect((await postAsAgent(relay.url, tokens.alice!, takeCallbackPath('wacid.second'))).status).toBe(200);
    const again = storedEvent(relay, (e) => e.type === 'message.inbound');
    await postWebhook(relay.url, callbackRequestWebhook('wacid.second', { at: Date.now() }));
    await again;
    await postWebhook(relay.url, callbackRequestWebhook('wacid.marker-2', { number: OTHER }));
    const list = await listUntil(relay, (l) => ids(l).includes('wacid.marker-2'), 'the marker');
    expect(list[0]).toEqual({ ...second, takenBy: { agentId: 'alice', name: 'Alice Agent', at: expect.any(Number) as number } });
  });

  it('drops a customer who withdraws, and one the team called back and who answered', async () => {
    const relay = await relayWith();
    await postWebhook(relay.url, callbackRequestWebhook('wacid.withdraws'));
    await postWebhook(relay.url, callbackRequestWebhook('wacid.called-back', { number: OTHER }));
    await postWebhook(relay.url, callbackRequestWebhook('wacid.hidden', { userId: HIDDEN }));
    await listUntil(relay, (l) => l.length === 3, 'three requests');

    // The service withdraws the permission (4 unanswered business calls): a reject, no context.
    await postWebhook(relay.url, callbackRequestWebhook('', { response: 'reject' }));
    await listUntil(relay, (l) => ids(l).join() === 'wacid.called-back,wacid.hidden', 'the request withdrawn');

    // The team calls OTHER back: ringing, then answered (its status names the recipient with "+").
    await postWebhook(relay.url, outgoingStatus('wacid.out-1', 'RINGING', { recipient_id: `+${OTHER}` }));
    await postWebhook(relay.url, outgoingStatus('wacid.out-1', 'ACCEPTED', { recipient_id: `+${OTHER}` }));
    await listUntil(relay, (l) => ids(l).join() === 'wacid.hidden', 'the answered customer gone');

    // The customer without a number: the status names their user id on RINGING; the answer (the
    // service's connect) names nobody, and the relay knows whom it called.
    const ringing = storedEvent(relay, (e) => e.type === 'call.status' && e.callId === 'wacid.out-2');
    await postWebhook(relay.url, outgoingStatus('wacid.out-2', 'RINGING', { recipient_user_id: HIDDEN }));
    await ringing;
    await postWebhook(relay.url, answeredCall('wacid.out-2'));
    await listUntil(relay, (l) => l.length === 0, 'the list empty');
  });

  it('“Call back” takes a request for the first agent; the taker may take it again, a colleague is told who has it', async () => {
    const relay = await relayWith();
    await postWebhook(relay.url, callbackRequestWebhook('wacid.take-me'));
    const [listed] = await listUntil(relay, (l) => l.length === 1, 'the request');

    const taken = await postAsAgent(relay.url, tokens.alice!, takeCallbackPath('wacid.take-me'));
    expect(taken.status).toBe(200);
    const takenBy = { agentId: 'alice', name: 'Alice Agent', at: expect.any(Number) as number };
    expect(taken.body).toEqual({ callback: { ...listed, takenBy } });
    expect(await postAsAgent(relay.url, tokens.alice!, takeCallbackPath('wacid.take-me'))).toEqual(taken);

    const refused = await postAsAgent(relay.url, tokens.bob!, takeCallbackPath('wacid.take-me'));
    expect(refused).toEqual({ status: 409, body: { error: { code: 'taken', message: 'Taken by Alice Agent', agentId: 'alice', name: 'Alice Agent' } } });
    expect(await listOf(relay, 'bob')).toEqual([{ ...listed, takenBy }]);

    // The taker's name is the one the team knows them by now.
    relay.setAgents(agents.map((a) => (a.id === 'alice' ? { ...a, name: 'Alice Renamed' } : a)));
    expect((await postAsAgent(relay.url, tokens.bob!, takeCallbackPath('wacid.take-me'))).body).toEqual({
      error: { code: 'taken', message: 'Taken by Alice Renamed', agentId: 'alice', name: 'Alice Renamed' },
    });
    expect((await listOf(relay))[0]?.takenBy).toMatchObject({ agentId: 'alice', name: 'Alice Renamed' });

    expect(await postAsAgent(relay.url, tokens.bob!, takeCallbackPath('wacid.nobody-asked'))).toEqual({
      status: 404,
      body: { error: { code: 'not_found', message: 'no callback request wacid.nobody-asked' } },
    });
  });

  it('answers 401 without a token, 405 to another method, 400 to an id it cannot read', async () => {
    const relay = await relayWith();
    expect((await ask(relay, undefined, CALLBACKS_PATH)).status).toBe(401);
    expect((await ask(relay, undefined, takeCallbackPath('wacid.x'), 'POST')).status).toBe(401);
    expect(await ask(relay, 'alice', CALLBACKS_PATH, 'POST')).toMatchObject({ status: 405, body: { error: { code: 'method_not_allowed' } }, allow: 'GET' });
    expect(await ask(relay, 'alice', takeCallbackPath('wacid.x'))).toMatchObject({ status: 405, allow: 'POST' });
    expect(await ask(relay, 'alice', '/team/callbacks/%E0%A4%A/take', 'POST')).toEqual({
      status: 400,
      body: { error: { code: 'invalid_input', message: 'id: must be a URL-encoded id', field: 'id' } },
      allow: null,
    });
    expect((await ask(relay, 'alice', takeCallbackPath('x'.repeat(513)), 'POST')).body).toEqual({ error: { code: 'invalid_input', message: 'id: must be 1 to 512 characters', field: 'id' } });
  });

  it('puts the list on the wallboard, fresh at every ask', async () => {
    const relay = await relayWith();
    const board = async () => wallboardSchema.parse((await ask(relay, 'bob', '/team/wallboard')).body);
    expect(await board()).toMatchObject({ records: 'none', callbacks: [] });
    await postWebhook(relay.url, callbackRequestWebhook('wacid.on-board'));
    await listUntil(relay, (l) => l.length === 1, 'the request');
    expect((await board()).callbacks).toEqual(await listOf(relay));
    await postAsAgent(relay.url, tokens.alice!, takeCallbackPath('wacid.on-board'));
    expect((await board()).callbacks[0]?.takenBy).toMatchObject({ agentId: 'alice', name: 'Alice Agent' });
  });
});

describe('callback requests across two relays on one Redis', () => {
  let redis: RedisHandle;
  let prefix: string;
  beforeAll(async () => {
    redis = await startRedis();
  });
  afterAll(async () => {
    await redis.stop();
  });
  afterEach(async () => {
    await redis.removeKeys(prefix);
  });

  it('shows the same list on both; a take on one is seen, and refused to a colleague, on the other', async () => {
    prefix = uniquePrefix('callbacks');
    const a = await relayWith({ redisUrl: redis.url, redisPrefix: prefix });
    const b = await relayWith({ redisUrl: redis.url, redisPrefix: prefix });
    await postWebhook(a.url, callbackRequestWebhook('wacid.shared'));
    const [listed] = await listUntil(b, (l) => l.length === 1, 'the request on b');
    expect(await listOf(a)).toEqual([listed]);

    const taken = await postAsAgent(b.url, tokens.bob!, takeCallbackPath('wacid.shared'));
    expect(taken).toMatchObject({ status: 200, body: { callback: { id: 'wacid.shared', takenBy: { agentId: 'bob', name: 'Bob Agent' } } } });
    expect(await listOf(a)).toEqual([{ ...listed, takenBy: { agentId: 'bob', name: 'Bob Agent', at: expect.any(Number) as number } }]);
    expect(await postAsAgent(a.url, tokens.alice!, takeCallbackPath('wacid.shared'))).toEqual({
      status: 409,
      body: { error: { code: 'taken', message: 'Taken by Bob Agent', agentId: 'bob', name: 'Bob Agent' } },
    });

    // Both ask at once for a new one: one of them has it.
    await postWebhook(b.url, callbackRequestWebhook('wacid.race', { number: OTHER }));
    await listUntil(a, (l) => ids(l).includes('wacid.race'), 'the second request on a');
    const answers = await Promise.all([postAsAgent(a.url, tokens.alice!, takeCallbackPath('wacid.race')), postAsAgent(b.url, tokens.bob!, takeCallbackPath('wacid.race'))]);
    expect(answers.map((r) => r.status).sort()).toEqual([200, 409]);

    // The customer answers the team's call, the webhook to the other instance: gone from both.
    await postWebhook(a.url, outgoingStatus('wacid.out-shared', 'ACCEPTED', { recipient_id: CUSTOMER }));
    await listUntil(b, (l) => ids(l).join() === 'wacid.race', 'the answered customer gone on b');
    expect(ids(await listOf(a))).toEqual(['wacid.race']);

    // A request stored by b, its customer's answer taken by a: a learnt of it, and drops it.
    await postWebhook(b.url, callbackRequestWebhook('wacid.via-b', { number: THIRD }));
    await listUntil(a, (l) => ids(l).includes('wacid.via-b'), 'the request from b on a');
    await postWebhook(a.url, outgoingStatus('wacid.out-third', 'ACCEPTED', { recipient_id: THIRD }));
    await listUntil(b, (l) => !ids(l).includes('wacid.via-b'), 'the request answered on a gone');

    // An instance started after a request was listed reads the list at start, and drops it on an answer.
    await postWebhook(b.url, callbackRequestWebhook('wacid.before-c', { number: THIRD }));
    await listUntil(a, (l) => ids(l).includes('wacid.before-c'), 'the request before c');
    const c = await relayWith({ redisUrl: redis.url, redisPrefix: prefix });
    await postWebhook(c.url, outgoingStatus('wacid.out-third-2', 'ACCEPTED', { recipient_id: THIRD }));
    await listUntil(a, (l) => !ids(l).includes('wacid.before-c'), 'the request answered on c gone');
  });
});

// The service's own recording and transcript of a call through a real relay (relay/REFERENCE.md
// "Routing and claims"): the `call_recording_available` and `call_transcription_available` items come
// after the terminate; the call's tombstone does not drop them; each reaches the agents of the call
// (its owner; a transferred bridged call's participants; everyone when the relay knows neither),
// once, and never rings. On the memory backend and on Redis, with one instance and with two.
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { localBridge } from '../../../relay/bridged-calls';
import { startRelay, type RelayOptions, type RelayServer } from '../../../relay/server';
import { BRIDGE_AGENT_PATHS } from '../../../shared/bridge';
import type { RelayEvent } from '../../../shared/events';
import { TRANSFER_PATHS } from '../../../shared/transfer';
import { startRedis, uniquePrefix, type RedisHandle } from '../../support/redis-server';
import { claimCall, eventKey, hasMessage, putPresence, team } from './agent-fixtures';
import { openSse, type TestSseStream } from './sse-test-client';
import { quietLogger, RecordingBridge } from './transfer-fixtures';
import { APP_SECRET, BUSINESS, CUSTOMER, callStatus, inboundText, incomingCall, postWebhook, terminatedCall, unixSeconds } from './webhook-fixtures';

const { agents, tokens } = team('alice', 'bob', 'carol');
const closing: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const close of closing.splice(0).reverse()) await close();
});

const recordingUrl = (callId: string) => `https://lookaside.fbsbx.example/whatsapp_business/attachments/?mid=rec-${callId}&ext=300&hash=ATu9`;
const transcriptUrl = (callId: string) => `https://lookaside.fbsbx.example/whatsapp_business/attachments/?mid=tr-${callId}&ext=300&hash=ATv0`;

/** The `calls` webhook the service sends once a call's recording or transcript is ready (protocol.md "What the service added in 2026"). */
function captureWebhook(callId: string, kind: 'recording' | 'transcript'): unknown {
  const item =
    kind === 'recording'
      ? {
          id: callId,
          timestamp: unixSeconds(),
          event: 'call_recording_available',
          call_recording: { type: 'audio', audio: { id: `rec-${callId}`, sha256: 'k3Yb4tPq1V6nI+Xw3bGzq0T2y5C8RjwM0bq7o2cR5wE=', mime_type: 'audio/ogg; codecs=opus', url: recordingUrl(callId) } },
        }
      : {
          id: callId,
          timestamp: unixSeconds(),
          event: 'call_transcription_available',
          call_transcript: { document: { id: `tr-${callId}`, sha256: 'Q2hhbm5lbDAgaXMgdGhlIGJ1c2luZXNz', mime_type: 'application/json', url: transcriptUrl(callId) } },
        };
  return {
    object: 'chatapp_business_account',
    entry: [{ id: '102290129340398', changes: [{ field: 'calls', value: { messaging_product: 'chatapp', metadata: { display_phone_number: BUSINESS, phone_number_id: '106540352242922' }, calls: [item] } }] }],
  };
}

/** An event's key, with the kind of a recording or transcript. */
const keyOf = (e: RelayEvent): string => (e.type === 'call.capture_available' ? `${eventKey(e)}:${e.kind}` : eventKey(e));
const keys = (s: TestSseStream): string[] => s.envelopes.map((env) => keyOf(env.event));
const has = (key: string) => (s: TestSseStream) => keys(s).includes(key);
const rings = (s: TestSseStream, callId: string) => s.envelopes.filter((env) => env.event.type === 'call.incoming' && env.event.callId === callId).length;

async function stream(relay: { url: string }, agentId: string): Promise<TestSseStream> {
  const opened = await openSse(relay.url, { token: tokens[agentId] });
  expect(opened.status).toBe(200);
  closing.push(() => opened.close());
  return opened;
}

let markers = 0;
/**
 * Waits until whatever was posted to `relay` for the call has been stored and reached every stream:
 * a status of the call, stored behind its other events (one call's events are stored in order), seen
 * by the call's agents (`seenBy`), then a message stored after it, seen by every stream (`all`).
 * Returns the keys of the two.
 */
async function settle(relay: { url: string }, callId: string, seenBy: TestSseStream[], all: TestSseStream[]): Promise<{ status: string; marker: string }> {
  const status = `call.status:${callId}:RINGING`;
  await post(relay, callStatus(callId, 'RINGING'));
  await Promise.all(seenBy.map((s) => s.waitFor(has(status), `the status of ${callId}`)));
  markers += 1;
  const id = `wamid.capture-marker-${markers}`;
  await post(relay, inboundText(id, 'marker'));
  await Promise.all(all.map((s) => s.waitFor(hasMessage(id), `marker ${id}`)));
  return { status, marker: `message.inbound:${id}` };
}

async function post(relay: { url: string }, body: unknown): Promise<void> {
  expect((await postWebhook(relay.url, body)).status).toBe(200);
}

interface Backend {
  name: string;
  setup(): Promise<void>;
  teardown(): Promise<void>;
  /** Options of one relay instance; the instances started between two `fresh()` share their backend. */
  options(): Partial<RelayOptions>;
  fresh(): void;
}

function memory(): Backend {
  return { name: 'memory', setup: () => Promise.resolve(), teardown: () => Promise.resolve(), options: () => ({}), fresh: () => undefined };
}

function redis(): Backend {
  let handle: RedisHandle | undefined;
  let prefix = uniquePrefix('relay-capture');
  return {
    name: 'redis',
    setup: async () => {
      handle = await startRedis();
    },
    teardown: async () => {
      await handle?.stop();
    },
    options: () => {
      if (handle === undefined) throw new Error('redis not set up');
      const used = prefix;
      const { removeKeys } = handle;
      closing.unshift(() => removeKeys(used));
      return { redisUrl: handle.url, redisPrefix: prefix };
    },
    fresh: () => {
      prefix = uniquePrefix('relay-capture');
    },
  };
}

describe.each([memory(), redis()])('the service’s recording and transcript on the $name backend', (backend) => {
  beforeAll(() => backend.setup());
  afterAll(() => backend.teardown());
  beforeEach(() => backend.fresh());

  async function relay(options: Partial<RelayOptions> = {}): Promise<RelayServer> {
    const started = await startRelay({ port: 0, appSecret: APP_SECRET, agents, heartbeatMs: 60_000, logger: quietLogger, ...backend.options(), ...options });
    closing.push(() => started.close());
    return started;
  }

  it('after the terminate, reach the call’s owner alone, once each, and ring nobody again', async () => {
    const server = await relay();
    const [alice, bob, carol] = [await stream(server, 'alice'), await stream(server, 'bob'), await stream(server, 'carol')];
    const callId = 'wacid.cap1';
    await post(server, incomingCall(callId));
    for (const s of [alice, bob, carol]) await s.waitFor(has(`call.incoming:${callId}`), 'the ring');
    expect((await claimCall(server.url, tokens.alice!, callId)).status).toBe(200);
    await post(server, terminatedCall(callId));
    await alice.waitFor(has(`call.terminated:${callId}:COMPLETED`), 'the end at the owner');
    // The owner is finishing the call's work: nothing rings it, and what is its call's still reaches it.
    expect((await putPresence(server.url, tokens.alice!, { status: 'after_call_work' })).status).toBe(200);

    // A late connect is dropped by the call's tombstone; the recording and transcript are not.
    await post(server, incomingCall(callId));
    await post(server, captureWebhook(callId, 'recording'));
    await post(server, captureWebhook(callId, 'transcript'));
    // The service retries its webhooks: the same two again are stored once each.
    await post(server, captureWebhook(callId, 'recording'));
    await post(server, captureWebhook(callId, 'transcript'));
    const { status, marker } = await settle(server, callId, [alice], [alice, bob, carol]);

    expect(keys(alice)).toEqual([
      `call.incoming:${callId}`,
      `call.claimed:${callId}`,
      `call.terminated:${callId}:COMPLETED`,
      `call.capture_available:${callId}:recording`,
      `call.capture_available:${callId}:transcript`,
      status,
      marker,
    ]);
    for (const other of [bob, carol]) expect(keys(other)).toEqual([`call.incoming:${callId}`, `call.claimed:${callId}`, marker]);
    for (const s of [alice, bob, carol]) expect(rings(s, callId)).toBe(1);

    const captures = alice.envelopes.map((env) => env.event).filter((e) => e.type === 'call.capture_available');
    expect(captures).toEqual([
      {
        type: 'call.capture_available',
        callId,
        kind: 'recording',
        mediaId: `rec-${callId}`,
        url: recordingUrl(callId),
        mimeType: 'audio/ogg; codecs=opus',
        sha256: 'k3Yb4tPq1V6nI+Xw3bGzq0T2y5C8RjwM0bq7o2cR5wE=',
        timestamp: expect.any(Number),
      },
      {
        type: 'call.capture_available',
        callId,
        kind: 'transcript',
        mediaId: `tr-${callId}`,
        url: transcriptUrl(callId),
        mimeType: 'application/json',
        sha256: 'Q2hhbm5lbDAgaXMgdGhlIGJ1c2luZXNz',
        timestamp: expect.any(Number),
      },
    ]);
  });

  it('of an outgoing call reach its owner alone, who never rang for it', async () => {
    const server = await relay();
    const [alice, bob] = [await stream(server, 'alice'), await stream(server, 'bob')];
    const callId = 'wacid.cap-out';
    expect((await claimCall(server.url, tokens.alice!, callId)).status).toBe(200);
    await post(server, terminatedCall(callId, { from: BUSINESS, to: CUSTOMER, direction: 'BUSINESS_INITIATED' }));
    await post(server, captureWebhook(callId, 'recording'));
    const { status, marker } = await settle(server, callId, [alice], [alice, bob]);
    expect(keys(alice)).toEqual([`call.claimed:${callId}`, `call.terminated:${callId}:COMPLETED`, `call.capture_available:${callId}:recording`, status, marker]);
    expect(keys(bob)).toEqual([marker]);
  });

  it('of a call the relay knows no owner of reach everyone, once, and ring nobody', async () => {
    const server = await relay();
    const [alice, bob, carol] = [await stream(server, 'alice'), await stream(server, 'bob'), await stream(server, 'carol')];
    // Whoever is on do-not-disturb hears of it too: it is no ring.
    expect((await putPresence(server.url, tokens.carol!, { status: 'dnd' })).status).toBe(200);
    const callId = 'wacid.cap-unknown';
    await post(server, captureWebhook(callId, 'transcript'));
    await post(server, captureWebhook(callId, 'transcript'));
    await post(server, captureWebhook(callId, 'recording'));
    const { status, marker } = await settle(server, callId, [alice, bob, carol], [alice, bob, carol]);
    for (const s of [alice, bob, carol]) {
      expect(keys(s)).toEqual([`call.capture_available:${callId}:transcript`, `call.capture_available:${callId}:recording`, status, marker]);
      expect(rings(s, callId)).toBe(0);
    }
  });

  it('of a transferred bridged call reach everyone who was in it, after the bridge let it go, and nobody else', async () => {
    const server = await relay({ bridgeNodes: localBridge(new RecordingBridge()) });
    const [alice, bob, carol] = [await stream(server, 'alice'), await stream(server, 'bob'), await stream(server, 'carol')];
    const callId = 'wacid.cap-bridged';
    await answeredBridged(server, alice, callId);
    const started = await asAgent(server, 'alice', TRANSFER_PATHS.start(callId), { to: 'bob', kind: 'transfer' });
    expect(started.status).toBe(200);
    const transferId = String(started.body.transferId);
    await bob.waitFor((s) => s.envelopes.some((env) => env.event.type === 'call.transfer_ring'), 'bob’s ring');
    const ring = bob.envelopes.find((env) => env.event.type === 'call.transfer_ring')!.event;
    if (ring.type !== 'call.transfer_ring') throw new Error('not a ring');
    expect((await asAgent(server, 'bob', TRANSFER_PATHS.answer(callId, transferId), { legId: ring.legId, sdp: 'window-answer' })).status).toBe(200);
    await alice.waitFor((s) => s.envelopes.some((env) => env.event.type === 'call.transfer_update' && env.event.state === 'transferred'), 'alice told the customer is bob’s');

    await post(server, terminatedCall(callId));
    for (const s of [alice, bob]) await s.waitFor(has(`call.terminated:${callId}:COMPLETED`), 'the end');
    await post(server, captureWebhook(callId, 'recording'));
    await post(server, captureWebhook(callId, 'transcript'));
    await post(server, captureWebhook(callId, 'recording'));
    const { marker } = await settle(server, callId, [alice, bob], [alice, bob, carol]);
    const captures = (s: TestSseStream) => keys(s).filter((key) => key.startsWith('call.capture_available'));
    for (const s of [alice, bob]) expect(captures(s)).toEqual([`call.capture_available:${callId}:recording`, `call.capture_available:${callId}:transcript`]);
    expect(keys(carol)).toEqual([`call.incoming:${callId}`, `call.claimed:${callId}`, marker]);
    expect(rings(bob, callId)).toBe(1);
  });
});


describe('the service’s recording and transcript with several instances on one Redis', () => {
  const backend = redis();
  beforeAll(() => backend.setup());
  afterAll(() => backend.teardown());
  beforeEach(() => backend.fresh());

  async function relay(): Promise<RelayServer> {
    const started = await startRelay({ port: 0, appSecret: APP_SECRET, agents, heartbeatMs: 60_000, logger: quietLogger, ...backend.options() });
    closing.push(() => started.close());
    return started;
  }

  it('reach the owner when they come to another instance than the claim and the terminate did', async () => {
    const a = await relay();
    const b = await relay();
    const [alice, bob] = [await stream(b, 'alice'), await stream(a, 'bob')];
    const callId = 'wacid.cap-two';
    await post(a, incomingCall(callId));
    for (const s of [alice, bob]) await s.waitFor(has(`call.incoming:${callId}`), 'the ring');
    expect((await claimCall(a.url, tokens.alice!, callId)).status).toBe(200);
    await post(a, terminatedCall(callId));
    await alice.waitFor(has(`call.terminated:${callId}:COMPLETED`), 'the end at the owner');
    await post(b, captureWebhook(callId, 'recording'));
    await alice.waitFor(has(`call.capture_available:${callId}:recording`), 'the recording at the owner');
    // The service's retry of the same item at the other instance is the same event.
    await post(a, captureWebhook(callId, 'recording'));
    await post(a, captureWebhook(callId, 'transcript'));
    const { status, marker } = await settle(a, callId, [alice], [alice, bob]);
    expect(keys(alice)).toEqual([
      `call.incoming:${callId}`,
      `call.claimed:${callId}`,
      `call.terminated:${callId}:COMPLETED`,
      `call.capture_available:${callId}:recording`,
      `call.capture_available:${callId}:transcript`,
      status,
      marker,
    ]);
    expect(keys(bob)).toEqual([`call.incoming:${callId}`, `call.claimed:${callId}`, marker]);
  });
});

async function asAgent(relay: RelayServer, agentId: string, path: string, body?: unknown): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${relay.url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${tokens[agentId]}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

/** A bridged call rung for everyone, answered and accepted by alice as the app does it. */
async function answeredBridged(relay: RelayServer, alice: TestSseStream, callId: string): Promise<void> {
  await post(relay, incomingCall(callId));
  await alice.waitFor(has(`call.incoming:${callId}`), 'the ring');
  const leg = await asAgent(relay, 'alice', BRIDGE_AGENT_PATHS.leg(callId));
  expect(leg.status).toBe(200);
  expect((await claimCall(relay.url, tokens.alice!, callId)).status).toBe(200);
  expect((await asAgent(relay, 'alice', BRIDGE_AGENT_PATHS.answer(callId), { legId: leg.body.legId, sdp: 'window-answer' })).status).toBe(200);
  expect((await asAgent(relay, 'alice', BRIDGE_AGENT_PATHS.accepted(callId))).status).toBe(200);
}

import { request } from 'node:http';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { RelayEnvelope, RelayEvent } from '../../../shared/events';
import { configureLogging } from '../../../shared/log';
import { startRelay, type RelayOptions, type RelayServer } from '../../../relay/server';
import { openSse, type TestSseStream } from './sse-test-client';
import {
  AGENT_TOKEN,
  APP_SECRET,
  OFFER_SDP,
  VERIFY_TOKEN,
  callStatus,
  inboundText,
  incomingCall,
  incomingCallItem,
  messageStatus,
  postWebhook,
  signature,
  terminatedCall,
  unixSeconds,
} from './webhook-fixtures';

configureLogging({ level: 'error' });

let relay: RelayServer;
const relays: RelayServer[] = [];
const streams: TestSseStream[] = [];

async function relayWith(options: Partial<RelayOptions> = {}): Promise<RelayServer> {
  const r = await startRelay({ port: 0, appSecret: APP_SECRET, verifyToken: VERIFY_TOKEN, agentTokens: [AGENT_TOKEN, 'agent-token-0002-0123456789abcdef'], heartbeatMs: 60_000, ...options });
  relays.push(r);
  return r;
}

async function sse(r: RelayServer, options: Parameters<typeof openSse>[1] = { token: AGENT_TOKEN }): Promise<TestSseStream> {
  const s = await openSse(r.url, options);
  streams.push(s);
  return s;
}

const key = (e: RelayEvent) => `${e.type}:${'callId' in e ? e.callId : e.messageId}${'status' in e ? `:${e.status}` : ''}`;
const keys = (s: TestSseStream) => s.envelopes.map((env) => key(env.event));
const hasMarker = (id: string) => (s: TestSseStream) => s.envelopes.some((env) => env.event.type === 'message.inbound' && env.event.messageId === id);

/** Posts a marker message and waits for it: everything posted before it has been processed by then. */
async function flush(r: RelayServer, s: TestSseStream, id: string): Promise<void> {
  expect((await postWebhook(r.url, inboundText(id, 'marker'))).status).toBe(200);
  await s.waitFor(hasMarker(id), `marker ${id}`);
}

beforeEach(async () => {
  relay = await relayWith();
});

afterEach(async () => {
  for (const s of streams.splice(0)) s.close();
  await Promise.all(relays.splice(0).map((r) => r.close()));
});

describe('relay: subscription handshake', () => {
  it('echoes the challenge when the verify token matches', async () => {
    const res = await fetch(`${relay.url}/webhook?hub.mode=subscribe&hub.verify_token=${VERIFY_TOKEN}&hub.challenge=1158201444`);
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('1158201444');
  });

  it('answers 403 to a wrong token, a wrong mode, a missing challenge, or when no token is configured', async () => {
    const base = `${relay.url}/webhook`;
    expect((await fetch(`${base}?hub.mode=subscribe&hub.verify_token=nope&hub.challenge=1`)).status).toBe(403);
    expect((await fetch(`${base}?hub.mode=unsubscribe&hub.verify_token=${VERIFY_TOKEN}&hub.challenge=1`)).status).toBe(403);
    expect((await fetch(`${base}?hub.mode=subscribe&hub.verify_token=${VERIFY_TOKEN}`)).status).toBe(403);
    const open = await relayWith({ verifyToken: undefined });
    expect((await fetch(`${open.url}/webhook?hub.mode=subscribe&hub.verify_token=&hub.challenge=1`)).status).toBe(403);
  });
});

describe('relay: webhook signatures', () => {
  it('accepts a body signed over its raw bytes, whitespace and all', async () => {
    const s = await sse(relay);
    const raw = `{ "object" : "chatapp_business_account",\n  "entry": ${JSON.stringify(incomingCall('wacid.sig1').entry, null, 2)} }`;
    const res = await postWebhook(relay.url, raw);
    expect(res.status).toBe(200);
    await s.waitFor((x) => x.envelopes.length === 1, 'the incoming call');
    expect(s.envelopes[0]!.event).toMatchObject({ type: 'call.incoming', callId: 'wacid.sig1' });
    expect(relay.stats()).toMatchObject({ webhooksReceived: 1, webhooksRejected: 0 });
  });

  it('answers 401 to a wrong, missing or non-sha256 signature, and to a body changed after signing', async () => {
    const body = JSON.stringify(incomingCall('wacid.sig2'));
    expect((await postWebhook(relay.url, body, { secret: 'another-secret' })).status).toBe(401);
    expect((await postWebhook(relay.url, body, { signatureHeader: null })).status).toBe(401);
    expect((await postWebhook(relay.url, body, { signatureHeader: 'sha1=' + 'a'.repeat(40) })).status).toBe(401);
    expect((await postWebhook(relay.url, body, { signatureHeader: signature(body).replace('sha256=', '') })).status).toBe(401);
    expect((await postWebhook(relay.url, body, { signatureHeader: 'sha256=zz' })).status).toBe(401);
    const tampered = body.replace('wacid.sig2', 'wacid.sig3');
    expect((await postWebhook(relay.url, tampered, { signatureHeader: signature(body) })).status).toBe(401);
    // Re-serialising the JSON changes the bytes: the signature of the original no longer fits.
    const reserialised = JSON.stringify(JSON.parse(body), null, 1);
    expect((await postWebhook(relay.url, reserialised, { signatureHeader: signature(body) })).status).toBe(401);
    expect(relay.stats()).toMatchObject({ webhooksReceived: 0, webhooksRejected: 7, eventsStored: 0 });
  });

  it('accepts unsigned webhooks only when no app secret is configured', async () => {
    const open = await relayWith({ appSecret: undefined });
    expect((await postWebhook(open.url, incomingCall('wacid.sig4'), { signatureHeader: null })).status).toBe(200);
  });
});

describe('relay: webhook bodies', () => {
  it('answers 400 to malformed JSON', async () => {
    expect((await postWebhook(relay.url, '{"entry": [')).status).toBe(400);
  });

  it('answers 413 to a body over 3 MB, and accepts one just under', async () => {
    const big = Buffer.alloc(3 * 1024 * 1024 + 1, 0x20);
    expect((await postWebhook(relay.url, big)).status).toBe(413);
    const padded = JSON.stringify(inboundText('wamid.big', 'x'));
    const fits = Buffer.concat([Buffer.from(padded), Buffer.alloc(3 * 1024 * 1024 - padded.length, 0x20)]);
    expect((await postWebhook(relay.url, fits)).status).toBe(200);
  });

  it('answers 413 at once when the declared length is far too large', async () => {
    const status = await new Promise<number>((resolve, reject) => {
      const req = request(`${relay.url}/webhook`, { method: 'POST', headers: { 'content-length': String(100 * 1024 * 1024) } }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on('error', reject);
      req.write('{"entry":');
    });
    expect(status).toBe(413);
  });

  it('ignores valid JSON that holds no events', async () => {
    expect((await postWebhook(relay.url, '[1,2,3]')).status).toBe(200);
    expect((await postWebhook(relay.url, { object: 'chatapp_business_account', entry: [] })).status).toBe(200);
  });
});

describe('relay: delivery rules', () => {
  it('stores the same event only once, whatever the envelope', async () => {
    const s = await sse(relay);
    const call = incomingCall('wacid.dup');
    await postWebhook(relay.url, call);
    await postWebhook(relay.url, call);
    await postWebhook(relay.url, call.entry[0]!.changes[0]!.value); // the bare value, retried by another subscriber
    await postWebhook(relay.url, callStatus('wacid.dup', 'RINGING'));
    await postWebhook(relay.url, callStatus('wacid.dup', 'RINGING'));
    await postWebhook(relay.url, messageStatus('wamid.dup', 'delivered'));
    await postWebhook(relay.url, messageStatus('wamid.dup', 'delivered'));
    await postWebhook(relay.url, messageStatus('wamid.dup', 'read'));
    await postWebhook(relay.url, terminatedCall('wacid.dup'));
    await postWebhook(relay.url, terminatedCall('wacid.dup'));
    await flush(relay, s, 'wamid.marker-dup');
    expect(keys(s)).toEqual([
      'call.incoming:wacid.dup',
      'call.status:wacid.dup:RINGING',
      'message.status:wamid.dup:delivered',
      'message.status:wamid.dup:read',
      'call.terminated:wacid.dup:COMPLETED',
      'message.inbound:wamid.marker-dup',
    ]);
    expect(relay.stats()).toMatchObject({ eventsStored: 6, eventsDropped: 5 });
  });

  it('drops a connect that arrives after the terminate of its call', async () => {
    const s = await sse(relay);
    await postWebhook(relay.url, terminatedCall('wacid.tomb', { status: 'FAILED', errors: [{ code: 138004, message: 'Connection error' }] }));
    await postWebhook(relay.url, incomingCall('wacid.tomb'));
    await flush(relay, s, 'wamid.marker-tomb');
    expect(keys(s)).toEqual(['call.terminated:wacid.tomb:FAILED', 'message.inbound:wamid.marker-tomb']);
  });

  it('drops a connect more than 60 s old, and keeps a fresh one', async () => {
    const s = await sse(relay);
    await postWebhook(relay.url, incomingCall('wacid.stale', { timestamp: unixSeconds(Date.now() - 120_000) }));
    await postWebhook(relay.url, incomingCall('wacid.fresh', { timestamp: unixSeconds(Date.now() - 5_000) }));
    await flush(relay, s, 'wamid.marker-stale');
    expect(keys(s)).toEqual(['call.incoming:wacid.fresh', 'message.inbound:wamid.marker-stale']);
  });

  it('keeps the good events of a webhook that also holds malformed items', async () => {
    const s = await sse(relay);
    await postWebhook(relay.url, { calls: [{ id: 'wacid.bad', event: 'connect', direction: 'USER_INITIATED' }, incomingCallItem('wacid.good')] });
    await flush(relay, s, 'wamid.marker-bad');
    expect(keys(s)).toEqual(['call.incoming:wacid.good', 'message.inbound:wamid.marker-bad']);
  });
});

describe('relay: event stream', () => {
  it('refuses agents without a valid bearer token', async () => {
    expect((await sse(relay, {})).status).toBe(401);
    expect((await sse(relay, { token: 'not-a-token' })).status).toBe(401);
    expect((await sse(relay, { authorization: `Basic ${AGENT_TOKEN}` })).status).toBe(401);
    expect((await sse(relay, { token: `${AGENT_TOKEN}x` })).status).toBe(401);
    expect((await sse(relay, { token: 'agent-token-0002-0123456789abcdef' })).status).toBe(200);
  });

  it('writes id and data lines with the envelope, to every agent', async () => {
    const a = await sse(relay);
    const b = await sse(relay, { token: 'agent-token-0002-0123456789abcdef' });
    expect(a.response.headers['content-type']).toMatch(/^text\/event-stream/);
    await postWebhook(relay.url, incomingCall('wacid.fan'));
    await a.waitFor((x) => x.envelopes.length === 1, 'agent a');
    await b.waitFor((x) => x.envelopes.length === 1, 'agent b');
    const env: RelayEnvelope = a.envelopes[0]!;
    expect(a.ids[0]).toBe(env.id);
    expect(env.id).toMatch(new RegExp(`^${relay.epoch}-\\d+$`));
    expect(env.event).toMatchObject({ type: 'call.incoming', callId: 'wacid.fan', sdp: OFFER_SDP, name: 'Ada Customer' });
    expect(typeof env.receivedAt).toBe('number');
    expect(b.envelopes).toEqual(a.envelopes);
    expect(relay.stats()).toMatchObject({ eventsDelivered: 2, connectedAgents: 2 });
  });

  it('resumes from Last-Event-ID without losing or repeating an event', async () => {
    const first = await sse(relay);
    for (let i = 1; i <= 3; i += 1) await postWebhook(relay.url, inboundText(`wamid.r${i}`, `m${i}`));
    await first.waitFor((x) => x.envelopes.length === 3, 'three events');
    const cursor = first.ids[2]!;
    first.close();
    for (let i = 4; i <= 6; i += 1) await postWebhook(relay.url, inboundText(`wamid.r${i}`, `m${i}`));
    await postWebhook(relay.url, inboundText('wamid.r4', 'm4')); // a retry: still one event

    const resumed = await sse(relay, { token: AGENT_TOKEN, lastEventId: cursor });
    await resumed.waitFor((x) => x.envelopes.length === 3, 'the three missed events');
    await postWebhook(relay.url, inboundText('wamid.r7', 'm7'));
    await resumed.waitFor(hasMarker('wamid.r7'), 'the live event');
    const all = [...first.envelopes, ...resumed.envelopes].map((e) => (e.event.type === 'message.inbound' ? e.event.messageId : '?'));
    expect(all).toEqual(['wamid.r1', 'wamid.r2', 'wamid.r3', 'wamid.r4', 'wamid.r5', 'wamid.r6', 'wamid.r7']);
  });

  it('accepts the cursor as ?since= too', async () => {
    for (let i = 1; i <= 3; i += 1) await postWebhook(relay.url, inboundText(`wamid.q${i}`, 'm'));
    const all = await sse(relay, { token: AGENT_TOKEN, lastEventId: 'elsewhere-1' });
    await all.waitFor((x) => x.envelopes.length === 3, 'the retained events');
    const since = await sse(relay, { token: AGENT_TOKEN, query: `?since=${encodeURIComponent(all.ids[0]!)}` });
    await since.waitFor((x) => x.envelopes.length === 2, 'the events after the cursor');
    expect(since.ids).toEqual(all.ids.slice(1));
  });

  it('replays everything retained to a cursor from another relay process', async () => {
    const before = await sse(relay);
    await postWebhook(relay.url, inboundText('wamid.e1', 'old relay'));
    await before.waitFor((x) => x.envelopes.length === 1, 'the first relay event');
    const oldCursor = before.ids[0]!;
    before.close();
    const port = relay.port;
    await relay.close();

    // The relay restarts on the same port: new epoch, empty memory, events keep arriving.
    const restarted = await relayWith({ port });
    expect(restarted.epoch).not.toBe(relay.epoch);
    await postWebhook(restarted.url, inboundText('wamid.e2', 'new relay'));
    await postWebhook(restarted.url, inboundText('wamid.e3', 'new relay'));
    const resumed = await sse(restarted, { token: AGENT_TOKEN, lastEventId: oldCursor });
    await resumed.waitFor((x) => x.envelopes.length === 2, 'everything the new relay holds');
    expect(resumed.envelopes.map((e) => key(e.event))).toEqual(['message.inbound:wamid.e2', 'message.inbound:wamid.e3']);
    // A cursor this process never issued, and garbage, are treated the same way.
    const future = await sse(restarted, { token: AGENT_TOKEN, lastEventId: `${restarted.epoch}-999` });
    await future.waitFor((x) => x.envelopes.length === 2, 'everything, for a future cursor');
    const junk = await sse(restarted, { token: AGENT_TOKEN, lastEventId: 'not a cursor' });
    await junk.waitFor((x) => x.envelopes.length === 2, 'everything, for a junk cursor');
  });

  it('replays the last minute to an agent without a cursor, and nothing older', async () => {
    const fresh = await relayWith({ freshReplayMs: 60_000 });
    await postWebhook(fresh.url, inboundText('wamid.f1', 'recent'));
    const s = await sse(fresh);
    await s.waitFor((x) => x.envelopes.length === 1, 'the recent event');
    const liveOnly = await relayWith({ freshReplayMs: 0 });
    await postWebhook(liveOnly.url, inboundText('wamid.f2', 'before'));
    const t = await sse(liveOnly);
    await flush(liveOnly, t, 'wamid.f3');
    expect(keys(t)).toEqual(['message.inbound:wamid.f3']);
  });

  it('sends heartbeat comments', async () => {
    const beating = await relayWith({ heartbeatMs: 20 });
    const s = await sse(beating);
    await s.waitFor((x) => x.comments.filter((c) => c === 'hb').length >= 2, 'two heartbeats');
  });

  it('drops an agent that stops reading, without holding up the others', async () => {
    const small = await relayWith({ maxClientBufferBytes: 256 * 1024 });
    const fast = await sse(small);
    const slow = await sse(small, { token: 'agent-token-0002-0123456789abcdef' });
    slow.response.pause();
    slow.response.socket.pause();
    const sdp = `${OFFER_SDP}a=x-padding:${'p'.repeat(512 * 1024)}\r\n`;
    let posted = 0;
    // Kernel socket buffers absorb some megabytes before the relay's own buffer grows.
    while (small.stats().connectedAgents === 2 && posted < 200) {
      posted += 1;
      await postWebhook(small.url, incomingCall(`wacid.slow${posted}`, { session: { sdp_type: 'offer', sdp } }));
      await fast.waitFor((x) => x.envelopes.length === posted, `event ${posted} at the fast agent`);
    }
    expect(small.stats().connectedAgents).toBe(1);
    await flush(small, fast, 'wamid.after-slow');
    expect(fast.envelopes.length).toBe(posted + 1);
  });
});

describe('relay: other endpoints', () => {
  it('answers /healthz, 404 and 405', async () => {
    const health = await fetch(`${relay.url}/healthz`);
    expect(health.status).toBe(200);
    expect(await health.json()).toMatchObject({ status: 'ok', epoch: relay.epoch, connectedAgents: 0 });
    expect((await fetch(`${relay.url}/nope`)).status).toBe(404);
    const put = await fetch(`${relay.url}/webhook`, { method: 'PUT', body: '{}' });
    expect(put.status).toBe(405);
    expect(put.headers.get('allow')).toBe('GET, POST');
  });

  it('tells onEvent listeners about every stored event', async () => {
    const seen: RelayEnvelope[] = [];
    const off = relay.onEvent((env) => seen.push(env));
    const s = await sse(relay);
    await postWebhook(relay.url, incomingCall('wacid.listen'));
    await postWebhook(relay.url, incomingCall('wacid.listen'));
    await flush(relay, s, 'wamid.listen');
    off();
    expect(seen).toEqual(s.envelopes);
  });
});

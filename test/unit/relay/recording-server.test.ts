// The recordings' endpoints over HTTP (relay/REFERENCE.md "Recordings"): a real relay with a node that
// records what it is asked (transfer-fixtures.ts) and a real store in a temporary folder. "Record" and
// "Stop recording" with every refusal and the events each agent's and each joined supervisor's stream
// carries, the live calls saying which records; a recording served whole and in byte ranges (RFC
// 9110) to who may hear it; a node's upload with the bridge token alone.
import { request } from 'node:http';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { localBridge } from '../../../relay/bridged-calls';
import { rangeOf } from '../../../relay/recording-endpoints';
import { RecordingsStore } from '../../../relay/recordings-store';
import { startRelay, type RelayOptions, type RelayServer } from '../../../relay/server';
import { BRIDGE_AGENT_PATHS } from '../../../shared/bridge';
import { BRIDGE_RECORDING_UPLOAD_PATH, RECORDING_AGENT_PATHS, type RecordMode } from '../../../shared/bridge-recording';
import type { RelayEvent } from '../../../shared/events';
import { liveCallsSchema, SUPERVISOR_PATHS } from '../../../shared/supervision';
import { hashAgentToken } from '../../../relay/agent-directory';
import { claimCall, team } from './agent-fixtures';
import { openSse, type TestSseStream } from './sse-test-client';
import { quietLogger, RecordingBridge } from './transfer-fixtures';
import { APP_SECRET, incomingCall, postWebhook, terminatedCall } from './webhook-fixtures';

const { agents, tokens } = team('alice', 'bob');
const SUPERVISOR_TOKEN = 'token-sue-0123456789';
const supervisor = { id: 'sue', name: 'Sue Supervisor', tokenSha256: hashAgentToken(SUPERVISOR_TOKEN), role: 'supervisor' as const };
tokens.sue = SUPERVISOR_TOKEN;
const BRIDGE_TOKEN = 'bridge-token-0123456789abcdef-0123456789';
const NOTICE = new Int16Array(9_600);

const closing: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const close of closing.splice(0).reverse()) await close();
});

interface Setup {
  relay: RelayServer;
  store: RecordingsStore;
  node: RecordingBridge;
}

async function relayWith(mode: RecordMode, extra: Partial<RelayOptions> = {}): Promise<Setup> {
  const dir = await mkdtemp(join(tmpdir(), 'recordings-http-'));
  closing.push(() => rm(dir, { recursive: true, force: true }));
  const store = new RecordingsStore({ dir: join(dir, 'recordings'), logger: quietLogger });
  await store.open();
  closing.push(() => store.close());
  const node = new RecordingBridge();
  const relay = await startRelay({
    port: 0,
    appSecret: APP_SECRET,
    agents: [...agents, supervisor],
    heartbeatMs: 60_000,
    logger: quietLogger,
    bridgeNodes: localBridge(node),
    recordings: { mode, store, notice: NOTICE },
    ...extra,
  });
  closing.push(() => relay.close());
  return { relay, store, node };
}

async function stream(relay: RelayServer, agentId: string): Promise<TestSseStream> {
  const opened = await openSse(relay.url, { token: tokens[agentId] });
  closing.push(() => opened.close());
  return opened;
}

async function ask(relay: RelayServer, agentId: string | undefined, path: string, body?: unknown, method = 'POST'): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${relay.url}${path}`, {
    method,
    headers: { ...(agentId !== undefined ? { authorization: `Bearer ${tokens[agentId]}` } : {}), 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

/** A bridged call rung for everyone, answered and accepted by `agentId` as the app does it. */
async function answered(relay: RelayServer, callId: string, agentId = 'alice'): Promise<void> {
  expect((await postWebhook(relay.url, incomingCall(callId))).status).toBe(200);
  const leg = await ask(relay, agentId, BRIDGE_AGENT_PATHS.leg(callId));
  expect(leg.status).toBe(200);
  expect((await claimCall(relay.url, tokens[agentId]!, callId)).status).toBe(200);
  expect((await ask(relay, agentId, BRIDGE_AGENT_PATHS.answer(callId), { legId: leg.body.legId, sdp: 'window-answer' })).status).toBe(200);
  expect((await ask(relay, agentId, BRIDGE_AGENT_PATHS.accepted(callId))).status).toBe(200);
}

const recordingWords = (s: TestSseStream) => s.envelopes.flatMap((e) => (e.event.type === 'call.recording' ? [`${e.event.recording ? 'on' : 'off'}${e.event.by !== undefined ? `:${e.event.by}` : ''}`] : []));
const has = (predicate: (event: RelayEvent) => boolean) => (s: TestSseStream) => s.envelopes.some((e) => predicate(e.event));

describe('what the team records, as the app reads it', () => {
  it('GET /me and GET /team/settings say the mode, and nothing when the team never records', async () => {
    for (const mode of ['on-demand', 'always'] as const) {
      const { relay } = await relayWith(mode);
      expect(await ask(relay, 'alice', '/me', undefined, 'GET')).toEqual({ status: 200, body: { agentId: 'alice', name: 'Alice Agent', role: 'agent', bridged: true, record: mode } });
      expect((await ask(relay, 'alice', '/team/settings', undefined, 'GET')).body).toMatchObject({ role: 'agent', record: mode });
    }
    const { relay } = await relayWith('never');
    expect((await ask(relay, 'alice', '/me', undefined, 'GET')).body).toEqual({ agentId: 'alice', name: 'Alice Agent', role: 'agent', bridged: true });
    expect((await ask(relay, 'alice', '/team/settings', undefined, 'GET')).body).not.toHaveProperty('record');
  });

  it('a relay that records without a bridge does not start', async () => {
    await expect(startRelay({ port: 0, appSecret: APP_SECRET, agents, logger: quietLogger, recordings: { mode: 'always', notice: NOTICE } })).rejects.toThrow(
      "recordings: record always needs a bridge (bridgeNodes or bridgeToken): recordings are made on the team's bridge",
    );
  });
});

describe('POST /calls/{callId}/bridge/recording', () => {
  it('starts and stops a call’s recording for a member, each change on every member’s stream and nobody else’s', async () => {
    const { relay, node, store } = await relayWith('on-demand');
    const [alice, bob] = [await stream(relay, 'alice'), await stream(relay, 'bob')];
    const callId = 'wacid.rec-1';
    const path = RECORDING_AGENT_PATHS.toggle(callId);

    // Refusals first.
    expect((await ask(relay, undefined, path, { recording: true })).status).toBe(401);
    expect(await ask(relay, 'alice', path, undefined, 'GET')).toMatchObject({ status: 405, body: { error: { code: 'method_not_allowed' } } });
    expect(await ask(relay, 'alice', RECORDING_AGENT_PATHS.toggle('wacid.none'), { recording: true })).toEqual({ status: 404, body: { error: { code: 'not_found', message: 'no bridged call wacid.none' } } });
    await answered(relay, callId);
    for (const body of [{}, { recording: 'yes' }]) {
      expect(await ask(relay, 'alice', path, body)).toEqual({ status: 400, body: { error: { code: 'invalid_input', message: 'recording: must be true or false', field: 'recording' } } });
    }
    expect(await ask(relay, 'bob', path, { recording: true })).toEqual({ status: 403, body: { error: { code: 'forbidden', message: 'only an agent in the call starts or stops its recording' } } });

    expect(await ask(relay, 'alice', path, { recording: true })).toEqual({ status: 200, body: { recording: true } });
    expect(node.recordingAsks).toEqual([`start:${callId}:${NOTICE.length}`]);
    await alice.waitFor((s) => recordingWords(s).length === 1, 'the start');
    expect(await ask(relay, 'alice', path, { recording: true })).toEqual({ status: 200, body: { recording: true } });
    expect(await ask(relay, 'alice', path, { recording: false })).toEqual({ status: 200, body: { recording: false } });
    await alice.waitFor((s) => recordingWords(s).length === 2, 'the stop');
    expect(recordingWords(alice)).toEqual(['on:alice', 'off:alice']);
    expect(node.recordingAsks).toEqual([`start:${callId}:${NOTICE.length}`, 'stop:wacid.rec-1']);
    expect(await store.meta(callId)).toEqual({ callId, agents: ['alice'], startedAt: expect.any(Number) });

    // The call ends: its members get its end, bob never heard of the recording.
    expect((await postWebhook(relay.url, terminatedCall(callId))).status).toBe(200);
    await alice.waitFor(has((e) => e.type === 'call.terminated'), 'the end');
    expect(recordingWords(bob)).toEqual([]);
    expect(await ask(relay, 'alice', path, { recording: true })).toMatchObject({ status: 404 });
  });

  it('answers 409 saying why when the team records always or never, and 404 from a relay that does not bridge calls', async () => {
    const always = await relayWith('always');
    const alice = await stream(always.relay, 'alice');
    await answered(always.relay, 'wacid.always');
    await alice.waitFor(has((e) => e.type === 'call.recording'), 'the start');
    expect(recordingWords(alice)).toEqual(['on']);
    expect(always.node.recordingAsks).toEqual([`start:wacid.always:${NOTICE.length}`]);
    expect(await ask(always.relay, 'alice', RECORDING_AGENT_PATHS.toggle('wacid.always'), { recording: false })).toEqual({
      status: 409,
      body: { error: { code: 'invalid_state', message: 'the team records every call (--record always): its recording is not started or stopped by hand' } },
    });

    const never = await relayWith('never');
    await answered(never.relay, 'wacid.never');
    expect(await ask(never.relay, 'alice', RECORDING_AGENT_PATHS.toggle('wacid.never'), { recording: true })).toEqual({
      status: 409,
      body: { error: { code: 'invalid_state', message: 'the team does not record calls (--record never)' } },
    });

    const direct = await startRelay({ port: 0, appSecret: APP_SECRET, agents, logger: quietLogger });
    closing.push(() => direct.close());
    expect(await ask(direct, 'alice', RECORDING_AGENT_PATHS.toggle('wacid.x'), { recording: true })).toEqual({ status: 404, body: { error: { code: 'not_found', message: 'calls are not bridged' } } });
  });
});

describe('supervisors joined to a call that records', () => {
  /** Sue joins the call in `mode` and her window answers its leg. */
  async function sueJoins(relay: RelayServer, callId: string, mode: 'listen' | 'whisper' | 'barge'): Promise<void> {
    const joined = await ask(relay, 'sue', SUPERVISOR_PATHS.monitor(callId), { mode });
    expect(joined.status).toBe(200);
    expect(await ask(relay, 'sue', SUPERVISOR_PATHS.monitorAnswer(callId), { legId: joined.body.legId, sdp: 'window-answer-sue' })).toEqual({ status: 200, body: { ok: true } });
  }

  const recordingOf = async (relay: RelayServer, callId: string): Promise<boolean | undefined> => {
    const listed = await ask(relay, 'sue', SUPERVISOR_PATHS.liveCalls, undefined, 'GET');
    return liveCallsSchema.parse(listed.body).calls.find((c) => c.callId === callId)?.recording;
  };

  it('hear each start and stop on their stream, as the call’s agents do, and the live calls say which records', async () => {
    const { relay, store } = await relayWith('on-demand');
    const [alice, sue] = [await stream(relay, 'alice'), await stream(relay, 'sue')];
    const callId = 'wacid.rec-sup';
    await answered(relay, callId);
    await sueJoins(relay, callId, 'listen');
    expect(await recordingOf(relay, callId)).toBeUndefined();

    expect(await ask(relay, 'alice', RECORDING_AGENT_PATHS.toggle(callId), { recording: true })).toEqual({ status: 200, body: { recording: true } });
    await sue.waitFor((s) => recordingWords(s).length === 1, 'sue told of the start');
    expect(sue.envelopes.find((e) => e.event.type === 'call.recording')!.event).toEqual({ type: 'call.recording', callId, recording: true, by: 'alice', timestamp: expect.any(Number) as number });
    expect(await recordingOf(relay, callId)).toBe(true);
    expect(await ask(relay, 'sue', SUPERVISOR_PATHS.monitor(callId), { mode: 'whisper' }, 'PUT')).toEqual({ status: 200, body: { mode: 'whisper' } });
    expect(await ask(relay, 'alice', RECORDING_AGENT_PATHS.toggle(callId), { recording: false })).toEqual({ status: 200, body: { recording: false } });
    await sue.waitFor((s) => recordingWords(s).length === 2, 'sue told of the stop');
    await alice.waitFor((s) => recordingWords(s).length === 2, 'alice told of the stop');
    expect(recordingWords(sue)).toEqual(['on:alice', 'off:alice']);
    expect(recordingWords(alice)).toEqual(['on:alice', 'off:alice']);
    expect(await recordingOf(relay, callId)).toBeUndefined();
    // Who may hear it is who was in the call: sue hears it as a supervisor, not as one of its agents.
    expect(await store.meta(callId)).toMatchObject({ agents: ['alice'] });
  });

  it('one who joins a call that records now is told at once', async () => {
    const { relay } = await relayWith('always');
    const [alice, sue] = [await stream(relay, 'alice'), await stream(relay, 'sue')];
    const callId = 'wacid.rec-join';
    await answered(relay, callId);
    await alice.waitFor(has((e) => e.type === 'call.recording'), 'the start');
    await expect.poll(() => recordingOf(relay, callId)).toBe(true);
    expect(recordingWords(sue)).toEqual([]);
    await sueJoins(relay, callId, 'barge');
    await sue.waitFor((s) => recordingWords(s).length === 1, 'sue told it records');
    expect(recordingWords(sue)).toEqual(['on']);
    expect(recordingWords(alice)).toEqual(['on']);
  });
});

/** A stored recording: a pretend Ogg file whose every byte says its position. */
const FILE = Uint8Array.from({ length: 5_000 }, (_, i) => (i < 4 ? [0x4f, 0x67, 0x67, 0x53][i]! : i % 251));

async function get(relay: RelayServer, agentId: string | undefined, callId: string, headers: Record<string, string> = {}, method = 'GET'): Promise<{ status: number; headers: Headers; bytes: Uint8Array }> {
  const res = await fetch(`${relay.url}${RECORDING_AGENT_PATHS.file(callId)}`, { method, headers: { ...(agentId !== undefined ? { authorization: `Bearer ${tokens[agentId]}` } : {}), ...headers } });
  return { status: res.status, headers: res.headers, bytes: new Uint8Array(await res.arrayBuffer()) };
}

describe('GET /recordings/{callId}', () => {
  async function recorded(): Promise<Setup & { callId: string }> {
    const setup = await relayWith('on-demand');
    const callId = 'wacid.played/with slash';
    await answered(setup.relay, callId);
    expect((await ask(setup.relay, 'alice', RECORDING_AGENT_PATHS.toggle(callId), { recording: true })).status).toBe(200);
    await expect.poll(() => setup.store.meta(callId)).toMatchObject({ agents: ['alice'] });
    return { ...setup, callId };
  }

  it('is 404 while the call records, then the whole file to an agent who was in it and to a supervisor, 403 to anyone else', async () => {
    const { relay, store, callId } = await recorded();
    expect(await get(relay, 'alice', callId)).toMatchObject({ status: 404 });
    expect(await ask(relay, 'alice', RECORDING_AGENT_PATHS.file(callId), undefined, 'GET')).toEqual({ status: 404, body: { error: { code: 'not_found', message: `no recording of call ${callId}` } } });
    expect((await postWebhook(relay.url, terminatedCall(callId))).status).toBe(200);
    // The node hands the file over once the call ended.
    expect(await store.store(callId, FILE, 12_000)).toEqual({ ok: true, value: null });

    for (const agentId of ['alice', 'sue']) {
      const whole = await get(relay, agentId, callId);
      expect(whole.status).toBe(200);
      expect(whole.bytes).toEqual(FILE);
      expect(Object.fromEntries(['content-type', 'content-length', 'accept-ranges', 'cache-control', 'x-content-type-options'].map((h) => [h, whole.headers.get(h)]))).toEqual({
        'content-type': 'audio/ogg',
        'content-length': '5000',
        'accept-ranges': 'bytes',
        'cache-control': 'private, no-store',
        'x-content-type-options': 'nosniff',
      });
      expect(whole.headers.get('etag')).toMatch(/^"[0-9a-f]+-[0-9a-f]+"$/);
      expect(whole.headers.get('content-range')).toBeNull();
    }
    expect(await ask(relay, 'bob', RECORDING_AGENT_PATHS.file(callId), undefined, 'GET')).toEqual({
      status: 403,
      body: { error: { code: 'forbidden', message: 'only the agents who were in the call and supervisors hear its recording' } },
    });
    expect(await ask(relay, 'sue', RECORDING_AGENT_PATHS.file('wacid.never-recorded'), undefined, 'GET')).toMatchObject({ status: 404 });
    expect((await get(relay, undefined, callId)).status).toBe(401);
    expect(await ask(relay, 'alice', RECORDING_AGENT_PATHS.file(callId), {}, 'POST')).toMatchObject({ status: 405, body: { error: { code: 'method_not_allowed' } } });
    const head = await get(relay, 'alice', callId, {}, 'HEAD');
    expect(head).toMatchObject({ status: 200, bytes: new Uint8Array(0) });
    expect(head.headers.get('content-length')).toBe('5000');
  });

  it('serves one byte range (A-B, A-, -N) as 206 with Content-Range, refuses an unsatisfiable or invalid one 416 with the size, and answers others whole', async () => {
    const { relay, store, callId } = await recorded();
    await store.store(callId, FILE, 12_000);
    const ranged = async (range: string, headers: Record<string, string> = {}) => get(relay, 'alice', callId, { range, ...headers });

    const cases: [string, number, number][] = [
      ['bytes=0-0', 0, 0],
      ['bytes=100-199', 100, 199],
      ['bytes=4990-', 4990, 4999],
      ['bytes=4000-9999999999999999999999', 4000, 4999],
      ['bytes=-10', 4990, 4999],
      ['bytes=-6000', 0, 4999],
      ['BYTES = 1-2'.replace(' = ', '='), 1, 2],
      ['bytes= 7-8 ,', 7, 8],
    ];
    for (const [range, start, end] of cases) {
      const part = await ranged(range);
      expect(part.status, range).toBe(206);
      expect(part.headers.get('content-range'), range).toBe(`bytes ${start}-${end}/5000`);
      expect(part.headers.get('content-length'), range).toBe(String(end - start + 1));
      expect(part.bytes, range).toEqual(FILE.subarray(start, end + 1));
    }
    for (const range of ['bytes=5000-', 'bytes=5000-5001', 'bytes=99999999999999999999999-', 'bytes=-0', 'bytes=10-5', 'bytes=abc', 'bytes=', 'bytes=1-2-3']) {
      const refused = await ranged(range);
      expect(refused.status, range).toBe(416);
      expect(refused.headers.get('content-range'), range).toBe('bytes */5000');
      expect(JSON.parse(new TextDecoder().decode(refused.bytes)), range).toMatchObject({ error: { code: 'range_not_satisfiable', size: 5000 } });
    }
    // Not a range this server takes: the whole file.
    for (const range of ['bytes=0-1,3-4', 'items=0-1', 'nonsense']) {
      const whole = await ranged(range);
      expect(whole.status, range).toBe(200);
      expect(whole.bytes.length, range).toBe(5000);
    }
    // If-Range: the range while the validator names these bytes, else the whole file.
    const etag = (await get(relay, 'alice', callId)).headers.get('etag')!;
    const lastModified = (await get(relay, 'alice', callId)).headers.get('last-modified')!;
    expect((await ranged('bytes=0-9', { 'if-range': etag })).status).toBe(206);
    expect((await ranged('bytes=0-9', { 'if-range': lastModified })).status).toBe(206);
    expect((await ranged('bytes=0-9', { 'if-range': '"other"' })).status).toBe(200);
    expect((await ranged('bytes=0-9', { 'if-range': 'Thu, 01 Jan 1970 00:00:00 GMT' })).status).toBe(200);
    // HEAD takes no range.
    expect((await get(relay, 'alice', callId, { range: 'bytes=0-9' }, 'HEAD')).status).toBe(200);
  });

  it('is 404 from a relay that keeps no recordings', async () => {
    const direct = await startRelay({ port: 0, appSecret: APP_SECRET, agents: [...agents, supervisor], logger: quietLogger });
    closing.push(() => direct.close());
    expect(await ask(direct, 'sue', RECORDING_AGENT_PATHS.file('wacid.x'), undefined, 'GET')).toEqual({ status: 404, body: { error: { code: 'not_found', message: 'no recording of call wacid.x' } } });
  });
});

describe('rangeOf', () => {
  it('reads RFC 9110 byte ranges against a size', () => {
    expect(rangeOf(undefined, 10)).toEqual({ kind: 'whole' });
    expect(rangeOf('bytes=2-4', 10)).toEqual({ kind: 'partial', start: 2, end: 4 });
    expect(rangeOf('bytes=9-', 10)).toEqual({ kind: 'partial', start: 9, end: 9 });
    expect(rangeOf('bytes=-3', 10)).toEqual({ kind: 'partial', start: 7, end: 9 });
    expect(rangeOf('bytes=10-', 10)).toEqual({ kind: 'unsatisfiable' });
    expect(rangeOf('bytes=0-0', 0)).toEqual({ kind: 'unsatisfiable' });
    // An empty representation has nothing to send in part: a suffix of it is the whole of it.
    expect(rangeOf('bytes=-5', 0)).toEqual({ kind: 'whole' });
    expect(rangeOf('bytes=-0', 10)).toEqual({ kind: 'unsatisfiable' });
    expect(rangeOf(['bytes=0-1', 'bytes=2-3'], 10)).toEqual({ kind: 'whole' });
    expect(rangeOf('bytes=0-1, ,', 10)).toEqual({ kind: 'partial', start: 0, end: 1 });
  });
});

describe('PUT /bridge/recordings/{callId}', () => {
  async function put(relay: RelayServer, callId: string, body: Uint8Array<ArrayBuffer>, headers: Record<string, string>): Promise<{ status: number; body: Record<string, unknown> }> {
    const res = await fetch(`${relay.url}${BRIDGE_RECORDING_UPLOAD_PATH(callId)}`, { method: 'PUT', headers, body });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  }
  const nodeHeaders = { authorization: `Bearer ${BRIDGE_TOKEN}`, 'content-type': 'audio/ogg', 'x-recording-duration-ms': '12000' };

  it('takes a node’s file with the bridge token alone, and names what is wrong with a bad one', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'recordings-upload-'));
    closing.push(() => rm(dir, { recursive: true, force: true }));
    const store = new RecordingsStore({ dir, logger: quietLogger });
    await store.open();
    closing.push(() => store.close());
    const relay = await startRelay({ port: 0, appSecret: APP_SECRET, agents: [...agents, supervisor], logger: quietLogger, bridgeToken: BRIDGE_TOKEN, recordings: { mode: 'always', store, notice: NOTICE } });
    closing.push(() => relay.close());
    const callId = 'wacid.uploaded';

    expect((await put(relay, callId, FILE, { ...nodeHeaders, authorization: '' })).status).toBe(401);
    expect(await put(relay, callId, FILE, { ...nodeHeaders, authorization: `Bearer ${tokens.alice}` })).toEqual({
      status: 401,
      body: { error: { code: 'unauthorized', message: 'the bridge token is required (Authorization: Bearer <bridge token>)' } },
    });
    expect(await put(relay, callId, FILE, { ...nodeHeaders, 'content-type': 'application/octet-stream' })).toEqual({
      status: 400,
      body: { error: { code: 'invalid_input', message: 'Content-Type: must be audio/ogg (an Ogg Opus file)', field: 'Content-Type' } },
    });
    for (const duration of ['', '-1', '1.5', 'soon', '604800001']) {
      expect(await put(relay, callId, FILE, { ...nodeHeaders, 'x-recording-duration-ms': duration }), duration).toMatchObject({ status: 400, body: { error: { field: 'X-Recording-Duration-Ms' } } });
    }
    expect(await put(relay, callId, Uint8Array.from([1, 2, 3, 4, 5]), nodeHeaders)).toEqual({
      status: 400,
      body: { error: { code: 'invalid_input', message: 'body: must be an Ogg stream (it starts with "OggS")', field: 'body' } },
    });
    expect(await ask(relay, 'sue', RECORDING_AGENT_PATHS.file(callId), undefined, 'GET')).toMatchObject({ status: 404 });
    expect((await fetch(`${relay.url}${BRIDGE_RECORDING_UPLOAD_PATH(callId)}`, { headers: nodeHeaders })).status).toBe(405);

    expect(await put(relay, callId, FILE, { ...nodeHeaders, 'content-type': 'audio/ogg; codecs=opus' })).toEqual({ status: 200, body: { callId, bytes: 5000 } });
    expect(await store.meta(callId)).toMatchObject({ callId, agents: [], durationMs: 12_000, bytes: 5000 });
    // A supervisor hears it; agents who were not in it (none is known) do not.
    expect((await get(relay, 'sue', callId)).bytes).toEqual(FILE);
    expect((await get(relay, 'alice', callId)).status).toBe(403);
    // A node's retry replaces it.
    expect(await put(relay, callId, FILE.subarray(0, 100), nodeHeaders)).toEqual({ status: 200, body: { callId, bytes: 100 } });
    expect((await get(relay, 'sue', callId)).bytes).toEqual(FILE.subarray(0, 100));
  });

  it('refuses at once a file said to be larger than a recording may be, and closes the connection', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'recordings-upload-'));
    closing.push(() => rm(dir, { recursive: true, force: true }));
    const store = new RecordingsStore({ dir, logger: quietLogger });
    await store.open();
    closing.push(() => store.close());
    const relay = await startRelay({ port: 0, appSecret: APP_SECRET, agents, logger: quietLogger, bridgeToken: BRIDGE_TOKEN, recordings: { mode: 'always', store, notice: NOTICE } });
    closing.push(() => relay.close());
    const answer = await new Promise<{ status: number; body: string; connection: string | undefined }>((resolve, reject) => {
      const req = request(`${relay.url}${BRIDGE_RECORDING_UPLOAD_PATH('wacid.huge')}`, { method: 'PUT', headers: { ...nodeHeaders, 'content-length': String(600 * 1024 * 1024) } }, (res) => {
        let body = '';
        res.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body, connection: res.headers.connection }));
      });
      req.on('error', reject);
      req.write(FILE);
    });
    expect(answer.status).toBe(413);
    expect(answer.connection).toBe('close');
    expect(JSON.parse(answer.body)).toEqual({ error: { code: 'payload_too_large', message: `the recording is larger than ${512 * 1024 * 1024} bytes, the limit of a recording`, limitBytes: 512 * 1024 * 1024 } });
    expect(await store.meta('wacid.huge')).toBeUndefined();
  });

  it('is no endpoint without a bridge token', async () => {
    const { relay } = await relayWith('on-demand');
    expect(await put(relay, 'wacid.x', FILE, nodeHeaders)).toEqual({ status: 404, body: { error: { code: 'not_found', message: `no such endpoint: ${BRIDGE_RECORDING_UPLOAD_PATH('wacid.x')}` } } });
  });
});

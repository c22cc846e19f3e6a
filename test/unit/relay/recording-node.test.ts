// A bridged call that records, through a real node (relay/REFERENCE.md "Recordings"): a real relay
// over HTTP, a BridgeNode in this process, the sandbox's customer making the call's offer and playing
// its voice, and a werift window playing a tone. The relay asks the node to record at the moment the
// customer is connected, with the bundled notice, tells the agent, and ends the call at the node.
//
// Where the node records too (BridgeNode.startRecording, bridge/), the whole path: the file the node
// hands over at the call's end is kept, served to the agent, and holds two channels: the business
// (the agent's tone, after the notice) and the customer.
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { BridgeNode } from '../../../bridge/bridge-node';
import { localBridge, LocalNodeEvents } from '../../../relay/bridged-calls';
import { bundledNoticePath, loadRecordNotice } from '../../../relay/record-notice';
import { RecordingsStore } from '../../../relay/recordings-store';
import { startRelay, type RelayServer } from '../../../relay/server';
import { BRIDGE_AGENT_PATHS, type BridgeControl, type BridgedCallReport, type Routes } from '../../../shared/bridge';
import { RECORDING_AGENT_PATHS, type RecordMode } from '../../../shared/bridge-recording';
import type { RelayEvent } from '../../../shared/events';
import { configureLogging } from '../../../shared/log';
import { ok, type Result } from '../../../shared/result';
import { toneAmplitude } from '../../../sandbox/tone-probe';
import { AgentWindow } from '../bridge/agent-window';
import { eventually, HOST, quietLogger, ServiceCustomer, sleep, TONE_A } from '../bridge/bridge-harness';
import { claimCall, team } from './agent-fixtures';
import { openSse, type TestSseStream } from './sse-test-client';
import { APP_SECRET, incomingCall, postWebhook, terminatedCall } from './webhook-fixtures';

configureLogging({ level: 'error' });
const run = promisify(execFile);

const { agents, tokens } = team('alice', 'bob');
const closing: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const close of closing.splice(0).reverse()) await close();
});

/** The node in the relay's process, and every recording start and stop the relay asked of it (with the customer leg's state then). */
class WatchedNode implements BridgeControl {
  readonly asks: { ask: 'start' | 'stop'; callId: string; noticeSamples?: number; customer?: string }[] = [];

  constructor(private readonly node: BridgeNode) {}

  prepareIncoming(callId: string, offer: string): Promise<Result<{ answer: string }>> {
    return this.node.prepareIncoming(callId, offer);
  }
  connectCustomer(callId: string): Promise<Result<null>> {
    return this.node.connectCustomer(callId);
  }
  prepareOutgoing(ref: string): Promise<Result<{ offer: string }>> {
    return this.node.prepareOutgoing(ref);
  }
  bindOutgoing(ref: string, callId: string): Promise<Result<null>> {
    return this.node.bindOutgoing(ref, callId);
  }
  applyCustomerAnswer(callId: string, answer: string): Promise<Result<null>> {
    return this.node.applyCustomerAnswer(callId, answer);
  }
  offerAgentLeg(callId: string, legId: string): Promise<Result<{ offer: string }>> {
    return this.node.offerAgentLeg(callId, legId);
  }
  applyAgentAnswer(callId: string, legId: string, answer: string): Promise<Result<null>> {
    return this.node.applyAgentAnswer(callId, legId, answer);
  }
  answerAgentLeg(callId: string, legId: string, offer: string): Promise<Result<{ answer: string }>> {
    return this.node.answerAgentLeg(callId, legId, offer);
  }
  setRoutes(callId: string, routes: Routes): Promise<Result<null>> {
    return this.node.setRoutes(callId, routes);
  }
  closeAgentLeg(callId: string, legId: string): Promise<Result<null>> {
    return this.node.closeAgentLeg(callId, legId);
  }
  endCall(callId: string): Promise<Result<null>> {
    return this.node.endCall(callId);
  }
  releaseCustomer(callId: string): Promise<Result<null>> {
    return this.node.releaseCustomer(callId);
  }
  report(callId: string): Promise<Result<BridgedCallReport>> {
    return this.node.report(callId);
  }
  async startRecording(callId: string, notice?: Int16Array): Promise<Result<null>> {
    const report = await this.node.report(callId);
    this.asks.push({ ask: 'start', callId, ...(notice !== undefined ? { noticeSamples: notice.length } : {}), ...(report.ok ? { customer: report.value.customer.state } : {}) });
    return ok(null);
  }
  stopRecording(callId: string): Promise<Result<null>> {
    this.asks.push({ ask: 'stop', callId });
    return Promise.resolve(ok(null));
  }
}

interface Setup {
  relay: RelayServer;
  store: RecordingsStore;
  notice: Int16Array;
}

async function recordingRelay(mode: RecordMode, control: (store: RecordingsStore) => { node: BridgeNode; control: BridgeControl }): Promise<Setup & { node: BridgeNode }> {
  const dir = await mkdtemp(join(tmpdir(), 'recording-node-'));
  closing.push(() => rm(dir, { recursive: true, force: true }));
  const store = new RecordingsStore({ dir, logger: quietLogger });
  await store.open();
  closing.push(() => store.close());
  const notice = await loadRecordNotice(bundledNoticePath('en_US'));
  if (!notice.ok) throw new Error(notice.error.message);
  const made = control(store);
  closing.push(() => made.node.close());
  const events = new LocalNodeEvents();
  const relay = await startRelay({
    port: 0,
    appSecret: APP_SECRET,
    agents,
    heartbeatMs: 60_000,
    logger: quietLogger,
    bridgeNodes: localBridge(made.control, 'local', events),
    recordings: { mode, store, notice: notice.value },
  });
  closing.push(() => relay.close());
  return { relay, store, notice: notice.value, node: made.node };
}

async function ask(relay: RelayServer, agentId: string, path: string, body?: unknown): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${relay.url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${tokens[agentId]}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

/** The customer calls with its own offer; alice answers in her window (a tone) as the app does; the customer hears her. */
async function answeredByAlice(relay: RelayServer, callId: string): Promise<{ customer: ServiceCustomer; window: AgentWindow; alice: TestSseStream }> {
  const alice = await openSse(relay.url, { token: tokens.alice });
  closing.push(() => alice.close());
  const customer = new ServiceCustomer();
  closing.push(() => customer.close());
  const offer = await customer.peer.makeOffer();
  if (!offer.ok) throw new Error(offer.error.message);
  expect((await postWebhook(relay.url, incomingCall(callId, { session: { sdp_type: 'offer', sdp: offer.value } }))).status).toBe(200);
  await alice.waitFor((s) => s.envelopes.some((e) => e.event.type === 'call.incoming' && e.event.callId === callId), 'the ring');
  const leg = await ask(relay, 'alice', BRIDGE_AGENT_PATHS.leg(callId));
  expect(leg.status).toBe(200);
  const window = new AgentWindow(TONE_A);
  closing.push(() => window.close());
  const windowAnswer = await window.answer(String(leg.body.offer));
  expect((await claimCall(relay.url, tokens.alice!, callId)).status).toBe(200);
  const answered = await ask(relay, 'alice', BRIDGE_AGENT_PATHS.answer(callId), { legId: leg.body.legId, sdp: windowAnswer });
  expect(answered.status).toBe(200);
  expect(await customer.peer.applyAnswer(String(answered.body.sdp))).toEqual({ ok: true, value: undefined });
  expect((await ask(relay, 'alice', BRIDGE_AGENT_PATHS.accepted(callId))).status).toBe(200);
  await eventually('the customer to hear alice', () => customer.hears(TONE_A) > 0.3, 10_000);
  return { customer, window, alice };
}

const recordingEvents = (s: TestSseStream) => s.envelopes.flatMap((e) => (e.event.type === 'call.recording' ? [e.event] : []));
const has = (predicate: (event: RelayEvent) => boolean) => (s: TestSseStream) => s.envelopes.some((e) => predicate(e.event));

describe('the relay’s side, with a real node', () => {
  it('always: asks the node to record with the bundled notice once the customer is connected, tells the agent, and ends the call at the node', { timeout: 40_000 }, async () => {
    let watched: WatchedNode | undefined;
    const { relay, notice } = await recordingRelay('always', () => {
      const node = new BridgeNode({ bindAddress: HOST, publicAddress: HOST, logger: quietLogger });
      watched = new WatchedNode(node);
      return { node, control: watched };
    });
    const callId = 'wacid.node-always';
    const { alice } = await answeredByAlice(relay, callId);
    await alice.waitFor((s) => recordingEvents(s).length === 1, 'the recording');
    expect(recordingEvents(alice)).toEqual([{ type: 'call.recording', callId, recording: true, timestamp: expect.any(Number) }]);
    // The notice: the bundled English sentence, at 48 kHz.
    expect(notice.length).toBeGreaterThan(48_000);
    expect(watched!.asks).toEqual([{ ask: 'start', callId, noticeSamples: notice.length, customer: expect.any(String) }]);

    expect((await postWebhook(relay.url, terminatedCall(callId))).status).toBe(200);
    await alice.waitFor(has((e) => e.type === 'call.terminated'), 'the end');
    await eventually('the node to let the call go', async () => !(await watched!.report(callId)).ok);
    expect(watched!.asks).toHaveLength(1);
  });

  it('on demand: Record and Stop recording reach the node, each told to the agent with who did it', { timeout: 40_000 }, async () => {
    let watched: WatchedNode | undefined;
    const { relay, notice } = await recordingRelay('on-demand', () => {
      const node = new BridgeNode({ bindAddress: HOST, publicAddress: HOST, logger: quietLogger });
      watched = new WatchedNode(node);
      return { node, control: watched };
    });
    const callId = 'wacid.node-on-demand';
    const { alice } = await answeredByAlice(relay, callId);
    expect(watched!.asks).toEqual([]);
    expect(await ask(relay, 'alice', RECORDING_AGENT_PATHS.toggle(callId), { recording: true })).toEqual({ status: 200, body: { recording: true } });
    expect(await ask(relay, 'alice', RECORDING_AGENT_PATHS.toggle(callId), { recording: false })).toEqual({ status: 200, body: { recording: false } });
    await alice.waitFor((s) => recordingEvents(s).length === 2, 'both changes');
    expect(recordingEvents(alice).map((e) => [e.recording, e.by])).toEqual([
      [true, 'alice'],
      [false, 'alice'],
    ]);
    expect(watched!.asks.map((a) => `${a.ask}:${a.noticeSamples ?? ''}`)).toEqual([`start:${notice.length}`, 'stop:']);
  });
});

/** ffmpeg's decoding of an Ogg Opus file: its channel count, and its 16-bit PCM at 48 kHz, one array per channel. */
async function decode(bytes: Uint8Array): Promise<{ channels: number; pcm: Int16Array[] }> {
  const dir = await mkdtemp(join(tmpdir(), 'recording-decode-'));
  try {
    const path = join(dir, 'call.ogg');
    await writeFile(path, bytes);
    const probe = await run('ffprobe', ['-v', 'error', '-show_entries', 'stream=codec_name,channels', '-of', 'json', path]);
    const stream = (JSON.parse(probe.stdout) as { streams: { codec_name: string; channels: number }[] }).streams[0]!;
    expect(stream.codec_name).toBe('opus');
    const { stdout } = await run('ffmpeg', ['-v', 'error', '-i', path, '-f', 's16le', '-ac', String(stream.channels), '-ar', '48000', '-'], { encoding: 'buffer', maxBuffer: 256 * 1024 * 1024 });
    const interleaved = new Int16Array(stdout.buffer, stdout.byteOffset, Math.floor(stdout.length / 2));
    const frames = Math.floor(interleaved.length / stream.channels);
    const pcm = Array.from({ length: stream.channels }, (_, c) => Int16Array.from({ length: frames }, (_, f) => interleaved[f * stream.channels + c]!));
    return { channels: stream.channels, pcm };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

const rms = (samples: Int16Array): number => Math.sqrt(samples.reduce((sum, s) => sum + (s / 32768) ** 2, 0) / Math.max(1, samples.length));

describe('the whole path, where the node records', () => {
  it('always: the call’s file is kept at its end and served to its agent, two channels: the business (notice, then the agent) and the customer', { timeout: 60_000 }, async () => {
    const { relay, store } = await recordingRelay('always', (recordings) => {
      const node = new BridgeNode({ bindAddress: HOST, publicAddress: HOST, logger: quietLogger, recordings });
      return { node, control: node };
    });
    const callId = 'wacid.node-recorded';
    const { alice } = await answeredByAlice(relay, callId);
    await alice.waitFor((s) => recordingEvents(s).length === 1, 'the recording');
    const startedAt = Date.now();
    await sleep(4_000);
    expect((await postWebhook(relay.url, terminatedCall(callId))).status).toBe(200);
    const recordedMs = Date.now() - startedAt;
    const meta = await eventually('the node to hand the file over', async () => {
      const known = await store.meta(callId);
      return known?.storedAt !== undefined ? known : undefined;
    }, 15_000);
    expect(meta).toMatchObject({ callId, agents: ['alice'] });
    // The audio written: from the start until the node ended the call, a moment after the terminate.
    expect(meta.durationMs).toBeGreaterThan(recordedMs - 1_000);
    expect(meta.durationMs).toBeLessThanOrEqual(meta.storedAt! - meta.startedAt + 500);

    const res = await fetch(`${relay.url}${RECORDING_AGENT_PATHS.file(callId)}`, { headers: { authorization: `Bearer ${tokens.alice}` } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('audio/ogg');
    const { channels, pcm } = await decode(new Uint8Array(await res.arrayBuffer()));
    expect(channels).toBe(2);
    const [business, customer] = pcm as [Int16Array, Int16Array];
    // After the notice (some 1.6 s), the business channel is alice's tone; the customer's is not.
    const late = (channel: Int16Array) => channel.subarray(48_000 * 2, Math.min(channel.length, 48_000 * 3.5));
    const businessTone = toneAmplitude(late(business), 48_000, TONE_A);
    expect(businessTone).toBeGreaterThan(0.05);
    expect(toneAmplitude(late(customer), 48_000, TONE_A)).toBeLessThan(businessTone / 5);
    // The customer's voice is on its own channel; the notice opens the business channel.
    expect(rms(late(customer))).toBeGreaterThan(0.01);
    expect(rms(business.subarray(0, 48_000))).toBeGreaterThan(0.01);
    expect((await fetch(`${relay.url}${RECORDING_AGENT_PATHS.file(callId)}`, { headers: { authorization: `Bearer ${tokens.bob}` } })).status).toBe(403);
  });
});

// Recording a bridged call on a real node (bridge/REFERENCE.md "Recording"): the sandbox's customer
// on the service's side, a werift window playing 720 Hz on the agent's. The customer hears the
// consent notice (here a 1245 Hz tone) over the agent, then the agent alone again, on one stream
// whose numbers run on across both changes; the file the node hands its sink when the call ends
// holds what the customer heard (notice included) in channel 0 and the customer's voice in channel 1.
import { describe, expect, test } from 'vitest';
import type { BridgeNode } from '../../../bridge/bridge-node';
import { BridgeControlClient } from '../../../bridge/control-client';
import { startControlServer } from '../../../bridge/control-server';
import { CUSTOMER } from '../../../shared/bridge';
import type { RecordingSink } from '../../../shared/bridge-recording';
import { ok, type Result } from '../../../shared/result';
import { toneAmplitude } from '../../../sandbox/tone-probe';
import { agentByNodeOffer, closedAfterEach, eventually, HOST, incomingCall, quietLogger, sleep, startNode, TONE_A, type ReceivedPacket, type ServiceCustomer } from './bridge-harness';
import { BRIDGE_TOKEN } from './control-fixtures';
import { decodeRecording, framesWithTone, RATE, rms, tone } from './recording-probe';

const NOTICE_HZ = 1245;
const NOTICE = tone(NOTICE_HZ, RATE, 0.18);

const track = closedAfterEach();

interface Stored {
  callId: string;
  file: Uint8Array;
  durationMs: number;
}

/** A sink that keeps what it is handed; `hold` keeps its answer back until released. */
class KeptRecordings implements RecordingSink {
  readonly stored: Stored[] = [];
  private held: (() => void) | undefined;

  constructor(private readonly hold = false) {}

  store(callId: string, file: Uint8Array, durationMs: number): Promise<Result<null>> {
    this.stored.push({ callId, file, durationMs });
    if (!this.hold) return Promise.resolve(ok(null));
    return new Promise((resolve) => (this.held = () => resolve(ok(null))));
  }

  release(): void {
    this.held?.();
  }
}

/** A call connected both ways: the customer hears the agent's tone. */
async function connectedCall(node: BridgeNode, callId: string): Promise<ServiceCustomer> {
  const customer = track(await incomingCall(node, callId));
  track(await agentByNodeOffer(node, callId, 'leg-a', TONE_A));
  await node.setRoutes(callId, { [CUSTOMER]: ['leg-a'], 'leg-a': [CUSTOMER] });
  await node.connectCustomer(callId);
  await eventually('the customer to hear the agent', () => customer.hears(TONE_A) > 0.3);
  return customer;
}

/**
 * The customer's stream across the notice's start and end: one SSRC, every packet the next number;
 * within a source 20 ms of timestamp a packet exactly, and where the source changes (the marked
 * packet starting each: the notice's mix, then the agent forwarded again) never back and never
 * leaping; the notice's stretch made by the node on its own clock's pace.
 */
function expectOneContinuousStream(packets: readonly ReceivedPacket[]): void {
  expect(new Set(packets.map((p) => p.ssrc)).size).toBe(1);
  const changes: number[] = [];
  for (let i = 1; i < packets.length; i++) {
    const [a, b] = [packets[i - 1]!, packets[i]!];
    expect(((b.sequenceNumber - a.sequenceNumber) & 0xffff) === 1 ? 1 : { at: i, from: a, to: b }).toBe(1);
    const step = (b.timestamp - a.timestamp) | 0;
    if (b.marker) {
      changes.push(i);
      expect(step >= 960 && step <= 48 * 300 ? true : { at: i, step }).toBe(true);
    } else expect(step === 960 ? true : { at: i, step }).toBe(true);
  }
  // The first change is the notice's start, the next its end (on a busy machine a window's timer may
  // stall long enough for silence to fill in later: more changes, each as continuous).
  expect(changes.length).toBeGreaterThanOrEqual(2);
  const made = packets.slice(changes[0], changes[1]);
  // The notice's mix: a frame every tick for as long as the notice, not one more.
  expect(made.length).toBe(NOTICE.length / 960);
  const first = made[0]!;
  const last = made[made.length - 1]!;
  // As bridge-incoming.test.ts allows a call's stream: a busy machine delays arrivals, and a node's
  // clock that stalled for more than a few frames starts afresh rather than bursting.
  expect(Math.abs((((last.timestamp - first.timestamp) >>> 0) / 48) - (last.at - first.at))).toBeLessThan(250);
}

describe('recording a bridged call', () => {
  test('the customer hears the notice over the agent, then the agent again, on one continuous stream; the file holds both sides', async () => {
    const sink = new KeptRecordings();
    const { node } = startNode({ recordings: sink });
    track(node);
    const customer = await connectedCall(node, 'wacid.rec-1');

    const before = customer.packets.length;
    expect(await node.startRecording('wacid.rec-1', NOTICE)).toEqual({ ok: true, value: null });
    await eventually('the customer to hear the notice over the agent', () => customer.hears(NOTICE_HZ) > 0.15 && customer.hears(TONE_A) > 0.15);
    // Starting again while recording plays no second notice.
    expect(await node.startRecording('wacid.rec-1', NOTICE)).toEqual({ ok: true, value: null });
    await eventually('the notice to end and the agent alone to be heard', () => customer.hears(NOTICE_HZ) < 0.02 && customer.hears(TONE_A) > 0.3, 4_000);
    await sleep(1_000);
    // From the last packet before the notice on.
    expectOneContinuousStream(customer.packets.slice(before - 1));

    expect(await node.endCall('wacid.rec-1')).toEqual({ ok: true, value: null });
    expect(sink.stored.map((s) => s.callId)).toEqual(['wacid.rec-1']);
    const { file, durationMs } = sink.stored[0]!;
    expect(durationMs).toBeGreaterThan(2_000);
    const decoded = await decodeRecording(file);
    expect(decoded).toMatchObject({ codec: 'opus', channels: 2, sampleRate: 48_000 });
    expect(decoded.business.length).toBe((durationMs * RATE) / 1_000);
    // Channel 0: the notice over the agent first, the agent alone after it. The notice is made on
    // the node's clock, in every frame; the agent's frames come on the window's timer, slower than
    // the node's clock (and, on a busy machine, late): a tick now and then has none of them.
    const noticeStretch = decoded.business.subarray(RATE / 10, (RATE * 9) / 10);
    expect(framesWithTone(noticeStretch, NOTICE_HZ)).toBeGreaterThan(0.9);
    expect(framesWithTone(noticeStretch, TONE_A)).toBeGreaterThan(0.25);
    const afterNotice = decoded.business.subarray(decoded.business.length - RATE, decoded.business.length - RATE / 10);
    expect(framesWithTone(afterNotice, TONE_A)).toBeGreaterThan(0.5);
    expect(toneAmplitude(afterNotice, RATE, NOTICE_HZ)).toBeLessThan(0.005);
    // Channel 1: the customer's voice, and neither the agent's tone nor the notice.
    const said = decoded.customer.subarray(RATE / 10, decoded.customer.length - RATE / 10);
    expect(rms(said)).toBeGreaterThan(0.01);
    expect(toneAmplitude(said, RATE, TONE_A)).toBeLessThan(0.005);
    expect(toneAmplitude(said, RATE, NOTICE_HZ)).toBeLessThan(0.005);
  });

  test('stopped and started again, the file leaves the pause out; ending the call never waits for the sink', async () => {
    const sink = new KeptRecordings(true);
    const { node } = startNode({ recordings: sink });
    track(node);
    await connectedCall(node, 'wacid.rec-2');

    expect(await node.stopRecording('wacid.rec-2')).toEqual({ ok: true, value: null });
    expect(await node.startRecording('wacid.rec-2')).toEqual({ ok: true, value: null });
    await sleep(1_000);
    expect(await node.stopRecording('wacid.rec-2')).toEqual({ ok: true, value: null });
    expect(await node.stopRecording('wacid.rec-2')).toEqual({ ok: true, value: null });
    await sleep(1_000);
    expect(await node.startRecording('wacid.rec-2')).toEqual({ ok: true, value: null });
    await sleep(1_000);
    // The sink holds its answer back: endCall answers all the same.
    expect(await node.endCall('wacid.rec-2')).toEqual({ ok: true, value: null });
    expect(sink.stored).toHaveLength(1);
    sink.release();
    const { durationMs } = sink.stored[0]!;
    // About the two seconds recorded, not the three the call lasted since it first started.
    expect(durationMs).toBeGreaterThan(1_700);
    expect(durationMs).toBeLessThan(2_500);
    expect(await node.startRecording('wacid.rec-2')).toMatchObject({ ok: false, error: { code: 'invalid_state' } });
    expect(await node.stopRecording('wacid.rec-2')).toMatchObject({ ok: false, error: { code: 'invalid_state' } });
  });

  test('refused before the customer is connected, for an unknown call, on a node with nowhere to keep it, and for a notice too long', async () => {
    const sink = new KeptRecordings();
    const { node } = startNode({ recordings: sink });
    track(node);
    track(await incomingCall(node, 'wacid.rec-3'));
    expect(await node.startRecording('wacid.rec-3')).toMatchObject({ ok: false, error: { code: 'invalid_state' } });
    expect(await node.startRecording('wacid.none')).toMatchObject({ ok: false, error: { code: 'not_found' } });
    expect(await node.stopRecording('wacid.none')).toMatchObject({ ok: false, error: { code: 'not_found' } });
    expect(await node.startRecording('wacid.rec-3', new Int16Array(31 * RATE))).toMatchObject({ ok: false, error: { code: 'invalid_input', field: 'notice' } });
    expect(await node.startRecording('')).toMatchObject({ ok: false, error: { code: 'invalid_input', field: 'callId' } });
    // A call that never recorded hands nothing over.
    expect(await node.endCall('wacid.rec-3')).toEqual({ ok: true, value: null });
    expect(sink.stored).toEqual([]);

    const { node: bare } = startNode();
    track(bare);
    await connectedCall(bare, 'wacid.rec-4');
    expect(await bare.startRecording('wacid.rec-4')).toMatchObject({ ok: false, error: { code: 'not_configured' } });
  });

  test('a customer that goes away hands the recording over at once, and once; so does a node that closes', async () => {
    const sink = new KeptRecordings();
    const { node, events } = startNode({ recordings: sink, mediaTimeoutMs: 1_000 });
    track(node);
    const gone = await connectedCall(node, 'wacid.rec-5');
    expect(await node.startRecording('wacid.rec-5')).toEqual({ ok: true, value: null });
    await sleep(500);
    await gone.close();
    await eventually('the customer’s leg to fail', () => events.some((e) => e.kind === 'customer_failed' && e.callId === 'wacid.rec-5'));
    await eventually('the recording to be handed over', () => sink.stored.length === 1);
    expect(sink.stored[0]).toMatchObject({ callId: 'wacid.rec-5' });
    expect(await node.startRecording('wacid.rec-5')).toMatchObject({ ok: false, error: { code: 'invalid_state' } });
    await node.endCall('wacid.rec-5');
    expect(sink.stored).toHaveLength(1);

    await connectedCall(node, 'wacid.rec-6');
    expect(await node.startRecording('wacid.rec-6')).toEqual({ ok: true, value: null });
    await sleep(300);
    await node.close();
    expect(sink.stored.map((s) => s.callId)).toEqual(['wacid.rec-5', 'wacid.rec-6']);
    expect(sink.stored[1]!.durationMs).toBeGreaterThan(0);
  });

  test('over the node’s control API: the relay’s client starts it with the notice and stops it; the file reaches the node’s sink', async () => {
    const sink = new KeptRecordings();
    const { node } = startNode({ recordings: sink });
    track(node);
    const server = await startControlServer({ control: node, bridgeToken: BRIDGE_TOKEN, host: HOST, logger: quietLogger });
    track(server);
    const client = new BridgeControlClient({ controlUrl: server.url, bridgeToken: BRIDGE_TOKEN, logger: quietLogger });
    track(client);
    const customer = await connectedCall(node, 'wacid.rec-7');
    expect(await client.startRecording('wacid.none', NOTICE)).toMatchObject({ ok: false, error: { code: 'not_found', httpStatus: 404 } });
    expect(await client.startRecording('wacid.rec-7', NOTICE)).toEqual({ ok: true, value: null });
    await eventually('the customer to hear the notice', () => customer.hears(NOTICE_HZ) > 0.15);
    expect(await client.stopRecording('wacid.rec-7')).toEqual({ ok: true, value: null });
    // Stopped during the notice: the notice stops too.
    await eventually('the notice to stop', () => customer.hears(NOTICE_HZ) < 0.02);
    expect(await client.endCall('wacid.rec-7')).toEqual({ ok: true, value: null });
    expect(sink.stored.map((s) => s.callId)).toEqual(['wacid.rec-7']);
    const decoded = await decodeRecording(sink.stored[0]!.file);
    expect(decoded.business.length).toBeGreaterThan(RATE / 10);
    expect(framesWithTone(decoded.business.subarray(RATE / 50), NOTICE_HZ)).toBeGreaterThan(0.5);
  });
});

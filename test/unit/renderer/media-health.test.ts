// A connected call's media health (renderer/webrtc/media-health.ts): awaiting the first packet,
// flowing, or away, and the one place that says "Reconnecting…"; the grace after which a call whose
// media does not come back fails with "The network connection was lost"; the seconds of quality and
// the record the media leaves when it closes.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { MediaHealth, MONITOR_INTERVAL_MS, NETWORK_LOST_REASON, type MediaCondition } from '../../../renderer/webrtc/media-health';
import { mediaText } from '../../../renderer/webrtc/media-text';
import { chromiumAnswer, customerOffer } from '../../fixtures/sdp';
import { FakePeerConnection, closeEngines, mediaEngine, waitFor } from './fake-call-media';

const GRACE_MS = 15_000;

function setUp() {
  const pc = new FakePeerConnection();
  pc.connectionState = 'connected';
  pc.iceConnectionState = 'connected';
  pc.localDescription = { type: 'answer', sdp: chromiumAnswer };
  pc.remoteDescription = { type: 'offer', sdp: customerOffer };
  const conditions: MediaCondition[] = [];
  let lost = 0;
  let micOpen = true;
  const health = new MediaHealth({
    localId: 'in:wacid.1',
    pc: () => pc as unknown as RTCPeerConnection,
    micOpen: () => micOpen,
    graceMs: GRACE_MS,
    condition: (c) => conditions.push(c),
    lost: () => void lost++,
  });
  /** One more second of the monitor: `packets` more from the customer. */
  const second = async (packets: number) => {
    pc.inboundPackets += packets;
    await vi.advanceTimersByTimeAsync(MONITOR_INTERVAL_MS);
  };
  return { pc, health, conditions, lost: () => lost, second, setMicOpen: (open: boolean) => (micOpen = open) };
}

const reconnecting = (conditions: MediaCondition[]) => conditions.map((c) => c.reconnecting);

describe('MediaHealth', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('a first packet that comes late is waited for silently: no "Reconnecting…", and the call goes on once it comes', async () => {
    const t = setUp();
    t.pc.inboundPackets = 0;
    t.health.start();
    await t.second(0);
    await t.second(0);
    expect(t.health.view().reconnecting).toBe(false);
    expect(reconnecting(t.conditions).every((r) => !r)).toBe(true);
    await t.second(50);
    expect(t.health.view().reconnecting).toBe(false);
    await vi.advanceTimersByTimeAsync(GRACE_MS);
    expect(t.lost()).toBe(0);
  });

  it('no first packet within the grace: the call is given up', async () => {
    const t = setUp();
    t.pc.inboundPackets = 0;
    t.health.start();
    await t.second(0);
    await vi.advanceTimersByTimeAsync(GRACE_MS - MONITOR_INTERVAL_MS);
    expect(t.lost()).toBe(0);
    await vi.advanceTimersByTimeAsync(MONITOR_INTERVAL_MS);
    expect(t.lost()).toBe(1);
  });

  it('media that stops after it flowed is "Reconnecting…" at once, with when; its return clears it and the grace', async () => {
    const t = setUp();
    t.health.start();
    await t.second(50);
    expect(t.conditions.at(-1)).toMatchObject({ localId: 'in:wacid.1', reconnecting: false });
    t.conditions.length = 0;

    await t.second(0);
    expect(t.health.view().reconnecting).toBe(true);
    // The change itself, at once, then the second's reading that says the same.
    expect(t.conditions[0]).toEqual({ localId: 'in:wacid.1', reconnecting: true, since: expect.any(Number) });
    expect(t.conditions[1]).toMatchObject({ reconnecting: true, since: t.conditions[0]!.since });

    await t.second(50);
    expect(t.health.view().reconnecting).toBe(false);
    expect(t.conditions.at(-1)).toMatchObject({ reconnecting: false });
    await vi.advanceTimersByTimeAsync(GRACE_MS);
    expect(t.lost()).toBe(0);
  });

  it('ICE losing the path is "Reconnecting…" before the next read; media still away after the grace gives the call up', async () => {
    const t = setUp();
    t.health.start();
    await t.second(50);
    t.pc.iceConnectionState = 'disconnected';
    t.health.pathLost();
    expect(t.health.view().reconnecting).toBe(true);
    // Packets still counted, but the path is down: not back.
    await t.second(50);
    expect(t.health.view().reconnecting).toBe(true);
    await vi.advanceTimersByTimeAsync(GRACE_MS);
    expect(t.lost()).toBe(1);
  });

  it('keeps the seconds it read, says the quality now, and leaves a record when closed; a close while away ends "Reconnecting…"', async () => {
    const t = setUp();
    t.health.start();
    await t.second(50);
    t.setMicOpen(false);
    await t.second(50);
    expect(t.health.view()).toMatchObject({ reconnecting: false, sample: { packetsReceived: 50, micMuted: true }, summary: { samples: 2 } });
    await t.second(0);
    t.conditions.length = 0;
    const record = t.health.close();
    expect(t.conditions).toEqual([{ localId: 'in:wacid.1', reconnecting: false }]);
    expect(record).toMatchObject({ localId: 'in:wacid.1', summary: { samples: 3 }, sdp: { local: { setup: 'active' }, remote: { iceLite: true } } });
    expect(record?.samples.map((s) => s.packetsReceived)).toEqual([150, 50, 0]);
    // Closed: nothing more is read.
    const before = t.conditions.length;
    await t.second(50);
    expect(t.conditions).toHaveLength(before);
  });

  it('on a bridged call judges the customer leg from the bridge’s reports beside its own: the customer’s warnings marked as such, the record with both legs', async () => {
    const t = setUp();
    t.health.start();
    let node = { packetsReceived: 0, packetsLost: 0 };
    for (let i = 0; i < 6; i++) {
      node = { packetsReceived: node.packetsReceived + 44, packetsLost: node.packetsLost + 6 };
      t.health.customerLeg({ state: 'connected', ...node, jitterMs: 3, roundTripMs: 50 });
      await t.second(50);
    }
    expect(t.conditions.at(-1)?.warnings).toEqual([{ kind: 'high-packet-loss', value: 12, text: 'The customer’s connection is poor: 12 % packet loss', leg: 'customer' }]);
    expect(t.health.view()).toMatchObject({ warnings: [], customerWarnings: ['high-packet-loss'] });
    const record = t.health.close();
    expect(record?.summary.warningsSeen).toEqual(['high-packet-loss']);
    expect(record?.summary.legs?.customer.warningsSeen).toEqual(['high-packet-loss']);
    expect(record?.summary.legs?.agent.warningsSeen).toEqual([]);
  });

  it('a direct call (no report from a bridge) says nothing of a customer leg', async () => {
    const t = setUp();
    t.health.start();
    await t.second(50);
    expect(t.health.view().customerWarnings).toBeUndefined();
    expect(t.health.close()?.summary.legs).toBeUndefined();
  });

  it('a call never read leaves no record', () => {
    const t = setUp();
    expect(t.health.close()).toBeUndefined();
  });
});

describe('MediaHealth in the engine', () => {
  afterEach(() => closeEngines());

  it('a connected call whose path is lost and does not come back fails with "The network connection was lost", once', async () => {
    const t = mediaEngine({ disconnectGraceMs: 30 });
    const facts: string[] = [];
    t.engine.onFact((fact) => facts.push(fact.state === 'failed' ? `failed: ${mediaText(fact.reason)}` : fact.state));
    const { pc } = await t.connectCall();
    expect(facts).toEqual(['connected']);
    pc.setState('disconnected', 'disconnected');
    await waitFor('the call to be given up', () => facts.length === 2);
    expect(facts).toEqual(['connected', `failed: ${NETWORK_LOST_REASON}`]);
    expect(t.notices).toEqual([NETWORK_LOST_REASON]);
    // ICE failing afterwards says nothing more.
    pc.setState('failed', 'failed');
    expect(facts).toHaveLength(2);
  });
});

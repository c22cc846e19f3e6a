// The window's moments of a call's set-up (shared/diagnostics.ts WindowCallTimings): ICE let start
// when the call is pushed in `connecting` (an outgoing call: its answer applied), ICE connected,
// media connected; they go with the quality record the main process keeps for diagnostics.
import { afterEach, describe, expect, it } from 'vitest';
import type { CallQualityRecord } from '../../../renderer/webrtc/media-health';
import { closeEngines, connectingCall, LOCAL, mediaEngine, ringingCall, settle, type FakePeerConnection } from './fake-call-media';
import { chromiumAnswer } from '../../fixtures/sdp';
import { T0 } from './fixtures';

afterEach(() => closeEngines());

const now = () => performance.timeOrigin + performance.now();

/** ICE through, as Chromium says it (its own event), then DTLS. */
function iceThenDtls(pc: FakePeerConnection): void {
  pc.iceConnectionState = 'connected';
  pc.dispatchEvent(new Event('iceconnectionstatechange'));
  pc.connect();
}

describe('the window stamps its steps of a call set-up', () => {
  it('incoming: nothing before the connecting push; then ICE started, ICE connected and media connected, in order', async () => {
    const t = mediaEngine();
    const records: CallQualityRecord[] = [];
    t.engine.onCallQuality((record) => records.push(record));
    t.engine.onCall(ringingCall());
    const before = now();
    t.engine.noteTiming(LOCAL, { clickedAt: before });
    await t.engine.answerFor(ringingCall());
    const pc = t.peers[0]!;
    // The click is noted by its owner; the engine has noted nothing of ICE yet.
    expect(Object.keys(t.engine.timingsOf(LOCAL))).toEqual(['clickedAt']);
    // A second click's moment does not replace the first.
    t.engine.noteTiming(LOCAL, { clickedAt: before + 500 });
    expect(t.engine.timingsOf(LOCAL).clickedAt).toBe(before);

    t.engine.onCall(connectingCall());
    const started = t.engine.timingsOf(LOCAL).iceStartedAt;
    expect(started).toBeGreaterThanOrEqual(before);
    iceThenDtls(pc);
    const t1 = t.engine.timingsOf(LOCAL);
    expect(t1.iceConnectedAt).toBeGreaterThanOrEqual(started!);
    expect(t1.mediaConnectedAt).toBeGreaterThanOrEqual(t1.iceConnectedAt!);
    expect(t1.mediaConnectedAt).toBeLessThanOrEqual(now());

    // The record left when the media closes carries them (only calls whose statistics were read leave one).
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    t.engine.close(LOCAL);
    expect(records).toHaveLength(1);
    expect(records[0]!.timings).toEqual(t1);
  });

  it('a click after an Answer that did not go through starts the moments afresh', async () => {
    const t = mediaEngine();
    t.engine.onCall(ringingCall());
    // The preparation failed (the microphone refused): Answer fails, and the call rings on.
    t.refuse.set('', 'NotAllowedError');
    const first = now();
    t.engine.noteTiming(LOCAL, { clickedAt: first });
    expect((await t.engine.answerFor(ringingCall())).ok).toBe(false);
    t.refuse.clear();
    const second = first + 3_000;
    t.engine.noteTiming(LOCAL, { clickedAt: second });
    expect(t.engine.timingsOf(LOCAL)).toEqual({ clickedAt: second });

    // Handed over, then refused by the main process: the calls domain closes the media; the next click starts again.
    expect((await t.engine.answerFor(ringingCall())).ok).toBe(true);
    t.engine.noteTiming(LOCAL, { sdpReadyAt: second + 50 });
    t.engine.close(LOCAL);
    const third = second + 3_000;
    t.engine.noteTiming(LOCAL, { clickedAt: third });
    expect(t.engine.timingsOf(LOCAL)).toEqual({ clickedAt: third });
    expect((await t.engine.answerFor(ringingCall())).ok).toBe(true);
    t.engine.noteTiming(LOCAL, { sdpReadyAt: third + 50 });
    expect(t.engine.timingsOf(LOCAL)).toEqual({ clickedAt: third, sdpReadyAt: third + 50 });
  });

  it('outgoing: ICE starts when the customer\u2019s answer, pushed with the call, has been applied', async () => {
    const t = mediaEngine();
    const OUT = 'out:times';
    await t.engine.prepareOutgoing(OUT);
    expect(t.engine.timingsOf(OUT).iceStartedAt).toBeUndefined();
    const base = { direction: 'outgoing' as const, localId: OUT, peer: { number: '14155550123' }, createdAt: T0, callId: 'wacid.out-t' };
    t.engine.onCall({ ...base, phase: 'connecting', answerSdp: chromiumAnswer, answeredAt: T0 + 5000 });
    await settle();
    expect(t.peers[0]!.remoteDescription?.sdp).toBe(chromiumAnswer);
    expect(t.engine.timingsOf(OUT).iceStartedAt).toBeGreaterThan(0);
  });
});

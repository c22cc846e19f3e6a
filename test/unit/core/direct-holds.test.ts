// Main telling the relay a direct call's holds (electron/core/direct-holds.ts, PUT /calls/{id}/hold):
// through a real relay with the app's RelayClient, and the pace pinned with a target that answers
// when told (one report at a time, only the latest state, retries, refusals not retried).
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { CallState } from '../../../shared/call-state';
import type { Logger } from '../../../shared/log';
import { err, ok, type Result } from '../../../shared/result';
import { DirectHolds, type HoldReportTarget } from '../../../electron/core/direct-holds';
import { RelayClient } from '../../../electron/core/relay-client';
import { startRelay } from '../../../relay/server';
import { claimCall } from '../relay/agent-fixtures';
import { APP_SECRET, incomingCall, postWebhook } from '../relay/webhook-fixtures';
import { active, ended, ringing } from '../renderer/fixtures';

const AGENT_A = 'agent-token-0001-0123456789abcdef-0123';
const AGENT_B = 'agent-token-0002-0123456789abcdef-0123';
const quiet: Logger = { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} } as unknown as Logger;

const held = (id = 'wacid.1'): CallState => ({ ...active(id), heldSince: Date.now() }) as CallState;

afterEach(() => {
  vi.useRealTimers();
});

describe('a direct call’s holds reach the relay', () => {
  it('through a real relay: the owner’s hold and resume are taken; another agent’s call is refused and not asked again', async () => {
    const relay = await startRelay({ port: 0, appSecret: APP_SECRET, agentTokens: [AGENT_A, AGENT_B], heartbeatMs: 60_000, logger: quiet });
    const a = new RelayClient({ url: relay.url, token: AGENT_A });
    const b = new RelayClient({ url: relay.url, token: AGENT_B });
    try {
      expect((await postWebhook(relay.url, incomingCall('wacid.h1'))).status).toBe(200);
      expect((await claimCall(relay.url, AGENT_A, 'wacid.h1')).status).toBe(200);
      expect(await a.reportHold('wacid.h1', true)).toEqual(ok(null));
      expect(await a.reportHold('wacid.h1', false)).toEqual(ok(null));

      const asked: boolean[] = [];
      const warned: string[] = [];
      const bHolds = new DirectHolds({
        relay: { reportHold: (callId, h) => (asked.push(h), b.reportHold(callId, h)) },
        isBridged: () => false,
        logger: { ...quiet, warn: (m: string) => void warned.push(m) } as Logger,
        retryDelaysMs: [10, 10],
      });
      bHolds.callChanged(held('wacid.h1'));
      await vi.waitFor(() => expect(warned).toHaveLength(1));
      await new Promise((r) => setTimeout(r, 50));
      expect(asked).toEqual([true]);
      bHolds.stop();
    } finally {
      await a.close();
      await b.close();
      await relay.close();
    }
  });
});

/** A target whose reports wait until the test answers them. */
function scripted(): { target: HoldReportTarget; asked: Array<{ callId: string; held: boolean; answer(r: Result<null>): void }> } {
  const asked: Array<{ callId: string; held: boolean; answer(r: Result<null>): void }> = [];
  return {
    asked,
    target: { reportHold: (callId, h) => new Promise((resolve) => asked.push({ callId, held: h, answer: resolve })) },
  };
}

describe('the pace of hold reports', () => {
  it('nothing for a ringing, bridged or never-held call; a hold is told once', () => {
    const { target, asked } = scripted();
    const holds = new DirectHolds({ relay: target, isBridged: (callId) => callId === 'wacid.bridged', logger: quiet });
    holds.callChanged(ringing('wacid.1'));
    holds.callChanged(active('wacid.1'));
    holds.callChanged(held('wacid.bridged'));
    expect(asked).toEqual([]);
    holds.callChanged(held('wacid.1'));
    holds.callChanged(held('wacid.1'));
    expect(asked.map((a) => [a.callId, a.held])).toEqual([['wacid.1', true]]);
  });

  it('one report at a time: a hold, resume and hold while the first is out sends only what is wanted at its answer', async () => {
    const { target, asked } = scripted();
    const holds = new DirectHolds({ relay: target, isBridged: () => false, logger: quiet });
    holds.callChanged(held());
    holds.callChanged(active());
    holds.callChanged(held());
    holds.callChanged(active());
    expect(asked).toHaveLength(1);
    asked[0]!.answer(ok(null));
    await vi.waitFor(() => expect(asked).toHaveLength(2));
    expect(asked[1]!.held).toBe(false);
    asked[1]!.answer(ok(null));
    await new Promise((r) => setTimeout(r, 10));
    expect(asked).toHaveLength(2);
  });

  it('a relay that does not answer is asked again after 2 and 5 s; a newer change goes at once', async () => {
    vi.useFakeTimers();
    const { target, asked } = scripted();
    const holds = new DirectHolds({ relay: target, isBridged: () => false, logger: quiet });
    holds.callChanged(held());
    asked[0]!.answer(err('gateway_unreachable', 'down'));
    await vi.advanceTimersByTimeAsync(1_999);
    expect(asked).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(asked).toHaveLength(2);
    asked[1]!.answer(err('timeout', 'slow'));
    await vi.advanceTimersByTimeAsync(1_000);
    // Resumed meanwhile: told now, the pending retry of the hold dropped.
    holds.callChanged(active());
    expect(asked.map((a) => a.held)).toEqual([true, true, false]);
    asked[2]!.answer(ok(null));
    await vi.advanceTimersByTimeAsync(20_000);
    expect(asked).toHaveLength(3);
  });

  it('an ended call is let go, its retry with it', async () => {
    vi.useFakeTimers();
    const { target, asked } = scripted();
    const holds = new DirectHolds({ relay: target, isBridged: () => false, logger: quiet });
    holds.callChanged(held());
    asked[0]!.answer(err('gateway_unreachable', 'down'));
    await vi.advanceTimersByTimeAsync(100);
    holds.callChanged(ended());
    await vi.advanceTimersByTimeAsync(30_000);
    expect(asked).toHaveLength(1);
  });
});

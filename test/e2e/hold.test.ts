// Two calls at once, end to end: hold with music, call waiting, swap. Two sandbox customers are
// real WebRTC peers; each reports what it hears (the hold music, a voice, silence), so the test can
// tell the customer on hold from the one talking with the agent.
import { describe, expect, test } from 'vitest';
import type { SandboxCallReport } from '../../shared/sandbox';
import { currentCall, eventually, incomingCard, onCallWithWaiting, stackForFile, twoCustomers } from './harness';

// The service ends a call after this long without media mid-call (138022); holding must keep
// sending. Shorter than the holds below, so a hold that sent nothing would end the call.
const MEDIA_GAP_MS = 4_000;
const stack = stackForFile({ sandbox: { timeouts: { mediaGapTimeoutMs: MEDIA_GAP_MS } } });

/** Waits until the customer's last half second was `what`, and returns the report. */
async function customerHears(callId: string, what: SandboxCallReport['heardNow']): Promise<SandboxCallReport> {
  return eventually(`the customer of ${callId} to hear ${what}`, async () => {
    const report = await stack.callReport(callId);
    return report.heardNow === what ? report : undefined;
  });
}

/** How long the customer has heard each kind of audio so far, in ms. */
const heard = async (callId: string) => (await stack.callReport(callId)).heardMs;

async function presence(): Promise<string | undefined> {
  const snapshot = await stack.service.handle('getSnapshot', {});
  return snapshot.ok ? snapshot.value.presence?.status : undefined;
}

describe('hold, call waiting and swap', () => {
  test('on a call with A, B calls: "Answer and hold" → A hears music, B talks with the agent; "Swap"; each hangs up in turn', async () => {
    const page = await stack.newAgentPage();
    const [first, second] = twoCustomers(stack);
    // A calls and is answered.
    const a = await onCallWithWaiting(stack, page, first);
    await customerHears(a.callId, 'voice');

    // B calls: the card offers "Answer and hold" and "Decline".
    const b = await stack.control<{ callId: string }>('/control/incoming', { number: second.number });
    const card = incomingCard(page);
    await card.getByText(second.name).waitFor();
    await card.getByRole('button', { name: 'Decline', exact: true }).waitFor();
    // The waiting call plays the short call-waiting tone, not the ringtone.
    await eventually('the call-waiting tone', () => page.evaluate(() => (window as unknown as { __softphoneMedia: { ringSound(): string } }).__softphoneMedia.ringSound() === 'call-waiting'));
    await card.getByRole('button', { name: 'Answer and hold', exact: true }).click();

    // A is on hold: music on the same sender; B talks with the agent.
    const held = currentCall(page).getByRole('group', { name: 'Call on hold' });
    await held.getByText('On hold').waitFor();
    await held.getByText(first.name).waitFor();
    await customerHears(a.callId, 'music');
    await customerHears(b.callId, 'voice');
    // The music goes out on A's own sender; B's carries the microphone.
    const sending = await page.evaluate(() =>
      (window as unknown as { __softphoneMedia: { sessions(): { localId: string; held?: boolean; sending?: string }[] } }).__softphoneMedia.sessions().map((m) => [m.localId, m.held, m.sending]),
    );
    expect(sending).toEqual(expect.arrayContaining([[`in:${a.callId}`, true, 'music'], [`in:${b.callId}`, false, 'microphone']]));
    // The music is the bundled file (not the fallback rendered in the page).
    await expect(page.evaluate(() => (window as unknown as { __softphoneMedia: { holdMusic(): string | undefined } }).__softphoneMedia.holdMusic())).resolves.toBe('file');
    // Two calls: nobody rings this agent for a third.
    await eventually('presence on_call', async () => (await presence()) === 'on_call');

    // Held longer than the service's media gap: the music kept A's call up, and A still hears music.
    const musicBefore = (await heard(a.callId)).music;
    await page.waitForTimeout(MEDIA_GAP_MS + 1_000);
    const aReport = await stack.callReport(a.callId);
    expect(aReport.state).not.toBe('ended');
    expect(aReport.heardMs.music - musicBefore).toBeGreaterThan(MEDIA_GAP_MS - 1_000);
    // The agent's voice did not reach A while held: what A heard since is music (and no voice).
    expect(aReport.heardNow).toBe('music');
    // A is on the same RTP stream throughout: one business peer checked it.
    expect(aReport.checkedBy).toHaveLength(1);

    // Swap: B goes on hold, A is back with the agent at once.
    await held.getByRole('button', { name: 'Swap', exact: true }).click();
    await customerHears(a.callId, 'voice');
    await customerHears(b.callId, 'music');
    await currentCall(page).getByRole('group', { name: 'Call on hold' }).getByText(second.name).waitFor();

    // B, on hold, hangs up: only B's call ends; A goes on talking.
    await stack.control('/control/hangup', { callId: b.callId });
    await eventually('B ended', async () => (await stack.callReport(b.callId)).state === 'ended');
    await currentCall(page).getByRole('group', { name: 'Call on hold' }).waitFor({ state: 'detached' });
    await customerHears(a.callId, 'voice');
    await currentCall(page).getByRole('button', { name: 'Hold', exact: true }).waitFor();

    // Hold and Resume on the one call left: music, then the microphone again.
    await currentCall(page).getByRole('button', { name: 'Hold', exact: true }).click();
    await currentCall(page).getByText('On hold').waitFor();
    await customerHears(a.callId, 'music');
    await currentCall(page).getByRole('button', { name: 'Resume', exact: true }).click();
    await customerHears(a.callId, 'voice');

    // A hangs up.
    await stack.control('/control/hangup', { callId: a.callId });
    await eventually('A ended', async () => (await stack.callReport(a.callId)).state === 'ended');
    await eventually('presence available', async () => (await presence()) === 'available');
    // Neither call ended for want of media (138021/138022).
    const log = await stack.gatewayLog();
    expect(log.filter((l) => l.callId === a.callId || l.callId === b.callId).map((l) => l.action)).toEqual(['accept', 'accept']);
  });

  test('hanging up the active call leaves the held one on hold, with "Resume" in reach', async () => {
    const page = await stack.newAgentPage();
    const [first, second] = twoCustomers(stack);
    const a = await onCallWithWaiting(stack, page, first);
    const b = await stack.control<{ callId: string }>('/control/incoming', { number: second.number });
    await incomingCard(page).getByRole('button', { name: 'Answer and hold', exact: true }).click();
    await customerHears(b.callId, 'voice');
    await customerHears(a.callId, 'music');

    // The agent hangs up B: A stays on hold (still hearing music) until the agent resumes it.
    await currentCall(page).getByRole('button', { name: 'Hang up', exact: true }).click();
    await eventually('B ended', async () => (await stack.callReport(b.callId)).state === 'ended');
    await currentCall(page).getByText('On hold').waitFor();
    await customerHears(a.callId, 'music');
    const resume = currentCall(page).getByRole('button', { name: 'Resume', exact: true });
    await resume.click();
    await customerHears(a.callId, 'voice');
    await currentCall(page).getByRole('button', { name: 'Hang up', exact: true }).click();
    await eventually('A ended', async () => (await stack.callReport(a.callId)).state === 'ended');
  });
});

// The current call's keypad and mute, end to end: Chromium runs the real renderer through the
// browser host and the sandbox's customer (a real WebRTC peer) reports what it hears. DTMF must
// arrive as RFC 4733 events, and mute must silence the agent while RTP keeps flowing (protocol.md:
// a call without media from the business is ended with 138022).
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import type { Page } from 'playwright-core';
import type { SandboxCallReport } from '../../shared/sandbox';
import { currentCall, eventually, startStack, type Stack } from './harness';

/** The customer-peer's threshold for a silent frame, about -60 dBFS. */
const SILENCE_RMS = 0.001;
/** The agent's fake microphone (assets/test/agent-voice.wav) talks at about 0.05–0.1 RMS. */
const SPEAKING_RMS = 0.01;
/**
 * The sandbox's mid-call media gap (30 s in the real service), shortened so that a mute that stopped
 * RTP would end the call with 138022 well within the test's 3 s of mute.
 */
const MEDIA_GAP_TIMEOUT_MS = 1_500;

let stack: Stack;
let page: Page | undefined;
/** A second window (tab) of the same agent, when a test opens one. */
let other: Page | undefined;

beforeAll(async () => {
  stack = await startStack({ sandbox: { timeouts: { mediaGapTimeoutMs: MEDIA_GAP_TIMEOUT_MS } } });
});
afterAll(async () => {
  await stack?.close();
});
afterEach(async () => {
  // A test that failed mid-call leaves it up: the customer hangs up, so the next test's call rings.
  const calls = await stack.control<SandboxCallReport[]>('/control/calls');
  for (const call of calls.filter((c) => c.state !== 'ended')) await stack.control('/control/hangup', { callId: call.callId });
  await other?.context().close();
  other = undefined;
  await page?.context().close();
  page = undefined;
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A customer calls, the agent answers: the call is connected and the customer hears the agent. */
async function answeredCall(p: Page): Promise<{ callId: string; heard: SandboxCallReport }> {
  const { callId } = await stack.control<{ callId: string }>('/control/incoming', { number: stack.customer('answers').number });
  await p.getByRole('dialog', { name: 'Incoming call' }).getByRole('button', { name: 'Answer' }).click();
  await currentCall(p).getByText('Connected').waitFor();
  const heard = await eventually('the customer to hear the agent now', async () => {
    const r = await stack.callReport(callId);
    return r.recentRms > SPEAKING_RMS ? r : undefined;
  });
  return { callId, heard };
}

async function hangUp(p: Page, callId: string): Promise<void> {
  await currentCall(p).getByRole('button', { name: 'Hang up' }).click();
  await eventually('terminate to reach the gateway', async () => (await stack.gatewayLog()).some((l) => l.callId === callId && l.action === 'terminate'));
  expect((await stack.callReport(callId)).state).toBe('ended');
}

describe('keypad', () => {
  test('1, 2, #, 5 pressed on the keypad reach the customer as RFC 4733 digits "12#5"', async () => {
    page = await stack.newAgentPage();
    const { callId } = await answeredCall(page);
    expect((await stack.callReport(callId)).digitsHeard).toBe('');

    const call = currentCall(page);
    await call.getByRole('button', { name: 'Keypad' }).click();
    const keypad = call.getByRole('group', { name: 'Keypad' });
    for (const key of ['1', '2', '#', '5']) await keypad.getByRole('button', { name: key, exact: true }).click();
    await expect.poll(() => keypad.getByRole('status', { name: 'Tones sent' }).textContent()).toBe('12#5');
    await expect(keypad.getByRole('alert').count()).resolves.toBe(0);

    let digits = '';
    const heard = await eventually('the customer to hear "12#5"', async () => {
      digits = (await stack.callReport(callId)).digitsHeard ?? '';
      return digits.includes('12#5') ? digits : undefined;
    }).catch(() => digits);
    // Exactly the four presses: no digit lost, none repeated.
    expect(heard).toBe('12#5');

    await hangUp(page, callId);
  });
});

describe('mute', () => {
  test('mute silences the agent while RTP keeps flowing; unmute brings the voice back', async () => {
    page = await stack.newAgentPage();
    const { callId, heard } = await answeredCall(page);
    expect(heard.recentRms).toBeGreaterThan(SILENCE_RMS);

    const call = currentCall(page);
    await call.getByRole('button', { name: 'Mute', exact: true }).click();
    await expect.poll(() => call.getByRole('button', { name: 'Unmute' }).getAttribute('aria-pressed')).toBe('true');
    const silent = await eventually(
      'the customer to hear silence',
      async () => {
        const r = await stack.callReport(callId);
        return r.recentRms < SILENCE_RMS ? r : undefined;
      },
      3_000,
    );

    // 3 s of mute, twice the media gap timeout, sampled: silence every time, and more frames every
    // time (Chromium sends silence frames for a disabled track, so the service sees media and keeps
    // the call; without them it would end it with 138022).
    const samples: SandboxCallReport[] = [silent];
    const started = Date.now();
    while (Date.now() - started < 3_000) {
      await sleep(500);
      samples.push(await stack.callReport(callId));
    }
    for (const [i, r] of samples.entries()) {
      expect(r.state).toBe('connected');
      expect(r.recentRms).toBeLessThan(SILENCE_RMS);
      if (i > 0) expect(r.framesHeard).toBeGreaterThan(samples[i - 1]!.framesHeard);
    }
    // 20 ms frames: about 150 in 3 s; a sender that only trickled would fall far short.
    expect(samples.at(-1)!.framesHeard - silent.framesHeard).toBeGreaterThanOrEqual(100);

    await call.getByRole('button', { name: 'Unmute' }).click();
    await expect.poll(() => call.getByRole('button', { name: 'Mute', exact: true }).getAttribute('aria-pressed')).toBe('false');
    const back = await eventually(
      'the customer to hear the agent again',
      async () => {
        const r = await stack.callReport(callId);
        return r.recentRms > SPEAKING_RMS ? r : undefined;
      },
      5_000,
    );
    expect(back.framesHeard).toBeGreaterThan(samples.at(-1)!.framesHeard);

    await hangUp(page, callId);
  });

  test('Mute and Unmute clicked at once (a double click): main ends unmuted, as a window opened afterwards says, and the customer hears the agent', async () => {
    page = await stack.newAgentPage();
    const { callId } = await answeredCall(page);
    const call = currentCall(page);
    // The second click lands on the same button, now "Unmute", before main has answered the first.
    await call.getByRole('button', { name: 'Mute', exact: true }).dblclick();
    await expect.poll(() => call.getByRole('button', { name: 'Mute', exact: true }).getAttribute('aria-pressed')).toBe('false');
    await eventually('the customer to hear the agent', async () => ((await stack.callReport(callId)).recentRms > SPEAKING_RMS ? true : undefined), 5_000);

    // A window opened now reads the call from main's snapshot: main is where the last click asked.
    other = await stack.newAgentPage();
    const there = currentCall(other);
    await there.getByText('Connected').waitFor();
    await expect(there.getByRole('button', { name: 'Mute', exact: true }).getAttribute('aria-pressed')).resolves.toBe('false');
    await expect(call.getByRole('button', { name: 'Mute', exact: true }).getAttribute('aria-pressed')).resolves.toBe('false');
    expect((await stack.callReport(callId)).recentRms).toBeGreaterThan(SPEAKING_RMS);

    await hangUp(page, callId);
  });

  test('the mute is the call\'s: a second window of the agent shows it, and its Unmute brings back the voice of the window that carries the call', async () => {
    page = await stack.newAgentPage();
    const { callId } = await answeredCall(page);
    other = await stack.newAgentPage();
    const there = currentCall(other);
    await there.getByText('Connected').waitFor();
    await expect(there.getByRole('button', { name: 'Mute', exact: true }).getAttribute('aria-pressed')).resolves.toBe('false');

    await currentCall(page).getByRole('button', { name: 'Mute', exact: true }).click();
    await expect.poll(() => there.getByRole('button', { name: 'Unmute' }).getAttribute('aria-pressed')).toBe('true');
    await eventually('the customer to hear silence', async () => ((await stack.callReport(callId)).recentRms < SILENCE_RMS ? true : undefined), 3_000);

    // Unmuted from the window without the call's audio: the one with it opens its microphone.
    await there.getByRole('button', { name: 'Unmute' }).click();
    await expect.poll(() => currentCall(page!).getByRole('button', { name: 'Mute', exact: true }).getAttribute('aria-pressed')).toBe('false');
    await eventually('the customer to hear the agent again', async () => ((await stack.callReport(callId)).recentRms > SPEAKING_RMS ? true : undefined), 5_000);
    expect((await stack.callReport(callId)).state).toBe('connected');

    await hangUp(page, callId);
  });
});

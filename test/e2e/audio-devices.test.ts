// Audio devices end to end: Chromium's fake devices (a default plus two more of each kind) through
// the browser host. The choices persist across a reload and are used by a call (the microphone
// track, the remote audio's sink); changing them mid-call switches the live call without
// renegotiation, a chosen device that vanishes falls back to the default with a notice, and a
// microphone track that ends mid-call is captured again.
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import type { Page } from 'playwright-core';
import type { SandboxCallReport } from '../../shared/sandbox';
import { currentCall, eventually, startStack, type Stack } from './harness';

/** The agent's fake microphone (assets/test/agent-voice.wav) talks at about 0.05–0.1 RMS. */
const SPEAKING_RMS = 0.01;

let stack: Stack;
let page: Page | undefined;

beforeAll(async () => {
  stack = await startStack();
});
afterAll(async () => {
  await stack?.close();
});
afterEach(async () => {
  const calls = await stack.control<SandboxCallReport[]>('/control/calls');
  for (const call of calls.filter((c) => c.state !== 'ended')) await stack.control('/control/hangup', { callId: call.callId });
  await page?.context().close();
  page = undefined;
});

interface AudioRoute {
  micDeviceId: string;
  micLabel: string;
  micEnabled: boolean;
  micLive: boolean;
  sinkId: string;
}

type RecordingWindow = Window & { __micTracks: MediaStreamTrack[] };

/** From now on, every microphone track the page opens is kept, so the test can reach the one a call uses. */
const recordMicrophoneTracks = (p: Page): Promise<void> =>
  p.evaluate(() => {
    const media = navigator.mediaDevices;
    const real = media.getUserMedia.bind(media);
    const w = window as unknown as RecordingWindow;
    w.__micTracks = [];
    media.getUserMedia = async (constraints) => {
      const stream = await real(constraints);
      w.__micTracks.push(...stream.getAudioTracks());
      return stream;
    };
  });

/** How many of the recorded microphone tracks are still capturing. */
const liveMicrophoneTracks = (p: Page): Promise<number> =>
  p.evaluate(() => (window as unknown as RecordingWindow).__micTracks.filter((t) => t.readyState === 'live').length);

const audioSection = (p: Page) => p.getByRole('region', { name: 'Audio' });
const select = (p: Page, name: 'Microphone' | 'Speaker' | 'Ringer') => audioSection(p).getByRole('combobox', { name });
const selectedLabel = (p: Page, name: 'Microphone' | 'Speaker' | 'Ringer') => select(p, name).locator('option:checked').textContent();

/** The microphone track and the remote audio's sink of an incoming call, from the media engine. */
const audioRoute = (p: Page, callId: string): Promise<AudioRoute | undefined> =>
  p.evaluate((localId) => (window as unknown as { __softphoneMedia: { audioRoute(localId: string): AudioRoute | undefined } }).__softphoneMedia.audioRoute(localId), `in:${callId}`);

/** The page's device ids by label (they are per origin and per browser profile). */
const deviceIds = (p: Page): Promise<Record<string, string>> =>
  p.evaluate(async () => Object.fromEntries((await navigator.mediaDevices.enumerateDevices()).map((d) => [d.label, d.deviceId])));

async function openSettings(p: Page): Promise<void> {
  await p.getByRole('button', { name: 'Settings' }).click();
  // Listed once the page has read the devices.
  await expect.poll(() => select(p, 'Microphone').locator('option').count()).toBeGreaterThan(1);
}

/** The customer keeps hearing the agent: frames arrive and they are not silence. */
async function customerHearsAgent(callId: string): Promise<void> {
  const before = (await stack.callReport(callId)).framesHeard;
  await eventually('the customer to hear the agent', async () => {
    const r = await stack.callReport(callId);
    return r.framesHeard > before + 25 && r.recentRms > SPEAKING_RMS ? r : undefined;
  });
}

describe('audio devices', () => {
  test('the choices hold across a reload, are used by a call, switch mid-call, and a vanished device falls back with a notice', async () => {
    page = await stack.newAgentPage();
    await openSettings(page);
    // "System default" stands for Chromium's 'default' entry (here "Fake Default Audio …"), then every other device by its label.
    await expect.poll(() => select(page!, 'Microphone').locator('option').allTextContents()).toEqual(['System default', 'Fake Audio Input 1', 'Fake Audio Input 2']);
    await expect.poll(() => select(page!, 'Speaker').locator('option').allTextContents()).toEqual(['System default', 'Fake Audio Output 1', 'Fake Audio Output 2']);
    await expect.poll(() => select(page!, 'Ringer').locator('option').allTextContents()).toEqual(['System default', 'Fake Audio Output 1', 'Fake Audio Output 2']);

    await select(page, 'Microphone').selectOption({ label: 'Fake Audio Input 2' });
    await select(page, 'Speaker').selectOption({ label: 'Fake Audio Output 1' });
    await select(page, 'Ringer').selectOption({ label: 'Fake Audio Output 2' });
    const ids = await deviceIds(page);
    await eventually('the main process to keep the choices', async () => {
      const snap = await stack.service.handle('getSnapshot', {});
      const audio = snap.ok ? snap.value.preferences?.audio : undefined;
      return audio?.ringer?.label === 'Fake Audio Output 2' ? audio : undefined;
    });
    const stored = await stack.service.handle('getSnapshot', {});
    expect(stored.ok && stored.value.preferences?.audio).toEqual({
      microphone: { id: ids['Fake Audio Input 2'], label: 'Fake Audio Input 2' },
      speaker: { id: ids['Fake Audio Output 1'], label: 'Fake Audio Output 1' },
      ringer: { id: ids['Fake Audio Output 2'], label: 'Fake Audio Output 2' },
    });

    await page.reload();
    await page.getByRole('status', { name: 'Connection' }).getByText('Connected').waitFor();
    await openSettings(page);
    await expect.poll(() => selectedLabel(page!, 'Microphone')).toBe('Fake Audio Input 2');
    await expect.poll(() => selectedLabel(page!, 'Speaker')).toBe('Fake Audio Output 1');
    await expect.poll(() => selectedLabel(page!, 'Ringer')).toBe('Fake Audio Output 2');

    // "Test microphone" keeps its name while it runs (pressed), and leaving Settings stops it.
    await recordMicrophoneTracks(page);
    const testMicrophone = audioSection(page).getByRole('button', { name: 'Test microphone', exact: true });
    await expect.poll(() => testMicrophone.getAttribute('aria-pressed')).toBe('false');
    await testMicrophone.click();
    await expect.poll(() => testMicrophone.getAttribute('aria-pressed')).toBe('true');
    await page.getByRole('meter', { name: 'Microphone test level' }).waitFor();
    await expect.poll(() => liveMicrophoneTracks(page!)).toBe(1);
    await page.getByRole('button', { name: 'Back' }).click();
    await expect.poll(() => liveMicrophoneTracks(page!)).toBe(0);

    // A call uses the chosen microphone and speaker.
    const { callId } = await stack.control<{ callId: string }>('/control/incoming', { number: stack.customer('answers').number });
    // It rings on the ringer, which is not the speaker.
    await page.getByRole('dialog', { name: 'Incoming call' }).waitFor();
    await expect
      .poll(() => page!.evaluate(() => (window as unknown as { __softphoneMedia: { ringer(): { sinkId?: string; state: string } } }).__softphoneMedia.ringer()))
      .toEqual({ sinkId: ids['Fake Audio Output 2'], state: 'playing' });
    await page.getByRole('dialog', { name: 'Incoming call' }).getByRole('button', { name: 'Answer' }).click();
    await currentCall(page).getByText('Connected').waitFor();
    await expect.poll(() => audioRoute(page!, callId)).toMatchObject({ micLabel: 'Fake Audio Input 2', micDeviceId: ids['Fake Audio Input 2'], sinkId: ids['Fake Audio Output 1'] });
    await customerHearsAgent(callId);

    // Mid-call, muted: both switch at once, the mute holds, the call stays up.
    await currentCall(page).getByRole('button', { name: 'Mute' }).click();
    await openSettings(page);
    await select(page, 'Microphone').selectOption({ label: 'Fake Audio Input 1' });
    await select(page, 'Speaker').selectOption({ label: 'Fake Audio Output 2' });
    await expect.poll(() => audioRoute(page!, callId)).toEqual({
      micLabel: 'Fake Audio Input 1',
      micDeviceId: ids['Fake Audio Input 1'],
      micEnabled: false,
      micLive: true,
      sinkId: ids['Fake Audio Output 2'],
    });
    await page.getByRole('button', { name: 'Back' }).click();
    await currentCall(page).getByRole('button', { name: 'Unmute' }).click();
    await expect.poll(async () => (await audioRoute(page!, callId))?.micEnabled).toBe(true);
    await customerHearsAgent(callId);
    await expect(currentCall(page).getByText('Connected').count()).resolves.toBe(1);

    // A device cannot be unplugged here: the page's enumerateDevices is made to leave out the chosen
    // microphone and speaker, and `devicechange` is fired as the browser would.
    await page.evaluate(() => {
      const media = navigator.mediaDevices;
      const real = media.enumerateDevices.bind(media);
      (window as unknown as { __realEnumerate: typeof real }).__realEnumerate = real;
      media.enumerateDevices = async () => (await real()).filter((d) => d.label !== 'Fake Audio Input 1' && d.label !== 'Fake Audio Output 2');
      media.dispatchEvent(new Event('devicechange'));
    });
    const notice = page.getByRole('status', { name: 'Audio devices' });
    await notice.getByText('Fake Audio Input 1 disconnected: using Fake Default Audio Input').waitFor();
    await notice.getByText('Fake Audio Output 2 disconnected: using Fake Default Audio Output').waitFor();
    await expect.poll(() => audioRoute(page!, callId)).toMatchObject({ micLabel: 'Fake Default Audio Input', sinkId: '' });
    await customerHearsAgent(callId);

    // Plugged back: the call returns to it.
    await page.evaluate(() => {
      const media = navigator.mediaDevices;
      media.enumerateDevices = (window as unknown as { __realEnumerate: typeof media.enumerateDevices }).__realEnumerate;
      media.dispatchEvent(new Event('devicechange'));
    });
    await notice.getByText('Fake Audio Input 1 reconnected: using it again').waitFor();
    await expect.poll(() => audioRoute(page!, callId)).toMatchObject({ micLabel: 'Fake Audio Input 1', sinkId: ids['Fake Audio Output 2'] });
    await customerHearsAgent(callId);

    // The call's microphone ends under it, muted. A device cannot be unplugged here: the track is
    // stopped and its `ended` dispatched, which is how the browser reports a device that went away.
    await currentCall(page).getByRole('button', { name: 'Mute' }).click();
    await expect.poll(async () => (await audioRoute(page!, callId))?.micEnabled).toBe(false);
    const ended = await page.evaluate(() => {
      const live = (window as unknown as RecordingWindow).__micTracks.filter((t) => t.readyState === 'live');
      // Only the call holds a microphone now; anything else would make the wrong track end.
      const [track] = live;
      if (live.length !== 1 || !track) return `${live.length} live microphone tracks`;
      track.stop();
      track.dispatchEvent(new Event('ended'));
      return track.label;
    });
    expect(ended).toBe('Fake Audio Input 1');
    // Captured again on the chosen device, still muted, and the old track is gone from the call.
    await expect.poll(() => audioRoute(page!, callId)).toMatchObject({ micLabel: 'Fake Audio Input 1', micLive: true, micEnabled: false });
    await expect.poll(() => liveMicrophoneTracks(page!)).toBe(1);
    await currentCall(page).getByRole('button', { name: 'Unmute' }).click();
    await expect.poll(async () => (await audioRoute(page!, callId))?.micEnabled).toBe(true);
    await customerHearsAgent(callId);
    await expect(currentCall(page).getByText('Connected').count()).resolves.toBe(1);

    await currentCall(page).getByRole('button', { name: 'Hang up' }).click();
    await eventually('terminate to reach the gateway', async () => (await stack.gatewayLog()).some((l) => l.callId === callId && l.action === 'terminate'));
    // One offer/answer for the whole call: the switches needed no renegotiation.
    const actions = (await stack.gatewayLog()).filter((l) => l.callId === callId).map((l) => l.action);
    expect(actions).toEqual(['accept', 'terminate']);
  });
});

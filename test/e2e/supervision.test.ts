// Supervisors and the team's recordings on the bridge, end to end: Ana (an agent, 720 Hz) and Sam (a
// supervisor, 960 Hz), each in its own Chromium with its own fake microphone tone, Cleo (an agent
// who is in no call), and a sandbox customer who says a steady 1 245 Hz tone. Who hears whom is read
// from what each one receives: the customer's probe in the sandbox report, each window's from the
// spectrum of its remote audio. The relay records on demand: Ana presses "Record", the customer hears
// the notice, and the recording's two channels are decoded and checked for the right tones.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { bundledNoticePath, loadRecordNotice } from '../../relay/record-notice';
import { decodeRecording, RATE } from '../unit/bridge/recording-probe';
import { currentCall, eventually, incomingCard, recentCalls } from './harness';
import { agentHears, agentHearsTones, customerHearsTones, HEARD_DB, startToneTeam, type ToneTeam } from './tone-team';

const [ANA, SAM, CLEO, CUSTOMER] = [720, 960, 1440, 1245];
let team: ToneTeam;
let recordingsDir: string;
const pages: Page[] = [];

beforeAll(async () => {
  recordingsDir = await mkdtemp(join(tmpdir(), 'softphone-e2e-recordings-'));
  team = await startToneTeam({
    names: ['Ana', 'Sam', 'Cleo'],
    tonesHz: [ANA, SAM, CLEO],
    roles: ['agent', 'supervisor', 'agent'],
    customerToneHz: CUSTOMER,
    record: { mode: 'on-demand', dir: recordingsDir },
    relay: { tellAgentsWhenMonitored: true },
  });
}, 60_000);
afterAll(async () => {
  for (const page of pages.splice(0)) await page.context().close().catch(() => undefined);
  await team?.close();
  if (recordingsDir !== undefined) await rm(recordingsDir, { recursive: true, force: true });
});

async function open(index: number): Promise<Page> {
  const page = await team.newAgentPage(index);
  pages.push(page);
  return page;
}

/** The supervisor's panel of the call it joined, on every screen. */
const joined = (page: Page) => page.getByRole('region', { name: 'Joined call' });

async function relayGet(path: string, token: string, headers: Record<string, string> = {}): Promise<{ status: number; bytes: Buffer; headers: Headers }> {
  const res = await fetch(new URL(path, team.relay.url), { headers: { authorization: `Bearer ${token}`, ...headers } });
  return { status: res.status, bytes: Buffer.from(await res.arrayBuffer()), headers: res.headers };
}

/** How strongly `hz` is in `samples` (Goertzel, normalised to a full-scale sine = 1). */
function toneLevel(samples: Int16Array, hz: number): number {
  if (samples.length === 0) return 0;
  const k = (2 * Math.PI * hz) / RATE;
  const coeff = 2 * Math.cos(k);
  let s1 = 0;
  let s2 = 0;
  for (const sample of samples) {
    const s0 = sample / 32768 + coeff * s1 - s2;
    s2 = s1;
    s1 = s0;
  }
  const power = s1 * s1 + s2 * s2 - coeff * s1 * s2;
  return (2 * Math.sqrt(Math.max(power, 0))) / samples.length;
}

/** Every 4th sample's mean: 12 kHz keeps speech, and a quarter of the work. */
function decimated(samples: Int16Array): Float64Array {
  const out = new Float64Array(Math.floor(samples.length / 4));
  for (let i = 0; i < out.length; i++) out[i] = (samples[4 * i]! + samples[4 * i + 1]! + samples[4 * i + 2]! + samples[4 * i + 3]!) / 4;
  return out;
}

/** How much of `sound` is `words`, at the best start within it: their normalised cross-correlation's peak (0–1). */
function likeness(sound: Int16Array, words: Int16Array): number {
  const a = decimated(sound);
  const b = decimated(words);
  const bEnergy = b.reduce((sum, x) => sum + x * x, 0);
  let best = 0;
  for (let lag = 0; lag + b.length <= a.length; lag++) {
    let dot = 0;
    let aEnergy = 0;
    for (let i = 0; i < b.length; i++) {
      const x = a[lag + i]!;
      dot += x * b[i]!;
      aEnergy += x * x;
    }
    if (aEnergy > 0) best = Math.max(best, Math.abs(dot) / Math.sqrt(aEnergy * bEnergy));
  }
  return best;
}

/** The seconds [from, to) of a channel. */
const span = (samples: Int16Array, from: number, to: number): Int16Array => samples.subarray(Math.round(from * RATE), Math.round(to * RATE));

describe('supervisors and recordings on the bridge', () => {
  test('listen, whisper and barge: each heard by exactly whom it should be; the agent is told; the recording holds the barge but not the whisper', async () => {
    const [ana, sam, cleo] = [await open(0), await open(1), await open(2)];
    const customer = team.customer('answers');
    const { callId } = await team.control<{ callId: string }>('/control/incoming', { number: customer.number });
    await incomingCard(ana).getByRole('button', { name: 'Answer' }).click();
    await currentCall(ana).getByText('Connected').waitFor();
    await customerHearsTones(team, callId, [ANA], [SAM]);
    await agentHearsTones(ana, [CUSTOMER], [SAM]);

    // Recording on demand: the notice first, then the call; the window says so.
    await currentCall(ana).getByRole('button', { name: 'Record' }).click();
    await currentCall(ana).getByText('Recording').first().waitFor();
    await currentCall(ana).getByRole('button', { name: 'Stop recording' }).waitFor();
    const recordingFrom = Date.now();
    // The notice plays over the agent for a few seconds; let it end before the supervisor comes.
    await ana.waitForTimeout(5_000);

    // An agent who is not a supervisor sees no live calls and no controls; the relay refuses it.
    await cleo.getByRole('button', { name: 'Team' }).click();
    await cleo.getByRole('heading', { name: 'Team' }).first().waitFor();
    for (const name of ['Listen', 'Whisper', 'Barge']) expect(await cleo.getByRole('button', { name, exact: true }).count()).toBe(0);
    expect((await relayGet('/team/calls', team.agents[2]!.token)).status).toBe(403);

    // The supervisor's Team view lists the call live, with its agent, customer and state.
    await sam.getByRole('button', { name: 'Team' }).click();
    const live = sam.getByRole('region', { name: 'Live calls' });
    await live.getByText('Ana').first().waitFor();
    await live.getByText(customer.name).first().waitFor();
    await live.getByText('Talking').first().waitFor();
    await live.getByText('Recording').first().waitFor();

    // Listen: Sam hears both; nobody hears Sam. The team tells its agents of a listen.
    await live.getByRole('button', { name: 'Listen', exact: true }).click();
    await agentHearsTones(sam, [ANA, CUSTOMER]);
    await joined(sam).getByText(`Listening to Ana and ${customer.name}`).waitFor();
    // Every window in the call says it records: the supervisor's too.
    await joined(sam).getByRole('status', { name: 'Recording', exact: true }).waitFor();
    await currentCall(ana).getByText('Sam is listening').waitFor();
    await customerHearsTones(team, callId, [ANA], [SAM]);
    await agentHearsTones(ana, [CUSTOMER], [SAM]);

    // Whisper: Ana hears Sam, the customer does not.
    const whisperFrom = (Date.now() - recordingFrom) / 1000;
    await joined(sam).getByRole('button', { name: 'Whisper', exact: true }).click();
    await currentCall(ana).getByText('Sam is whispering').waitFor();
    await agentHearsTones(ana, [CUSTOMER, SAM]);
    await customerHearsTones(team, callId, [ANA], [SAM]);
    await agentHearsTones(sam, [ANA, CUSTOMER]);
    await ana.waitForTimeout(3_000);
    const whisperTo = (Date.now() - recordingFrom) / 1000;

    // Barge: all three hear each other.
    await joined(sam).getByRole('button', { name: 'Barge', exact: true }).click();
    await currentCall(ana).getByText('Sam joined the call').waitFor();
    await customerHearsTones(team, callId, [ANA, SAM], []);
    await agentHearsTones(ana, [CUSTOMER, SAM]);
    await agentHearsTones(sam, [ANA, CUSTOMER]);
    const bargeFrom = (Date.now() - recordingFrom) / 1000;
    await ana.waitForTimeout(3_000);
    const bargeTo = (Date.now() - recordingFrom) / 1000;

    // Leave: back to the two of them.
    await joined(sam).getByRole('button', { name: 'Leave' }).click();
    await joined(sam).waitFor({ state: 'hidden' });
    await customerHearsTones(team, callId, [ANA], [SAM]);
    await eventually('Ana no longer hears Sam', async () => ((await agentHears(ana, [SAM]))[SAM]! < HEARD_DB ? true : undefined));
    await eventually('Ana is told Sam left', async () => ((await currentCall(ana).getByText('Sam joined the call').count()) === 0 ? true : undefined));

    await currentCall(ana).getByRole('button', { name: 'Hang up' }).click();
    const endedAt = (Date.now() - recordingFrom) / 1000;

    // Who may hear the recording: Ana (in the call) and Sam (a supervisor); Cleo may not; no such call is 404.
    const [anaToken, samToken, cleoToken] = team.agents.map((a) => a.token);
    const file = await eventually('the recording stored', async () => {
      const got = await relayGet(`/recordings/${encodeURIComponent(callId)}`, anaToken!);
      return got.status === 200 ? got : undefined;
    }, 20_000);
    expect(file.headers.get('content-type')).toMatch(/^audio\/ogg/);
    expect((await relayGet(`/recordings/${encodeURIComponent(callId)}`, samToken!)).status).toBe(200);
    expect((await relayGet(`/recordings/${encodeURIComponent(callId)}`, cleoToken!)).status).toBe(403);
    expect((await relayGet('/recordings/no-such-call', anaToken!)).status).toBe(404);
    const ranged = await relayGet(`/recordings/${encodeURIComponent(callId)}`, anaToken!, { range: 'bytes=100-199' });
    expect(ranged.status).toBe(206);
    expect(ranged.bytes).toEqual(file.bytes.subarray(100, 200));

    // One Ogg Opus file, two channels: business (Ana, the notice, Sam's barge) and the customer.
    const { codec, channels, business, customer: said } = await decodeRecording(file.bytes);
    expect(codec).toBe('opus');
    expect(channels).toBe(2);
    const seconds = business.length / RATE;
    expect(seconds).toBeGreaterThan(endedAt - 3);
    expect(seconds).toBeLessThan(endedAt + 3);
    const heard = 0.02;
    const quiet = 0.005;
    // The notice's words are at the start of the business channel, over Ana's tone.
    const notice = await loadRecordNotice(bundledNoticePath('en_US'));
    if (!notice.ok) throw new Error(notice.error.message);
    expect(likeness(span(business, 0, 3), notice.value)).toBeGreaterThan(0.15);
    expect(likeness(span(business, 6, 9), notice.value)).toBeLessThan(0.06);
    expect(toneLevel(span(said, 6, seconds - 1), CUSTOMER)).toBeGreaterThan(heard);
    expect(toneLevel(span(said, 6, seconds - 1), ANA)).toBeLessThan(quiet);
    expect(toneLevel(span(business, 6, seconds - 1), ANA)).toBeGreaterThan(heard);
    // The whisper is not in the recording; the barge is.
    expect(toneLevel(span(business, whisperFrom + 1, whisperTo - 0.5), SAM)).toBeLessThan(quiet);
    expect(toneLevel(span(business, bargeFrom + 0.5, bargeTo - 0.5), SAM)).toBeGreaterThan(heard);

    // In recent calls, "Play recording" plays the team's recording in the window.
    const row = recentCalls(ana).getByRole('listitem').filter({ hasText: customer.name }).first();
    await row.getByRole('button', { name: 'Play recording' }).click();
    await expect
      .poll(() => row.locator('audio').first().evaluate((a: HTMLAudioElement) => (a.src.startsWith('blob:') && Number.isFinite(a.duration) ? a.duration : 0)), { timeout: 10_000 })
      .toBeGreaterThan(5);
  });
});

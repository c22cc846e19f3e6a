// `npm run bench`: call-path latencies over real calls against the sandbox, through the real relay,
// service, browser host and Chromium. Prints median and p95 of each measure.
//
//   webhook received by the relay → ringing shown in the UI      (target median 50 ms)
//   click Answer → accept received by the sandbox                 (target median 30 ms)
//   click Answer → two-way audio                                  (target median 300 ms)
//   click Call → initiate received by the sandbox                 (target median 150 ms)
//   bridged: click Answer → two-way audio                         (goal: no slower than direct)
//
// and the floor (floor.ts): a bare Chromium page answering the same customers through the same
// accept request, timed the same way, after each of the app's incoming calls so that the machine's
// noise falls on both; the app's median click → two-way audio over the floor's (goal ≤ 1.2). Then
// where that time goes (setup-breakdown.ts): each step of the set-up, from the moments the window
// and the main process stamp on every call (kept in "Export diagnostics"), beside the floor's.
// Each ring, the floor's too, is clicked REACTION_MS after it shows, as a person at the quickest would.
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Page } from 'playwright-core';
import { RelayEventStream } from '../electron/core/event-stream';
import type { RelayEnvelope } from '../shared/events';
import { encodeWavPcm16 } from '../shared/hold-music-render';
import { AUDIBLE_ENERGY, eventually, startStack, type Stack } from '../test/e2e/harness';
import { REACTION_MS, startFloor, type Floor } from './floor';
import { appCallTimings, SetupBreakdown } from './setup-breakdown';
import { median, percentile } from './stats';

const CALLS = Number(process.env.BENCH_CALLS ?? 20);
/** The app's click → two-way audio may take at most this many times the floor's (medians). */
const FLOOR_RATIO_GOAL = 1.2;

interface Series {
  name: string;
  /** Absent for the floor, which is a measure to compare with, not a goal. */
  target?: number;
  values: number[];
}


function summarise(s: Series): string {
  const sorted = [...s.values].sort((a, b) => a - b);
  const mid = median(sorted);
  const p95 = percentile(sorted, 95);
  const goal = s.target === undefined ? '' : `  (target median ≤ ${s.target} ms: ${mid <= s.target ? 'meets' : 'MISSES'})`;
  return `${s.name.padEnd(52)} n=${String(sorted.length).padStart(3)}  median ${mid.toFixed(1).padStart(7)} ms  p95 ${p95.toFixed(1).padStart(7)} ms${goal}`;
}

function summariseRatio(app: Series, floor: Series): string {
  const ratio = median(app.values) / median(floor.values);
  const verdict = ratio <= FLOOR_RATIO_GOAL ? 'meets' : 'MISSES';
  return `${'two-way audio, app ÷ floor (medians)'.padEnd(52)} ratio ${ratio.toFixed(2)}  (goal ≤ ${FLOOR_RATIO_GOAL}: ${verdict})`;
}

// In-page scripts are strings: tsx would otherwise wrap their inner functions in a helper that the
// page does not have.

/** Records the wall-clock time in the page when `selector` first matches, watched from before the trigger. */
async function armAppearance(page: Page, selector: string): Promise<void> {
  await page.evaluate(`(() => {
    const sel = ${JSON.stringify(selector)};
    window.__seenAt = null;
    const observer = new MutationObserver(() => check());
    function check() {
      if (window.__seenAt === null && document.querySelector(sel)) {
        window.__seenAt = performance.timeOrigin + performance.now();
        observer.disconnect();
      }
    }
    observer.observe(document.body, { childList: true, subtree: true, attributes: true });
    check();
  })()`);
}

const seenAt = (page: Page) => eventually('the element to appear', async () => ((await page.evaluate('window.__seenAt')) as number | null) ?? undefined);

/** Clicks the named button inside `scope` from within the page; returns the wall-clock time of the click. */
async function clickAt(page: Page, scope: string, name: string): Promise<number> {
  return (await page.evaluate(`(() => {
    const root = document.querySelector(${JSON.stringify(scope)});
    const label = ${JSON.stringify(name)};
    const button = Array.from(root ? root.querySelectorAll('button') : []).find(
      (b) => b.getAttribute('aria-label') === label || (b.textContent || '').trim() === label);
    if (!button) throw new Error('no button ' + label);
    const at = performance.timeOrigin + performance.now();
    button.click();
    return at;
  })()`)) as number;
}

/**
 * Polls getStats of one call in the page until inbound audio energy rises past AUDIBLE_ENERGY (a
 * bridged leg connected while ringing has the bridge's silence before the customer); returns that
 * wall-clock time.
 */
async function agentHearsAt(page: Page, localId: string): Promise<number> {
  return (await page.evaluate(`(async () => {
    const deadline = performance.now() + 10000;
    while (performance.now() < deadline) {
      const s = await window.__softphoneMedia.stats(${JSON.stringify(localId)}).catch(() => ({ inboundEnergy: 0 }));
      if (s.inboundEnergy > ${AUDIBLE_ENERGY}) return performance.timeOrigin + performance.now();
      await new Promise((r) => setTimeout(r, 5));
    }
    throw new Error('no inbound audio within 10 s');
  })()`)) as number;
}

async function gatewayRequestAt(stack: Stack, action: string, match: (l: { callId?: string; at: number }) => boolean): Promise<{ at: number; callId?: string }> {
  return eventually(`${action} at the sandbox`, async () => (await stack.gatewayLog()).find((l) => l.action === action && match(l)));
}

/** One answered call on `stack`: click Answer → both sides hear each other, in ms; then hung up. */
async function answerOnce(stack: Stack, page: Page, number: string): Promise<number> {
  await armAppearance(page, '[role="dialog"][aria-label="Incoming call"]');
  const { callId } = await stack.control<{ callId: string }>('/control/incoming', { number });
  await seenAt(page);
  await sleep(REACTION_MS);
  const clicked = await clickAt(page, '[aria-label="Incoming call"]', 'Answer');
  const agentHeard = await agentHearsAt(page, `in:${callId}`);
  const customerHeard = await eventually('the customer to hear the agent', async () => (await stack.callReport(callId)).firstHeardAt);
  await page.getByRole('region', { name: 'Current call' }).getByRole('button', { name: 'Hang up' }).click();
  await eventually('terminate', async () => (await stack.gatewayLog()).some((l) => l.callId === callId && l.action === 'terminate'));
  await page.getByRole('region', { name: 'Current call' }).waitFor({ state: 'detached' }).catch(() => {});
  return Math.max(agentHeard, customerHeard) - clicked;
}

function summariseBridged(bridged: Series, direct: Series): string {
  const ratio = median(bridged.values) / median(direct.values);
  return `${'two-way audio, bridged ÷ direct (medians)'.padEnd(52)} ratio ${ratio.toFixed(2)}  (goal ≤ 1: ${ratio <= 1 ? 'meets' : 'misses'})`;
}

/**
 * The agents' fake microphone for the bench: a steady tone, so that "the customer hears the agent"
 * times the path and not the pauses of a recorded voice (its first gap falls 0.5 s in, just where
 * a call clicked REACTION_MS after the ring connects). 720 Hz loops seamlessly over 2 s.
 */
async function steadyMicrophone(): Promise<string> {
  const rate = 48_000;
  const samples = new Float32Array(rate * 2).map((_, i) => 0.3 * Math.sin((2 * Math.PI * 720 * i) / rate));
  const wav = join(await mkdtemp(join(tmpdir(), 'softphone-bench-')), 'agent-tone.wav');
  await writeFile(wav, encodeWavPcm16(samples, rate));
  return wav;
}

async function main(): Promise<void> {
  const microphoneWav = await steadyMicrophone();
  const stack = await startStack({ microphoneWav });
  // The same product with the relay's in-process bridge: every call's media ends on the bridge.
  const bridgedStack = await startStack({ bridge: true, microphoneWav });
  const received = new Map<string, number>();
  // A second subscriber on the relay tells when each webhook was received there (envelope.receivedAt).
  const tap = new RelayEventStream({
    url: stack.relay.url,
    token: stack.tapToken,
    onEvent: (env: RelayEnvelope) => {
      if (env.event.type === 'call.incoming') received.set(env.event.callId, env.receivedAt);
    },
    onState: () => {},
  });
  tap.start();
  const series: Series[] = [
    { name: 'webhook received by the relay → ringing shown', target: 50, values: [] },
    { name: 'click Answer → accept received by the sandbox', target: 30, values: [] },
    { name: 'click Answer → two-way audio', target: 300, values: [] },
    { name: 'click Call → initiate received by the sandbox', target: 150, values: [] },
  ];
  const floorAudio: Series = { name: 'floor (bare page): click Answer → two-way audio', values: [] };
  const bridgedAudio: Series = { name: 'bridged: click Answer → two-way audio', values: [] };
  const breakdown = new SetupBreakdown();
  let floor: Floor | undefined;
  try {
    floor = await startFloor(stack);
    const page = await stack.newAgentPage();
    const bridgedPage = await bridgedStack.newAgentPage();
    const answering = stack.customer('answers');
    console.log(`Benchmark: ${CALLS} incoming and ${CALLS} outgoing calls, and ${CALLS} incoming calls to the floor (warm-up call first)`);
    for (let i = 0; i <= CALLS; i++) {
      await armAppearance(page, '[role="dialog"][aria-label="Incoming call"]');
      const { callId } = await stack.control<{ callId: string }>('/control/incoming', { number: answering.number });
      const shown = await seenAt(page);
      const relayAt = await eventually('relay receipt', () => received.get(callId));
      await sleep(REACTION_MS);
      const clicked = await clickAt(page, '[aria-label="Incoming call"]', 'Answer');
      const hears = agentHearsAt(page, `in:${callId}`);
      const accept = await gatewayRequestAt(stack, 'accept', (l) => l.callId === callId);
      const agentHeard = await hears;
      const customerHeard = await eventually('the customer to hear the agent', async () => (await stack.callReport(callId)).firstHeardAt);
      if (i > 0) {
        series[0]!.values.push(shown - relayAt);
        series[1]!.values.push(accept.at - clicked);
        series[2]!.values.push(Math.max(agentHeard, customerHeard) - clicked);
      }
      // The window reports a call's set-up moments with its quality, which needs one statistics read (a second).
      await eventually('a statistics read of the call', async () => ((await page.evaluate(`window.__softphoneMedia.quality(${JSON.stringify(`in:${callId}`)})?.summary.samples ?? 0`)) as number) > 0 || undefined);
      await page.getByRole('region', { name: 'Current call' }).getByRole('button', { name: 'Hang up' }).click();
      await eventually('terminate', async () => (await stack.gatewayLog()).some((l) => l.callId === callId && l.action === 'terminate'));
      await page.getByRole('region', { name: 'Current call' }).waitFor({ state: 'detached' }).catch(() => {});
      if (i > 0) breakdown.add('app', await appCallTimings(stack, clicked), { agent: agentHeard, customer: customerHeard });
      const floorCall = await floor.answerCall(answering.number);
      if (i > 0) {
        floorAudio.values.push(floorCall.ms);
        breakdown.add('floor', floorCall.timings, floorCall.heard);
      }
      // The bridged call right after, so that the machine's noise falls on both alike.
      const bridged = await answerOnce(bridgedStack, bridgedPage, answering.number);
      if (i > 0) bridgedAudio.values.push(bridged);
    }
    for (let i = 0; i <= CALLS; i++) {
      const before = (await stack.gatewayLog()).length;
      await page.getByLabel('Phone number').fill(`+${answering.number}`);
      const clicked = await clickAt(page, 'body', 'Call');
      const initiate = await eventually('initiate', async () => (await stack.gatewayLog()).slice(before).find((l) => l.action === 'initiate'));
      if (i > 0) series[3]!.values.push(initiate.at - clicked);
      await page.getByRole('region', { name: 'Current call' }).getByText('Connected').waitFor();
      await page.getByRole('region', { name: 'Current call' }).getByRole('button', { name: 'Hang up' }).click();
      await eventually('terminate', async () => (await stack.gatewayLog()).slice(before).some((l) => l.action === 'terminate'));
      await page.getByRole('region', { name: 'Current call' }).waitFor({ state: 'detached' }).catch(() => {});
    }
    console.log('');
    for (const s of series) console.log(summarise(s));
    console.log(summarise(floorAudio));
    console.log(summariseRatio(series[2]!, floorAudio));
    console.log(summarise(bridgedAudio));
    console.log(summariseBridged(bridgedAudio, series[2]!));
    console.log('');
    for (const line of breakdown.lines()) console.log(line);
  } finally {
    await floor?.close();
    await tap.stop();
    await stack.close();
    await bridgedStack.close();
  }
}

main().then(
  () => process.exit(0),
  (e: unknown) => {
    console.error(e);
    process.exit(1);
  },
);

// `npm run bench:quality`: what the app makes of a bad network, on real answered calls from the
// sandbox's 'answers' customer whose network POST /control/network impairs both ways once the call
// is connected (sandbox/REFERENCE.md "Bad networks"), through the real relay, service, browser host and
// Chromium.
//
//   loss 0/1/5/10 % and jitter 30/60 ms, one fresh call each (no warning carried over from the
//   condition before): a 3 s settle, then 12 s held. The MOS the app computes (median of its
//   per-second MOS over the 12 s), the concealment (mean of each second's concealed share), the
//   loss and jitter it measured, and every warning it had in force from the impairment on
//   (window.__softphoneMedia.quality).
//   a blackout, over 3 calls (medians): its start (the sandbox's blackoutStartsAt, set by the POST)
//   → "Reconnecting…" on the call panel (goal ≤ 3 s), and → the clean end: the call failed with
//   "The network connection was lost" and its terminate received by the sandbox (time of the terminate).
import type { Page } from 'playwright-core';
import { NETWORK_LOST_REASON } from '../renderer/webrtc/media-health';
import { sampleFigures, type QualitySample, type QualityWarningKind } from '../shared/call-quality';
import type { SandboxNetworkReport } from '../shared/sandbox';
import { eventually, startStack, type Stack } from '../test/e2e/harness';
import { median } from './stats';

const SETTLE_MS = 3_000;
const WINDOW_MS = 12_000;
const BLACKOUT_CALLS = Number(process.env.BENCH_BLACKOUT_CALLS ?? 3);
/** "Reconnecting…" must show at most this long after media stops. */
const WARNING_GOAL_MS = 3_000;

const CONDITIONS = [
  { name: 'clean (loss 0 %, jitter 0 ms)', lossPercent: 0, jitterMs: 0 },
  { name: 'loss 1 %', lossPercent: 1, jitterMs: 0 },
  { name: 'loss 5 %', lossPercent: 5, jitterMs: 0 },
  { name: 'loss 10 %', lossPercent: 10, jitterMs: 0 },
  { name: 'jitter 30 ms', lossPercent: 0, jitterMs: 30 },
  { name: 'jitter 60 ms', lossPercent: 0, jitterMs: 60 },
];

/** One second as the app judged it. */
interface Second {
  sample: QualitySample;
  mos?: number;
  warnings: QualityWarningKind[];
}

const mean = (values: number[]) => (values.length === 0 ? NaN : values.reduce((a, b) => a + b, 0) / values.length);

// In-page scripts are strings: tsx would otherwise wrap their inner functions in a helper that the
// page does not have.

const currentCall = (page: Page) => page.getByRole('region', { name: 'Current call' });

async function answer(stack: Stack, page: Page): Promise<string> {
  const { callId } = await stack.control<{ callId: string }>('/control/incoming', { number: stack.customer('answers').number });
  await page.getByRole('dialog', { name: 'Incoming call' }).getByRole('button', { name: 'Answer' }).click();
  await currentCall(page).getByRole('timer', { name: 'Call duration' }).waitFor();
  // Every measure starts on a call whose media flows: the engine has read a second with packets in it.
  await eventually('media to flow', async () =>
    (await page.evaluate(`(() => {
      const q = window.__softphoneMedia.quality(${JSON.stringify(`in:${callId}`)});
      return !!q && !q.reconnecting && !!q.sample && q.sample.packetsReceived > 0;
    })()`)) as boolean,
  );
  return callId;
}

const terminateAt = (stack: Stack, callId: string) =>
  eventually('terminate at the sandbox', async () => (await stack.gatewayLog()).find((l) => l.callId === callId && l.action === 'terminate'), 25_000);

/** Every second the page judges of one incoming call during `ms`, read from its quality probe (it computes one a second). */
async function secondsFor(page: Page, callId: string, ms: number): Promise<Second[]> {
  return (await page.evaluate(`(async () => {
    const start = Date.now();
    const seen = new Map();
    while (Date.now() - start < ${ms}) {
      const q = window.__softphoneMedia.quality(${JSON.stringify(`in:${callId}`)});
      if (q && q.sample && q.sample.at >= start && !seen.has(q.sample.at)) {
        seen.set(q.sample.at, { sample: q.sample, mos: q.mos, warnings: q.warnings });
      }
      await new Promise((r) => setTimeout(r, 200));
    }
    return [...seen.values()];
  })()`)) as Second[];
}

async function measureCondition(stack: Stack, page: Page, condition: (typeof CONDITIONS)[number]): Promise<string> {
  const callId = await answer(stack, page);
  await stack.control('/control/network', { callId, lossPercent: condition.lossPercent, jitterMs: condition.jitterMs });
  const impairedAt = Date.now();
  const seconds = await secondsFor(page, callId, SETTLE_MS + WINDOW_MS);
  await currentCall(page).getByRole('button', { name: 'Hang up' }).click();
  await terminateAt(stack, callId);

  const held = seconds.filter((s) => s.sample.at >= impairedAt + SETTLE_MS);
  const known = (pick: (s: Second) => number | undefined) => held.flatMap((s) => pick(s) ?? []);
  const mos = median(known((s) => s.mos));
  const concealment = mean(known((s) => (s.sample.concealment === undefined ? undefined : s.sample.concealment * 100)));
  // What the app measured, the worse direction: a jitter setting is a spread of delays, not the RFC 3550 jitter it reads.
  const loss = mean(known((s) => sampleFigures(s.sample).lossPercent));
  const jitter = median(known((s) => sampleFigures(s.sample).jitterMs));
  const warnings = [...new Set(seconds.flatMap((s) => s.warnings))];
  const figures = [mos.toFixed(2), concealment.toFixed(1), loss.toFixed(1), jitter.toFixed(0)].map((f) => f.padStart(7)).join('');
  return `${condition.name.padEnd(30)} ${String(held.length).padStart(3)} s${figures}   ${warnings.join(', ') || '—'}`;
}

/** Records the wall-clock time in the page when the call panel first reads "Reconnecting…". */
async function armReconnecting(page: Page): Promise<void> {
  await page.evaluate(`(() => {
    window.__reconnectingAt = null;
    const observer = new MutationObserver(() => check());
    function check() {
      const panel = document.querySelector('[aria-label="Current call"]');
      const shown = panel && Array.from(panel.querySelectorAll('*')).some((e) => e.children.length === 0 && (e.textContent || '').trim() === 'Reconnecting…');
      if (window.__reconnectingAt === null && shown) {
        window.__reconnectingAt = performance.timeOrigin + performance.now();
        observer.disconnect();
      }
    }
    observer.observe(document.body, { childList: true, subtree: true, characterData: true, attributes: true });
    check();
  })()`);
}

async function measureBlackout(stack: Stack, page: Page): Promise<{ toWarning: number; toEnd: number }> {
  const callId = await answer(stack, page);
  await armReconnecting(page);
  // Longer than the app's 15 s grace and the service's 30 s cut: only the app can end the call.
  const network = await stack.control<SandboxNetworkReport>('/control/network', { callId, blackoutMs: 60_000 });
  const startedAt = network.blackoutStartsAt;
  if (startedAt === undefined) throw new Error('the sandbox reported no blackout start');
  const warnedAt = await eventually('"Reconnecting…" on the call panel', async () => ((await page.evaluate('window.__reconnectingAt')) as number | null) ?? undefined, 20_000);
  await currentCall(page).getByText(`Failed: ${NETWORK_LOST_REASON}`).waitFor({ timeout: 25_000 });
  const terminate = await terminateAt(stack, callId);
  return { toWarning: warnedAt - startedAt, toEnd: terminate.at - startedAt };
}

async function main(): Promise<void> {
  const stack = await startStack();
  try {
    const page = await stack.newAgentPage();
    console.log(`Call quality on an impaired network: ${CONDITIONS.length} calls held ${WINDOW_MS / 1000} s after a ${SETTLE_MS / 1000} s settle, one call per condition, then ${BLACKOUT_CALLS} blackout calls`);
    const rows: string[] = [];
    for (const condition of CONDITIONS) rows.push(await measureCondition(stack, page, condition));
    const blackouts: { toWarning: number; toEnd: number }[] = [];
    for (let i = 0; i < BLACKOUT_CALLS; i++) blackouts.push(await measureBlackout(stack, page));

    console.log('');
    console.log(`${'condition'.padEnd(30)}  held${['MOS', 'conc.%', 'loss%', 'jit.ms'].map((h) => h.padStart(7)).join('')}   warnings raised`);
    for (const row of rows) console.log(row);
    console.log('');
    const toWarning = median(blackouts.map((b) => b.toWarning));
    const toEnd = median(blackouts.map((b) => b.toEnd));
    const verdict = toWarning <= WARNING_GOAL_MS ? 'meets' : 'MISSES';
    const each = (key: 'toWarning' | 'toEnd') => blackouts.map((b) => (b[key] / 1000).toFixed(2)).join(', ');
    console.log(`${'blackout start → "Reconnecting…" shown'.padEnd(52)} n=${blackouts.length}  median ${(toWarning / 1000).toFixed(2)} s  (${each('toWarning')})  (goal ≤ ${WARNING_GOAL_MS / 1000} s: ${verdict})`);
    console.log(`${'blackout start → call given up, terminate received'.padEnd(52)} n=${blackouts.length}  median ${(toEnd / 1000).toFixed(2)} s  (${each('toEnd')})`);
  } finally {
    await stack.close();
  }
}

main().then(
  () => process.exit(0),
  (e: unknown) => {
    console.error(e);
    process.exit(1);
  },
);

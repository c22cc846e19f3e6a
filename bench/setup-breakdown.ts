// `npm run bench`: where click Answer → two-way audio goes. Each answered call's set-up moments
// (shared/diagnostics.ts: the window's and the main process's, as "Export diagnostics" keeps them)
// and the floor's (the same moments, those a bare page has), as medians per step, side by side.
import { callSetupSteps, type CallSetupMoment, type CallTimings } from '../shared/diagnostics';
import type { Stack } from '../test/e2e/harness';
import { eventually } from '../test/e2e/harness';
import { median } from './stats';

const STEP_LABELS: Readonly<Record<Exclude<CallSetupMoment, 'clickedAt'> | 'agentHears' | 'customerHears' | 'audio', string>> = {
  sdpReadyAt: 'click → the answer made while ringing at hand',
  commandAt: '→ the main process has the Answer (IPC)',
  claimSentAt: '→ claim sent to the relay',
  claimDoneAt: '→ claim answered (relay round trip)',
  gatewaySentAt: '→ accept sent to the gateway',
  gatewayDoneAt: '→ accept answered (gateway round trip)',
  iceStartedAt: '→ ICE started in the window',
  iceConnectedAt: '→ ICE connected',
  mediaConnectedAt: '→ media connected (DTLS)',
  agentHears: '   of which: the agent hears the customer',
  customerHears: '   of which: the customer hears the agent',
  audio: '→ two-way audio (the later of the two)',
};
type Step = keyof typeof STEP_LABELS;

export class SetupBreakdown {
  private readonly app = new Map<Step, number[]>();
  private readonly floor = new Map<Step, number[]>();

  /** A call's moments, and when each side first heard the other (wall clock ms). */
  add(side: 'app' | 'floor', timings: CallTimings, heard: { agent: number; customer: number }): void {
    const steps = side === 'app' ? this.app : this.floor;
    const push = (step: Step, ms: number) => steps.set(step, [...(steps.get(step) ?? []), ms]);
    for (const { to, ms } of callSetupSteps(timings)) if (to !== 'clickedAt') push(to, ms);
    const connected = timings.mediaConnectedAt;
    if (connected === undefined) return;
    push('agentHears', heard.agent - connected);
    push('customerHears', heard.customer - connected);
    push('audio', Math.max(heard.agent, heard.customer) - connected);
  }

  lines(): string[] {
    const cell = (values: number[] | undefined) => (values && values.length > 0 ? `${median([...values].sort((a, b) => a - b)).toFixed(1)} ms` : '—').padStart(10);
    return [
      `${'where click Answer → two-way audio goes (medians)'.padEnd(52)} ${'app'.padStart(10)} ${'floor'.padStart(10)}`,
      ...(Object.keys(STEP_LABELS) as Step[]).map((step) => `  ${STEP_LABELS[step].padEnd(50)} ${cell(this.app.get(step))} ${cell(this.floor.get(step))}`),
      '  (a floor figure covers the rows above it that the bare page has no moment for)',
    ];
  }
}

/** An answered call's moments as "Export diagnostics" keeps them: the window reports them as the call's media closes. */
export async function appCallTimings(stack: Stack, clickedAt: number): Promise<CallTimings> {
  return eventually("the call's set-up moments in the diagnostics", async () => {
    const file = await stack.service.handle('exportDiagnostics', {});
    if (!file.ok) return undefined;
    const calls = (JSON.parse(file.value.content) as { calls: { timings?: CallTimings }[] }).calls;
    // The click the bench made, as the window stamped it (a few ms later, in the page).
    return calls.find((c) => c.timings?.clickedAt !== undefined && Math.abs(c.timings.clickedAt - clickedAt) < 1_000)?.timings;
  });
}

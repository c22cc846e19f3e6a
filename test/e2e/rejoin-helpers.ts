// What the rejoin tests share: answering a bridged call, waiting for what its customer hears, and
// noting when the call panel says "Rejoining…" (it may show for well under a second).
import type { Page } from 'playwright-core';
import type { SandboxCallReport, SandboxHeardSound } from '../../shared/sandbox';
import { currentCall, eventually, expectTwoWayAudio, incomingCard, type Stack } from './harness';

/** Set in the page by watchRejoining(): when the call panel first said "Rejoining…" (unix ms). */
interface RejoiningSpy {
  rejoiningSeenAt?: number;
}

function spyOnRejoining(): void {
  const spy = window as RejoiningSpy;
  const look = () => {
    if (spy.rejoiningSeenAt !== undefined) return;
    const panel = document.querySelector('section[aria-label="Current call"]');
    if (panel?.textContent?.includes('Rejoining…')) spy.rejoiningSeenAt = Date.now();
  };
  new MutationObserver(look).observe(document, { childList: true, subtree: true, characterData: true });
}

/** Notes when "Rejoining…" first shows in the call panel: in this document (`now`) or from the next one on (a reload). */
export async function watchRejoining(p: Page, when: 'now' | 'next document'): Promise<void> {
  if (when === 'now') await p.evaluate(spyOnRejoining);
  else await p.addInitScript(spyOnRejoining);
}

export const rejoiningSeenAt = (p: Page): Promise<number | undefined> => p.evaluate(() => (window as RejoiningSpy).rejoiningSeenAt);

export async function customerHears(stack: Stack, callId: string, what: SandboxHeardSound, timeoutMs?: number): Promise<SandboxCallReport> {
  return eventually(
    `the customer of ${callId} to hear ${what}`,
    async () => {
      const report = await stack.callReport(callId);
      return report.heardNow === what ? report : undefined;
    },
    timeoutMs,
  );
}

/** A sandbox customer's call, answered in the page, with two-way audio and the agent's voice heard. */
export async function answeredCall(stack: Stack, p: Page): Promise<{ callId: string; name: string }> {
  const customer = stack.customer('answers');
  const { callId } = await stack.control<{ callId: string }>('/control/incoming', { number: customer.number });
  await incomingCard(p).getByText(customer.name).waitFor();
  await incomingCard(p).getByRole('button', { name: 'Answer' }).click();
  await currentCall(p).getByText('Connected').waitFor();
  await expectTwoWayAudio(p, stack.callReport, callId);
  await customerHears(stack, callId, 'voice');
  return { callId, name: customer.name };
}

/** The gateway's requests for a call, in order. */
export const gatewayLogOf = async (stack: Stack, callId: string) => (await stack.gatewayLog()).filter((l) => l.callId === callId);

// "Relay only" end to end through a real coturn on 127.0.0.1 (shared-secret mode, loopback peers
// allowed): every candidate the agent's Chromium offers is a TURN relay address, so the call can
// only connect through coturn. Incoming: the TURN credentials come from the relay (GET
// /turn-credentials), nobody types a password. Outgoing: the app's own servers as
// `--ice-servers` gives them, over TCP to the TURN server, as behind a firewall that blocks UDP.
import { randomBytes } from 'node:crypto';
import { createSocket, type Socket } from 'node:dgram';
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import type { Page } from 'playwright-core';
import { turnCredentialsFor } from '../../relay/turn-credentials';
import { startCoturn, type CoturnHandle } from '../support/coturn-server';
import { currentCall, eventually, expectTwoWayAudio, incomingCard, mediaIdOf, startStack, type Stack, type StackOptions } from './harness';

interface Path {
  local: string;
  remote: string;
  relayProtocol?: string;
}


/** The selected candidate pair of the call with this gateway call id. */
const candidatePath = async (p: Page, callId: string): Promise<Path | undefined> => {
  const localId = await mediaIdOf(p, callId);
  return p.evaluate((id) => (window as unknown as { __softphoneMedia: { candidatePath(localId: string): Promise<Path | undefined> } }).__softphoneMedia.candidatePath(id), localId);
};

async function hangUp(stack: Stack, p: Page, callId: string): Promise<void> {
  await currentCall(p).getByRole('button', { name: 'Hang up' }).click();
  await eventually('terminate to reach the gateway', async () => (await stack.gatewayLog()).some((l) => l.callId === callId && l.action === 'terminate'));
}

/**
 * One stack per describe block, started with `options` once coturn is up and closed after its
 * tests; each test's agent page is closed and its calls ended after it.
 */
function stackFor(options: () => StackOptions) {
  let stack: Stack | undefined;
  let page: Page | undefined;
  beforeAll(async () => {
    stack = await startStack(options());
  });
  afterAll(async () => {
    await stack?.close();
  });
  afterEach(async () => {
    await page?.context().close();
    page = undefined;
    await stack?.endCalls();
  });
  return {
    async open(): Promise<{ stack: Stack; page: Page }> {
      if (!stack) throw new Error('the stack did not start');
      page = await stack.newAgentPage();
      return { stack, page };
    },
  };
}

let coturn: CoturnHandle;
const secret = randomBytes(18).toString('base64url');

beforeAll(async () => {
  coturn = await startCoturn(secret);
});
afterAll(async () => {
  await coturn?.stop();
});

describe('Relay only, with the relay\'s TURN credentials', () => {
  const t = stackFor(() => ({ relayTurn: { secret, urls: [`turn:127.0.0.1:${coturn.port}?transport=udp`] }, network: { iceTransportPolicy: 'relay' } }));

  test('an incoming call connects through a TURN relay address, with audio both ways', async () => {
    const { stack, page } = await t.open();
    const ice = await stack.service.handle('getIceConfig', {});
    expect(ice.ok && ice.value.iceTransportPolicy).toBe('relay');
    expect(ice.ok && ice.value.iceServers.flatMap((s) => s.urls)).toEqual([`turn:127.0.0.1:${coturn.port}?transport=udp`]);

    const customer = stack.customer('answers');
    const { callId } = await stack.control<{ callId: string }>('/control/incoming', { number: customer.number });
    await incomingCard(page).getByRole('button', { name: 'Answer' }).click();
    await currentCall(page).getByText('Connected').waitFor();
    await expectTwoWayAudio(page, stack.callReport, callId);

    const path = await eventually('the selected candidate pair', () => candidatePath(page, callId));
    expect(path.local).toBe('relay');
    expect(path.relayProtocol).toBe('udp');
    // coturn saw the relay's username (expiry:agentId) allocate.
    expect(coturn.log()).toMatch(/ALLOCATE processed, success/);
    await hangUp(stack, page, callId);
  });
});

describe('Relay only, with the app\'s own TURN server over TCP (--ice-servers)', () => {
  const t = stackFor(() => {
    // The credentials a TURN administrator would hand out for a fixed account, here in coturn's shared-secret form.
    const { iceServers } = turnCredentialsFor({ secret, urls: [`turn:127.0.0.1:${coturn.port}?transport=tcp`], ttlSec: 3600 }, 'desk-7', Date.now());
    return { network: { iceServers, iceTransportPolicy: 'relay' } };
  });

  test('an outgoing call connects through a TURN relay reached over TCP, with audio both ways', async () => {
    const { stack, page } = await t.open();
    const customer = stack.customer('answers');
    await page.getByLabel('Phone number').fill(`+${customer.number}`);
    await page.getByRole('button', { name: 'Call', exact: true }).click();
    await currentCall(page).getByText('Connected').waitFor();
    const callId = await eventually('the initiate request', async () => {
      const log = await stack.gatewayLog();
      return log.filter((l) => l.action === 'initiate' && l.status === 200).at(-1)?.callId;
    });
    await expectTwoWayAudio(page, stack.callReport, callId);

    const path = await eventually('the selected candidate pair', () => candidatePath(page, callId));
    expect(path.local).toBe('relay');
    expect(path.relayProtocol).toBe('tcp');
    await hangUp(stack, page, callId);
  });

  test('with no TURN server that answers, "Relay only" says so instead of placing a call that cannot connect', async () => {
    const { stack, page } = await t.open();
    // A TURN server nobody listens on: no relay candidate can be gathered, and the gathering cap ends the wait.
    const saved = await stack.service.handle('saveNetworkSettings', {
      network: { servers: ['turn:127.0.0.1:9?transport=tcp'], turnUsername: 'nobody', turnPassword: 'nothing-here', relayOnly: true },
    });
    expect(saved.ok).toBe(true);
    const customer = stack.customer('answers');
    const initiatesBefore = (await stack.gatewayLog()).filter((l) => l.action === 'initiate').length;
    await page.getByLabel('Phone number').fill(`+${customer.number}`);
    await page.getByRole('button', { name: 'Call', exact: true }).click();
    await page.getByText(/"Relay only" is on, but no TURN server gave this call a relay address/).first().waitFor();
    expect((await stack.gatewayLog()).filter((l) => l.action === 'initiate').length).toBe(initiatesBefore);
  });
});

describe('a TURN server that never answers', () => {
  let blackHole: Socket;
  let requestsSeen = 0;
  beforeAll(async () => {
    // A UDP port that takes every TURN request and answers none: Chromium keeps retrying the
    // allocation for many seconds, and only the gathering cap ends the wait for it.
    blackHole = createSocket('udp4');
    blackHole.on('message', () => requestsSeen++);
    await new Promise<void>((resolve) => blackHole.bind(0, '127.0.0.1', resolve));
  });
  afterAll(() => {
    blackHole?.close();
  });
  const t = stackFor(() => ({
    network: { iceServers: [{ urls: `turn:127.0.0.1:${blackHole.address().port}?transport=udp`, username: 'desk-7', credential: 'never-checked' }], iceTransportPolicy: 'all' },
  }));

  test('does not hold a call up: the answer goes out with the candidates gathered by the cap, and the call connects directly', async () => {
    const { stack, page } = await t.open();
    const customer = stack.customer('answers');
    const { callId } = await stack.control<{ callId: string }>('/control/incoming', { number: customer.number });
    await incomingCard(page).getByRole('button', { name: 'Answer' }).click();
    await currentCall(page).getByText('Connected').waitFor();
    await expectTwoWayAudio(page, stack.callReport, callId);
    expect(requestsSeen).toBeGreaterThan(0);
    // The TURN allocation was still being retried when the answer went: the cap ended the wait.
    const sessions = await page.evaluate(() => (window as unknown as { __softphoneMedia: { sessions(): { gatheringEnded?: string }[] } }).__softphoneMedia.sessions());
    expect(sessions.map((s) => s.gatheringEnded)).toEqual(['capped']);
    const path = await eventually('the selected candidate pair', () => candidatePath(page, callId));
    expect(path.local).not.toBe('relay');
  });
});

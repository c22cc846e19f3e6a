// The floor of `npm run bench`: how fast a call can get two-way audio with nothing of the app in the
// way. A bare page (floor-page.html: plain RTCPeerConnection and getUserMedia) answers the same
// sandbox customers through the same accept request (gateway-spec.md 4.2), and is timed the way
// calls.ts times the app: from the click on Answer to the later of "the agent's page hears the
// customer" (inbound-rtp totalAudioEnergy rises) and "the customer hears the agent" (the sandbox's
// firstHeardAt).
//
// - The offer reaches the floor as it reaches the app: the sandbox's connect webhook, through the
//   relay, on the floor's own event stream (the bench's second agent token).
// - The floor splits the work as the app does: the page makes the answer, and on Answer hands it to
//   this Node process, which POSTs accept with undici on a keep-alive connection (as GatewayClient
//   does in the main process) and then tells the page to let the customer's candidates into ICE.
//   The page thus needs no cross-origin request, and runs in the app's own Chromium (a context of
//   its own), so that both share one browser's threads and flags.
// - While the floor answers, the app is on "Do not disturb", so that only the floor rings and the
//   app spends nothing on the call; it is available again for its own calls.
import { readFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { BrowserContext, Page } from 'playwright-core';
import { Agent, request } from 'undici';
import { RelayEventStream } from '../electron/core/event-stream';
import { normaliseSdpLineEnds } from '../electron/core/gateway-client';
import type { CallTimings } from '../shared/diagnostics';
import type { RelayEnvelope } from '../shared/events';
import { AUDIBLE_ENERGY, eventually, type Stack } from '../test/e2e/harness';

const PAGE_FILE = new URL('./floor-page.html', import.meta.url);
/** The product segment the harness configures the app with. */
const PRODUCT = 'chatapp';
/** How long a presence change is given to reach the relay before a call that depends on it. */
const PRESENCE_SETTLE_MS = 150;

/** A call the floor answered: click → two-way audio, and the moments of its set-up (shared/diagnostics.ts). */
export interface FloorCall {
  ms: number;
  /** When each side first heard the other (wall clock ms). */
  heard: { agent: number; customer: number };
  timings: CallTimings;
}

export interface Floor {
  /** A call from the customer answered by the bare page. */
  answerCall(number: string): Promise<FloorCall>;
  close(): Promise<void>;
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Serves the page on 127.0.0.1: getUserMedia needs a secure context, which about:blank is not. */
async function servePage(): Promise<{ url: string; server: Server }> {
  const html = await readFile(PAGE_FILE);
  const server = createServer((req, res) => {
    if (req.method !== 'GET' || (req.url !== '/' && req.url !== '/index.html')) {
      res.writeHead(404, { 'Content-Type': 'text/plain' }).end('not found');
      return;
    }
    res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8', 'Cache-Control': 'no-store' }).end(html);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`, server };
}

/** The floor's gateway requests, with GatewayClient's bodies and headers; resolves to the refusal, if any. */
function gatewayPoster(stack: Stack): { post(action: 'accept' | 'terminate', callId: string, extra?: object): Promise<string | undefined>; close(): Promise<void> } {
  // GatewayClient's agent: accept, the request the customer waits on, reuses the connection that
  // the previous call's requests left warm.
  const agent = new Agent({ keepAliveTimeout: 60_000, keepAliveMaxTimeout: 10 * 60_000, connections: 8 });
  return {
    async post(action, callId, extra = {}) {
      const res = await request(`${stack.sandbox.gatewayUrl}/${PRODUCT}/calls/${action}`, {
        method: 'POST',
        dispatcher: agent,
        headers: { 'API-KEY': stack.apiKey, 'Content-Type': 'application/json', Accept: 'application/json' },
        body: JSON.stringify({ messaging_product: PRODUCT, call_id: callId, action, ...extra }),
      });
      const text = await res.body.text();
      return res.statusCode >= 200 && res.statusCode < 300 ? undefined : `${action}: HTTP ${res.statusCode} ${text}`;
    },
    close: () => agent.close(),
  };
}

// In-page scripts are strings, as in calls.ts: tsx would otherwise wrap their inner functions in a
// helper that the page does not have.

/**
 * How long after a ring shows the bench clicks Answer, on every series alike: no person clicks
 * sooner (a simple visual reaction takes about 250 ms, and pointing at the card's Answer button at
 * least 300 ms more). What a page does with the ring meanwhile (its answer, a bridged leg connected
 * ahead, which takes about 250 ms here) is the product's.
 */
export const REACTION_MS = 600;

/** Clicks Answer from within the page; returns the wall-clock time of the click. */
async function clickAnswer(page: Page): Promise<number> {
  return (await page.evaluate(`(() => {
    const button = document.getElementById('answer');
    if (!button || button.disabled) throw new Error('the floor page has no Answer to click');
    const at = performance.timeOrigin + performance.now();
    button.click();
    return at;
  })()`)) as number;
}

/** Polls getStats in the page until inbound audio energy rises past AUDIBLE_ENERGY; returns that wall-clock time. */
async function agentHearsAt(page: Page): Promise<number> {
  return (await page.evaluate(`(async () => {
    const deadline = performance.now() + 10000;
    while (performance.now() < deadline) {
      if ((await window.floor.inboundEnergy()) > ${AUDIBLE_ENERGY}) return performance.timeOrigin + performance.now();
      await new Promise((r) => setTimeout(r, 5));
    }
    throw new Error('no inbound audio within 10 s');
  })()`)) as number;
}

export async function startFloor(stack: Stack): Promise<Floor> {
  const offers = new Map<string, string>();
  const stream = new RelayEventStream({
    url: stack.relay.url,
    token: stack.tapToken,
    onEvent: (env: RelayEnvelope) => {
      if (env.event.type === 'call.incoming') offers.set(env.event.callId, env.event.sdp);
    },
    onState: () => {},
  });
  stream.start();
  const gateway = gatewayPoster(stack);
  const { url, server } = await servePage();
  let context: BrowserContext | undefined;
  try {
    context = await stack.browser.newContext({ permissions: ['microphone'] });
    // The page's Answer: the answer goes to "main", which sends accept; the page waits for the outcome.
    /** The accept's moments, as the app's main process stamps them. */
    const acceptTimes = new Map<string, Pick<CallTimings, 'gatewaySentAt' | 'gatewayDoneAt'>>();
    await context.exposeFunction('floorAccept', async (callId: string, sdp: string) => {
      const gatewaySentAt = performance.timeOrigin + performance.now();
      const refused = await gateway.post('accept', callId, { session: { sdp_type: 'answer', sdp: normaliseSdpLineEnds(sdp) } });
      acceptTimes.set(callId, { gatewaySentAt, gatewayDoneAt: performance.timeOrigin + performance.now() });
      return refused;
    });
    const page = await context.newPage();
    page.on('pageerror', (e) => console.error('page error (floor):', e.message));
    await page.goto(url);

    const setAppPresence = async (status: 'available' | 'dnd') => {
      const set = await stack.service.handle('setPresence', { status });
      if (!set.ok) throw new Error(`the app's presence could not be set to ${status}: ${set.error.message}`);
      await pause(PRESENCE_SETTLE_MS);
    };

    /** Ends the floor's call as the app does: media stopped in the page, then terminate from "main". */
    const hangUp = async (callId: string): Promise<string | undefined> => {
      const acceptRefused = (await page.evaluate('window.floor.hangUp()')) as string | undefined;
      const terminateRefused = await gateway.post('terminate', callId);
      return acceptRefused ?? terminateRefused;
    };

    const answerCall = async (number: string): Promise<FloorCall> => {
      await setAppPresence('dnd');
      // Set while the call is up, so that a failure still ends it and the customer is free for the next one.
      let live: string | undefined;
      try {
        const { callId } = await stack.control<{ callId: string }>('/control/incoming', { number });
        live = callId;
        const offer = await eventually("the call's offer at the floor", () => offers.get(callId));
        offers.delete(callId);
        await page.evaluate(`window.floor.ring(${JSON.stringify(callId)}, ${JSON.stringify(offer)})`);
        await sleep(REACTION_MS);
        const clicked = await clickAnswer(page);
        const agentHeard = await agentHearsAt(page);
        const customerHeard = await eventually('the customer to hear the floor', async () => (await stack.callReport(callId)).firstHeardAt);
        const timings: CallTimings = { ...((await page.evaluate('window.floor.times()')) as CallTimings), ...acceptTimes.get(callId) };
        acceptTimes.delete(callId);
        live = undefined;
        const refused = await hangUp(callId);
        if (refused !== undefined) throw new Error(`the gateway refused the floor's ${refused}`);
        const snapshot = await stack.service.handle('getSnapshot', {});
        if (snapshot.ok && [...snapshot.value.calls, ...snapshot.value.history].some((c) => c.callId === callId)) {
          throw new Error(`the app rang for the floor's call ${callId}: its "Do not disturb" had not reached the relay`);
        }
        return { ms: Math.max(agentHeard, customerHeard) - clicked, heard: { agent: agentHeard, customer: customerHeard }, timings };
      } finally {
        if (live !== undefined) await hangUp(live).catch(() => undefined);
        await setAppPresence('available');
      }
    };

    const opened = context;
    return {
      answerCall,
      async close() {
        await opened.close().catch(() => {});
        await gateway.close();
        await stream.stop();
        await new Promise<void>((resolve) => server.close(() => resolve()));
      },
    };
  } catch (e) {
    await context?.close().catch(() => {});
    await gateway.close();
    await stream.stop();
    server.close();
    throw e;
  }
}

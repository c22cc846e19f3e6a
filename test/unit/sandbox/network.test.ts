// A customer on a bad network (POST /control/network and the customers with one built in): real
// calls between the customer's werift peer and a second werift peer playing the business, each side
// counting what it really heard, so the loss, delay, reordering and blackout are proven on the wire
// and not only in the sandbox's own counters.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import type { SandboxCallReport, SandboxCustomer, SandboxNetworkReport } from '../../../shared/sandbox';
import { DEFAULT_CUSTOMERS } from '../../../sandbox/customers';
import type { SandboxServer } from '../../../sandbox/server';
import { BusinessPeer } from './business-peer';
import { callItem, control, eventually, gatewayPost, startTestSandbox, startWebhookReceiver, type WebhookReceiver } from './harness';

let relay: WebhookReceiver;
let sandbox: SandboxServer;
const cleanup: (() => Promise<unknown>)[] = [];

beforeAll(async () => {
  relay = await startWebhookReceiver();
  sandbox = await startTestSandbox(relay);
});
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});
afterAll(async () => {
  await sandbox?.close();
  await relay?.close();
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const report = async (callId: string, box = sandbox) => (await control<SandboxCallReport>(box, `/control/calls/${callId}`)).body;
const impair = (body: unknown, box = sandbox) => control<SandboxNetworkReport & { error?: { code: string; message: string; field?: string } }>(box, '/control/network', body);
const clean = (c: SandboxCustomer) => c.behaviour === 'answers' && c.network === undefined;
const named = (name: string) => sandbox.customers.find((c) => c.name === name)!;

function business(): BusinessPeer {
  const peer = new BusinessPeer();
  cleanup.push(() => peer.close());
  return peer;
}

function hangUpLater(callId: string, box = sandbox): void {
  cleanup.push(() => control(box, '/control/hangup', { callId }));
}

/** A customer calls; the business answers through /accept. */
async function incomingCall(peer: BusinessPeer, number: string, box = sandbox): Promise<string> {
  const callId = (await control<{ callId: string }>(box, '/control/incoming', { number })).body.callId;
  hangUpLater(callId, box);
  const offer = (await eventually('the connect webhook', () => callItem(relay, callId, 'connect'))).call.session!.sdp;
  const accepted = await gatewayPost(box, 'accept', { messaging_product: 'chatapp', call_id: callId, action: 'accept', session: { sdp_type: 'answer', sdp: await peer.answer(offer) } });
  expect(accepted.status).toBe(200);
  return callId;
}

/** The business calls a customer, who answers. */
async function outgoingCall(peer: BusinessPeer, number: string, box = sandbox): Promise<string> {
  const started = await gatewayPost(box, 'initiate', { messaging_product: 'chatapp', to: number, action: 'connect', session: { sdp_type: 'offer', sdp: await peer.offer() } });
  expect(started.status).toBe(200);
  const callId = (started.body as { calls: { id: string }[] }).calls[0]!.id;
  hangUpLater(callId, box);
  await peer.applyAnswer((await eventually('the connect webhook', () => callItem(relay, callId, 'connect'))).call.session!.sdp);
  return callId;
}

async function audioBothWays(peer: BusinessPeer, callId: string, box = sandbox): Promise<SandboxCallReport> {
  await eventually('the business to hear the customer', () => peer.framesHeard > 5);
  return eventually('the customer to hear the business', async () => {
    const r = await report(callId, box);
    return r.framesHeard > 5 ? r : undefined;
  });
}

/** What changed over a span of a call, as each side saw it. */
interface Span {
  ms: number;
  customerHeard: number;
  customerSent: number;
  businessHeard: number;
  toBusiness: { packets: number; dropped: number };
  fromBusiness: { packets: number; dropped: number };
}

async function measure(peer: BusinessPeer, callId: string, ms: number): Promise<Span> {
  const t0 = performance.now();
  const [before, heardBefore] = [await report(callId), peer.framesHeard];
  await sleep(ms);
  const [after, heardAfter] = [await report(callId), peer.framesHeard];
  const diff = (a: { packets: number; dropped: number }, b: { packets: number; dropped: number }) => ({ packets: a.packets - b.packets, dropped: a.dropped - b.dropped });
  return {
    ms: performance.now() - t0,
    customerHeard: after.framesHeard - before.framesHeard,
    customerSent: after.framesSent - before.framesSent,
    businessHeard: heardAfter - heardBefore,
    toBusiness: diff(after.network.toBusiness, before.network.toBusiness),
    fromBusiness: diff(after.network.fromBusiness, before.network.fromBusiness),
  };
}

describe('POST /control/network', () => {
  test('loss drops about the right share of packets, both ways, and the other side really misses them', async () => {
    const peer = business();
    const callId = await incomingCall(peer, sandbox.customers.find(clean)!.number);
    await audioBothWays(peer, callId);
    const cleanWindow = await measure(peer, callId, 1_000);
    expect(cleanWindow.toBusiness.dropped + cleanWindow.fromBusiness.dropped).toBe(0);

    const set = await impair({ callId, lossPercent: 30 });
    expect(set.status).toBe(200);
    expect(set.body).toMatchObject({ lossPercent: 30, delayMs: 0, jitterMs: 0, blackoutMs: 0, blackedOut: false });
    const lossy = await measure(peer, callId, 2_000);

    // About 100 packets each way in 2 s at 50 per second: 30 % of them, give or take 4 standard deviations.
    for (const way of [lossy.toBusiness, lossy.fromBusiness]) {
      expect(way.packets).toBeGreaterThan(70);
      expect(way.dropped / way.packets).toBeGreaterThan(0.12);
      expect(way.dropped / way.packets).toBeLessThan(0.48);
    }
    // The business heard only what got through of what the customer sent.
    expect(lossy.businessHeard / lossy.customerSent).toBeGreaterThan(0.52);
    expect(lossy.businessHeard / lossy.customerSent).toBeLessThan(0.88);
    // The customer heard fewer of the business's frames than on the clean network, per second.
    const rate = (w: Span) => w.customerHeard / w.ms;
    expect(rate(lossy) / rate(cleanWindow)).toBeGreaterThan(0.52);
    expect(rate(lossy) / rate(cleanWindow)).toBeLessThan(0.88);

    // A POST without impairments is a clean network again.
    expect((await impair({ callId })).body).toMatchObject({ lossPercent: 0, delayMs: 0, jitterMs: 0, blackoutMs: 0, blackedOut: false });
    const healed = await measure(peer, callId, 500);
    expect(healed.toBusiness.dropped + healed.fromBusiness.dropped).toBe(0);
    expect(healed.businessHeard).toBeGreaterThan(10);
  });

  test('a blackout stops every packet both ways for its duration; then traffic returns by itself', async () => {
    const peer = business();
    const callId = await incomingCall(peer, sandbox.customers.find(clean)!.number);
    await audioBothWays(peer, callId);

    const startedAt = Date.now();
    const set = await impair({ callId, blackoutMs: 1_500 });
    expect(set.status).toBe(200);
    expect(set.body.blackedOut).toBe(true);
    expect(set.body.blackoutEndsAt! - set.body.blackoutStartsAt!).toBe(1_500);
    expect(set.body.blackoutStartsAt).toBeGreaterThanOrEqual(startedAt);

    // Packets already received by werift drain first; then nothing at all, either way.
    await sleep(150);
    const dark = await measure(peer, callId, 900);
    expect(dark.businessHeard).toBe(0);
    expect(dark.customerHeard).toBe(0);
    // Both sides kept sending into the void: every packet of every kind was dropped.
    expect(dark.customerSent).toBeGreaterThan(20);
    expect(dark.toBusiness.packets).toBeGreaterThan(20);
    expect(dark.toBusiness.dropped).toBe(dark.toBusiness.packets);
    expect(dark.fromBusiness.packets).toBeGreaterThan(20);
    expect(dark.fromBusiness.dropped).toBe(dark.fromBusiness.packets);
    const during = await report(callId);
    expect(during.network.blackedOut).toBe(true);
    expect(during.state).toBe('connected');

    // No second POST: the blackout ends on its own and media flows both ways again.
    const heardBefore = peer.framesHeard;
    const back = await eventually('the customer to hear the business again', async () => {
      const r = await report(callId);
      return r.framesHeard > during.framesHeard + 10 ? r : undefined;
    }, 5_000);
    await eventually('the business to hear the customer again', () => peer.framesHeard > heardBefore + 10, 5_000);
    expect(Date.now()).toBeGreaterThanOrEqual(set.body.blackoutEndsAt!);
    expect(back.network.blackedOut).toBe(false);
    expect(back.state).toBe('connected');
    const after = await measure(peer, callId, 400);
    expect(after.toBusiness.dropped + after.fromBusiness.dropped).toBe(0);
  });

  test('a blackout longer than the service allows ends the call with 138022, as the service would', async () => {
    const strict = await startTestSandbox(relay, { timeouts: { mediaGapTimeoutMs: 800 } });
    cleanup.push(() => strict.close());
    const peer = business();
    const callId = await incomingCall(peer, strict.customers.find(clean)!.number, strict);
    await audioBothWays(peer, callId, strict);
    expect((await impair({ callId, blackoutMs: 5_000 }, strict)).status).toBe(200);
    const { call } = await eventually('the terminate webhook', () => callItem(relay, callId, 'terminate'), 4_000);
    expect(call.status).toBe('FAILED');
    expect(call.errors?.[0]?.code).toBe(138022);
  });

  test('delay holds packets back and jitter reorders them', async () => {
    const peer = business();
    // The sequence numbers the business receives, in arrival order.
    const arrivals: number[] = [];
    peer.pc.onTrack.subscribe((track) => track.onReceiveRtp.subscribe((rtp) => arrivals.push(rtp.header.sequenceNumber)));
    const callId = await outgoingCall(peer, sandbox.customers.find(clean)!.number);
    await audioBothWays(peer, callId);

    // 20 ms between frames and up to 120 ms of jitter: later frames often overtake earlier ones.
    const set = await impair({ callId, delayMs: 300, jitterMs: 120 });
    expect(set.body).toMatchObject({ lossPercent: 0, delayMs: 300, jitterMs: 120, blackoutMs: 0 });
    const from = arrivals.length;
    await sleep(1_200);
    const seen = arrivals.slice(from);
    const overtaken = seen.filter((seq, i) => i > 0 && ((seq - seen[i - 1]! + 0x10000) & 0xffff) > 0x8000).length;
    expect(seen.length).toBeGreaterThan(20);
    expect(overtaken).toBeGreaterThan(2);

    // The business stops; its last packets still reach the customer 300 ms or more later.
    peer.paused = true;
    const pausedAt = Date.now();
    await sleep(800);
    const r = await report(callId);
    expect(r.network.toBusiness.dropped + r.network.fromBusiness.dropped).toBe(0);
    expect(r.state).toBe('connected');
    // The last frame left at most one 20 ms tick before the pause.
    expect(r.lastRtpAt! - pausedAt).toBeGreaterThanOrEqual(300 - 25);
    expect(r.lastRtpAt! - pausedAt).toBeLessThan(300 + 120 + 200);
  });
});

describe('POST /control/network: refusals', () => {
  const bad = async (body: unknown, status = 400) => {
    const answer = await impair(body);
    expect(answer.status).toBe(status);
    return answer.body.error!;
  };

  test('each field out of its range is named with its rule; all problems are listed', async () => {
    const peer = business();
    const callId = await incomingCall(peer, sandbox.customers.find(clean)!.number);
    const cases: [Record<string, unknown>, string, string][] = [
      [{ lossPercent: 101 }, 'lossPercent', 'lossPercent: must be a number from 0 to 100 (percent)'],
      [{ lossPercent: -1 }, 'lossPercent', 'lossPercent: must be a number from 0 to 100 (percent)'],
      [{ lossPercent: '5' }, 'lossPercent', 'lossPercent: must be a number from 0 to 100 (percent)'],
      [{ jitterMs: 2_001 }, 'jitterMs', 'jitterMs: must be a number from 0 to 2000 (milliseconds)'],
      [{ jitterMs: null }, 'jitterMs', 'jitterMs: must be a number from 0 to 2000 (milliseconds)'],
      [{ delayMs: -5 }, 'delayMs', 'delayMs: must be a number from 0 to 2000 (milliseconds)'],
      [{ blackoutMs: 120_001 }, 'blackoutMs', 'blackoutMs: must be a number from 0 to 120000 (milliseconds)'],
      [{ blackoutMs: true }, 'blackoutMs', 'blackoutMs: must be a number from 0 to 120000 (milliseconds)'],
    ];
    for (const [fields, field, message] of cases) {
      const error = await bad({ callId, ...fields });
      expect(error).toEqual({ code: 'invalid_input', field, message });
    }
    const several = await bad({ callId, lossPercent: 200, blackoutMs: -1 });
    expect(several.field).toBe('lossPercent');
    expect(several.message).toBe('lossPercent: must be a number from 0 to 100 (percent); blackoutMs: must be a number from 0 to 120000 (milliseconds)');
    // A misspelt field is refused, not silently ignored into a clean network.
    expect((await bad({ callId, loss: 5 })).message).toMatch(/does not take "loss"/);
    // Nothing refused changed the network.
    expect((await report(callId)).network).toMatchObject({ lossPercent: 0, delayMs: 0, jitterMs: 0, blackoutMs: 0, toBusiness: { dropped: 0 }, fromBusiness: { dropped: 0 } });
    // The limits themselves are accepted.
    expect((await impair({ callId, lossPercent: 0, jitterMs: 2_000, delayMs: 0, blackoutMs: 0 })).status).toBe(200);
  });

  test('callId is required, and must be a live call: 404 for an unknown or ended one', async () => {
    expect(await bad({ lossPercent: 5 })).toEqual({ code: 'invalid_input', field: 'callId', message: 'callId: is required and must be a string' });
    expect(await bad({ callId: '', lossPercent: 5 })).toMatchObject({ field: 'callId' });
    expect(await bad({ callId: 'wacid.nope', lossPercent: 5 }, 404)).toEqual({ code: 'not_found', field: 'callId', message: 'no call wacid.nope' });

    const peer = business();
    const callId = await incomingCall(peer, sandbox.customers.find(clean)!.number);
    expect((await control(sandbox, '/control/hangup', { callId })).status).toBe(200);
    expect(await bad({ callId, lossPercent: 5 }, 404)).toEqual({ code: 'not_found', field: 'callId', message: `call ${callId} has ended` });

    const res = await fetch(`${sandbox.url}/control/network`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{"callId":' });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { field: string } }).error.field).toBe('(root)');
  });

  test('a ringing call can be made bad before it is answered', async () => {
    const callId = (await control<{ callId: string }>(sandbox, '/control/incoming', { number: sandbox.customers.find(clean)!.number })).body.callId;
    hangUpLater(callId);
    const set = await impair({ callId, lossPercent: 10 });
    expect(set.status).toBe(200);
    expect((await report(callId)).network).toMatchObject({ lossPercent: 10, toBusiness: { packets: 0 } });
  });
});

describe('customers with a bad network built in', () => {
  test('the customer list says which network each one is on', async () => {
    const { body } = await control<SandboxCustomer[]>(sandbox, '/control/customers');
    expect(body.filter((c) => c.network).map((c) => [c.name, c.number, c.behaviour, c.network!.label])).toEqual([
      ['Hedy Lamarr', '12025550105', 'answers', 'lossy network (5 % loss, 40 ms jitter)'],
      ['Claude Shannon', '442079460103', 'answers', 'network blackout (10 s, 8 s into the call)'],
    ]);
    expect(new Set(body.map((c) => c.number)).size).toBe(body.length);
    expect(DEFAULT_CUSTOMERS.find((c) => c.name === 'Hedy Lamarr')!.network).toMatchObject({ lossPercent: 5, jitterMs: 40 });
  });

  test.for(['incoming', 'outgoing'] as const)('the lossy customer loses packets with jitter on an %s call', async (direction) => {
    const peer = business();
    const number = named('Hedy Lamarr').number;
    const callId = direction === 'incoming' ? await incomingCall(peer, number) : await outgoingCall(peer, number);
    await audioBothWays(peer, callId);
    const r = await eventually('a packet lost each way', async () => {
      const now = await report(callId);
      return now.network.toBusiness.dropped > 0 && now.network.fromBusiness.dropped > 0 ? now : undefined;
    }, 8_000);
    expect(r.network).toMatchObject({ lossPercent: 5, jitterMs: 40, delayMs: 0, blackoutMs: 0, blackedOut: false });
    expect(r.network.toBusiness.dropped / r.network.toBusiness.packets).toBeLessThan(0.25);
    expect(r.direction).toBe(direction === 'incoming' ? 'USER_INITIATED' : 'BUSINESS_INITIATED');

    // A POST replaces the built-in network.
    expect((await impair({ callId })).body).toMatchObject({ lossPercent: 0, jitterMs: 0 });
    expect((await control(sandbox, '/control/hangup', { callId })).status).toBe(200);
  });

  test.for(['incoming', 'outgoing'] as const)('the blackout customer goes dark 8 s after media starts, for 10 s, on an %s call', async (direction) => {
    const peer = business();
    const number = named('Claude Shannon').number;
    const before = Date.now();
    const callId = direction === 'incoming' ? await incomingCall(peer, number) : await outgoingCall(peer, number);
    const ringing = await report(callId);
    expect(ringing.network).toMatchObject({ blackoutMs: 10_000, blackedOut: false });
    expect(ringing.network.blackoutStartsAt).toBeUndefined();
    const flowing = await audioBothWays(peer, callId);
    const mediaSeen = Date.now();
    expect(flowing.network.blackedOut).toBe(false);
    expect(flowing.network.blackoutStartsAt! - 8_000).toBeGreaterThanOrEqual(before);
    expect(flowing.network.blackoutStartsAt! - 8_000).toBeLessThanOrEqual(mediaSeen);
    expect(flowing.network.blackoutEndsAt! - flowing.network.blackoutStartsAt!).toBe(10_000);
    expect((await control(sandbox, '/control/hangup', { callId })).status).toBe(200);
  });

  test('a built-in blackout comes and goes by itself; a POST before it cancels it', async () => {
    // Claude Shannon's network, with its times shortened to fit a unit test.
    const shannon = named('Claude Shannon');
    const quick: SandboxCustomer = { ...shannon, network: { ...shannon.network!, blackoutAfterMs: 300, blackoutMs: 1_200 } };
    const box = await startTestSandbox(relay, { customers: [quick] });
    cleanup.push(() => box.close());

    const peer = business();
    const callId = await incomingCall(peer, quick.number, box);
    await audioBothWays(peer, callId, box);
    const dark = await eventually('the blackout', async () => {
      const r = await report(callId, box);
      return r.network.blackedOut ? r : undefined;
    }, 3_000);
    const heard = peer.framesHeard;
    await sleep(500);
    const still = await report(callId, box);
    expect(still.network.blackedOut).toBe(true);
    expect(peer.framesHeard - heard).toBeLessThanOrEqual(1);
    expect(still.framesHeard - dark.framesHeard).toBeLessThanOrEqual(1);
    await eventually('media again', async () => (await report(callId, box)).framesHeard > still.framesHeard + 10 && peer.framesHeard > heard + 10, 5_000);
    expect((await report(callId, box)).network.blackedOut).toBe(false);
    await control(box, '/control/hangup', { callId });

    const second = business();
    const callId2 = await incomingCall(second, quick.number, box);
    expect((await impair({ callId: callId2 }, box)).body).toMatchObject({ blackoutMs: 0, blackedOut: false });
    await audioBothWays(second, callId2, box);
    await sleep(600);
    const r = await report(callId2, box);
    expect(r.network.blackoutStartsAt).toBeUndefined();
    expect(r.network.toBusiness.dropped + r.network.fromBusiness.dropped).toBe(0);
  });
});

describe('the business in Chromium during a blackout', () => {
  let browser: Browser;
  let page: Page;
  let pageServer: Server;

  beforeAll(async () => {
    // getUserMedia needs a secure context: a page of our own on 127.0.0.1.
    pageServer = createServer((_req, res) => res.writeHead(200, { 'Content-Type': 'text/html' }).end('<!doctype html><title>business</title>'));
    await new Promise<void>((resolve) => pageServer.listen(0, '127.0.0.1', resolve));
    browser = await chromium.launch({
      executablePath: '/usr/bin/chromium',
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--use-fake-ui-for-media-stream', '--use-fake-device-for-media-stream'],
    });
    page = await browser.newPage();
    await page.goto(`http://127.0.0.1:${(pageServer.address() as AddressInfo).port}/`);
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await new Promise((resolve) => pageServer?.close(resolve));
  });

  /** Chromium's ICE state and the RTP packets it has received from the customer. */
  const chromiumSees = () =>
    page.evaluate(async () => {
      const pc = (window as unknown as { pc: RTCPeerConnection }).pc;
      let packets = 0;
      (await pc.getStats()).forEach((s: { type: string; packetsReceived?: number }) => {
        if (s.type === 'inbound-rtp') packets = s.packetsReceived ?? 0;
      });
      return { ice: pc.iceConnectionState, packets };
    });

  test('no media reaches it, its ICE turns disconnected, and both come back when the blackout ends', async () => {
    const callId = (await control<{ callId: string }>(sandbox, '/control/incoming', { number: sandbox.customers.find(clean)!.number })).body.callId;
    hangUpLater(callId);
    const offer = (await eventually('the connect webhook', () => callItem(relay, callId, 'connect'))).call.session!.sdp;
    const answer = await page.evaluate(async (sdp) => {
      const pc = new RTCPeerConnection();
      (window as unknown as { pc: RTCPeerConnection }).pc = pc;
      const mic = await navigator.mediaDevices.getUserMedia({ audio: true });
      pc.addTrack(mic.getAudioTracks()[0]!, mic);
      await pc.setRemoteDescription({ type: 'offer', sdp });
      await pc.setLocalDescription();
      await new Promise<void>((resolve) => {
        if (pc.iceGatheringState === 'complete') return resolve();
        pc.addEventListener('icegatheringstatechange', () => pc.iceGatheringState === 'complete' && resolve());
      });
      return pc.localDescription!.sdp;
    }, offer);
    cleanup.push(() => page.evaluate(() => (window as unknown as { pc: RTCPeerConnection }).pc.close()));
    await gatewayPost(sandbox, 'accept', { messaging_product: 'chatapp', call_id: callId, action: 'accept', session: { sdp_type: 'answer', sdp: answer } });
    await eventually('Chromium to receive the customer', async () => (await chromiumSees()).packets > 10);

    // Chromium declares ICE disconnected after about 5 s without an answer to its checks.
    const blackout = (await impair({ callId, blackoutMs: 7_000 })).body;
    await sleep(300);
    const dark = await chromiumSees();
    const disconnected = await eventually('Chromium ICE disconnected', async () => {
      const now = await chromiumSees();
      return now.ice === 'disconnected' ? now : undefined;
    }, 7_000);
    expect(Date.now()).toBeLessThan(blackout.blackoutEndsAt!);
    expect(disconnected.packets).toBe(dark.packets);
    expect((await report(callId)).state).toBe('connected');

    const back = await eventually('Chromium connected and receiving again', async () => {
      const now = await chromiumSees();
      return now.ice === 'connected' && now.packets > dark.packets + 10 ? now : undefined;
    }, 5_000);
    expect(back.ice).toBe('connected');
    expect(Date.now()).toBeGreaterThanOrEqual(blackout.blackoutEndsAt!);
    const customer = await report(callId);
    expect(customer.network.blackedOut).toBe(false);
    expect(customer.state).toBe('connected');
  }, 30_000);
});

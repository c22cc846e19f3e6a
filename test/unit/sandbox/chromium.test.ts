// The customers against the browser the product runs in: Debian's Chromium plays the business with
// a plain RTCPeerConnection (fake microphone), through the sandbox's real gateway endpoints. Both
// sides must hear each other, in both call directions.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { SandboxCallReport } from '../../../shared/sandbox';
import type { SandboxServer } from '../../../sandbox/server';
import { callItem, control, eventually, gatewayPost, startTestSandbox, startWebhookReceiver, type WebhookReceiver } from './harness';

let relay: WebhookReceiver;
let sandbox: SandboxServer;
let browser: Browser;
let page: Page;
let pageServer: Server;

beforeAll(async () => {
  relay = await startWebhookReceiver();
  sandbox = await startTestSandbox(relay);
  // getUserMedia needs a secure context: a page of our own on 127.0.0.1.
  pageServer = createServer((_req, res) => res.writeHead(200, { 'Content-Type': 'text/html' }).end('<!doctype html><title>business</title>'));
  await new Promise<void>((resolve) => pageServer.listen(0, '127.0.0.1', resolve));
  browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--use-fake-ui-for-media-stream', '--use-fake-device-for-media-stream', '--autoplay-policy=no-user-gesture-required'],
  });
  page = await browser.newPage();
  await page.goto(`http://127.0.0.1:${(pageServer.address() as AddressInfo).port}/`);
  await page.evaluate(() => {
    const w = window as unknown as Record<string, unknown>;
    w.business = async (remoteOffer?: string) => {
      const pc = new RTCPeerConnection();
      w.pc = pc;
      pc.ontrack = (e) => {
        const audio = document.createElement('audio');
        audio.srcObject = e.streams[0] ?? new MediaStream([e.track]);
        audio.autoplay = true;
        document.body.append(audio);
      };
      const mic = await navigator.mediaDevices.getUserMedia({ audio: true });
      pc.addTrack(mic.getAudioTracks()[0]!, mic);
      if (remoteOffer) await pc.setRemoteDescription({ type: 'offer', sdp: remoteOffer });
      await pc.setLocalDescription();
      await new Promise<void>((resolve) => {
        if (pc.iceGatheringState === 'complete') return resolve();
        pc.addEventListener('icegatheringstatechange', () => pc.iceGatheringState === 'complete' && resolve());
      });
      return pc.localDescription!.sdp;
    };
    w.heard = async () => {
      let energy = 0;
      let packets = 0;
      (await (w.pc as RTCPeerConnection).getStats()).forEach((s: { type: string; totalAudioEnergy?: number; packetsReceived?: number }) => {
        if (s.type === 'inbound-rtp') {
          energy = s.totalAudioEnergy ?? 0;
          packets = s.packetsReceived ?? 0;
        }
      });
      return { energy, packets };
    };
  });
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await sandbox?.close();
  await relay?.close();
  await new Promise((resolve) => pageServer?.close(resolve));
});

const report = async (callId: string) => (await control<SandboxCallReport>(sandbox, `/control/calls/${callId}`)).body;
const answering = () => sandbox.customers.find((c) => c.behaviour === 'answers')!;

async function bothHear(callId: string): Promise<void> {
  const customer = await eventually('the customer to hear Chromium', async () => {
    const r = await report(callId);
    return r.framesHeard > 0 && r.heardRms > 0.001 ? r : undefined;
  });
  expect(customer.heardRms).toBeGreaterThan(0.001);
  const business = await eventually('Chromium to hear the customer', async () => {
    const h = await page.evaluate(() => (window as unknown as { heard(): Promise<{ energy: number; packets: number }> }).heard());
    return h.energy > 0 ? h : undefined;
  });
  expect(business.packets).toBeGreaterThan(0);
}

describe('Chromium as the business', () => {
  test('answers an incoming call through /accept: audio both ways', async () => {
    const callId = (await control<{ callId: string }>(sandbox, '/control/incoming', { number: answering().number })).body.callId;
    const offer = (await eventually('the connect webhook', () => callItem(relay, callId, 'connect'))).call.session!.sdp;
    const answer = await page.evaluate((sdp) => (window as unknown as { business(o: string): Promise<string> }).business(sdp), offer);
    const accepted = await gatewayPost(sandbox, 'accept', { messaging_product: 'chatapp', call_id: callId, action: 'accept', session: { sdp_type: 'answer', sdp: answer } });
    expect(accepted.body).toEqual({ messaging_product: 'chatapp', success: true });
    await bothHear(callId);
    await gatewayPost(sandbox, 'terminate', { messaging_product: 'chatapp', call_id: callId, action: 'terminate' });
    await page.evaluate(() => ((window as unknown as { pc: RTCPeerConnection }).pc).close());
  });

  test('calls a customer through /initiate and applies the answer from the connect webhook: audio both ways', async () => {
    const offer = await page.evaluate(() => (window as unknown as { business(): Promise<string> }).business());
    const started = await gatewayPost(sandbox, 'initiate', { messaging_product: 'chatapp', to: answering().number, action: 'connect', session: { sdp_type: 'offer', sdp: offer } });
    expect(started.status).toBe(200);
    const callId = (started.body as { calls: { id: string }[] }).calls[0]!.id;
    const answer = (await eventually('the connect webhook', () => callItem(relay, callId, 'connect'))).call.session!.sdp;
    await page.evaluate((sdp) => ((window as unknown as { pc: RTCPeerConnection }).pc).setRemoteDescription({ type: 'answer', sdp }), answer);
    await bothHear(callId);
    await control(sandbox, '/control/hangup', { callId });
    await page.evaluate(() => ((window as unknown as { pc: RTCPeerConnection }).pc).close());
  });
});

// The browser host ends the calls whose audio a page carried when that page's socket closes (a
// reload, the tab closed): only the calls it answered, placed or rejoined, and not when the host itself stops.
// A call has one such page, the one whose answer was taken last: another tab of the agent closing leaves it be.
// A supervisor's join of a call whose leg the page answered is left the same way.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, expect, test } from 'vitest';
import WebSocket from 'ws';
import { startBrowserHost, type BrowserHost } from '../../../electron/browser/browser-host';
import { WINDOW_GONE_REASON, type WsServerFrame } from '../../../shared/api';
import { REJOIN_REFUSALS } from '../../../shared/call-state';
import { configureLogging } from '../../../shared/log';
import { errText, ok, type Result } from '../../../shared/result';
import { ANSWER_SDP, DIAL_OFFER_SDP } from '../../fixtures/sdp';
import { deferred, FakeService } from '../desktop/fake-service';

let staticDir: string;
let service: FakeService;
let host: BrowserHost;

beforeAll(async () => {
  configureLogging({ level: 'error' });
  staticDir = await mkdtemp(join(tmpdir(), 'softphone-static-'));
  await writeFile(join(staticDir, 'index.html'), '<!doctype html><title>Softphone</title>');
});
afterAll(async () => {
  await rm(staticDir, { recursive: true, force: true });
});
beforeEach(async () => {
  await host?.close();
  service = new FakeService();
  host = await startBrowserHost({ backend: service, staticDir });
  return () => host.close();
});

async function page(): Promise<{ ws: WebSocket; send(id: number, command: string, params: unknown): Promise<void> }> {
  const ws = new WebSocket(`ws://127.0.0.1:${host.port}/api?token=${encodeURIComponent(host.token)}`, { origin: host.origin });
  const frames: WsServerFrame[] = [];
  ws.on('message', (d) => frames.push(JSON.parse(d.toString()) as WsServerFrame));
  await new Promise((resolve, reject) => {
    ws.once('open', resolve);
    ws.once('error', reject);
  });
  return {
    ws,
    async send(id, command, params) {
      ws.send(JSON.stringify({ id, command, params }));
      for (let i = 0; i < 200 && !frames.some((f) => f.kind === 'result' && f.id === id); i++) await new Promise((r) => setTimeout(r, 10));
    },
  };
}

const closed = (ws: WebSocket) => new Promise((resolve) => (ws.readyState === ws.CLOSED ? resolve(undefined) : ws.once('close', resolve)));
/** Until the host has let go of all but `open` pages (it unsubscribes a page in its close handler, where it reports the page's calls). */
const letGo = (open: number) => settle(() => service.listeners.size === open);
/** Until the host has handled an answer just given: that runs in the microtasks after it, all before the next turn. */
const handled = () => new Promise((resolve) => setImmediate(resolve));
const settle = async (check: () => boolean) => {
  for (let i = 0; i < 100 && !check(); i++) await new Promise((r) => setTimeout(r, 10));
};

test('a page that answered and placed calls closes: exactly those calls end, with the reason', async () => {
  const agent = await page();
  await agent.send(1, 'answerCall', { localId: 'in:wacid.1', sdp: ANSWER_SDP });
  await agent.send(2, 'startCall', { localId: 'out:abcdef123456', to: '+12025550101', sdp: DIAL_OFFER_SDP });
  await agent.send(3, 'getSnapshot', {});
  const onlyWatching = await page();
  await onlyWatching.send(1, 'getSnapshot', {});
  onlyWatching.ws.close();
  await closed(onlyWatching.ws);
  agent.ws.close();
  await settle(() => service.gone.length > 0);
  expect(service.gone).toEqual([{ calls: ['in:wacid.1', 'out:abcdef123456'], reason: WINDOW_GONE_REASON.reloaded }]);
});

/** A service on which another page answered the rejoin offer of `refusedCall` first. */
class RejoinTakenElsewhere extends FakeService {
  constructor(private readonly refusedCall: string) {
    super();
  }
  override async handle(name: string, params: unknown): Promise<Result<never>> {
    if (name === 'rejoinCall' && (params as { localId: string }).localId === this.refusedCall) {
      this.handled.push({ name, params });
      return errText('invalid_state', REJOIN_REFUSALS.offerClosed);
    }
    return super.handle(name, params);
  }
}

test('a page that rejoined a call (a bridged call whose earlier page went) carries its audio: it closes, and the call is reported gone again', async () => {
  const agent = await page();
  await agent.send(1, 'rejoinCall', { localId: 'in:wacid.r1', legId: 'leg-rejoin-1', sdp: ANSWER_SDP });
  await agent.send(2, 'getSnapshot', {});
  agent.ws.close();
  await settle(() => service.gone.length > 0);
  expect(service.handled.map((h) => h.name)).toEqual(['rejoinCall', 'getSnapshot']);
  expect(service.gone).toEqual([{ calls: ['in:wacid.r1'], reason: WINDOW_GONE_REASON.reloaded }]);
});

test('a page whose rejoin answer was refused (another page took the offer) does not carry that call: its closing reports only its own', async () => {
  await host.close();
  service = new RejoinTakenElsewhere('in:wacid.r2');
  host = await startBrowserHost({ backend: service, staticDir });
  const agent = await page();
  await agent.send(1, 'rejoinCall', { localId: 'in:wacid.r2', legId: 'leg-rejoin-2', sdp: ANSWER_SDP });
  await agent.send(2, 'answerCall', { localId: 'in:wacid.r3', sdp: ANSWER_SDP });
  agent.ws.close();
  await settle(() => service.gone.length > 0);
  expect(service.handled.map((h) => h.name)).toEqual(['rejoinCall', 'answerCall']);
  expect(service.gone).toEqual([{ calls: ['in:wacid.r3'], reason: WINDOW_GONE_REASON.reloaded }]);
});

test('a stale tab closes after another tab took the call’s rejoined leg: nothing is reported; the tab that has the audio closes, and the call is', async () => {
  const stale = await page();
  await stale.send(1, 'answerCall', { localId: 'in:wacid.s1', sdp: ANSWER_SDP });
  const current = await page();
  await current.send(1, 'rejoinCall', { localId: 'in:wacid.s1', legId: 'leg-rejoin-s1', sdp: ANSWER_SDP });
  await current.send(2, 'answerCall', { localId: 'in:wacid.s2', sdp: ANSWER_SDP });
  stale.ws.close();
  await letGo(1);
  expect(service.gone).toEqual([]);
  current.ws.close();
  await settle(() => service.gone.length > 0);
  expect(service.gone).toEqual([{ calls: ['in:wacid.s1', 'in:wacid.s2'], reason: WINDOW_GONE_REASON.reloaded }]);
});

/** A service that keeps the answer to every `held` command until the test lets it go. */
class HeldAnswers extends FakeService {
  readonly waiting = new Map<string, ReturnType<typeof deferred<Result<never>>>>();
  constructor(private readonly held: string) {
    super();
  }
  override async handle(name: string, params: unknown): Promise<Result<never>> {
    if (name !== this.held) return super.handle(name, params);
    this.handled.push({ name, params });
    const answer = deferred<Result<never>>();
    this.waiting.set((params as { legId?: string; localId: string }).legId ?? (params as { localId: string }).localId, answer);
    return answer.promise;
  }
}

/** The host again, on a service that holds each `command`'s answer until the test gives it. */
async function hostHolding(command: string): Promise<HeldAnswers> {
  await host.close();
  const held = new HeldAnswers(command);
  service = held;
  host = await startBrowserHost({ backend: service, staticDir });
  return held;
}

test('a page closes while its answer is on its way: the call is reported at once, and not again when the answer is taken', async () => {
  const held = await hostHolding('answerCall');
  const agent = await page();
  agent.ws.send(JSON.stringify({ id: 1, command: 'answerCall', params: { localId: 'in:wacid.h1', sdp: ANSWER_SDP } }));
  await settle(() => held.waiting.has('in:wacid.h1'));
  agent.ws.close();
  await settle(() => service.gone.length > 0);
  expect(service.gone).toEqual([{ calls: ['in:wacid.h1'], reason: WINDOW_GONE_REASON.reloaded }]);
  held.waiting.get('in:wacid.h1')?.resolve(ok(null as never));
  await handled();
  expect(service.gone).toEqual([{ calls: ['in:wacid.h1'], reason: WINDOW_GONE_REASON.reloaded }]);
});

test('a page closes while its rejoin answer is on its way and another page has the call’s audio: only a taken answer reports the call, when it is taken', async () => {
  const held = await hostHolding('rejoinCall');
  const owner = await page();
  await owner.send(1, 'answerCall', { localId: 'in:wacid.h2', sdp: ANSWER_SDP });
  const stale = await page();
  stale.ws.send(JSON.stringify({ id: 1, command: 'rejoinCall', params: { localId: 'in:wacid.h2', legId: 'leg-stale', sdp: ANSWER_SDP } }));
  const taker = await page();
  taker.ws.send(JSON.stringify({ id: 1, command: 'rejoinCall', params: { localId: 'in:wacid.h2', legId: 'leg-taken', sdp: ANSWER_SDP } }));
  await settle(() => held.waiting.size === 2);
  stale.ws.close();
  taker.ws.close();
  await letGo(1);
  held.waiting.get('leg-stale')?.resolve(errText('invalid_state', REJOIN_REFUSALS.offerClosed));
  await handled();
  expect(service.gone).toEqual([]);
  held.waiting.get('leg-taken')?.resolve(ok(null as never));
  await settle(() => service.gone.length > 0);
  expect(service.gone).toEqual([{ calls: ['in:wacid.h2'], reason: WINDOW_GONE_REASON.reloaded }]);
  // The page that had the audio before the taken answer no longer has it: its closing reports nothing more.
  owner.ws.close();
  await letGo(0);
  expect(service.gone).toHaveLength(1);
});

test('a page that carried no call closes: nothing ends', async () => {
  const watcher = await page();
  await watcher.send(1, 'declineCall', { localId: 'in:wacid.2' });
  watcher.ws.close();
  await closed(watcher.ws);
  await new Promise((r) => setTimeout(r, 50));
  expect(service.gone).toEqual([]);
});

test('the host stopping (the app quitting) leaves ending the calls to the service', async () => {
  const agent = await page();
  await agent.send(1, 'answerCall', { localId: 'in:wacid.3', sdp: ANSWER_SDP });
  await host.close();
  await closed(agent.ws);
  await new Promise((r) => setTimeout(r, 50));
  expect(service.gone).toEqual([]);
});

/** A service that answers startMonitor with a leg, as a supervisor's join does, and refuses answerMonitor for `refusedCall`. */
class Supervising extends FakeService {
  constructor(private readonly refusedCall?: string) {
    super();
  }
  override async handle(name: string, params: unknown): Promise<Result<never>> {
    if (name === 'answerMonitor' && (params as { callId: string }).callId === this.refusedCall) {
      this.handled.push({ name, params });
      return errText('invalid_state', { code: 'supervision.notJoined', values: { callId: this.refusedCall } });
    }
    return super.handle(name, params);
  }
}

test('a page that answered a supervisor’s leg of a joined call closes: that join is left; one it left, or whose leg it never took, is not', async () => {
  await host.close();
  service = new Supervising('wacid.m3');
  host = await startBrowserHost({ backend: service, staticDir });
  const supervisor = await page();
  await supervisor.send(1, 'startMonitor', { callId: 'wacid.m1', mode: 'listen' });
  await supervisor.send(2, 'answerMonitor', { callId: 'wacid.m1', legId: 'leg-monitor-1', sdp: ANSWER_SDP });
  await supervisor.send(3, 'startMonitor', { callId: 'wacid.m2', mode: 'whisper' });
  await supervisor.send(4, 'answerMonitor', { callId: 'wacid.m2', legId: 'leg-monitor-2', sdp: ANSWER_SDP });
  await supervisor.send(5, 'leaveMonitor', { callId: 'wacid.m2' });
  await supervisor.send(6, 'answerMonitor', { callId: 'wacid.m3', legId: 'leg-monitor-3', sdp: ANSWER_SDP });
  const watcher = await page();
  await watcher.send(1, 'startMonitor', { callId: 'wacid.m4', mode: 'barge' });
  watcher.ws.close();
  await closed(watcher.ws);
  supervisor.ws.close();
  await settle(() => service.handled.filter((h) => h.name === 'leaveMonitor').length === 2);
  await new Promise((r) => setTimeout(r, 50));
  expect(service.handled.filter((h) => h.name === 'leaveMonitor').map((h) => h.params)).toEqual([{ callId: 'wacid.m2' }, { callId: 'wacid.m1' }]);
  // A join is no call: the page carried none.
  expect(service.gone).toEqual([]);
});

test('the host stopping leaves a joined call to the service too', async () => {
  const supervisor = await page();
  await supervisor.send(1, 'answerMonitor', { callId: 'wacid.m5', legId: 'leg-monitor-5', sdp: ANSWER_SDP });
  await host.close();
  await closed(supervisor.ws);
  await new Promise((r) => setTimeout(r, 50));
  expect(service.handled.map((h) => h.name)).toEqual(['answerMonitor']);
});

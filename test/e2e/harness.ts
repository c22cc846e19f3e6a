// The whole product on 127.0.0.1: relay, sandbox, the main-process service, the browser host, and
// Debian's Chromium driven by Playwright. Nothing is mocked.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, expect, onTestFailed } from 'vitest';
import { startRelay, type RelayOptions, type RelayServer } from '../../relay/server';
import { hashAgentToken, type AgentConfig } from '../../relay/agent-directory';
import { localBridge, LocalNodeEvents } from '../../relay/bridged-calls';
import { RedisBackend } from '../../relay/backend/redis-backend';
import type { RelayBackend } from '../../relay/backend/types';
import { BridgeNode } from '../../bridge/bridge-node';
import type { BridgedCallReport } from '../../shared/bridge';
import type { BridgeNodeLoad } from '../../shared/bridge-nodes';
import type { TurnConfig } from '../../relay/turn-credentials';
import type { NetworkFlags } from '../../electron/core/network-settings';
import { startSandbox, type SandboxOptions, type SandboxServer } from '../../sandbox/server';
import { createSoftphoneService, type SoftphoneService } from '../../electron/core/softphone-service';
import { MemorySecretStore } from '../../electron/core/secret-store';
import { startBrowserHost, type BrowserHost } from '../../electron/browser/browser-host';
import { configureLogging } from '../../shared/log';
import type { SandboxCallReport, SandboxCustomer } from '../../shared/sandbox';
import { startRedis, uniquePrefix } from '../support/redis-server';

/** The built renderer the browser host serves (`npx vite build` puts it in dist/renderer). */
export const RENDERER_DIR = resolve(process.env.E2E_RENDERER_DIR ?? 'dist/renderer');

export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--use-fake-ui-for-media-stream',
  '--use-fake-device-for-media-stream',
  '--autoplay-policy=no-user-gesture-required',
  `--use-file-for-fake-audio-capture=${resolve('assets/test/agent-voice.wav')}`,
];

export const secret = () => randomBytes(18).toString('base64url');
/** 32 characters: the relay's shortest plain agent token. */
export const agentTokenOf = () => randomBytes(24).toString('base64url');

/**
 * What the service, the relay, the sandbox and the pages logged lately, kept quiet and printed only
 * when a test fails: a call that never connects then shows each side's last words.
 */
const recentLines: string[] = [];
function remember(line: string): void {
  recentLines.push(line);
  if (recentLines.length > 400) recentLines.splice(0, recentLines.length - 400);
}
export function keepLogs(quiet: boolean | undefined): void {
  if (quiet === false) configureLogging({ level: 'info' });
  // Outside a test run (the bench) nobody reads them: warnings only, as the product logs by default.
  else if (!process.env.VITEST) configureLogging({ level: 'warn' });
  else configureLogging({ level: 'info', sink: (line) => remember(`node ${line}`) });
}

/** On a failed test: the page's calls, its media sessions, and the recent log lines of every side. */
function explainFailure(page: Page, who: string): void {
  // Outside a test (a hook) there is no test to fail.
  if (!expect.getState().currentTestName) return;
  onTestFailed(async () => {
    const lines = recentLines.splice(0);
    let view: string;
    try {
      view = JSON.stringify(
        await page.evaluate(() => ({
          currentCall: document.querySelector('[aria-label="Current call"]')?.textContent ?? null,
          incoming: [...document.querySelectorAll('[aria-label="Incoming call"]')].map((e) => e.textContent),
          media: (window as unknown as { __softphoneMedia?: { sessions(): unknown } }).__softphoneMedia?.sessions(),
        })),
      );
    } catch (e) {
      view = `the page could not be read: ${String(e)}`;
    }
    console.error([`--- ${who}'s page when the test failed: ${view}`, '--- recent log lines:', ...lines].join('\n'));
  });
}

export interface Stack {
  relay: RelayServer;
  sandbox: SandboxServer;
  service: SoftphoneService;
  host: BrowserHost;
  browser: Browser;
  /** A second agent token, for a test's own subscriber on the relay. */
  tapToken: string;
  /** The gateway API key the app's service uses (for a test's or a bench's own gateway requests). */
  apiKey: string;
  /** Restarts the relay on the same port with the same secrets (its memory is lost, as in a real restart). */
  restartRelay(): Promise<void>;
  /** `say`: how the page words the English names it waits for (another language, the pseudo-locale). */
  newAgentPage(say?: (english: string) => string): Promise<Page>;
  customer(behaviour: SandboxCustomer['behaviour']): SandboxCustomer;
  /** The sandbox's control API. */
  control<T>(path: string, body?: unknown): Promise<T>;
  callReport(callId: string): Promise<SandboxCallReport>;
  gatewayLog(): Promise<{ action: string; callId?: string; at: number; status: number }[]>;
  /**
   * Ends every call the service still has live (a ringing one declined, the rest hung up) and waits
   * until none is: a test that failed mid-call does not leave its call to the next test.
   */
  endCalls(): Promise<void>;
  close(): Promise<void>;
  /** What the bridge node says of a call's legs (a bridged stack only). */
  bridgeReport(callId: string): Promise<BridgedCallReport>;
  /** The bridge node's load (a bridged stack only). */
  bridgeLoad(): Promise<BridgeNodeLoad>;
  /** The node closes the call's connected agent leg, as a network change would lose it (a bridged stack only). */
  dropAgentLeg(callId: string): Promise<void>;
}

/** What a test may change about the sandbox: e.g. slower delivery statuses, to see each one on screen, or shorter media timeouts. */
export type StackSandboxOptions = Pick<SandboxOptions, 'messaging' | 'timeouts'>;

export interface StackOptions {
  quiet?: boolean;
  sandbox?: StackSandboxOptions;
  /** The relay hands out TURN credentials for this server (GET /turn-credentials). */
  relayTurn?: TurnConfig;
  /** The app's own ICE servers and policy, as `start:browser --ice-servers … --ice-transport-policy …` gives them. */
  network?: NetworkFlags;
  /** The relay runs a bridge node in its process (`--bridge`): every call's media ends on it. */
  bridge?: boolean;
  /** The relay ends at the sandbox's gateway, with the app's key, the bridged calls no agent can end (`--gateway-url`, `--api-key`). */
  relayGateway?: boolean;
  /** How long a member of a bridged call has to rejoin (the relay's `rejoinWindowMs`). */
  rejoinWindowMs?: number;
  /** What the agent's fake microphone plays (a WAV file Chromium loops); the agent's voice by default. */
  microphoneWav?: string;
}

/** CHROMIUM_ARGS with `wav` as the fake microphone's capture file. */
export const chromiumArgsWithMicrophone = (wav: string): string[] =>
  CHROMIUM_ARGS.map((arg) => (arg.startsWith('--use-file-for-fake-audio-capture=') ? `--use-file-for-fake-audio-capture=${wav}` : arg));

/** One agent's app against the stack's sandbox and relay: its own data directory, service and browser host. */
export async function startAgentApp(o: { sandboxUrl: string; relayUrl: string; apiKey: string; agentToken: string; label: string }): Promise<{ dataDir: string; service: SoftphoneService; host: BrowserHost }> {
  const dataDir = await mkdtemp(join(tmpdir(), `softphone-e2e-${o.label}-`));
  const account = { gatewayUrl: `${o.sandboxUrl}/restapi/v1`, apiKey: o.apiKey, productSegment: 'chatapp', relayUrl: o.relayUrl, agentToken: o.agentToken };
  const service = await createSoftphoneService({
    dataDir,
    secrets: new MemorySecretStore(),
    embedded: async () => ({ account, sandboxControlUrl: o.sandboxUrl, close: async () => {} }),
  });
  const host = await startBrowserHost({ backend: service, staticDir: RENDERER_DIR });
  return { dataDir, service, host };
}

export async function startStack(options: StackOptions = {}): Promise<Stack> {
  keepLogs(options.quiet);
  const appSecret = secret();
  const verifyToken = secret();
  const agentToken = agentTokenOf();
  const tapToken = agentTokenOf();
  const apiKey = secret();
  const dataDir = await mkdtemp(join(tmpdir(), 'softphone-e2e-'));

  const nodeEvents = new LocalNodeEvents();
  const node = options.bridge === true ? new BridgeNode({ bindAddress: '127.0.0.1', publicAddress: '127.0.0.1', onEvent: nodeEvents.emit }) : undefined;
  // The sandbox starts after the relay: the relay reads its gateway when it first needs it.
  const sandboxGateway: { url?: string } = {};
  const turn = {
    ...(options.relayTurn ? { turn: options.relayTurn } : {}),
    ...(node !== undefined ? { bridgeNodes: localBridge(node, 'local', nodeEvents) } : {}),
    ...(options.relayGateway === true ? { gateway: () => (sandboxGateway.url === undefined ? undefined : { url: sandboxGateway.url, apiKey, product: 'chatapp' }) } : {}),
    ...(options.rejoinWindowMs !== undefined ? { rejoinWindowMs: options.rejoinWindowMs } : {}),
  };
  let relay = await startRelay({ port: 0, appSecret, verifyToken, agentTokens: [agentToken, tapToken], ...turn });
  const relayPort = relay.port;
  const sandbox = await startSandbox({ port: 0, relayUrl: relay.url, appSecret, apiKey, ...options.sandbox });
  sandboxGateway.url = `${sandbox.url}/restapi/v1`;
  const account = { gatewayUrl: `${sandbox.url}/restapi/v1`, apiKey, productSegment: 'chatapp', relayUrl: relay.url, agentToken };
  const service = await createSoftphoneService({
    dataDir,
    secrets: new MemorySecretStore(),
    // The "embedded" environment is ours, so the test can restart the relay under the app.
    embedded: async () => ({ account, sandboxControlUrl: sandbox.url, close: async () => {} }),
    ...(options.network ? { network: options.network } : {}),
  });
  const host = await startBrowserHost({ backend: service, staticDir: RENDERER_DIR });
  const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: options.microphoneWav !== undefined ? chromiumArgsWithMicrophone(options.microphoneWav) : CHROMIUM_ARGS });

  const stack: Stack = {
    get relay() {
      return relay;
    },
    sandbox,
    service,
    host,
    browser,
    tapToken,
    apiKey,
    async restartRelay() {
      await relay.close();
      relay = await startRelay({ port: relayPort, appSecret, verifyToken, agentTokens: [agentToken, tapToken], ...turn });
    },
    async newAgentPage(say?: (english: string) => string) {
      return openAgentPage(browser, host.url, 'agent', say);
    },
    ...sandboxControls(sandbox),
    endCalls: () => endLiveCalls(service),
    async bridgeReport(callId) {
      if (node === undefined) throw new Error('the stack runs no bridge');
      const report = await node.report(callId);
      if (!report.ok) throw new Error(`bridge report of ${callId}: ${report.error.message}`);
      return report.value;
    },
    bridgeLoad() {
      if (node === undefined) return Promise.reject(new Error('the stack runs no bridge'));
      return Promise.resolve(node.load());
    },
    async dropAgentLeg(callId) {
      if (node === undefined) throw new Error('the stack runs no bridge');
      const report = await node.report(callId);
      if (!report.ok) throw new Error(`bridge report of ${callId}: ${report.error.message}`);
      const connected = Object.entries(report.value.agents).filter(([, leg]) => leg.state === 'connected');
      if (connected.length !== 1) throw new Error(`call ${callId} has ${connected.length} connected agent legs`);
      const closed = await node.closeAgentLeg(callId, connected[0]![0]);
      if (!closed.ok) throw new Error(`closing the agent leg of ${callId}: ${closed.error.message}`);
    },
    async close() {
      await browser.close().catch(() => {});
      await host.close();
      await service.close();
      await sandbox.close();
      await relay.close();
      await node?.close();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
  return stack;
}

/**
 * The stack one e2e file shares: started before its first test and closed after its last. After
 * each test the agent pages it opened are closed and any call still live is ended, so a test that
 * failed mid-call never leaves its call to the next one. Use it only inside hooks and tests.
 */
export function stackForFile(options: StackOptions = {}): Stack {
  let started: Stack | undefined;
  const opened: Page[] = [];
  beforeAll(async () => {
    started = await startStack(options);
  });
  afterAll(async () => {
    await started?.close();
  });
  afterEach(async () => {
    for (const p of opened.splice(0)) await p.context().close().catch(() => undefined);
    await started?.endCalls();
  });
  return new Proxy({} as Stack, {
    get(_target, key) {
      if (!started) throw new Error(`the file's stack was used before it started (stack.${String(key)})`);
      const stack = started;
      if (key === 'newAgentPage') {
        return async (say?: (english: string) => string) => {
          const p = await stack.newAgentPage(say);
          opened.push(p);
          return p;
        };
      }
      const value: unknown = Reflect.get(stack, key);
      return typeof value === 'function' ? value.bind(stack) : value;
    },
  });
}

async function endLiveCalls(service: SoftphoneService): Promise<void> {
  const live = async () => {
    const snapshot = await service.handle('getSnapshot', {});
    return snapshot.ok ? snapshot.value.calls.filter((c) => c.phase !== 'ended') : [];
  };
  for (const call of await live()) {
    if (call.direction === 'incoming' && call.phase === 'ringing') await service.handle('declineCall', { localId: call.localId });
    else await service.handle('hangUp', { localId: call.localId });
  }
  await eventually('every call to end', async () => (await live()).length === 0);
}

/** The parts of the page the call tests look at (renderer/REFERENCE.md "Accessible names"). */
export const currentCall = (p: Page) => p.getByRole('region', { name: 'Current call' });
export const incomingCard = (p: Page) => p.getByRole('dialog', { name: 'Incoming call' });
export const recentCalls = (p: Page) => p.getByRole('list', { name: 'Recent calls' });

/** Two different sandbox customers, for a second call beside a first. */
export function twoCustomers(stack: Pick<Stack, 'sandbox'>): [SandboxCustomer, SandboxCustomer] {
  const distinct = stack.sandbox.customers.filter((c, i, all) => all.findIndex((o) => o.number === c.number) === i);
  const [first, second] = distinct;
  if (!first || !second) throw new Error('the sandbox needs two customers');
  return [first, second];
}

/**
 * Call waiting for a test: "Ring me during a call" turned on in Settings, then `customer` calls and
 * is answered, and the test waits until the relay may ring this agent for a second call.
 */
export async function onCallWithWaiting(stack: Pick<Stack, 'service' | 'control'>, p: Page, customer: SandboxCustomer): Promise<{ callId: string }> {
  await p.getByRole('button', { name: 'Settings' }).click();
  await p.getByRole('checkbox', { name: 'Ring me during a call' }).check();
  await eventually('the setting saved', () => stack.service.preferences().ringDuringCall);
  await p.getByRole('button', { name: 'Back' }).click();
  const call = await stack.control<{ callId: string }>('/control/incoming', { number: customer.number });
  await incomingCard(p).getByRole('button', { name: 'Answer', exact: true }).click();
  await currentCall(p).getByText('Connected').waitFor();
  // On one call with the setting on, the relay is told a new call may still ring here.
  await eventually('presence call_waiting', async () => {
    const snapshot = await stack.service.handle('getSnapshot', {});
    return snapshot.ok && snapshot.value.presence?.status === 'call_waiting';
  });
  // The report reaches the relay over loopback right after; give it that moment.
  await p.waitForTimeout(300);
  return call;
}

/**
 * The inbound energy (inbound-rtp totalAudioEnergy) that says a page heard something: one 20 ms frame
 * at about -43 dBFS. A bridged leg connected while its call rang carries the bridge's silence, which
 * decodes to a noise floor far below it (about 3e-10 over its first packets).
 */
export const AUDIBLE_ENERGY = 1e-6;

/** Audio both ways: the agent's page hears the customer, and the sandbox's customer heard the agent. */
export async function expectTwoWayAudio(p: Page, callReport: (callId: string) => Promise<SandboxCallReport>, callId: string): Promise<void> {
  const localId = await mediaIdOf(p, callId);
  const inbound = await eventually('the agent to hear the customer', async () => {
    const s = await agentInbound(p, localId);
    return s.inboundEnergy > AUDIBLE_ENERGY ? s : undefined;
  });
  expect(inbound.inboundPackets).toBeGreaterThan(0);
  const report = await eventually('the customer to hear the agent', async () => {
    const r = await callReport(callId);
    return r.framesHeard > 0 && r.heardRms > 0.001 ? r : undefined;
  });
  expect(report.heardRms).toBeGreaterThan(0.001);
}

/** Polls until `check` returns a value that is not undefined/false. */
export async function eventually<T>(what: string, check: () => Promise<T | undefined | false> | T | undefined | false, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined && value !== false) return value;
    } catch (e) {
      last = e;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${last ? `: ${String(last)}` : ''}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The window's id (localId) of the call with this gateway call id, as the page's store has it. */
export async function mediaIdOf(page: Page, callId: string): Promise<string> {
  return eventually(`the page to know call ${callId}`, () =>
    page.evaluate((id) => (window as unknown as { __softphoneMedia?: { localIdOf(callId: string): string | undefined } }).__softphoneMedia?.localIdOf(id), callId),
  );
}

/** The agent page's inbound audio on one call, read from the media engine's getStats. */
export async function agentInbound(page: Page, localId: string): Promise<{ inboundEnergy: number; inboundPackets: number; outboundPackets: number }> {
  return page.evaluate(async (id) => {
    const media = (window as unknown as { __softphoneMedia?: { stats(localId: string): Promise<{ inboundEnergy: number; inboundPackets: number; outboundPackets: number }> } }).__softphoneMedia;
    if (!media) throw new Error('no media test hook');
    return media.stats(id);
  }, localId);
}

/** One agent of a team stack: its own token, main-process service and browser host. */
export interface TeamAgentHarness {
  /** The relay's id for this agent (`--agent-token` agents are agent-1, agent-2, … in order). */
  id: string;
  token: string;
  service: SoftphoneService;
  host: BrowserHost;
}

/** Several agents, each with its own app (service + browser host), on one relay and one sandbox. */
export interface TeamStack {
  relay: RelayServer;
  sandbox: SandboxServer;
  browser: Browser;
  agents: TeamAgentHarness[];
  /** A page of agent `index`'s app, once its relay link shows Connected. */
  newAgentPage(index: number): Promise<Page>;
  customer(behaviour: SandboxCustomer['behaviour']): SandboxCustomer;
  control<T>(path: string, body?: unknown): Promise<T>;
  callReport(callId: string): Promise<SandboxCallReport>;
  gatewayLog(): Promise<{ action: string; callId?: string; at: number; status: number }[]>;
  close(): Promise<void>;
}

export interface TeamStackOptions {
  agents: number;
  quiet?: boolean;
  sandbox?: StackSandboxOptions;
  /** The agents' names, by index: the relay then knows them from an agents list (ids agent-1, agent-2, …). */
  names?: readonly string[];
  /** The indexes of the agents who are supervisors (with `names`). */
  supervisors?: readonly number[];
  /** The relay's call records and team settings. */
  relay?: Pick<RelayOptions, 'records' | 'teamSettings'>;
}

export async function startTeamStack(options: TeamStackOptions): Promise<TeamStack> {
  keepLogs(options.quiet);
  const appSecret = secret();
  const verifyToken = secret();
  const apiKey = secret();
  const tokens = Array.from({ length: options.agents }, () => agentTokenOf());
  const names = options.names;
  const agentsOf = (list: readonly string[]): AgentConfig[] =>
    tokens.map((token, i) => ({ id: `agent-${i + 1}`, name: list[i] ?? `Agent ${i + 1}`, tokenSha256: hashAgentToken(token), ...(options.supervisors?.includes(i) === true ? { role: 'supervisor' as const } : {}) }));
  const relay = await startRelay({ port: 0, appSecret, verifyToken, ...(names !== undefined ? { agents: agentsOf(names) } : { agentTokens: tokens }), ...options.relay });
  const sandbox = await startSandbox({ port: 0, relayUrl: relay.url, appSecret, apiKey, ...options.sandbox });
  const dataDirs: string[] = [];
  const agents: TeamAgentHarness[] = [];
  for (const [i, token] of tokens.entries()) {
    const app = await startAgentApp({ sandboxUrl: sandbox.url, relayUrl: relay.url, apiKey, agentToken: token, label: `agent${i + 1}` });
    dataDirs.push(app.dataDir);
    agents.push({ id: `agent-${i + 1}`, token, service: app.service, host: app.host });
  }
  const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: CHROMIUM_ARGS });

  const team: TeamStack = {
    relay,
    sandbox,
    browser,
    agents,
    newAgentPage: (index) => openTeamAgentPage(browser, agents, index),
    ...sandboxControls(sandbox),
    async close() {
      await closeTeamApps(browser, agents);
      await sandbox.close();
      await relay.close();
      for (const dir of dataDirs) await rm(dir, { recursive: true, force: true });
    },
  };
  return team;
}

/** Team agent `index`'s page, on its own app. */
function openTeamAgentPage(browser: Browser, agents: readonly TeamAgentHarness[], index: number): Promise<Page> {
  const agent = agents[index];
  if (!agent) throw new Error(`the team has no agent ${index}`);
  return openAgentPage(browser, agent.host.url, agent.id);
}

/** The browser, then each agent's browser host and app. */
export async function closeTeamApps(browser: Browser, agents: readonly TeamAgentHarness[]): Promise<void> {
  await browser.close().catch(() => {});
  for (const agent of agents) {
    await agent.host.close();
    await agent.service.close();
  }
}

/** A fresh browser context for one agent, on the app, once it is connected. `prepare` runs before the app loads (init scripts). */
export async function openAgentPage(browser: Browser, url: string, who: string, say: (english: string) => string = (english) => english, prepare?: (page: Page) => Promise<void>): Promise<Page> {
  const context = await browser.newContext({ permissions: ['microphone'] });
  const page = await context.newPage();
  await prepare?.(page);
  page.on('pageerror', (e) => console.error(`page error (${who}):`, e.message));
  page.on('console', (m) => remember(`page ${who} ${m.type()} ${m.text()}`));
  explainFailure(page, who);
  await page.goto(url);
  await page.getByRole('status', { name: say('Connection') }).getByText(say('Connected')).waitFor();
  return page;
}

/** The sandbox's control API, the same for one agent or a team. */
export function sandboxControls(sandbox: SandboxServer) {
  const control = async <T>(path: string, body?: unknown): Promise<T> => {
    const res = await fetch(`${sandbox.url}${path}`, {
      method: body === undefined ? 'GET' : 'POST',
      headers: body === undefined ? {} : { 'Content-Type': 'application/json' },
      body: body === undefined ? null : JSON.stringify(body),
    });
    if (!res.ok) throw new Error(`sandbox ${path}: HTTP ${res.status} ${await res.text()}`);
    return (await res.json()) as T;
  };
  return {
    customer(behaviour: SandboxCustomer['behaviour']): SandboxCustomer {
      const found = sandbox.customers.find((c) => c.behaviour === behaviour);
      if (!found) throw new Error(`the sandbox has no customer who ${behaviour}`);
      return found;
    },
    control,
    callReport: (callId: string) => control<SandboxCallReport>(`/control/calls/${encodeURIComponent(callId)}`),
    gatewayLog: () => control<{ action: string; callId?: string; at: number; status: number }[]>('/control/log'),
  };
}

/** One bridge node as its own process (`npm run bridge`), registered with the stack's relay. */
export interface BridgeNodeProcess {
  nodeId: string;
  /** The process dies at once (SIGKILL): no leaving, no last events, no more heartbeats. */
  kill(): Promise<void>;
}

/** A team whose calls go through bridge nodes in processes of their own, on a relay backed by Redis. */
export interface BridgeNodesStack extends TeamStack {
  nodes: BridgeNodeProcess[];
  /** The team's record of which node holds each call, read from Redis as the relay wrote it. */
  placements: Pick<RelayBackend, 'callNode' | 'callsOnNode' | 'nodes'>;
}

export interface BridgeNodesStackOptions {
  agents: number;
  nodes: number;
  /** The relay's `bridgeHeartbeatMs`: a node is gone three of them after its last report. */
  heartbeatMs: number;
  quiet?: boolean;
  sandbox?: StackSandboxOptions;
}

/**
 * Agents' apps on one relay with a bridge token and a Redis backend (REDIS_URL, or a private
 * redis-server), and `nodes` bridge nodes each started as `npm run bridge` starts one — node on
 * bridge/cli.ts, one process each, on 127.0.0.1 — registered before this resolves.
 */
export async function startBridgeNodesStack(options: BridgeNodesStackOptions): Promise<BridgeNodesStack> {
  keepLogs(options.quiet);
  const appSecret = secret();
  const verifyToken = secret();
  const apiKey = secret();
  const bridgeToken = `${secret()}${secret()}`;
  const tokens = Array.from({ length: options.agents }, () => agentTokenOf());
  const redis = await startRedis();
  const redisPrefix = uniquePrefix('e2e-bridge-nodes');
  const placements = await RedisBackend.open({ url: redis.url, keyPrefix: redisPrefix, retentionMs: 10 * 60_000, dedupWindowMs: 60_000 });
  const relay = await startRelay({ port: 0, appSecret, verifyToken, agentTokens: tokens, redisUrl: redis.url, redisPrefix, bridgeToken, bridgeHeartbeatMs: options.heartbeatMs });
  const sandbox = await startSandbox({ port: 0, relayUrl: relay.url, appSecret, apiKey, ...options.sandbox });
  const dataDirs: string[] = [];
  const agents: TeamAgentHarness[] = [];
  for (const [i, token] of tokens.entries()) {
    const app = await startAgentApp({ sandboxUrl: sandbox.url, relayUrl: relay.url, apiKey, agentToken: token, label: `bridged-agent${i + 1}` });
    dataDirs.push(app.dataDir);
    agents.push({ id: `agent-${i + 1}`, token, service: app.service, host: app.host });
  }
  const children: ChildProcess[] = [];
  const nodes: BridgeNodeProcess[] = [];
  for (let i = 1; i <= options.nodes; i += 1) {
    const nodeId = `e2e-node-${i}`;
    // Node itself runs the command (not npx): the process a signal reaches is the node.
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', 'bridge/cli.ts', '--relay-url', relay.url, `--bridge-token=${bridgeToken}`, '--control-port', '0', '--control-address', '127.0.0.1', '--public-address', '127.0.0.1', '--node-id', nodeId],
      // The flags say everything: a BRIDGE_* variable of the machine's must not change them.
      { cwd: resolve('.'), env: Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('BRIDGE_') && k !== 'RELAY_BRIDGE_TOKEN')), stdio: ['ignore', 'pipe', 'pipe'] },
    );
    children.push(child);
    const exited = new Promise<void>((done) => child.once('exit', () => done()));
    for (const stream of [child.stdout, child.stderr]) stream?.on('data', (chunk: Buffer) => remember(`${nodeId} ${chunk.toString().trimEnd()}`));
    nodes.push({
      nodeId,
      async kill() {
        if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
        await exited;
      },
    });
  }
  // Each node starts cold (tsx compiles werift's module graph) while the unit tests run beside: on a
  // busy two-core machine that alone can take tens of seconds.
  await eventually('the bridge nodes to register', async () => (await placements.nodes()).length === options.nodes, 50_000);
  const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: CHROMIUM_ARGS });

  return {
    relay,
    sandbox,
    browser,
    agents,
    nodes,
    placements,
    newAgentPage: (index) => openTeamAgentPage(browser, agents, index),
    ...sandboxControls(sandbox),
    async close() {
      await closeTeamApps(browser, agents);
      // Each node that is still running leaves the relay and ends its calls, as on Ctrl-C.
      await Promise.all(
        children.map(async (child) => {
          if (child.exitCode !== null || child.signalCode !== null) return;
          const exited = new Promise<void>((done) => child.once('exit', () => done()));
          child.kill('SIGTERM');
          const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
          await exited;
          clearTimeout(timer);
        }),
      );
      await sandbox.close();
      await relay.close();
      await placements.close();
      await redis.removeKeys(redisPrefix);
      await redis.stop();
      for (const dir of dataDirs) await rm(dir, { recursive: true, force: true });
    },
  };
}

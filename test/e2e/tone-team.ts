// A bridged team for transfer tests: named agents on one relay with a bridge node in its process,
// each agent with its own app and its own Chromium whose fake microphone plays a tone of its own
// (between the hold music's notes), so that what each party hears tells who hears whom: the
// customer's probe in the sandbox report, each agent's from the spectrum of its remote audio.
import { execFileSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { BridgeNode } from '../../bridge/bridge-node';
import { hashAgentToken } from '../../relay/agent-directory';
import { localBridge, LocalNodeEvents } from '../../relay/bridged-calls';
import { bundledNoticePath, loadRecordNotice } from '../../relay/record-notice';
import { RecordingsStore } from '../../relay/recordings-store';
import { createLogger } from '../../shared/log';
import { startRelay, type RelayOptions, type RelayServer } from '../../relay/server';
import type { AgentRole } from '../../shared/api';
import type { BridgedCallReport } from '../../shared/bridge';
import type { SandboxCallReport, SandboxCustomer } from '../../shared/sandbox';
import { startSandbox, type SandboxServer } from '../../sandbox/server';
import { agentTokenOf, chromiumArgsWithMicrophone, closeTeamApps, eventually, keepLogs, openAgentPage, sandboxControls, secret, startAgentApp, type TeamAgentHarness } from './harness';

export interface ToneAgent extends TeamAgentHarness {
  name: string;
  /** The tone its microphone plays, Hz. */
  toneHz: number;
  browser: Browser;
}

export interface ToneTeam {
  relay: RelayServer;
  sandbox: SandboxServer;
  agents: ToneAgent[];
  /** A page of agent `index`'s app, once connected; its microphone is its tone, with no processing. */
  newAgentPage(index: number): Promise<Page>;
  customer(behaviour: SandboxCustomer['behaviour']): SandboxCustomer;
  control<T>(path: string, body?: unknown): Promise<T>;
  callReport(callId: string): Promise<SandboxCallReport>;
  gatewayLog(): Promise<{ action: string; callId?: string; at: number; status: number }[]>;
  bridgeReport(callId: string): Promise<BridgedCallReport>;
  close(): Promise<void>;
}

/**
 * Runs before the app in each agent page: the microphone's tone reaches the call as it is (echo
 * cancellation and noise suppression would flatten a steady tone), and every remote track is kept
 * for `agentHears`.
 */
function tonePage(): void {
  const w = window as unknown as { __remoteTracks: MediaStreamTrack[] };
  w.__remoteTracks = [];
  const Original = window.RTCPeerConnection;
  class Kept extends Original {
    constructor(config?: RTCConfiguration) {
      super(config);
      this.addEventListener('track', (e) => w.__remoteTracks.push(e.track));
    }
  }
  window.RTCPeerConnection = Kept;
  const devices = navigator.mediaDevices;
  const open = devices.getUserMedia.bind(devices);
  devices.getUserMedia = (constraints) => {
    const audio = constraints?.audio;
    if (audio === undefined || audio === false) return open(constraints);
    const raw = { ...(typeof audio === 'object' ? audio : {}), echoCancellation: false, noiseSuppression: false, autoGainControl: false };
    return open({ ...constraints, audio: raw });
  };
}

export interface ToneTeamOptions {
  names: string[];
  tonesHz: number[];
  /** Each agent's role (default: agent). */
  roles?: AgentRole[];
  /** The sandbox customers say this steady tone instead of the recorded voice. */
  customerToneHz?: number;
  /** More of the relay's options (supervisors). */
  relay?: Partial<RelayOptions>;
  /** The team records its calls (`--record`), kept in `dir`, with the bundled en_US notice. */
  record?: { mode: 'on-demand' | 'always'; dir: string };
  quiet?: boolean;
}

export async function startToneTeam(options: ToneTeamOptions): Promise<ToneTeam> {
  keepLogs(options.quiet);
  const appSecret = secret();
  const verifyToken = secret();
  const apiKey = secret();
  const files = await mkdtemp(join(tmpdir(), 'softphone-e2e-tones-'));
  const tokens = options.names.map(() => agentTokenOf());
  const nodeEvents = new LocalNodeEvents();
  let recordings: RelayOptions['recordings'];
  if (options.record !== undefined) {
    const notice = await loadRecordNotice(bundledNoticePath('en_US'));
    if (!notice.ok) throw new Error(notice.error.message);
    const store = new RecordingsStore({ dir: options.record.dir, logger: createLogger('e2e-recordings') });
    await store.open();
    recordings = { mode: options.record.mode, store, notice: notice.value };
  }
  const node = new BridgeNode({ bindAddress: '127.0.0.1', publicAddress: '127.0.0.1', onEvent: nodeEvents.emit, ...(recordings?.store !== undefined ? { recordings: recordings.store } : {}) });
  const relay = await startRelay({
    port: 0,
    appSecret,
    verifyToken,
    agents: options.names.map((name, i) => ({ id: `agent-${i + 1}`, name, tokenSha256: hashAgentToken(tokens[i]!), ...(options.roles?.[i] !== undefined ? { role: options.roles[i] } : {}) })),
    bridgeNodes: localBridge(node, 'local', nodeEvents),
    ...(recordings !== undefined ? { recordings } : {}),
    ...options.relay,
  });
  let voicePath: string | undefined;
  if (options.customerToneHz !== undefined) {
    voicePath = join(files, `customer-${options.customerToneHz}.wav`);
    execFileSync('sox', ['-n', '-r', '48000', '-c', '1', '-b', '16', voicePath, 'synth', '20', 'sine', String(options.customerToneHz), 'vol', '0.5']);
  }
  const sandbox = await startSandbox({ port: 0, relayUrl: relay.url, appSecret, apiKey, ...(voicePath !== undefined ? { voicePath } : {}) });
  const agents: ToneAgent[] = [];
  const dataDirs: string[] = [];
  for (const [i, token] of tokens.entries()) {
    const toneHz = options.tonesHz[i]!;
    const wav = join(files, `tone-${toneHz}.wav`);
    // Chromium loops its fake capture file: 20 s of the tone at half scale.
    execFileSync('sox', ['-n', '-r', '48000', '-c', '1', '-b', '16', wav, 'synth', '20', 'sine', String(toneHz), 'vol', '0.5']);
    const { dataDir, service, host } = await startAgentApp({ sandboxUrl: sandbox.url, relayUrl: relay.url, apiKey, agentToken: token, label: `tone-agent${i + 1}` });
    dataDirs.push(dataDir);
    const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: chromiumArgsWithMicrophone(wav) });
    agents.push({ id: `agent-${i + 1}`, name: options.names[i]!, token, service, host, toneHz, browser });
  }
  return {
    relay,
    sandbox,
    agents,
    newAgentPage(index) {
      const agent = agents[index];
      if (!agent) throw new Error(`the team has no agent ${index}`);
      return openAgentPage(agent.browser, agent.host.url, agent.name, undefined, async (page) => {
        await page.addInitScript(tonePage);
      });
    },
    ...sandboxControls(sandbox),
    async bridgeReport(callId) {
      const report = await node.report(callId);
      if (!report.ok) throw new Error(`bridge report of ${callId}: ${report.error.message}`);
      return report.value;
    },
    async close() {
      for (const agent of agents) await closeTeamApps(agent.browser, [agent]);
      await sandbox.close();
      await relay.close();
      await node.close();
      await recordings?.store?.close();
      for (const dir of [...dataDirs, files]) await rm(dir, { recursive: true, force: true });
    },
  };
}

/** How loud each tone is in what the page plays from its live calls, dB (spectrum peak near the tone). */
export async function agentHears(page: Page, tonesHz: readonly number[]): Promise<Record<number, number>> {
  const levels = await page.evaluate(async (tones) => {
    const tracks = (window as unknown as { __remoteTracks: MediaStreamTrack[] }).__remoteTracks.filter((t) => t.readyState === 'live');
    if (tracks.length === 0) return tones.map(() => -Infinity);
    const ctx = new AudioContext();
    const analyser = ctx.createAnalyser();
    analyser.fftSize = 8192;
    analyser.smoothingTimeConstant = 0;
    for (const track of tracks) ctx.createMediaStreamSource(new MediaStream([track])).connect(analyser);
    const binHz = ctx.sampleRate / analyser.fftSize;
    const data = new Float32Array(analyser.frequencyBinCount);
    const sums = tones.map(() => 0);
    await new Promise((done) => setTimeout(done, 300));
    const reads = 6;
    for (let r = 0; r < reads; r += 1) {
      analyser.getFloatFrequencyData(data);
      tones.forEach((hz, i) => {
        const bin = Math.round(hz / binHz);
        let peak = -Infinity;
        for (let b = bin - 2; b <= bin + 2; b += 1) peak = Math.max(peak, data[b] ?? -Infinity);
        sums[i]! += peak;
      });
      await new Promise((done) => setTimeout(done, 100));
    }
    await ctx.close();
    return sums.map((sum) => sum / reads);
  }, [...tonesHz]);
  return Object.fromEntries(tonesHz.map((hz, i) => [hz, levels[i]!]));
}

/** A tone this loud or louder is heard (the customer's speech peaks near -55 dB at any one frequency; a steady tone through the bridge plays louder). */
export const HEARD_DB = -45;
/** The customer's probe: a tone at this amplitude or more is heard (the agents' tones arrive at ~0.3–0.5). */
export const CUSTOMER_HEARD = 0.05;
/** And this little is not. */
export const CUSTOMER_NOT_HEARD = 0.01;

/** Waits until the customer hears exactly these agents' tones (and not the others'). */
export async function customerHearsTones(team: Pick<ToneTeam, 'callReport'>, callId: string, heard: number[], notHeard: number[]): Promise<Record<string, number>> {
  return eventually(`the customer of ${callId} to hear ${heard.join(' + ') || 'no tone'} and not ${notHeard.join(', ')}`, async () => {
    const tones = (await team.callReport(callId)).tonesHeard ?? {};
    const level = (hz: number) => tones[String(hz)] ?? 0;
    return heard.every((hz) => level(hz) >= CUSTOMER_HEARD) && notHeard.every((hz) => level(hz) < CUSTOMER_NOT_HEARD) ? tones : undefined;
  });
}

/** Waits until the agent's page plays these tones. */
export async function agentHearsTones(page: Page, heard: number[], notHeard: number[] = []): Promise<Record<number, number>> {
  return eventually(`the agent to hear ${heard.join(' + ')}${notHeard.length > 0 ? ` and not ${notHeard.join(', ')}` : ''}`, async () => {
    const levels = await agentHears(page, [...heard, ...notHeard]);
    return heard.every((hz) => levels[hz]! >= HEARD_DB) && notHeard.every((hz) => levels[hz]! < HEARD_DB) ? levels : undefined;
  });
}

// Agents' apps on a team whose calls go through its bridge, for the core tests of who else hears a
// bridged call (the team's recordings, its supervisors). Everything the apps talk to is real but the
// gateway: the relay (relay/server.ts) with a bridge node in its process (bridge/bridge-node.ts,
// `--bridge`), its team's recordings kept by a RecordingsStore with the bundled notice, the sandbox's
// customer (a werift peer playing its voice) calling with an offer of its own, and werift windows
// answering the legs the node offers, each playing a tone. The gateway is a local HTTP server that
// takes every call action: it hands an accept's answer to the call's customer and tells the relay of
// a terminate, as the service does. The apps reach the relay through a tap (relay-tap.ts) that keeps
// what they asked. Each test's apps, peers and servers are closed by closeOversight() in an afterEach.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import { BridgeNode } from '../../../bridge/bridge-node';
import { MemorySecretStore } from '../../../electron/core/secret-store';
import { createSoftphoneService, type SoftphoneService } from '../../../electron/core/softphone-service';
import { hashAgentToken } from '../../../relay/agent-directory';
import { localBridge, LocalNodeEvents, type BridgeNodeSource } from '../../../relay/bridged-calls';
import { bundledNoticePath, loadRecordNotice } from '../../../relay/record-notice';
import { RecordingsStore } from '../../../relay/recordings-store';
import { startRelay, type RelayServer } from '../../../relay/server';
import { TeamSettingsSource } from '../../../relay/team-settings-source';
import type { PushMessage, PushPayloads } from '../../../shared/api';
import { BRIDGE_AGENT_PATHS } from '../../../shared/bridge';
import type { RecordingSink, RecordMode } from '../../../shared/bridge-recording';
import type { CallState } from '../../../shared/call-state';
import type { RelayEnvelope, RelayEvent } from '../../../shared/events';
import { ok, type Result } from '../../../shared/result';
import type { AccountConfig } from '../../../shared/settings';
import { liveCallsSchema, SUPERVISOR_PATHS, type LiveCall } from '../../../shared/supervision';
import { DEFAULT_TEAM_SETTINGS, type TeamSettings } from '../../../shared/team-settings';
import { AgentWindow } from '../bridge/agent-window';
import { eventually, HOST, quietLogger, ServiceCustomer, TONE_A, TONE_B } from '../bridge/bridge-harness';
import { APP_SECRET, CUSTOMER, envelope, incomingCallItem, postWebhook, terminatedCall } from '../relay/webhook-fixtures';
import { json, startFakeGateway, success, type FakeGateway } from './fake-gateway';
import { startRelayTap, type RelayTap } from './relay-tap';
import { ALICE, BOB, type TeamAgent } from './team-relay';

export { CUSTOMER };
export const SAM: TeamAgent = { id: 'sam', name: 'Sam Supervisor', token: 'sam-token-0123456789' };
/** The tone each agent's window plays. */
export const TONES: Record<string, number> = { alice: TONE_A, bob: TONE_B, sam: 1_200 };

export interface OversightTeamOptions {
  /** Default: Alice, Bob and Sam. */
  agents?: TeamAgent[];
  /** The agents whose role is supervisor. */
  supervisors?: string[];
  /** `--record`; default never. */
  record?: RecordMode;
  /** `--tell-agents-when-monitored`. */
  tellAgents?: boolean;
  /** The team's settings at the start. */
  settings?: Partial<TeamSettings>;
  /**
   * The node's finished recordings wait for `handOver` before they reach the store, as a remote
   * node's upload under way does (the relay has the call's meta, and no file yet).
   */
  holdRecordings?: boolean;
  /** The node's: a connected leg that receives nothing for this long has failed (default 15 s). */
  mediaTimeoutMs?: number;
}

export interface OversightTeam {
  relay: RelayServer;
  /** What the apps asked of the relay. */
  tap: RelayTap;
  node: BridgeNode;
  gateway: FakeGateway;
  teamSettings: TeamSettingsSource;
  store: RecordingsStore | undefined;
  /** Every event the relay stored, in order. */
  events: RelayEnvelope[];
  /** The files the node finished, by call id, as it handed them over. */
  finished: Map<string, Uint8Array>;
  /** A held recording of `callId` reaches the store (once the node has finished it). */
  handOver(callId: string): Promise<void>;
  /** The node is live, or out of the relay's pick as a node that missed its heartbeats is: new calls ring direct. */
  nodeLive(live: boolean): void;
  /** A customer calls: the service's webhook, with the customer's own offer, rings the team. */
  ring(callId: string, o?: { name?: string }): Promise<void>;
  /** The service's terminate of the call. */
  end(callId: string): Promise<void>;
  /** An agent with no app here takes a ringing call as the app does: its leg, the claim, its window's answer, the accept. */
  take(agentId: string, callId: string): Promise<{ legId: string; window: AgentWindow }>;
  /** A window playing `toneHz`, closed with the team. */
  window(toneHz: number): AgentWindow;
  /** Waits until the node has the customer's leg of `callId` connected. */
  customerConnected(callId: string): Promise<void>;
  /** The legs the node has in the call (agents' and supervisors'). */
  legsOf(callId: string): Promise<string[]>;
  /** GET /team/calls as `supervisorId`, straight from the relay. */
  liveCalls(supervisorId: string): Promise<LiveCall[]>;
  /** An agent's request straight to the relay (not through the tap). */
  ask(agentId: string, method: string, path: string, body?: unknown): Promise<{ status: number; body: Record<string, unknown> }>;
  /** Waits until the relay has stored an event that `predicate` picks. */
  stored(what: string, predicate: (event: RelayEvent) => boolean): Promise<RelayEvent>;
  /** `agent`'s app on this team. */
  desk(agent: TeamAgent): Promise<OversightDesk>;
  /** Waits until `desk`'s app has handled every event the relay sent it so far (the team's settings change behind them). */
  heardAll(desk: OversightDesk): Promise<void>;
}

export interface OversightDesk {
  agent: TeamAgent;
  team: OversightTeam;
  dataDir: string;
  app: SoftphoneService;
  pushes: PushMessage[];
  /** The app started again on the same data folder (the one before closed first). */
  open(): Promise<SoftphoneService>;
}

const apps: Array<() => Promise<void>> = [];
const rest: Array<() => Promise<void>> = [];

/** Closes the apps first (their live calls end as on a quit), then the peers and servers. */
export async function closeOversight(): Promise<void> {
  for (const close of apps.splice(0).reverse()) await close();
  for (const close of rest.splice(0).reverse()) await close();
}

export async function until(what: string, condition: () => boolean, ms = 10_000): Promise<void> {
  await eventually(what, () => condition(), ms);
}

interface Gate {
  release: () => void;
  released: Promise<void>;
  stored: Promise<Result<null>>;
  settle: (stored: Result<null>) => void;
}

export async function oversightTeam(o: OversightTeamOptions = {}): Promise<OversightTeam> {
  const agents = o.agents ?? [ALICE, BOB, SAM];
  const tokens = Object.fromEntries(agents.map((a) => [a.id, a.token]));
  const record = o.record ?? 'never';
  const dir = await mkdtemp(join(tmpdir(), 'softphone-oversight-'));
  rest.push(() => rm(dir, { recursive: true, force: true }));

  const finished = new Map<string, Uint8Array>();
  const gates = new Map<string, Gate>();
  // Once the team closes, what the node hands over goes straight to the store.
  let closing = false;
  const gateOf = (callId: string): Gate => {
    let gate = gates.get(callId);
    if (gate === undefined) {
      let release!: () => void;
      let settle!: (stored: Result<null>) => void;
      const released = new Promise<void>((resolve) => (release = resolve));
      const stored = new Promise<Result<null>>((resolve) => (settle = resolve));
      gate = { release, released, stored, settle };
      gates.set(callId, gate);
    }
    return gate;
  };
  let recordings: { store: RecordingsStore; notice: Int16Array; sink: RecordingSink } | undefined;
  if (record !== 'never') {
    const store = new RecordingsStore({ dir: join(dir, 'recordings'), logger: quietLogger });
    await store.open();
    rest.push(() => store.close());
    const notice = await loadRecordNotice(bundledNoticePath('en_US'));
    if (!notice.ok) throw new Error(notice.error.message);
    const sink: RecordingSink = {
      async store(callId, file, durationMs) {
        finished.set(callId, file);
        const gate = gateOf(callId);
        if (o.holdRecordings === true && !closing) await gate.released;
        const stored = await store.store(callId, file, durationMs);
        gate.settle(stored);
        return stored;
      },
    };
    recordings = { store, notice: notice.value, sink };
  }

  const nodeEvents = new LocalNodeEvents();
  const node = new BridgeNode({ bindAddress: HOST, publicAddress: HOST, logger: quietLogger, onEvent: nodeEvents.emit, ...(o.mediaTimeoutMs !== undefined ? { mediaTimeoutMs: o.mediaTimeoutMs } : {}), ...(recordings !== undefined ? { recordings: recordings.sink } : {}) });
  rest.push(() => node.close());
  rest.push(() => {
    closing = true;
    for (const gate of gates.values()) gate.release();
    return Promise.resolve();
  });
  const local = localBridge(node, 'local', nodeEvents);
  let live = true;
  const bridgeNodes: BridgeNodeSource = { ...local, pick: () => (live ? local.pick() : Promise.resolve(undefined)) };
  const teamSettings = new TeamSettingsSource({ ...DEFAULT_TEAM_SETTINGS, ...o.settings });
  const supervisors = new Set(o.supervisors ?? []);
  const relay = await startRelay({
    port: 0,
    appSecret: APP_SECRET,
    agents: agents.map((a) => ({ id: a.id, name: a.name, tokenSha256: hashAgentToken(a.token), ...(supervisors.has(a.id) ? { role: 'supervisor' as const } : {}) })),
    logger: quietLogger,
    bridgeNodes,
    teamSettings,
    ...(o.tellAgents === true ? { tellAgentsWhenMonitored: true } : {}),
    ...(recordings !== undefined ? { recordings: { mode: record, store: recordings.store, notice: recordings.notice } } : {}),
  });
  rest.push(() => relay.close());
  const events: RelayEnvelope[] = [];
  relay.onEvent((stored) => void events.push(stored));
  const tap = await startRelayTap(relay.url, tokens);
  rest.push(() => tap.close());

  const customers = new Map<string, ServiceCustomer>();
  const track = <T extends { close(): Promise<void> | void }>(thing: T): T => {
    rest.push(async () => void (await thing.close()));
    return thing;
  };
  const gateway = await startFakeGateway(async (req) => {
    const body = req.body as { call_id?: string; session?: { sdp?: string } } | undefined;
    const callId = body?.call_id;
    if (req.path.endsWith('/calls/accept') && callId !== undefined) {
      const applied = await customers.get(callId)?.peer.applyAnswer(body?.session?.sdp ?? '');
      if (applied !== undefined && !applied.ok) return json(400, { error: { message: applied.error.message, type: 'OAuthException', code: 100 } });
    }
    if (req.path.endsWith('/calls/terminate') && callId !== undefined) await postWebhook(relay.url, terminatedCall(callId)).catch(() => undefined);
    return success();
  });
  rest.push(() => gateway.close());

  const ask = async (agentId: string, method: string, path: string, body?: unknown) => {
    const res = await fetch(`${relay.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${tokens[agentId]}`, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };

  const team: OversightTeam = {
    relay,
    tap,
    node,
    gateway,
    teamSettings,
    store: recordings?.store,
    events,
    finished,
    async handOver(callId) {
      const gate = gateOf(callId);
      gate.release();
      expect(await gate.stored).toEqual(ok(null));
    },
    nodeLive(next) {
      live = next;
    },
    async ring(callId, ring = {}) {
      const customer = track(new ServiceCustomer());
      customers.set(callId, customer);
      const offer = await customer.peer.makeOffer();
      if (!offer.ok) throw new Error(offer.error.message);
      const webhook = envelope('calls', {
        contacts: [{ profile: { name: ring.name ?? 'Ada Customer' }, wa_id: CUSTOMER }],
        calls: [incomingCallItem(callId, { session: { sdp_type: 'offer', sdp: offer.value } })],
      });
      expect((await postWebhook(relay.url, webhook)).status).toBe(200);
      await team.stored(`${callId} rings`, (e) => e.type === 'call.incoming' && e.callId === callId);
    },
    async end(callId) {
      expect((await postWebhook(relay.url, terminatedCall(callId))).status).toBe(200);
      await team.stored(`${callId} ends`, (e) => e.type === 'call.terminated' && e.callId === callId);
    },
    async take(agentId, callId) {
      await team.ring(callId);
      const leg = await ask(agentId, 'POST', BRIDGE_AGENT_PATHS.leg(callId));
      expect(leg.status).toBe(200);
      const window = team.window(TONES[agentId] ?? TONE_B);
      const answer = await window.answer(String(leg.body.offer));
      expect((await ask(agentId, 'POST', `/calls/${encodeURIComponent(callId)}/claim`)).status).toBe(200);
      const handed = await ask(agentId, 'POST', BRIDGE_AGENT_PATHS.answer(callId), { legId: leg.body.legId, sdp: answer });
      expect(handed.status).toBe(200);
      expect(await customers.get(callId)!.peer.applyAnswer(String(handed.body.sdp))).toEqual(ok(undefined));
      expect((await ask(agentId, 'POST', BRIDGE_AGENT_PATHS.accepted(callId))).status).toBe(200);
      await team.customerConnected(callId);
      return { legId: String(leg.body.legId), window };
    },
    window: (toneHz) => track(new AgentWindow(toneHz)),
    async customerConnected(callId) {
      await eventually(`the customer of ${callId} connected on the node`, async () => {
        const report = await node.report(callId);
        return report.ok && report.value.customer.state === 'connected';
      }, 15_000);
    },
    async legsOf(callId) {
      const report = await node.report(callId);
      return report.ok ? Object.keys(report.value.agents).sort() : [];
    },
    async liveCalls(supervisorId) {
      const answer = await ask(supervisorId, 'GET', SUPERVISOR_PATHS.liveCalls);
      expect(answer.status).toBe(200);
      return liveCallsSchema.parse(answer.body).calls;
    },
    ask,
    stored: (what, predicate) => eventually(`the relay to store ${what}`, () => events.find((e) => predicate(e.event))?.event),
    async desk(agent) {
      const dataDir = await mkdtemp(join(tmpdir(), 'softphone-oversight-app-'));
      rest.push(() => rm(dataDir, { recursive: true, force: true }));
      const account: AccountConfig = { gatewayUrl: gateway.baseUrl, apiKey: 'oversight-api-key-0001', productSegment: 'chatapp', relayUrl: tap.url, agentToken: agent.token };
      const pushes: PushMessage[] = [];
      const open = async (): Promise<SoftphoneService> => {
        const app = await createSoftphoneService({ dataDir, secrets: new MemorySecretStore(), account });
        apps.push(() => app.close());
        app.subscribe((p) => pushes.push(p));
        await until(`${agent.id}’s stream connects`, () => tap.streams(agent.id) === 1);
        return app;
      };
      const app = await open();
      return { agent, team, dataDir, app, pushes, open };
    },
    async heardAll(desk) {
      const now = teamSettings.current();
      const serviceLevelSeconds = now.serviceLevelSeconds === 20 ? 21 : 20;
      teamSettings.replace({ ...now, serviceLevelSeconds });
      await until(`${desk.agent.id} heard every event`, () => pushed(desk.pushes, 'teamChanged').at(-1)?.settings.serviceLevelSeconds === serviceLevelSeconds);
    },
  };
  return team;
}

/** The payloads of every push `name` so far. */
export function pushed<N extends PushMessage['name']>(pushes: PushMessage[], name: N): PushPayloads[N][] {
  const named: PushPayloads[N][] = [];
  for (const p of pushes) if (p.name === name) named.push(p.payload as PushPayloads[N]);
  return named;
}

/** The call `localId` as the last callChanged push had it. */
export const lastCall = (pushes: PushMessage[], localId: string): CallState | undefined => pushed(pushes, 'callChanged').filter((c) => c.localId === localId).at(-1);

/** The desk's agent answers `callId`, which rings for it, as the window does (its window answers the leg the node offered); the customer is connected. Its local id. */
export async function answerRinging(d: OversightDesk, callId: string): Promise<string> {
  const localId = `in:${callId}`;
  await until(`${callId} rings`, () => lastCall(d.pushes, localId)?.phase === 'ringing');
  const ringing = lastCall(d.pushes, localId);
  expect(ringing).toMatchObject({ bridged: true });
  const offer = ringing?.direction === 'incoming' ? ringing.offerSdp : '';
  const sdp = await d.team.window(TONES[d.agent.id] ?? TONE_A).answer(offer);
  expect(await d.app.handle('answerCall', { localId, sdp })).toEqual({ ok: true, value: null });
  expect(await d.app.handle('reportMedia', { localId, state: 'connected' })).toEqual({ ok: true, value: null });
  expect(lastCall(d.pushes, localId)).toMatchObject({ phase: 'active', bridged: true });
  await d.team.customerConnected(callId);
  return localId;
}

/** A bridged call rings the team, and the desk's agent answers it. Its local id. */
export async function answerBridged(d: OversightDesk, callId: string): Promise<string> {
  await d.team.ring(callId);
  return answerRinging(d, callId);
}

// An agent's app on an account whose relay speaks the contract of who else hears a bridged call
// (oversight-relay.ts: the team's recordings and its supervisors), a gateway that accepts every
// call, the service on a fresh data folder that can be opened again, and every push it made. Each
// test's desks are closed by closeOversightDesks() in an afterEach.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import { MemorySecretStore } from '../../../electron/core/secret-store';
import { createSoftphoneService, type SoftphoneService } from '../../../electron/core/softphone-service';
import type { PushMessage, PushPayloads } from '../../../shared/api';
import type { CallState } from '../../../shared/call-state';
import type { AccountConfig } from '../../../shared/settings';
import { ANSWER_SDP } from '../../fixtures/sdp';
import { happyGateway, startFakeGateway, type FakeGateway } from './fake-gateway';
import { startOversightRelay, type OversightRelay } from './oversight-relay';
import type { TeamAgent } from './team-relay';

export const SAM: TeamAgent = { id: 'sam', name: 'Sam Supervisor', token: 'sam-token-0123456789' };
export const CUSTOMER = '447700900123';

export interface OversightDesk {
  dataDir: string;
  relay: OversightRelay;
  gateway: FakeGateway;
  app: SoftphoneService;
  pushes: PushMessage[];
  /** The app started again on the same data folder (the one before closed first). */
  open(): Promise<SoftphoneService>;
}

const cleanups: Array<() => Promise<void>> = [];

export async function closeOversightDesks(): Promise<void> {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
}

export async function until(what: string, condition: () => boolean, ms = 5_000): Promise<void> {
  for (let waited = 0; waited < ms && !condition(); waited += 5) await new Promise((resolve) => setTimeout(resolve, 5));
  if (!condition()) throw new Error(`never happened: ${what}`);
}

/**
 * `agent`'s desk on a team of `agents`; `before` sets the relay up before the app starts (what GET
 * /me says, the supervisors). Given `relay`, the desk is a colleague's app on that relay.
 */
export async function oversightDesk(o: { agent: TeamAgent; agents: TeamAgent[]; before?: (relay: OversightRelay) => void; relay?: OversightRelay }): Promise<OversightDesk> {
  const dataDir = await mkdtemp(join(tmpdir(), 'softphone-oversight-'));
  const relay = o.relay ?? (await startOversightRelay(o.agents));
  o.before?.(relay);
  const gateway = await startFakeGateway(happyGateway);
  const account: AccountConfig = { gatewayUrl: gateway.baseUrl, apiKey: 'oversight-api-key-0001', productSegment: 'chatapp', relayUrl: relay.url, agentToken: o.agent.token };
  const pushes: PushMessage[] = [];
  const shared = o.relay !== undefined;
  cleanups.push(async () => {
    await gateway.close();
    if (!shared) await relay.close();
    await rm(dataDir, { recursive: true, force: true });
  });
  const open = async (): Promise<SoftphoneService> => {
    const app = await createSoftphoneService({ dataDir, secrets: new MemorySecretStore(), account });
    cleanups.push(() => app.close());
    app.subscribe((p) => pushes.push(p));
    await until('the stream connects', () => relay.relay.connected(o.agent.id) === 1);
    return app;
  };
  const app = await open();
  return { dataDir, relay, gateway, app, pushes, open };
}

/** The payloads of every push `name` so far. */
export function pushed<N extends PushMessage['name']>(pushes: PushMessage[], name: N): PushPayloads[N][] {
  const named: PushPayloads[N][] = [];
  for (const p of pushes) if (p.name === name) named.push(p.payload as PushPayloads[N]);
  return named;
}

/** The call `localId` as the last callChanged push had it. */
export const lastCall = (pushes: PushMessage[], localId: string): CallState | undefined => pushed(pushes, 'callChanged').filter((c) => c.localId === localId).at(-1);

/** A bridged call rings for the desk's agent, which answers it; its media connects. Its local id. */
export async function answerBridged(d: OversightDesk, callId: string, agentId: string): Promise<string> {
  d.relay.ring(callId, CUSTOMER, [agentId]);
  const localId = `in:${callId}`;
  await until(`${callId} rings`, () => lastCall(d.pushes, localId)?.phase === 'ringing');
  expect(lastCall(d.pushes, localId)).toMatchObject({ bridged: true });
  expect(await d.app.handle('answerCall', { localId, sdp: ANSWER_SDP })).toEqual({ ok: true, value: null });
  expect(await d.app.handle('reportMedia', { localId, state: 'connected' })).toEqual({ ok: true, value: null });
  expect(lastCall(d.pushes, localId)).toMatchObject({ phase: 'active', bridged: true });
  return localId;
}

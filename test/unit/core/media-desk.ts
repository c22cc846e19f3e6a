// Alice's app on an account, for the tests of what the service sends after a call (voicemails, the
// service's recordings and transcripts): a real relay, a real gateway with call control and media
// (fake-media.ts), the service on a fresh data folder that can be opened again, and every push it
// made. Each test's desks are closed by closeDesks() in an afterEach.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MemorySecretStore } from '../../../electron/core/secret-store';
import { createSoftphoneService, type SoftphoneService } from '../../../electron/core/softphone-service';
import type { PushMessage } from '../../../shared/api';
import type { HistoryEntry } from '../../../shared/history';
import type { AccountConfig } from '../../../shared/settings';
import { happyGateway, startFakeGateway, type FakeGateway, type GatewayHandler } from './fake-gateway';
import { mediaLibrary, mediaRoutes, type MediaLibrary } from './fake-media';
import { ALICE, startTeamRelay, type TeamAgent, type TeamRelay } from './team-relay';

export interface Desk {
  dataDir: string;
  relay: TeamRelay;
  gateway: FakeGateway;
  library: MediaLibrary;
  pushes: PushMessage[];
  app: SoftphoneService;
  /** The app started again on the same data folder (the one before closed first). */
  open(): Promise<SoftphoneService>;
}

const cleanups: Array<() => Promise<void>> = [];

/** Something a test opened beside its desks, closed with them. */
export function closeWithDesks(cleanup: () => Promise<void>): void {
  cleanups.push(cleanup);
}

/** Closes every desk opened since the last call, the newest first. */
export async function closeDesks(): Promise<void> {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
}

export async function until(what: string, condition: () => boolean, ms = 5_000): Promise<void> {
  for (let waited = 0; waited < ms && !condition(); waited += 5) await new Promise((resolve) => setTimeout(resolve, 5));
  if (!condition()) throw new Error(`never happened: ${what}`);
}

/**
 * Alice's desk: `agents` on the relay (Alice among them), the gateway answering media first, then
 * `route` (call control that always succeeds when none is given).
 */
export async function mediaDesk(o: { apiKey: string; agents?: TeamAgent[]; route?: GatewayHandler; dirPrefix: string }): Promise<Desk> {
  const dataDir = await mkdtemp(join(tmpdir(), o.dirPrefix));
  const relay = await startTeamRelay(o.agents ?? [ALICE]);
  const library = mediaLibrary(o.apiKey);
  const routes = mediaRoutes(library, { keyOnDownload: true });
  const fallback = o.route ?? happyGateway;
  const gateway = await startFakeGateway((req) => routes(req) ?? fallback(req));
  library.fileOrigin = new URL(gateway.baseUrl).origin;
  const account: AccountConfig = { gatewayUrl: gateway.baseUrl, apiKey: o.apiKey, productSegment: 'chatapp', relayUrl: relay.url, agentToken: ALICE.token };
  const pushes: PushMessage[] = [];
  const open = async (): Promise<SoftphoneService> => {
    const app = await createSoftphoneService({ dataDir, secrets: new MemorySecretStore(), account });
    cleanups.push(() => app.close());
    app.subscribe((p) => pushes.push(p));
    await until('the stream connects', () => relay.connected('alice') === 1);
    return app;
  };
  cleanups.push(async () => {
    await gateway.close();
    await relay.close();
    await rm(dataDir, { recursive: true, force: true });
  });
  const app = await open();
  return { dataDir, relay, gateway, library, pushes, app, open };
}

/** The call's entry as the last historyChanged push had it. */
export function historyOf(pushes: PushMessage[], callId: string): HistoryEntry | undefined {
  const last = pushes.filter((p): p is Extract<PushMessage, { name: 'historyChanged' }> => p.name === 'historyChanged').at(-1);
  return last?.payload.find((e) => e.callId === callId);
}

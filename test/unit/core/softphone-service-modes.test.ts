// Switching mode: a save while the sandbox starts, a close while it starts, a sandbox that cannot
// start, and a save that keeps the gateway and relay (the calls go on).
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { EmbeddedEnvironment } from '../../../electron/core/embedded-environment';
import { HistoryStore } from '../../../electron/core/history-store';
import { MemorySecretStore } from '../../../electron/core/secret-store';
import { SettingsStore } from '../../../electron/core/settings-store';
import { ModeMachine } from '../../../electron/core/service/mode';
import type { Runtime } from '../../../electron/core/service/runtime';
import { createSoftphoneService, type SoftphoneService } from '../../../electron/core/softphone-service';
import type { PushMessage } from '../../../shared/api';
import { configureLogging, createLogger } from '../../../shared/log';
import { text } from '../../../shared/i18n/text';
import type { AccountConfig } from '../../../shared/settings';
import { ANSWER_SDP, DIAL_OFFER_SDP, OFFER_SDP } from '../../fixtures/sdp';
import { initiated, startFakeGateway, success, type FakeGateway } from './fake-gateway';
import { ALICE, BOB, startTeamRelay, type TeamRelay } from './team-relay';

configureLogging({ sink: () => undefined });

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function until(what: string, condition: () => boolean): Promise<void> {
  for (let i = 0; i < 500 && !condition(); i++) await new Promise((resolve) => setTimeout(resolve, 10));
  if (!condition()) throw new Error(`never happened: ${what}`);
}

/** The memory store, counting reads: a save's read-back of the account is its last step before the switch. */
class CountingSecrets extends MemorySecretStore {
  reads = 0;
  override async get(name: string): Promise<string | undefined> {
    this.reads++;
    return super.get(name);
  }
}

/** An embedded sandbox whose start waits until the test lets it go (or fails, when told to). */
interface HeldSandbox {
  start: () => Promise<EmbeddedEnvironment>;
  starts(): number;
  closes(): number;
  release(): void;
}

interface World {
  dataDir: string;
  secrets: CountingSecrets;
  sandboxGateway: FakeGateway;
  sandboxRelay: TeamRelay;
  accountGateway: FakeGateway;
  accountRelay: TeamRelay;
  /** The account's settings as Settings → Account saves them (Bob on the account's relay). */
  account: AccountConfig;
}

async function world(): Promise<World> {
  const dataDir = await mkdtemp(join(tmpdir(), 'softphone-modes-'));
  const sandboxGateway = await startFakeGateway((req) => (req.path.endsWith('/initiate') ? initiated('wacid.sandbox-out') : success()));
  const accountGateway = await startFakeGateway((req) => (req.path.endsWith('/initiate') ? initiated('wacid.account-out') : success()));
  const sandboxRelay = await startTeamRelay([ALICE]);
  const accountRelay = await startTeamRelay([BOB]);
  cleanups.push(async () => {
    await Promise.all([sandboxGateway.close(), accountGateway.close(), sandboxRelay.close(), accountRelay.close()]);
    await rm(dataDir, { recursive: true, force: true });
  });
  const account: AccountConfig = { gatewayUrl: accountGateway.baseUrl, relayUrl: accountRelay.url, productSegment: 'chatapp', apiKey: 'account-api-key-0002', agentToken: BOB.token, defaultCountry: 'GB' };
  return { dataDir, secrets: new CountingSecrets(), sandboxGateway, sandboxRelay, accountGateway, accountRelay, account };
}

function heldSandbox(w: World, outcome: 'starts' | 'fails' = 'starts'): HeldSandbox {
  let starts = 0;
  let closes = 0;
  let release = (): void => undefined;
  const gate = new Promise<void>((resolve) => (release = resolve));
  return {
    start: async () => {
      starts++;
      await gate;
      if (outcome === 'fails') throw new Error('the embedded relay could not listen');
      return {
        account: { gatewayUrl: w.sandboxGateway.baseUrl, apiKey: 'sandbox-api-key-0001', productSegment: 'chatapp', relayUrl: w.sandboxRelay.url, agentToken: ALICE.token },
        sandboxControlUrl: w.sandboxGateway.baseUrl.replace(/\/restapi\/v1$/, ''),
        close: async () => {
          closes++;
        },
      };
    },
    starts: () => starts,
    closes: () => closes,
    release: () => release(),
  };
}

async function open(w: World, sandbox: HeldSandbox): Promise<{ service: SoftphoneService; pushes: PushMessage[] }> {
  const service = await createSoftphoneService({ dataDir: w.dataDir, secrets: w.secrets, embedded: sandbox.start });
  cleanups.push(() => service.close());
  const pushes: PushMessage[] = [];
  service.subscribe((push) => pushes.push(push));
  return { service, pushes };
}

/** Starts on the saved account (Bob on the account's relay), the sandbox not started yet. */
async function onSavedAccount(w: World, sandbox: HeldSandbox): Promise<{ service: SoftphoneService; pushes: PushMessage[] }> {
  expect((await new SettingsStore({ dataDir: w.dataDir, secrets: w.secrets }).save(w.account)).ok).toBe(true);
  const opened = await open(w, sandbox);
  await until('the stream connects to the account relay', () => w.accountRelay.connected('bob') === 1);
  return opened;
}

describe('switching mode', () => {
  it('a save while the sandbox starts waits for it, then runs the saved account; nothing stays on the sandbox', async () => {
    const w = await world();
    const sandbox = heldSandbox(w);
    const { service, pushes } = await onSavedAccount(w, sandbox);

    const cleared = service.handle('clearSettings', {});
    await until('the sandbox starts', () => sandbox.starts() === 1);
    // The account's stream went with its runtime; nothing serves calls while the sandbox starts.
    await until('the account stream stops', () => w.accountRelay.connected('bob') === 0);
    const whileStarting = await service.handle('getSnapshot', {});
    expect(whileStarting.ok && { mode: whileStarting.value.mode, calls: whileStarting.value.calls }).toEqual({ mode: 'sandbox', calls: [] });

    const readsBefore = w.secrets.reads;
    const saved = service.handle('saveSettings', { settings: w.account });
    // The save has read its account back: its switch now waits behind the sandbox's start.
    await until('the save reads the account back', () => w.secrets.reads >= readsBefore + 2);
    await new Promise((resolve) => setTimeout(resolve, 20));
    // A call asked for now waits for both switches and goes to the account's gateway.
    const call = service.handle('startCall', { localId: 'out:after-switch', to: '07400 123456', sdp: DIAL_OFFER_SDP });
    sandbox.release();

    expect((await cleared).ok).toBe(true);
    expect(await saved).toEqual({ ok: true, value: expect.objectContaining({ mode: 'account', gatewayUrl: w.account.gatewayUrl }) });
    expect(await call).toEqual({ ok: true, value: { localId: 'out:after-switch', to: '447400123456', callId: 'wacid.account-out' } });
    expect(w.sandboxGateway.actions()).not.toContain('initiate');
    await until('the stream is back on the account relay', () => w.accountRelay.connected('bob') === 1);
    await until('the sandbox stream stops', () => w.sandboxRelay.connected('alice') === 0);
    const snapshot = await service.handle('getSnapshot', {});
    expect(snapshot.ok && snapshot.value.mode).toBe('account');
    expect(snapshot.ok && snapshot.value.sandboxCustomers).toBeUndefined();
    const modes = pushes.flatMap((p) => (p.name === 'settingsChanged' ? [p.payload.mode] : []));
    expect(modes.at(-1)).toBe('account');
    expect(sandbox.starts()).toBe(1);
  });

  it('a close while the sandbox starts runs nothing after: no stream to the sandbox, and the sandbox is closed', async () => {
    const w = await world();
    const sandbox = heldSandbox(w);
    const { service, pushes } = await onSavedAccount(w, sandbox);

    const cleared = service.handle('clearSettings', {});
    await until('the sandbox starts', () => sandbox.starts() === 1);
    const closed = service.close();
    sandbox.release();
    await closed;
    await cleared;

    expect(sandbox.closes()).toBe(1);
    expect(w.accountRelay.connected('bob')).toBe(0);
    expect(w.sandboxRelay.requests.filter((r) => r.path === '/events')).toEqual([]);
    expect(w.sandboxGateway.requests).toEqual([]);
    expect(pushes.filter((p) => p.name === 'connectionChanged').map((p) => p.payload.status)).not.toContain('connecting');
    expect(await service.handle('getSnapshot', {})).toMatchObject({ ok: false, error: { code: 'not_available' } });
  });

  it('a sandbox that cannot start leaves calls unavailable with the reason, until an account is saved', async () => {
    const w = await world();
    const sandbox = heldSandbox(w, 'fails');
    sandbox.release();
    const { service } = await open(w, sandbox);

    const snapshot = await service.handle('getSnapshot', {});
    expect(snapshot.ok && snapshot.value).toMatchObject({ mode: 'sandbox', calls: [], connection: { status: 'reconnecting', lastError: 'The embedded sandbox could not start', lastErrorText: text('service.sandboxNotStarted') } });
    expect(await service.handle('startCall', { localId: 'out:nowhere', to: '+44 7400 123456', sdp: DIAL_OFFER_SDP })).toMatchObject({ ok: false, error: { code: 'not_configured' } });
    expect(await service.handle('checkRelay', {})).toEqual({
      ok: true,
      value: { reachable: false, problem: 'No account is set up and the sandbox is not running', problemText: text('service.noAccount'), relayTurn: 'unknown' },
    });
    expect(await service.handle('simulateIncomingCall', { number: '447400123456' })).toMatchObject({ ok: false, error: { code: 'not_available' } });

    expect(await service.handle('saveSettings', { settings: w.account })).toMatchObject({ ok: true, value: { mode: 'account' } });
    await until('the stream connects to the account relay', () => w.accountRelay.connected('bob') === 1);
    expect(await service.handle('startCall', { localId: 'out:account', to: '07400 123456', sdp: DIAL_OFFER_SDP })).toMatchObject({ ok: true, value: { callId: 'wacid.account-out' } });
    // Clearing tries the sandbox again: it still cannot start.
    expect(await service.handle('hangUp', { localId: 'out:account' })).toEqual({ ok: true, value: null });
    expect(await service.handle('clearSettings', {})).toMatchObject({ ok: true, value: { mode: 'sandbox' } });
    expect(sandbox.starts()).toBe(2);
    const after = await service.handle('getSnapshot', {});
    expect(after.ok && after.value.connection).toMatchObject({ status: 'reconnecting', lastError: 'The embedded sandbox could not start' });
  });

  it('a save that keeps the gateway and relay keeps the call going and takes the new default country', async () => {
    const w = await world();
    const sandbox = heldSandbox(w);
    const { service, pushes } = await onSavedAccount(w, sandbox);
    w.accountRelay.send({ type: 'call.incoming', callId: 'wacid.stays', from: '447400123456', sdp: OFFER_SDP, timestamp: Date.now() }, ['bob']);
    await until('the call rings', () => pushes.some((p) => p.name === 'callChanged' && p.payload.callId === 'wacid.stays'));
    expect(await service.handle('answerCall', { localId: 'in:wacid.stays', sdp: ANSWER_SDP })).toEqual({ ok: true, value: null });
    expect(await service.handle('reportMedia', { localId: 'in:wacid.stays', state: 'connected' })).toEqual({ ok: true, value: null });

    expect(await service.handle('saveSettings', { settings: { ...w.account, apiKey: '', agentToken: '', defaultCountry: 'US' } })).toMatchObject({
      ok: true,
      value: { mode: 'account', defaultCountry: 'US' },
    });
    const snapshot = await service.handle('getSnapshot', {});
    expect(snapshot.ok && snapshot.value.calls.find((c) => c.callId === 'wacid.stays')?.phase).toBe('active');
    expect(w.accountGateway.actions()).toEqual(['accept']);
    expect(w.accountRelay.connected('bob')).toBe(1);
    expect(w.accountRelay.requests.filter((r) => r.path === '/events')).toHaveLength(1);

    expect(await service.handle('hangUp', { localId: 'in:wacid.stays' })).toEqual({ ok: true, value: null });
    // A number typed without a country code is now a US one.
    expect(await service.handle('startCall', { localId: 'out:us', to: '(202) 555-0101', sdp: DIAL_OFFER_SDP })).toMatchObject({ ok: true, value: { to: '12025550101' } });
    expect(sandbox.starts()).toBe(0);
  });
});

describe('the mode machine', () => {
  it('drops a stopped runtime\'s late callbacks: its calls still end in the windows, but presence and the connection follow the new runtime only', async () => {
    const w = await world();
    const history = await HistoryStore.open({ dataDir: w.dataDir });
    const seen: string[] = [];
    const runtimes: Runtime[] = [];
    const name = (runtime: Runtime | undefined): string => (runtime === undefined ? 'none' : `runtime ${runtimes.indexOf(runtime) + 1}`);
    const mode = new ModeMachine({
      embedded: undefined,
      dataDir: w.dataDir,
      history,
      nameFor: () => undefined,
      now: Date.now,
      log: createLogger('modes-test'),
      hooks: {
        callChanged: (call) => seen.push(`call ${call.phase}`),
        relayEvent: (envelope) => seen.push(`event ${envelope.event.type}`),
        connectionChanged: (state) => seen.push(`connection ${state.status}`),
        presenceMayHaveChanged: () => seen.push(`presence of ${name(mode.current())}`),
        turnChanged: () => seen.push('turn'),
        customerLegQuality: (quality) => seen.push(`customer leg of ${quality.callId}`),
        // What the relay says of the team, its (re)connects, and a supervisor's join are not what this test follows.
        teamChanged: () => undefined,
        teamRecordTold: () => undefined,
        monitorChanged: () => undefined,
        relayConnected: () => undefined,
        runtimeChanged: (runtime) => {
          if (runtime && !runtimes.includes(runtime)) runtimes.push(runtime);
          seen.push(`serving ${name(runtime)}`);
        },
      },
    });
    cleanups.push(() => mode.close());
    const first: AccountConfig = { gatewayUrl: w.sandboxGateway.baseUrl, apiKey: 'first-api-key-0001', productSegment: 'chatapp', relayUrl: w.sandboxRelay.url, agentToken: ALICE.token };
    const second = w.account;

    await mode.switchTo({ kind: 'flags', account: first });
    expect(mode.current()).toBe(runtimes[0]);
    await until('the first stream connects', () => w.sandboxRelay.connected('alice') === 1 && seen.includes('connection connected'));
    w.sandboxRelay.send({ type: 'call.incoming', callId: 'wacid.left', from: '447400123456', sdp: OFFER_SDP, timestamp: Date.now() }, ['alice']);
    await until('the call rings', () => seen.includes('call ringing'));
    expect(await runtimes[0]!.coordinator.answerCall('in:wacid.left', ANSWER_SDP)).toEqual({ ok: true, value: null });

    seen.splice(0);
    await mode.switchTo({ kind: 'saved', account: second });
    expect(mode.current()).toBe(runtimes[1]);
    expect(runtimes[1]).not.toBe(runtimes[0]);
    // The first runtime's call ends on its way out; nothing of it reaches presence or the connection.
    expect(seen.slice(0, seen.indexOf('serving runtime 2'))).toEqual(['serving none', 'call ended']);
    // Then the second runtime serves: connecting, its presence first, and its own stream's "connecting".
    const from = seen.indexOf('serving runtime 2');
    expect(seen.slice(from, from + 4)).toEqual(['serving runtime 2', 'connection connecting', 'presence of runtime 2', 'connection connecting']);
    expect(w.sandboxGateway.actions()).toEqual(['accept', 'terminate']);
    await until('the second stream connects', () => w.accountRelay.connected('bob') === 1 && seen.includes('connection connected'));
    expect(w.sandboxRelay.connected('alice')).toBe(0);

    await mode.close();
    expect(mode.current()).toBeUndefined();
    expect(await mode.settled()).toBeUndefined();
    // Closed: a switch asked for now does nothing.
    await mode.switchTo({ kind: 'flags', account: first });
    expect(mode.current()).toBeUndefined();
    expect(w.sandboxRelay.connected('alice')).toBe(0);
  });
});

// A node's registration with a real relay over HTTP (bridge/registration.ts): it registers, reports
// its load every heartbeat the relay asked for, registers again when the relay lost it, keeps trying
// a relay it cannot reach (in the log, never a crash) and leaves on stop.
import { createServer } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { NodeRegistration, type NodeRegistrationOptions } from '../../../bridge/registration';
import { RelayLink } from '../../../bridge/relay-link';
import { MemoryBackend } from '../../../relay/backend/memory-backend';
import { startRelay, type RelayOptions, type RelayServer } from '../../../relay/server';
import type { BridgeNodeLoad } from '../../../shared/bridge-nodes';
import { configureLogging } from '../../../shared/log';
import { FakeClock } from '../../support/fake-clock';
import { APP_SECRET } from '../relay/webhook-fixtures';
import { BRIDGE_TOKEN, RecordingLogger } from './control-fixtures';

configureLogging({ level: 'error' });

const AGENT_TOKEN = 'agent-token-0001-0123456789abcdef-0123';
const relays: RelayServer[] = [];
const registrations: NodeRegistration[] = [];
const links: RelayLink[] = [];

afterEach(async () => {
  await Promise.all(registrations.splice(0).map((r) => r.stop()));
  await Promise.all(links.splice(0).map((l) => l.close()));
  await Promise.all(relays.splice(0).map((r) => r.close()));
});

interface TestRelay {
  relay: RelayServer;
  backend: MemoryBackend;
  clock: FakeClock;
}

async function relayWith(options: Partial<RelayOptions> = {}): Promise<TestRelay> {
  const clock = new FakeClock(1_760_000_000_000);
  const backend = new MemoryBackend({ retentionMs: 600_000, dedupWindowMs: 60_000, now: clock.now });
  const relay = await startRelay({ port: 0, appSecret: APP_SECRET, agentTokens: [AGENT_TOKEN], heartbeatMs: 60_000, bridgeToken: BRIDGE_TOKEN, bridgeHeartbeatMs: 60, backend, ...options });
  relays.push(relay);
  return { relay, backend, clock };
}

function registrationFor(relayUrl: string, options: Partial<NodeRegistrationOptions> & { token?: string; load?: () => BridgeNodeLoad } = {}): { registration: NodeRegistration; logger: RecordingLogger } {
  const logger = new RecordingLogger();
  const link = new RelayLink({ relayUrl, bridgeToken: options.token ?? BRIDGE_TOKEN, timeoutMs: 1_000 });
  links.push(link);
  const registration = new NodeRegistration({
    relay: link,
    registration: { nodeId: 'node-1', controlUrl: 'http://127.0.0.1:8790', publicAddress: '127.0.0.1', capacity: 20 },
    load: () => ({ calls: 0 }),
    logger,
    retry: { firstDelayMs: 20, maxDelayMs: 80 },
    ...options,
  });
  registrations.push(registration);
  return { registration, logger };
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe('bridge node registration', () => {
  it('registers, then reports the node’s load at the heartbeat the relay asked for', async () => {
    const { relay, backend } = await relayWith();
    let calls = 0;
    const { registration } = registrationFor(relay.url, { load: () => ({ calls, cpuPercent: 12 }) });
    registration.start();
    await expect.poll(() => registration.state).toEqual({ kind: 'registered', heartbeatMs: 60, missed: 0 });
    expect(await backend.nodes()).toMatchObject([{ nodeId: 'node-1', controlUrl: 'http://127.0.0.1:8790', publicAddress: '127.0.0.1', capacity: 20, calls: 0 }]);
    calls = 3;
    await expect.poll(async () => (await backend.nodes())[0]?.calls).toBe(3);
    expect((await backend.nodes())[0]?.cpuPercent).toBe(12);
    calls = 1;
    await expect.poll(async () => (await backend.nodes())[0]?.calls).toBe(1);
  });

  it('reports a load within the relay’s rules, and the last one when the node cannot say', async () => {
    const { relay, backend } = await relayWith();
    let load: () => BridgeNodeLoad = () => ({ calls: 2.6, cpuPercent: 130 });
    const { registration, logger } = registrationFor(relay.url, { load: () => load() });
    registration.start();
    await expect.poll(async () => (await backend.nodes())[0]?.calls).toBe(3);
    expect((await backend.nodes())[0]?.cpuPercent).toBe(100);
    load = () => {
      throw new Error('no reading');
    };
    await expect.poll(() => logger.messages('error')).toContain("could not read the node's load; reporting the last one");
    expect(registration.state).toMatchObject({ kind: 'registered', missed: 0 });
    expect((await backend.nodes())[0]?.calls).toBe(3);
  });

  it('reports the load right after registering, so that a node that holds calls is not seen empty', async () => {
    const { relay, backend } = await relayWith({ bridgeHeartbeatMs: 60_000 });
    const { registration } = registrationFor(relay.url, { load: () => ({ calls: 7 }) });
    registration.start();
    await expect.poll(async () => (await backend.nodes())[0]?.calls).toBe(7);
  });

  it('registers again when the relay has lost the node', async () => {
    const { relay, backend, clock } = await relayWith();
    const { registration, logger } = registrationFor(relay.url);
    registration.start();
    await expect.poll(async () => (await backend.nodes()).length).toBe(1);
    // Three heartbeats missed as the relay's clock sees it: the node is gone from the registry.
    clock.advance(200);
    expect(await backend.nodes()).toEqual([]);
    await expect.poll(async () => (await backend.nodes()).map((n) => n.nodeId)).toEqual(['node-1']);
    expect(logger.messages('warn')).toContain('the relay no longer knows this node; registering again');
    expect(registration.state).toMatchObject({ kind: 'registered' });
  });

  it('keeps trying a relay it cannot reach, says so, and registers once it is there', async () => {
    const port = await freePort();
    const { registration, logger } = registrationFor(`http://127.0.0.1:${port}`);
    registration.start();
    await expect.poll(() => (registration.state.kind === 'registering' ? registration.state.failures : 0)).toBeGreaterThanOrEqual(3);
    const warnings = logger.lines.filter((l) => l.msg === 'could not register with the relay; trying again');
    expect(warnings.length).toBeGreaterThanOrEqual(3);
    expect(warnings[0]?.fields).toMatchObject({ nodeId: 'node-1', attempt: 1, reason: 'connection refused' });
    // The pauses grow up to the cap (each drawn from the upper half of its ceiling).
    for (const { fields } of warnings) expect(Number(fields?.retryInMs)).toBeLessThanOrEqual(80);
    const { backend } = await relayWith({ port });
    await expect.poll(async () => (await backend.nodes()).map((n) => n.nodeId), { timeout: 5_000 }).toEqual(['node-1']);
    await expect.poll(() => logger.messages('info')).toContain('registered with the relay');
    expect(logger.lines.find((l) => l.msg === 'registered with the relay')?.fields).toMatchObject({ failedAttempts: expect.any(Number) });
  });

  it('goes on through a relay restart: the heartbeats that did not reach it are said once, then it registers again', async () => {
    const port = await freePort();
    const first = await relayWith({ port });
    const { registration, logger } = registrationFor(first.relay.url);
    registration.start();
    await expect.poll(async () => (await first.backend.nodes()).length).toBe(1);
    await first.relay.close();
    await expect.poll(() => (registration.state.kind === 'registered' ? registration.state.missed : 0)).toBeGreaterThanOrEqual(2);
    expect(logger.messages('warn').filter((m) => m === 'a heartbeat did not reach the relay')).toHaveLength(1);
    // A new relay with a fresh state: the first heartbeat that reaches it is told to register again.
    const second = await relayWith({ port });
    await expect.poll(async () => (await second.backend.nodes()).map((n) => n.nodeId), { timeout: 5_000 }).toEqual(['node-1']);
    expect(logger.messages('warn')).toContain('the relay no longer knows this node; registering again');
  });

  it('leaves the relay on stop, and sends nothing after', async () => {
    const { relay, backend } = await relayWith();
    let reads = 0;
    const { registration, logger } = registrationFor(relay.url, {
      load: () => {
        reads += 1;
        return { calls: 0 };
      },
    });
    registration.start();
    await expect.poll(() => reads).toBeGreaterThanOrEqual(2);
    await registration.stop();
    expect(registration.state).toEqual({ kind: 'stopped' });
    expect(await backend.nodes()).toEqual([]);
    expect(logger.messages('info')).toContain('left the relay');
    const after = reads;
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(reads).toBe(after);
    // Stopping again is the same stop.
    await registration.stop();
  });

  it('stops at once while the relay cannot be reached, and gives up leaving a relay that went away', async () => {
    const port = await freePort();
    const unreached = registrationFor(`http://127.0.0.1:${port}`);
    unreached.registration.start();
    await expect.poll(() => (unreached.registration.state.kind === 'registering' ? unreached.registration.state.failures : 0)).toBeGreaterThanOrEqual(1);
    const started = Date.now();
    await unreached.registration.stop();
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(unreached.logger.messages('info')).not.toContain('left the relay');

    const { relay } = await relayWith();
    const gone = registrationFor(relay.url);
    gone.registration.start();
    await expect.poll(() => gone.registration.state.kind).toBe('registered');
    await relay.close();
    await gone.registration.stop();
    expect(gone.logger.messages('warn')).toContain('could not leave the relay; it forgets the node after three missed heartbeats');
  });

  it('says in the log when the relay refuses the token or takes no nodes, and keeps trying', async () => {
    const { relay } = await relayWith();
    const refused = registrationFor(relay.url, { token: 'not-the-bridge-token-0123456789abcdef-01' });
    refused.registration.start();
    await expect.poll(() => (refused.registration.state.kind === 'registering' ? refused.registration.state.failures : 0)).toBeGreaterThanOrEqual(2);
    expect(refused.logger.messages('error')).toContain("the relay refused the bridge token; is it the relay's --bridge-token?");
    expect(refused.logger.text()).not.toContain('not-the-bridge-token');

    const plain = await relayWith({ bridgeToken: undefined });
    const nowhere = registrationFor(plain.relay.url);
    nowhere.registration.start();
    await expect.poll(() => nowhere.logger.messages('error')).toContain('the relay takes no bridge nodes (it runs without --bridge-token)');
    expect(nowhere.registration.state.kind).toBe('registering');
  });
});

// A node's events on their way to a real relay (bridge/event-forwarder.ts): in order, tried again
// while the relay cannot take them, dropped with a log line when it refuses them, bounded.
import { createServer } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { RelayEventForwarder, type EventForwarderOptions } from '../../../bridge/event-forwarder';
import { RelayLink, type RelayAnswer, type RelayNodeApi } from '../../../bridge/relay-link';
import { startRelay, type BridgeEventReport, type RelayServer } from '../../../relay/server';
import type { BridgeNodeEventBody } from '../../../shared/bridge-nodes';
import { configureLogging } from '../../../shared/log';
import { APP_SECRET } from '../relay/webhook-fixtures';
import { BRIDGE_TOKEN, RecordingLogger } from './control-fixtures';

configureLogging({ level: 'error' });

const relays: RelayServer[] = [];
const links: RelayLink[] = [];
const forwarders: RelayEventForwarder[] = [];

afterEach(async () => {
  for (const f of forwarders.splice(0)) f.close();
  await Promise.all(links.splice(0).map((l) => l.close()));
  await Promise.all(relays.splice(0).map((r) => r.close()));
});

async function relayOn(port = 0): Promise<{ relay: RelayServer; heard: BridgeEventReport[] }> {
  const relay = await startRelay({ port, appSecret: APP_SECRET, agentTokens: ['agent-token-0001-0123456789abcdef-0123'], heartbeatMs: 60_000, bridgeToken: BRIDGE_TOKEN });
  relays.push(relay);
  const heard: BridgeEventReport[] = [];
  relay.onBridgeEvent((report) => heard.push(report));
  return { relay, heard };
}

function forwarderTo(relay: RelayNodeApi | string, options: Partial<EventForwarderOptions> = {}): { forwarder: RelayEventForwarder; logger: RecordingLogger } {
  const logger = new RecordingLogger();
  let api: RelayNodeApi;
  if (typeof relay === 'string') {
    const link = new RelayLink({ relayUrl: relay, bridgeToken: BRIDGE_TOKEN, timeoutMs: 1_000 });
    links.push(link);
    api = link;
  } else api = relay;
  const forwarder = new RelayEventForwarder({ relay: api, nodeId: 'node-1', logger, retry: { tries: 5, firstDelayMs: 20, maxDelayMs: 100 }, ...options });
  forwarders.push(forwarder);
  return { forwarder, logger };
}

const legEvent = (kind: 'leg_connected' | 'leg_failed' | 'leg_closed', n: number): BridgeNodeEventBody => ({ kind, callId: `wacid.${n}`, legId: `leg-${n}` });

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe('bridge node events to the relay', () => {
  it('reaches the relay’s listeners in the order they happened', async () => {
    const { relay, heard } = await relayOn();
    const { forwarder } = forwarderTo(relay.url);
    const events: BridgeNodeEventBody[] = [legEvent('leg_connected', 1), { kind: 'customer_connected', callId: 'wacid.1' }, legEvent('leg_failed', 1), { kind: 'customer_failed', callId: 'wacid.1' }];
    for (const event of events) forwarder.send(event);
    await forwarder.flush(5_000);
    expect(heard.map((r) => r.event)).toEqual(events);
    expect(heard.every((r) => r.nodeId === 'node-1')).toBe(true);
    // Another after the queue ran dry starts it again.
    forwarder.send(legEvent('leg_closed', 1));
    await forwarder.flush(5_000);
    expect(heard.map((r) => r.event.kind).at(-1)).toBe('leg_closed');
  });

  it('tries an event again while the relay cannot be reached, and delivers it once it can', async () => {
    const port = await freePort();
    const { forwarder, logger } = forwarderTo(`http://127.0.0.1:${port}`, { retry: { tries: 50, firstDelayMs: 20, maxDelayMs: 40 } });
    forwarder.send(legEvent('leg_failed', 2));
    forwarder.send(legEvent('leg_closed', 2));
    await expect.poll(() => logger.messages('debug').filter((m) => m === 'an event did not reach the relay; trying again').length).toBeGreaterThanOrEqual(2);
    const { heard } = await relayOn(port);
    await forwarder.flush(5_000);
    expect(heard.map((r) => r.event)).toEqual([legEvent('leg_failed', 2), legEvent('leg_closed', 2)]);
  });

  it('gives an event up after its tries, and goes on with the next', async () => {
    const answers: Array<RelayAnswer<null>> = [
      { kind: 'refused', status: 503, code: 'draining', message: 'shutting down' },
      { kind: 'unreachable', reason: 'connection reset' },
      { kind: 'ok', value: null },
    ];
    const posted: string[] = [];
    const api: RelayNodeApi = {
      register: () => Promise.reject(new Error('not used')),
      reportLoad: () => Promise.reject(new Error('not used')),
      leave: () => Promise.reject(new Error('not used')),
      postEvent: (_nodeId, event) => {
        posted.push(event.callId);
        return Promise.resolve(event.callId === 'wacid.3' ? { kind: 'unreachable', reason: 'connection refused' } : (answers.shift() ?? { kind: 'ok', value: null }));
      },
    };
    const { forwarder, logger } = forwarderTo(api, { retry: { tries: 3, firstDelayMs: 5, maxDelayMs: 10 } });
    forwarder.send(legEvent('leg_failed', 3));
    forwarder.send(legEvent('leg_failed', 4));
    await forwarder.flush(5_000);
    expect(posted).toEqual(['wacid.3', 'wacid.3', 'wacid.3', 'wacid.4', 'wacid.4', 'wacid.4']);
    expect(logger.lines.find((l) => l.msg === 'could not give an event to the relay; dropped')?.fields).toMatchObject({ kind: 'leg_failed', callId: 'wacid.3', attempt: 3, reason: 'connection refused' });
  });

  it('drops an event the relay refuses, says so, and sends the next', async () => {
    const { relay, heard } = await relayOn();
    const { forwarder, logger } = forwarderTo(relay.url);
    forwarder.send({ kind: 'customer_failed', callId: 'x'.repeat(300) });
    forwarder.send({ kind: 'customer_failed', callId: 'wacid.5' });
    await forwarder.flush(5_000);
    expect(heard.map((r) => r.event.callId)).toEqual(['wacid.5']);
    expect(logger.lines.find((l) => l.msg === 'the relay refused an event; dropped')?.fields).toMatchObject({ attempt: 1, reason: '400 invalid_input: callId: is too long (256 characters at most)' });
  });

  it('keeps at most its bound of events waiting, the oldest dropped first', async () => {
    let release: () => void = () => undefined;
    const posted: string[] = [];
    const api: RelayNodeApi = {
      register: () => Promise.reject(new Error('not used')),
      reportLoad: () => Promise.reject(new Error('not used')),
      leave: () => Promise.reject(new Error('not used')),
      postEvent: (_nodeId, event) => {
        posted.push(event.callId);
        return posted.length === 1 ? new Promise((resolve) => (release = () => resolve({ kind: 'ok', value: null }))) : Promise.resolve({ kind: 'ok', value: null });
      },
    };
    const { forwarder, logger } = forwarderTo(api, { maxQueued: 2 });
    for (let i = 1; i <= 5; i += 1) forwarder.send({ kind: 'customer_failed', callId: `wacid.${i}` });
    release();
    await forwarder.flush(5_000);
    // wacid.1 was under way; of the four behind it, the two newest were kept.
    expect(posted).toEqual(['wacid.1', 'wacid.4', 'wacid.5']);
    expect(logger.messages('warn').filter((m) => m === 'too many events waiting for the relay; dropped the oldest')).toHaveLength(2);
  });

  it('sends nothing once closed, and says what it dropped', async () => {
    const port = await freePort();
    const { forwarder, logger } = forwarderTo(`http://127.0.0.1:${port}`, { retry: { tries: 100, firstDelayMs: 1_000, maxDelayMs: 1_000 } });
    forwarder.send(legEvent('leg_failed', 6));
    forwarder.send(legEvent('leg_failed', 7));
    await expect.poll(() => logger.messages('debug')).toContain('an event did not reach the relay; trying again');
    const started = Date.now();
    forwarder.close();
    await forwarder.flush(5_000);
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(logger.lines.find((l) => l.msg === 'events not sent to the relay before the node stopped')?.fields).toEqual({ count: 1 });
    forwarder.send(legEvent('leg_closed', 8));
    expect(logger.messages('warn')).toContain('an event after the node stopped was not sent');
  });
});

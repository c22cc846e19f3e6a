// Calls whose end never reaches the relay (a terminate webhook lost) must not hold a node's media
// for ever: each new call first ends those older than the call's time to live, on their node too.
import { afterEach, expect, test } from 'vitest';
import { BridgeNode } from '../../../bridge/bridge-node';
import { MemoryBackend } from '../../../relay/backend/memory-backend';
import { BridgedCalls, localBridge } from '../../../relay/bridged-calls';
import { CustomerPeer } from '../../../sandbox/customer-peer';
import { loadCustomerVoice } from '../../../sandbox/customer-voice';
import { createLogger } from '../../../shared/log';

const closing: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closing.splice(0).reverse()) await close();
});

async function serviceOffer(): Promise<string> {
  const customer = new CustomerPeer({ host: '127.0.0.1', voice: loadCustomerVoice().voice, logger: createLogger('customer') });
  closing.push(() => customer.close());
  const offer = await customer.makeOffer();
  if (!offer.ok) throw new Error(offer.error.message);
  return offer.value;
}

test('a new call first ends the calls whose end never came within 12 hours, on their node too; younger ones stay', async () => {
  let now = 1_800_000_000_000;
  const node = new BridgeNode({ bindAddress: '127.0.0.1', publicAddress: '127.0.0.1' });
  closing.push(() => node.close());
  const backend = new MemoryBackend({ retentionMs: 600_000, dedupWindowMs: 600_000, now: () => now });
  const calls = new BridgedCalls({ nodes: localBridge(node), placements: backend, ownerOf: () => Promise.resolve(undefined), team: () => [], logger: createLogger('bridge'), now: () => now });

  expect(await calls.takeIncoming('wacid.forgotten', await serviceOffer())).toBe('taken');
  now += 60 * 60_000;
  expect(await calls.takeIncoming('wacid.younger', await serviceOffer())).toBe('taken');
  await expect.poll(() => node.load().calls).toBe(2);

  now += 11 * 60 * 60_000 + 1;
  expect(await calls.takeIncoming('wacid.new', await serviceOffer())).toBe('taken');
  expect(calls.isBridged('wacid.forgotten')).toBe(false);
  expect(calls.isBridged('wacid.younger')).toBe(true);
  await expect.poll(() => node.load().calls).toBe(2);
  expect(await backend.callNode('wacid.forgotten')).toBeUndefined();
});

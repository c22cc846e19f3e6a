// A customer let go (releaseCustomer): when no agent is left and the relay cannot end the call at the
// gateway, the node closes the agents' legs and sends the customer nothing more while its leg stays
// connected, so that the service ends the call for lack of media.
import { describe, expect, test } from 'vitest';
import { CUSTOMER, HOLD_MUSIC } from '../../../shared/bridge';
import { agentByNodeOffer, closedAfterEach, eventually, incomingCall, sleep, startNode, TONE_A } from './bridge-harness';

const track = closedAfterEach();

describe('releasing the customer', () => {
  test('the agents’ legs close and no RTP reaches the customer any more, while the customer’s leg stays connected', async () => {
    const { node: bridge, events } = startNode();
    track(bridge);
    const customer = track(await incomingCall(bridge, 'wacid.rel'));
    track(await agentByNodeOffer(bridge, 'wacid.rel', 'leg-a', TONE_A));
    await bridge.setRoutes('wacid.rel', { [CUSTOMER]: ['leg-a'], 'leg-a': [CUSTOMER] });
    await bridge.connectCustomer('wacid.rel');
    await eventually('the customer to hear the agent', () => customer.hears(TONE_A) > 0.3);

    expect(await bridge.releaseCustomer('wacid.rel')).toEqual({ ok: true, value: null });
    expect(await bridge.report('wacid.rel')).toMatchObject({ ok: true, value: { agents: {} } });
    // Nothing the relay routes afterwards reaches the customer either, not even the music.
    expect(await bridge.setRoutes('wacid.rel', { [CUSTOMER]: [HOLD_MUSIC] })).toEqual({ ok: true, value: null });
    // What was on its way when it was released arrives; then nothing more.
    await sleep(150);
    const count = customer.packets.length;
    await sleep(1_500);
    expect(customer.packets.length).toBe(count);

    const report = await bridge.report('wacid.rel');
    expect(report).toMatchObject({ ok: true, value: { customer: { state: 'connected' }, agents: {} } });
    expect(events.some((e) => e.kind === 'customer_failed')).toBe(false);
    expect(bridge.load().calls).toBe(1);

    // The relay ends it once the service did.
    expect(await bridge.endCall('wacid.rel')).toEqual({ ok: true, value: null });
    expect(await bridge.releaseCustomer('wacid.rel')).toMatchObject({ ok: false, error: { code: 'invalid_state' } });
  });

  test('an unknown call is refused', async () => {
    const { node: bridge } = startNode();
    track(bridge);
    expect(await bridge.releaseCustomer('wacid.none')).toMatchObject({ ok: false, error: { code: 'not_found' } });
  });
});

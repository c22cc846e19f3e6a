import { describe, expect, it } from 'vitest';
import { parseCallState, parsePush, parseSettings, parseSnapshot } from '../../../renderer/bridge/payload-schemas';
import { ANSWER_SDP } from '../../fixtures/sdp';
import { T0, accountSettings, active, dialing, ended, noNetwork, ringing, snapshot } from './fixtures';

describe('data from the host', () => {
  it('accepts real call states of every phase', () => {
    for (const call of [ringing(), dialing(), active(), ended(), { ...dialing(), phase: 'connecting', callId: 'c', answerSdp: ANSWER_SDP, answeredAt: T0 }]) {
      expect(parseCallState(call)).toEqual({ ok: true, value: call });
    }
  });

  it('names the field a malformed call breaks', () => {
    const noOffer = { ...ringing(), offerSdp: undefined };
    const result = parseCallState(noOffer);
    expect(result.ok).toBe(false);
    expect(!result.ok && result.error.field).toBe('offerSdp');
    const badPhase = parseCallState({ ...ringing(), phase: 'exploded' });
    expect(!badPhase.ok && badPhase.error.code).toBe('invalid_input');
    const badEnd = parseCallState({ ...ended(), end: { kind: 'failed' } });
    expect(!badEnd.ok && badEnd.error.field).toMatch(/^end/);
  });

  it('checks whole snapshots and pushes', () => {
    expect(parseSnapshot(snapshot([ringing()])).ok).toBe(true);
    const broken = parseSnapshot({ ...snapshot(), history: [{ localId: 'h', outcome: 'completed' }] });
    expect(!broken.ok && broken.error.field).toMatch(/^history\[0\]/);
    expect(parsePush('historyChanged', []).ok).toBe(true);
    expect(parsePush('connectionChanged', { status: 'reconnecting', since: T0 }).ok).toBe(false);
    expect(parseSettings({ mode: 'account', productSegment: 'chatapp', hasApiKey: true, hasAgentToken: false, secretStorage: 'vault', network: noNetwork }).ok).toBe(false);
  });

  it('checks the Network settings inside the settings', () => {
    expect(parseSettings(accountSettings)).toEqual({ ok: true, value: accountSettings });
    const { network: _network, ...withoutNetwork } = accountSettings;
    const missing = parseSettings(withoutNetwork);
    expect(!missing.ok && missing.error.field).toBe('network');
    const badStatus = parseSettings({ ...accountSettings, network: { ...noNetwork, relayTurn: 'maybe' } });
    expect(!badStatus.ok && badStatus.error.field).toBe('network.relayTurn');
    const badServers = parseSettings({ ...accountSettings, network: { ...noNetwork, servers: 'stun:a' } });
    expect(!badServers.ok && badServers.error.field).toBe('network.servers');
  });
});

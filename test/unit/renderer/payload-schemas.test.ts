import { describe, expect, it } from 'vitest';
import { parseCallState, parsePush, parseSettings, parseSnapshot, parseTeam, parseTeamInfo } from '../../../renderer/bridge/payload-schemas';
import { DEFAULT_TEAM_SETTINGS } from '../../../shared/team-settings';
import { ANSWER_SDP, OFFER_SDP } from '../../fixtures/sdp';
import { T0, TEAM, accountSettings, active, bridgedActive, dialing, ended, noNetwork, ringing, snapshot, transferOf, transferRinging } from './fixtures';

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

describe('a rejoining call from the host', () => {
  it('accepts a connecting or active call rejoining at each of its steps, held or in a transfer', () => {
    const steps = [{ since: T0 }, { since: T0, legId: 'leg-2', offerSdp: OFFER_SDP }, { since: T0, legId: 'leg-2', offerSdp: OFFER_SDP, answered: true }];
    for (const rejoin of steps) {
      for (const call of [
        { ...bridgedActive(), rejoin },
        { ...bridgedActive(transferOf('from', 'transfer', 'not_answered')), heldSince: T0 + 1, rejoin },
        { ...ringing(), phase: 'connecting', answeredAt: T0 + 1, bridged: true, rejoin },
      ]) {
        expect(parseCallState(call)).toEqual({ ok: true, value: call });
      }
    }
  });

  it('drops a rejoin the media engine could not answer, naming the field', () => {
    const noSince = parseCallState({ ...bridgedActive(), rejoin: { legId: 'leg-2', offerSdp: OFFER_SDP } });
    expect(!noSince.ok && noSince.error.field).toBe('rejoin.since');
    const badOffer = parseCallState({ ...bridgedActive(), rejoin: { since: T0, legId: 'leg-2', offerSdp: 7 } });
    expect(!badOffer.ok && badOffer.error.field).toBe('rejoin.offerSdp');
    const emptyLeg = parseCallState({ ...bridgedActive(), rejoin: { since: T0, legId: '' } });
    expect(!emptyLeg.ok && emptyLeg.error.field).toBe('rejoin.legId');
    const halfAnswered = parseCallState({ ...bridgedActive(), rejoin: { since: T0, answered: false } });
    expect(!halfAnswered.ok && halfAnswered.error.field).toBe('rejoin.answered');
  });
});

describe('transfers from the host', () => {
  it('accepts a bridged call in every transfer step, a colleague\'s ring, and the ends of a transfer', () => {
    for (const state of ['ringing', 'consulting', 'joined', 'not_answered', 'done'] as const) {
      const call = bridgedActive(transferOf('from', 'consult', state));
      expect(parseCallState(call), state).toEqual({ ok: true, value: call });
    }
    expect(parseCallState(transferRinging('transfer'))).toEqual({ ok: true, value: transferRinging('transfer') });
    const anyone = bridgedActive(transferOf('from', 'transfer', 'ringing', null));
    expect(parseCallState(anyone)).toEqual({ ok: true, value: anyone });
    for (const end of [{ kind: 'transferred', to: 'Ben Okafor' }, { kind: 'consult_ended' }]) {
      const call = { ...ended(), end };
      expect(parseCallState(call)).toEqual({ ok: true, value: call });
    }
    const history = [{ localId: 'in:a', direction: 'incoming', outcome: 'transferred', transferredTo: 'Ben Okafor', startedAt: T0, endedAt: T0 + 1, durationSec: 1 }];
    expect(parsePush('historyChanged', history)).toEqual({ ok: true, value: history });
  });

  it('drops a transfer the window could not show, naming the field', () => {
    const badState = parseCallState(bridgedActive({ ...transferOf('from', 'transfer', 'ringing'), state: 'exploded' as 'ringing' }));
    expect(!badState.ok && badState.error.field).toBe('transfer.state');
    const noName = parseCallState(bridgedActive({ ...transferOf('to', 'transfer', 'done'), colleague: { agentId: 'agent-ben' } as { agentId: string; name: string } }));
    expect(!noName.ok && noName.error.field).toBe('transfer.colleague.name');
    const noTo = parseCallState({ ...ended(), end: { kind: 'transferred' } });
    expect(!noTo.ok && noTo.error.field).toMatch(/^end/);
  });

  it('checks the team', () => {
    expect(parseTeam(TEAM)).toEqual({ ok: true, value: TEAM });
    const bad = parseTeam([{ agentId: 'agent-x', name: 'X', presence: 'away' }]);
    expect(!bad.ok && bad.error.field).toBe('[0].presence');
  });
});

describe('who else hears a bridged call, from the host', () => {
  it('keeps a call’s recording and its supervisors, and drops a call whose supervisor the window could not show, naming the field', () => {
    const overseen = { ...bridgedActive(), recording: true, monitors: [{ supervisorId: 'sam', name: 'Sam Supervisor', mode: 'whisper' }] };
    expect(parseCallState(overseen)).toEqual({ ok: true, value: overseen });
    const badMode = parseCallState({ ...overseen, monitors: [{ supervisorId: 'sam', name: 'Sam Supervisor', mode: 'shout' }] });
    expect(!badMode.ok && badMode.error.field).toBe('monitors[0].mode');
    const badRecording = parseCallState({ ...overseen, recording: 'yes' });
    expect(!badRecording.ok && badRecording.error.field).toBe('recording');
  });

  it('keeps the team’s recording mode, and offers nothing for a mode it does not know', () => {
    const team = { role: 'agent', settings: DEFAULT_TEAM_SETTINGS, record: 'on-demand' };
    expect(parseTeamInfo(team)).toEqual({ ok: true, value: team });
    const newer = parseTeamInfo({ ...team, record: 'on-weekdays' });
    expect(newer.ok && newer.value.record).toBeUndefined();
  });

  it('checks the monitorChanged push', () => {
    expect(parsePush('monitorChanged', { callId: 'wacid.1', mode: 'barge' })).toEqual({ ok: true, value: { callId: 'wacid.1', mode: 'barge' } });
    expect(parsePush('monitorChanged', { callId: 'wacid.1', mode: 'left', reason: 'call_ended' }).ok).toBe(true);
    expect(parsePush('monitorChanged', { callId: 'wacid.1', mode: 'shout' }).ok).toBe(false);
    expect(parsePush('monitorChanged', { callId: '', mode: 'left' }).ok).toBe(false);
    expect(parsePush('monitorChanged', { callId: 'wacid.1', mode: 'left', reason: 'bored' }).ok).toBe(false);
    expect(parsePush('monitorChanged', { callId: 'wacid.1', mode: 'listen', recording: true })).toEqual({ ok: true, value: { callId: 'wacid.1', mode: 'listen', recording: true } });
    expect(parsePush('monitorChanged', { callId: 'wacid.1', mode: 'listen', recording: 'yes' }).ok).toBe(false);
  });
});

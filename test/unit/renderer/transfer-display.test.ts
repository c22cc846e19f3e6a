// How a transfer reads: the step the call panel is at for every role and state, what it offers
// there, its words in English and in the other languages, and the team as "Transfer to" lists it.
// The same on screen, in Chromium: transfer-window.test.ts.
import { afterEach, describe, expect, it } from 'vitest';
import { endReasonText, historyOutcomeText } from '../../../renderer/error-texts';
import { setUiLanguage } from '../../../renderer/i18n/i18n';
import {
  offersHold,
  offersTransfer,
  presenceText,
  teamChoices,
  transferDialogTitle,
  transferRingHeading,
  transferStep,
  transferStepText,
} from '../../../renderer/transfer-display';
import type { CallState, CallTransfer } from '../../../shared/call-state';
import { historyEntryFor } from '../../../shared/history';
import { TEAM_PRESENCES } from '../../../shared/transfer';
import { T0, TEAM, active, bridgedActive, ended, endedWith, ringing, transferOf, transferRinging } from './fixtures';

afterEach(async () => {
  await setUiLanguage('en', undefined);
});

describe('the step of a call’s transfer', () => {
  const STATES: CallTransfer['state'][] = ['ringing', 'consulting', 'joined', 'not_answered', 'done'];
  const from: Record<CallTransfer['state'], string> = { ringing: 'calling', consulting: 'consulting', joined: 'joined', not_answered: 'not_answered', done: 'none' };
  const to: Record<CallTransfer['state'], string> = { ringing: 'received', consulting: 'consulted', joined: 'joined', not_answered: 'none', done: 'received' };

  it.each(STATES)('%s, as the agent who started it and as the colleague', (state) => {
    expect(transferStep({ transfer: transferOf('from', 'transfer', state) }).step).toBe(from[state]);
    expect(transferStep({ transfer: transferOf('to', 'transfer', state) }).step).toBe(to[state]);
  });

  it('no transfer is no step; a consult answered before the relay’s word is already a consult', () => {
    expect(transferStep({}).step).toBe('none');
    expect(transferStep({ transfer: transferOf('to', 'consult', 'ringing') }).step).toBe('consulted');
  });
});

describe('what the call panel offers', () => {
  it('Transfer and Consult: an active call through the bridge with no transfer under way', () => {
    expect(offersTransfer(bridgedActive())).toBe(true);
    expect(offersTransfer(active())).toBe(false);
    expect(offersTransfer({ ...ringing(), bridged: true })).toBe(false);
    expect(offersTransfer({ ...ended(), bridged: true })).toBe(false);
    expect(offersTransfer(bridgedActive(transferOf('from', 'transfer', 'not_answered')))).toBe(true);
    expect(offersTransfer(bridgedActive(transferOf('to', 'transfer', 'done')))).toBe(true);
    for (const state of ['ringing', 'consulting', 'joined'] as const) {
      expect(offersTransfer(bridgedActive(transferOf('from', 'consult', state))), state).toBe(false);
      expect(offersTransfer(bridgedActive(transferOf('to', 'consult', state))), state).toBe(false);
    }
  });

  it('Hold: an active call, except while a transfer rings, a consult goes on or three talk', () => {
    expect(offersHold(active())).toBe(true);
    expect(offersHold(bridgedActive(transferOf('from', 'transfer', 'not_answered')))).toBe(true);
    for (const state of ['ringing', 'consulting', 'joined'] as const) expect(offersHold(bridgedActive(transferOf('from', 'consult', state))), state).toBe(false);
    expect(offersHold(bridgedActive(transferOf('to', 'consult', 'consulting')))).toBe(false);
    expect(offersHold(ringing())).toBe(false);
  });

  it('nothing of Hold, Resume, Transfer or Consult while the call rejoins; all of it once it is connected again', () => {
    const rejoining = (call: CallState) => ({ ...call, rejoin: { since: T0 } }) as CallState;
    expect(offersHold(rejoining(bridgedActive()))).toBe(false);
    expect(offersHold(rejoining({ ...bridgedActive(), heldSince: T0 } as CallState))).toBe(false);
    expect(offersTransfer(rejoining(bridgedActive()))).toBe(false);
    expect(offersHold(bridgedActive())).toBe(true);
    expect(offersTransfer(bridgedActive())).toBe(true);
  });
});

describe('the words of each step', () => {
  const say = (transfer: CallTransfer) => transferStepText(transferStep({ transfer }));

  it('in English', () => {
    expect(say(transferOf('from', 'transfer', 'ringing'))).toBe('Transferring to Ben Okafor…');
    expect(say(transferOf('from', 'transfer', 'ringing', null))).toBe('Transferring to anyone available…');
    expect(say(transferOf('from', 'consult', 'ringing'))).toBe('Calling Ben Okafor for a consult…');
    expect(say(transferOf('from', 'consult', 'ringing', null))).toBe('Calling anyone available for a consult…');
    expect(say(transferOf('from', 'consult', 'consulting'))).toBe('Consulting Ben Okafor — the customer is on hold');
    expect(say(transferOf('from', 'consult', 'joined'))).toBe('Three-way call with Ben Okafor');
    expect(say(transferOf('from', 'transfer', 'not_answered'))).toBe('Transfer not answered');
    expect(say(transferOf('from', 'consult', 'not_answered'))).toBe('Transfer not answered');
    expect(say(transferOf('from', 'transfer', 'done'))).toBeUndefined();
    expect(say(transferOf('to', 'consult', 'consulting'))).toBe('Consult from Ben Okafor — the customer is on hold');
    expect(say(transferOf('to', 'consult', 'joined'))).toBe('Three-way call with Ben Okafor');
    expect(say(transferOf('to', 'transfer', 'done'))).toBe('Transferred from Ben Okafor');
    // A colleague the relay did not name yet.
    expect(say(transferOf('from', 'consult', 'consulting', null))).toBe('Consulting a colleague — the customer is on hold');
  });

  it('in Spanish and Arabic', async () => {
    await setUiLanguage('es', undefined);
    expect(say(transferOf('from', 'transfer', 'ringing'))).toBe('Transfiriendo a Ben Okafor…');
    expect(say(transferOf('from', 'consult', 'consulting'))).toBe('Consultando con Ben Okafor — el cliente está en espera');
    expect(transferRingHeading(transferRinging('transfer'))).toBe('Transferencia de Ben Okafor');
    expect(transferDialogTitle('consult')).toBe('Consultar con');
    await setUiLanguage('ar', undefined);
    expect(say(transferOf('from', 'consult', 'joined'))).toBe('مكالمة ثلاثية مع Ben Okafor');
    expect(presenceText('offline')).toBe('غير متصل');
  });

  it('the ringing card’s heading names the colleague; any other call has none', () => {
    expect(transferRingHeading(transferRinging('transfer'))).toBe('Transfer from Ben Okafor');
    expect(transferRingHeading(transferRinging('consult'))).toBe('Consult from Ben Okafor');
    expect(transferRingHeading(ringing())).toBeUndefined();
    expect(transferRingHeading(bridgedActive(transferOf('from', 'transfer', 'ringing')))).toBeUndefined();
    expect(transferDialogTitle('transfer')).toBe('Transfer to');
    expect(transferDialogTitle('consult')).toBe('Consult with');
  });
});

describe('the team in "Transfer to"', () => {
  it('every colleague but the agent, by name as people sort names, Offline and Do not disturb not choosable', () => {
    expect(teamChoices(TEAM, 'en')).toEqual([
      { agentId: 'agent-ben', name: 'Ben Okafor', presence: 'available', enabled: true },
      { agentId: 'agent-cat', name: 'Cato Silva', presence: 'call_waiting', enabled: true },
      { agentId: 'agent-dan', name: 'Dana Kim', presence: 'dnd', enabled: false },
      { agentId: 'agent-eli', name: 'eli Novak', presence: 'on_call', enabled: true },
      { agentId: 'agent-olu', name: 'Olu Adeyemi', presence: 'offline', enabled: false },
      { agentId: 'agent-zoe', name: 'Zoë Tran', presence: 'available', enabled: true },
    ]);
  });

  it('two colleagues of one name keep one order (their ids); a team of one lists nobody', () => {
    const twins = teamChoices([
      { agentId: 'b', name: 'Sam Lee', presence: 'available' },
      { agentId: 'a', name: 'Sam Lee', presence: 'offline' },
    ]);
    expect(twins.map((c) => c.agentId)).toEqual(['a', 'b']);
    expect(teamChoices([{ agentId: 'me', name: 'Me', presence: 'available', self: true }])).toEqual([]);
  });

  it('every presence has its words; "call waiting" reads as able to take another', () => {
    expect(TEAM_PRESENCES.map((p) => presenceText(p))).toEqual(['Available', 'On a call, can take another', 'On a call', 'Do not disturb', 'On a break', 'After-call work', 'Offline']);
  });
});

describe('how a transferred call ends', () => {
  it('on the panel and in the recent calls: "Transferred to NAME", "Consult ended"', () => {
    expect(endReasonText({ kind: 'transferred', to: 'Ben Okafor' })).toBe('Transferred to Ben Okafor');
    expect(endReasonText({ kind: 'consult_ended' })).toBe('Consult ended');
    const entry = historyEntryFor(endedWith({ kind: 'transferred', to: 'Ben Okafor' }));
    expect(entry).toMatchObject({ outcome: 'transferred', transferredTo: 'Ben Okafor' });
    expect(historyOutcomeText(entry)).toBe('Transferred to Ben Okafor');
    expect(historyOutcomeText({ outcome: 'consult_ended' })).toBe('Consult ended');
    // An entry that kept no name still says what happened.
    expect(historyOutcomeText({ outcome: 'transferred' })).toBe('Transferred');
  });

  it('in the agent’s language', async () => {
    await setUiLanguage('pt-BR', undefined);
    expect(endReasonText({ kind: 'transferred', to: 'Ben Okafor' })).toBe('Transferida para Ben Okafor');
    expect(historyOutcomeText({ outcome: 'consult_ended' })).toBe('Consulta encerrada');
  });
});

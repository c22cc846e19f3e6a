import type { MediaControls } from '../../../renderer/app/call-actions';
import type { AppSnapshot } from '../../../shared/api';
import type { CallState, CallTransfer, EndedCall, EndReason } from '../../../shared/call-state';
import type { Colleague, TeamMember } from '../../../shared/transfer';
import type { PublicNetworkSettings } from '../../../shared/ice-servers';
import type { PublicSettings } from '../../../shared/settings';
import { DEFAULT_SERVICE_CAPTURE } from '../../../shared/service-capture';
import { ANSWER_SDP, DIAL_OFFER_SDP, OFFER_SDP } from '../../fixtures/sdp';

export const T0 = 1_760_000_000_000;

export const ringing = (id = 'wacid.1', at = T0): Extract<CallState, { phase: 'ringing' }> => ({
  phase: 'ringing',
  direction: 'incoming',
  localId: `in:${id}`,
  callId: id,
  peer: { number: '447700900123', name: 'Amelia Hart' },
  offerSdp: OFFER_SDP,
  createdAt: at,
  ringsUntil: at + 60_000,
});

export const answering = (id = 'wacid.1', at = T0): CallState => ({ ...ringing(id, at), phase: 'answering', answeredAt: at + 2000 });

/** An incoming call whose accept went through (pushed by the main process with the answerCall reply). */
export const connecting = (id = 'wacid.1', at = T0): CallState => ({ ...ringing(id, at), phase: 'connecting', answeredAt: at + 2000 });

export const active = (id = 'wacid.1', at = T0): CallState => ({ ...ringing(id, at), phase: 'active', answeredAt: at + 2000, connectedAt: at + 2500 });

export const ended = (id = 'wacid.1', at = T0, endedAt = at + 10_000): CallState => ({
  ...ringing(id, at),
  phase: 'ended',
  end: { kind: 'completed', by: 'customer' },
  endedAt,
  durationSec: 7,
});

/** An incoming call that ended so. */
export const endedWith = (end: EndReason, id = 'wacid.1', at = T0, endedAt = at + 10_000): EndedCall => ({ ...ringing(id, at), phase: 'ended', end, endedAt, durationSec: 7 });

export const dialing = (localId = 'out-1', at = T0): CallState => ({
  phase: 'dialing',
  direction: 'outgoing',
  localId,
  peer: { number: '14155550123' },
  createdAt: at,
});

/** Settings → Network as a fresh install has it: no server, the relay not asked yet. */
export const noNetwork: PublicNetworkSettings = { servers: [], hasTurnPassword: false, relayOnly: false, fromCommandLine: false, relayTurn: 'unknown' };

export const sandboxSettings: PublicSettings = {
  mode: 'sandbox',
  productSegment: 'chatapp',
  hasApiKey: false,
  hasAgentToken: false,
  secretStorage: 'memory',
  network: noNetwork,
  serviceCapture: DEFAULT_SERVICE_CAPTURE,
};
export const accountSettings: PublicSettings = {
  mode: 'account',
  gatewayUrl: 'https://gateway.example.com/restapi/v1',
  productSegment: 'chatapp',
  relayUrl: 'https://relay.example.com',
  defaultCountry: 'GB',
  hasApiKey: true,
  hasAgentToken: true,
  secretStorage: 'os-keychain',
  network: {
    servers: ['stun:stun.example.com:3478', 'turns:turn.example.com:443'],
    turnUsername: 'agent-7',
    hasTurnPassword: true,
    relayOnly: false,
    fromCommandLine: false,
    relayTurn: 'not_offered',
  },
  serviceCapture: DEFAULT_SERVICE_CAPTURE,
};

export const snapshot = (calls: CallState[] = [], extra: Partial<AppSnapshot> = {}): AppSnapshot => ({
  mode: 'sandbox',
  calls,
  history: [],
  connection: { status: 'connected', since: T0 },
  settings: sandboxSettings,
  sandboxCustomers: [
    { number: '447700900123', name: 'Amelia Hart', behaviour: 'answers' },
    { number: '14155550123', name: 'Jonas Berg', behaviour: 'rejects' },
  ],
  ...extra,
});

/** A media engine with no media at all, for tests of everything else; `overrides` replace its parts. */
export const idleMediaControls = (overrides: Partial<MediaControls> = {}): MediaControls => ({
  onCall: () => undefined,
  reconcile: () => undefined,
  answerFor: async () => ({ ok: true, value: { sdp: ANSWER_SDP } }),
  rejoinAnswerFor: async () => ({ ok: true, value: { sdp: ANSWER_SDP } }),
  closeRejoinLeg: () => undefined,
  ringLegOf: async () => undefined,
  answerRingLegAgain: () => false,
  warmRingLeg: () => undefined,
  prepareOutgoing: async () => ({ ok: true, value: { sdp: DIAL_OFFER_SDP } }),
  onFact: () => () => undefined,
  onCondition: () => () => undefined,
  onCallQuality: () => () => undefined,
  onNotice: () => () => undefined,
  noteTiming: () => undefined,
  close: () => undefined,
  closeAll: () => undefined,
  sendDtmf: () => false,
  has: () => false,
  levels: async () => ({ mic: 0, customer: 0 }),
  customerLegQuality: () => undefined,
  ...overrides,
});

// ---- transfers (shared/transfer.ts) ----

export const BEN: Colleague = { agentId: 'agent-ben', name: 'Ben Okafor' };

/** An active call through the team's bridge, with a transfer in the given step. */
export const bridgedActive = (transfer?: CallTransfer, id = 'wacid.1', at = T0): CallState => ({ ...active(id, at), bridged: true, ...(transfer ? { transfer } : {}) });

/** This agent's transfer (`from`) or a colleague's (`to`), in the given state; `null`: "Anyone available", nobody named yet. */
export const transferOf = (role: CallTransfer['role'], kind: CallTransfer['kind'], state: CallTransfer['state'], colleague: Colleague | null = BEN): CallTransfer => ({
  id: 'tr-1',
  kind,
  role,
  state,
  ...(colleague ? { colleague } : {}),
});

/** A colleague's transfer or consult ringing this agent: a call of its own (`tr:<transferId>`). */
export const transferRinging = (kind: CallTransfer['kind'], by: Colleague = BEN, at = T0): Extract<CallState, { phase: 'ringing' }> => ({
  ...ringing('wacid.9', at),
  localId: 'tr:tr-9',
  bridged: true,
  ringsUntil: at + 30_000,
  transfer: { id: 'tr-9', kind, role: 'to', state: 'ringing', colleague: by },
});

/** A team as getTeam answers it: this agent, and colleagues in every presence, not in name order. */
export const TEAM: TeamMember[] = [
  { agentId: 'agent-me', name: 'Amara Diaz', presence: 'on_call', self: true },
  { agentId: 'agent-zoe', name: 'Zoë Tran', presence: 'available' },
  { agentId: 'agent-ben', name: 'Ben Okafor', presence: 'available' },
  { agentId: 'agent-olu', name: 'Olu Adeyemi', presence: 'offline' },
  { agentId: 'agent-dan', name: 'Dana Kim', presence: 'dnd' },
  { agentId: 'agent-cat', name: 'Cato Silva', presence: 'call_waiting' },
  { agentId: 'agent-eli', name: 'eli Novak', presence: 'on_call' },
];

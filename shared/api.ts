// SoftphoneApi: the one contract between the renderer and the main process (ARCHITECTURE.md,
// style.md 2). The Electron preload implements it over IPC, the browser host over a WebSocket; the
// renderer cannot tell them apart. Every command takes one object and resolves to a Result; every
// push has an onX(cb) → unsubscribe.
import { z } from 'zod';
import type { CallState } from './call-state';
import type { HistoryEntry } from './history';
import type { Result } from './result';
import type { SandboxCustomer } from './sandbox';
import { accountSettingsInputSchema, type PublicSettings } from './settings';

const localId = z.string().min(1, 'must not be empty').max(200, 'is too long');
const sdp = z.string().min(1, 'must not be empty').max(64 * 1024, 'is too long (64 KiB at most)');

/** Payload schemas for every command: both hosts parse with these before anything else runs. */
export const commandSchemas = {
  getSnapshot: z.strictObject({}),
  /** Validates and normalises the number and opens a dialing call; the renderer then makes the offer. */
  startCall: z.strictObject({ to: z.string().max(64, 'is too long') }),
  /** The complete local offer for a dialing call: main POSTs initiate. */
  sendOffer: z.strictObject({ localId, sdp }),
  /** The agent pressed Answer: ringing → answering. */
  answerCall: z.strictObject({ localId }),
  /** The complete local answer: main POSTs accept. */
  acceptCall: z.strictObject({ localId, sdp }),
  declineCall: z.strictObject({ localId }),
  hangUp: z.strictObject({ localId }),
  reportMedia: z.discriminatedUnion('state', [
    z.strictObject({ localId, state: z.literal('connected') }),
    z.strictObject({ localId, state: z.literal('failed'), reason: z.string().max(500) }),
  ]),
  saveSettings: z.strictObject({ settings: accountSettingsInputSchema }),
  /** Forget the account and return to the embedded sandbox. */
  clearSettings: z.strictObject({}),
  /** Sandbox only: a simulated customer calls the business. */
  simulateIncomingCall: z.strictObject({ number: z.string().min(1).max(64) }),
  /** Sandbox only: the customer on this call hangs up. */
  simulateCustomerHangUp: z.strictObject({ localId }),
  /** The agent's own choice of presence; while on a call the relay is told "on_call" whatever it is. */
  setPresence: z.strictObject({ status: z.enum(['available', 'dnd'], 'must be one of available, dnd') }),
} as const;

export type CommandName = keyof typeof commandSchemas;
export const COMMAND_NAMES = Object.keys(commandSchemas) as CommandName[];
export type CommandParams<N extends CommandName> = z.input<(typeof commandSchemas)[N]>;

export type ConnectionState =
  | { status: 'connecting'; since: number }
  | { status: 'connected'; since: number }
  | { status: 'reconnecting'; since: number; lastError: string };

/** What the agent chose in the presence control (kept across restarts). */
export type PresenceChoice = 'available' | 'dnd';
/** What the relay is told (relay/README.md PUT /presence): "on_call" while a call is placed, answered or under way. */
export type PresenceStatus = 'available' | 'on_call' | 'dnd';
export interface AgentPresence {
  choice: PresenceChoice;
  status: PresenceStatus;
}

export interface AppSnapshot {
  mode: 'sandbox' | 'account';
  calls: CallState[];
  history: HistoryEntry[];
  connection: ConnectionState;
  settings: PublicSettings;
  /** Present in sandbox mode: the simulated customers to call or be called by. */
  sandboxCustomers?: SandboxCustomer[];
  /** The agent's presence; absent from a service that does not report presence. */
  presence?: AgentPresence;
}

export interface CommandResults {
  getSnapshot: AppSnapshot;
  startCall: { localId: string; to: string };
  sendOffer: { callId: string };
  answerCall: null;
  acceptCall: null;
  declineCall: null;
  hangUp: null;
  reportMedia: null;
  saveSettings: PublicSettings;
  clearSettings: PublicSettings;
  simulateIncomingCall: { callId: string };
  simulateCustomerHangUp: null;
  setPresence: AgentPresence;
}

/** Pushes from main to the renderer. */
export interface PushPayloads {
  callChanged: CallState;
  connectionChanged: ConnectionState;
  historyChanged: HistoryEntry[];
  /** Settings or mode changed: the renderer refetches the snapshot. */
  settingsChanged: PublicSettings;
  presenceChanged: AgentPresence;
}
export type PushName = keyof PushPayloads;
export const PUSH_NAMES: readonly PushName[] = ['callChanged', 'connectionChanged', 'historyChanged', 'settingsChanged', 'presenceChanged'];
export type PushMessage = { [N in PushName]: { name: N; payload: PushPayloads[N] } }[PushName];

export type Unsubscribe = () => void;
export const pushListenerName = <N extends PushName>(name: N) => `on${name[0]!.toUpperCase()}${name.slice(1)}` as `on${Capitalize<N>}`;

export type SoftphoneCommands = { [N in CommandName]: (params: CommandParams<N>) => Promise<Result<CommandResults[N]>> };
export type SoftphonePushes = { [N in PushName as `on${Capitalize<N>}`]: (cb: (payload: PushPayloads[N]) => void) => Unsubscribe };
export type SoftphoneApi = SoftphoneCommands & SoftphonePushes;

/** What a host wraps: the main-process service behind both transports. */
export interface SoftphoneBackend {
  handle<N extends CommandName>(name: N, params: z.output<(typeof commandSchemas)[N]>): Promise<Result<CommandResults[N]>>;
  subscribe(listener: (push: PushMessage) => void): Unsubscribe;
}

/** The browser host's WebSocket frames. */
export const wsClientFrameSchema = z.strictObject({
  id: z.number().int().nonnegative(),
  command: z.enum(COMMAND_NAMES as [CommandName, ...CommandName[]]),
  params: z.unknown(),
});
export type WsClientFrame = z.infer<typeof wsClientFrameSchema>;
export type WsServerFrame = { kind: 'result'; id: number; result: Result<unknown> } | { kind: 'push'; push: PushMessage };

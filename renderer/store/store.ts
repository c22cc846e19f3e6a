// One zustand store of typed slices (style.md 6). It holds plain data only: RTCPeerConnection and
// MediaStream live in the media engine (webrtc/), never here. Components read it with single-field
// selectors or useShallow; tests call resetStore().
import { useStore } from 'zustand';
import { createStore, type StoreApi } from 'zustand/vanilla';
import type { AgentPresence, AppSnapshot, ConnectionState, TeamInfo } from '../../shared/api';
import type { CallState } from '../../shared/call-state';
import type { Conversation } from '../../shared/conversation';
import type { HistoryEntry } from '../../shared/history';
import { DEFAULT_PREFERENCES, type Preferences } from '../../shared/preferences';
import type { SandboxCustomer, SandboxTemplate } from '../../shared/sandbox';
import type { AppError } from '../../shared/result';
import type { PublicSettings } from '../../shared/settings';
import { DEFAULT_TEAM_SETTINGS } from '../../shared/team-settings';
import type { HostLinkState } from '../bridge/host-link';
import { mergeCalls, mergeSnapshotCalls } from './call-list';
import { emptyComposer, type ComposerDraft } from './composer';
import { isWindowOpen, mergeConversation, mergeConversations } from './conversations';
import { draftFromNetwork, type NetworkDraft, type NetworkErrors, type NetworkField } from './network-form';
import { draftFromCapture, type CaptureDraft, type CaptureErrors, type CaptureField } from './service-capture-form';
import { draftFromSettings, type SettingsDraft, type SettingsErrors, type SettingsField } from './settings-form';
import type { WrapUpFormState } from './wrap-up-form';
import { NO_WRAP_UP_PROMPT, type WrapUpPrompt } from './wrap-up-prompt';

export interface CallsSlice {
  calls: Record<string, CallState>;
}

export interface HistorySlice {
  history: HistoryEntry[];
}

export interface ConnectionSlice {
  /** The link to the host (IPC, or the browser host's WebSocket). */
  hostLink: HostLinkState;
  /** The main process's link to the relay's event stream; null until the first snapshot. */
  service: ConnectionState | null;
  snapshotLoaded: boolean;
  snapshotError: SnapshotProblem | null;
}

/**
 * Why the state could not be loaded, as a value: the banner words it in the language it is shown in
 * (the window may not have its language yet when this happens, at the start).
 */
export type SnapshotProblem =
  | { kind: 'refused'; error: AppError } // the host answered getSnapshot with an error
  | { kind: 'unreadable' } // the snapshot broke the window's schema (payload-schemas.ts)
  | { kind: 'startFailed'; reason: string }; // the window's domains could not start

export interface PresenceSlice {
  /** The agent's presence as the main process reports it; null until known. */
  presence: AgentPresence | null;
  /** Why the last change of presence was refused, if it was. */
  presenceError: string | null;
}

export interface DeskSlice {
  /** The agent's role and the team's settings (break reasons, dispositions); the defaults until the host tells them. */
  team: TeamInfo;
  /** Why "Ready" was refused, if it was. */
  afterCallWorkError: string | null;
  /** Wrap-up forms by the call's localId: drafts, errors and saves under way. */
  wrapUps: Record<string, WrapUpFormState>;
  /** The wrap-up the window asks for after a call with no after-call work (store/wrap-up-prompt.ts). */
  wrapUpPrompt: WrapUpPrompt;
}

export interface PreferencesSlice {
  /** The desk preferences as the main process keeps them (the defaults until the first snapshot). */
  preferences: Preferences;
  /** Why the last change was refused (it names the field), if it was. */
  preferencesError: string | null;
}

export interface SettingsSlice {
  mode: 'sandbox' | 'account' | null;
  settings: PublicSettings | null;
  sandboxCustomers: SandboxCustomer[];
}

export interface MessagesSlice {
  /** By contact (gateway digits). */
  conversations: Record<string, Conversation>;
  /** The contact the Contact panel shows, or null for the list of conversations. */
  selectedContact: string | null;
  /** One composer per contact: nothing typed is lost by switching or by an error. */
  composers: Record<string, ComposerDraft>;
  /** The conversation chooser's number field. */
  contactInput: string;
  contactError: string | null;
  /** The outcome of a contact action (call button, permission request), shown in the panel. */
  contactNotice: { contact: string; text: string; tone: 'ok' | 'error' } | null;
  /** Sandbox mode: the account's templates, to pick instead of pasting. */
  sandboxTemplates: SandboxTemplate[];
  /** Sandbox mode: what the simulated customer writes. */
  sandboxMessage: string;
}

export interface SettingsFormState {
  draft: SettingsDraft;
  /** The draft has edits not saved yet: new settings from the host do not overwrite them. */
  dirty: boolean;
  errors: SettingsErrors;
  formError: string | null;
  status: string | null;
  busy: boolean;
}

/** Settings → Network: kept apart from the account form, saved on its own. */
export interface NetworkFormState {
  draft: NetworkDraft;
  /** The draft has edits not saved yet: new settings from the host do not overwrite them. */
  dirty: boolean;
  errors: NetworkErrors;
  formError: string | null;
  status: string | null;
  busy: boolean;
}

/** Settings → "Recording and transcription": saved on its own, like the network. */
export interface CaptureFormState {
  draft: CaptureDraft;
  /** The draft has edits not saved yet: new settings from the host do not overwrite them. */
  dirty: boolean;
  errors: CaptureErrors;
  formError: string | null;
  status: string | null;
  busy: boolean;
}

export interface UiSlice {
  /** The screen the header switches to: the phone, Settings, or the team's wallboard. */
  screen: 'phone' | 'settings' | 'team';
  dialInput: string;
  dialError: string | null;
  /**
   * The typed number is of the right length but the numbering-plan metadata does not list it: the
   * words to show beside "Call anyway". Any edit of the number clears it.
   */
  dialWarning: string | null;
  dialBusy: boolean;
  /** Audio levels of the call on the panel, 0..1. */
  levels: { mic: number; customer: number };
  /**
   * A problem with a particular call that the call's own state does not tell (e.g. no microphone);
   * `retry` what its "Try again" does again, when the panel offers one.
   */
  callNotice: { localId: string; text: string; retry?: 'rejoin' } | null;
  /** What the agent last asked of a call's mute, shown by "Mute"/"Unmute" until main has answered (app/mute-wishes.ts). */
  muteWishes: Readonly<Record<string, boolean>>;
  keypadOpen: boolean;
  sandboxSelection: string;
  sandboxError: string | null;
  /** What the last sandbox control did, when its effect shows elsewhere (a voicemail, a callback request). */
  sandboxDone: string | null;
  settingsForm: SettingsFormState;
  networkForm: NetworkFormState;
  captureForm: CaptureFormState;
}

export interface StoreActions {
  applySnapshot(snapshot: AppSnapshot): void;
  /** Merges a pushed call (never backwards) and returns the store's resulting version of it. */
  applyCall(call: CallState): CallState;
  setHistory(history: HistoryEntry[]): void;
  setService(connection: ConnectionState): void;
  setPresence(presence: AgentPresence): void;
  setPresenceError(message: string | null): void;
  setTeam(team: TeamInfo): void;
  setAfterCallWorkError(message: string | null): void;
  /** Replaces one recent-calls entry (a saved wrap-up) until the next history push. */
  applyHistoryEntry(entry: HistoryEntry): void;
  setWrapUpForm(localId: string, form: WrapUpFormState): void;
  setWrapUpPrompt(prompt: WrapUpPrompt): void;
  setPreferences(preferences: Preferences): void;
  setPreferencesError(message: string | null): void;
  setHostLink(state: HostLinkState): void;
  setSnapshotError(problem: SnapshotProblem | null): void;
  setSettings(settings: PublicSettings): void;
  setScreen(screen: UiSlice['screen']): void;
  setDialInput(value: string): void;
  setDialError(message: string | null): void;
  setDialWarning(message: string | null): void;
  setDialBusy(busy: boolean): void;
  setLevels(levels: UiSlice['levels']): void;
  setCallNotice(notice: UiSlice['callNotice']): void;
  /** Sets a call's mute wish, or drops it (`undefined`): the call's `muted` is shown again. */
  setMuteWish(localId: string, muted: boolean | undefined): void;
  setKeypadOpen(open: boolean): void;
  setSandboxSelection(number: string): void;
  setSandboxError(message: string | null): void;
  setSandboxDone(message: string | null): void;
  editSettings(field: SettingsField, value: string): void;
  setSettingsForm(patch: Partial<SettingsFormState>): void;
  editNetwork<F extends NetworkField>(field: F, value: NetworkDraft[F]): void;
  setNetworkForm(patch: Partial<NetworkFormState>): void;
  editCapture<F extends CaptureField>(field: F, value: CaptureDraft[F]): void;
  setCaptureForm(patch: Partial<CaptureFormState>): void;
  /** Merges a pushed or fetched conversation (the higher revision wins). */
  applyConversation(conversation: Conversation): void;
  selectContact(contact: string | null): void;
  /** Changes a contact's composer (created on first use, on Template when the window is closed). */
  updateComposer(contact: string, change: (draft: ComposerDraft) => ComposerDraft): void;
  setContactInput(value: string): void;
  setContactError(message: string | null): void;
  setContactNotice(notice: MessagesSlice['contactNotice']): void;
  setSandboxMessage(value: string): void;
}

export type StoreState = CallsSlice & HistorySlice & ConnectionSlice & PresenceSlice & DeskSlice & PreferencesSlice & SettingsSlice & UiSlice & MessagesSlice;
export type AppState = StoreState & StoreActions;

const QUIET_LEVELS = { mic: 0, customer: 0 };

const defaultTeam = (): TeamInfo => ({ role: 'agent', settings: structuredClone(DEFAULT_TEAM_SETTINGS) });

export function initialState(): StoreState {
  return {
    calls: {},
    history: [],
    hostLink: { status: 'connecting' },
    service: null,
    snapshotLoaded: false,
    snapshotError: null,
    presence: null,
    presenceError: null,
    team: defaultTeam(),
    afterCallWorkError: null,
    wrapUps: {},
    wrapUpPrompt: NO_WRAP_UP_PROMPT,
    preferences: structuredClone(DEFAULT_PREFERENCES),
    preferencesError: null,
    mode: null,
    settings: null,
    sandboxCustomers: [],
    screen: 'phone',
    dialInput: '',
    dialError: null,
    dialWarning: null,
    dialBusy: false,
    levels: QUIET_LEVELS,
    callNotice: null,
    muteWishes: {},
    keypadOpen: false,
    sandboxSelection: '',
    sandboxError: null,
    sandboxDone: null,
    settingsForm: { draft: draftFromSettings(null), dirty: false, errors: {}, formError: null, status: null, busy: false },
    networkForm: { draft: draftFromNetwork(null), dirty: false, errors: {}, formError: null, status: null, busy: false },
    captureForm: { draft: draftFromCapture(null), dirty: false, errors: {}, formError: null, status: null, busy: false },
    conversations: {},
    selectedContact: null,
    composers: {},
    contactInput: '',
    contactError: null,
    contactNotice: null,
    sandboxTemplates: [],
    sandboxMessage: '',
  };
}

/** A new composer starts on Template when free-form cannot go out. */
export function composerFor(state: Pick<StoreState, 'composers' | 'conversations'>, contact: string, now: number = Date.now()): ComposerDraft {
  const existing = state.composers[contact];
  if (existing) return existing;
  return emptyComposer(isWindowOpen(state.conversations[contact]?.window, now) ? 'text' : 'template', contact);
}

/** Settings from the host refill the forms unless the agent is in the middle of editing them. */
function withSettings(state: StoreState, settings: PublicSettings): Partial<StoreState> {
  const form = state.settingsForm.dirty ? state.settingsForm : { ...state.settingsForm, draft: draftFromSettings(settings) };
  const network = state.networkForm.dirty ? state.networkForm : { ...state.networkForm, draft: draftFromNetwork(settings.network) };
  const capture = state.captureForm.dirty ? state.captureForm : { ...state.captureForm, draft: draftFromCapture(settings.serviceCapture) };
  return { settings, mode: settings.mode, settingsForm: form, networkForm: network, captureForm: capture };
}

export const appStore = createStore<AppState>()((set, get) => ({
  ...initialState(),
  applySnapshot: (snapshot) =>
    set((s) => {
      const customers = snapshot.sandboxCustomers ?? [];
      const selection = customers.some((c) => c.number === s.sandboxSelection) ? s.sandboxSelection : (customers[0]?.number ?? '');
      return {
        ...withSettings(s, snapshot.settings),
        mode: snapshot.mode,
        calls: mergeSnapshotCalls(s.calls, snapshot.calls),
        history: snapshot.history,
        service: snapshot.connection,
        presence: snapshot.presence ?? s.presence,
        team: snapshot.team ?? s.team,
        preferences: snapshot.preferences ?? s.preferences,
        sandboxCustomers: customers,
        sandboxSelection: selection,
        sandboxTemplates: snapshot.sandboxTemplates ?? [],
        conversations: mergeConversations(s.conversations, snapshot.conversations ?? []),
        snapshotLoaded: true,
        snapshotError: null,
      };
    }),
  applyCall: (call) => {
    const calls = mergeCalls(get().calls, call);
    if (calls !== get().calls) set({ calls });
    return calls[call.localId] ?? call;
  },
  setHistory: (history) => set({ history }),
  setService: (service) => set({ service }),
  // A refused "Ready" belongs to that after-call work: gone with it.
  setPresence: (presence) => set((s) => ({ presence, presenceError: null, afterCallWorkError: presence.afterCallWork ? s.afterCallWorkError : null })),
  setPresenceError: (presenceError) => set({ presenceError }),
  setTeam: (team) => set({ team }),
  setAfterCallWorkError: (afterCallWorkError) => set({ afterCallWorkError }),
  applyHistoryEntry: (entry) => set((s) => ({ history: s.history.map((h) => (h.localId === entry.localId ? entry : h)) })),
  setWrapUpForm: (localId, form) => set((s) => ({ wrapUps: { ...s.wrapUps, [localId]: form } })),
  setWrapUpPrompt: (wrapUpPrompt) => set({ wrapUpPrompt }),
  setPreferences: (preferences) => set({ preferences, preferencesError: null }),
  setPreferencesError: (preferencesError) => set({ preferencesError }),
  setHostLink: (hostLink) => set({ hostLink }),
  setSnapshotError: (snapshotError) => set({ snapshotError }),
  setSettings: (settings) => set((s) => withSettings(s, settings)),
  setScreen: (screen) => set({ screen }),
  setDialInput: (dialInput) => set((s) => ({ dialInput, dialWarning: s.dialInput === dialInput ? s.dialWarning : null })),
  setDialError: (dialError) => set({ dialError }),
  setDialWarning: (dialWarning) => set({ dialWarning }),
  setDialBusy: (dialBusy) => set({ dialBusy }),
  setLevels: (levels) => {
    const now = get().levels;
    if (now.mic !== levels.mic || now.customer !== levels.customer) set({ levels });
  },
  setCallNotice: (callNotice) => set({ callNotice }),
  setMuteWish: (localId, muted) =>
    set((s) => {
      if (s.muteWishes[localId] === muted) return {};
      const { [localId]: _replaced, ...rest } = s.muteWishes;
      return { muteWishes: muted === undefined ? rest : { ...rest, [localId]: muted } };
    }),
  setKeypadOpen: (keypadOpen) => set({ keypadOpen }),
  setSandboxSelection: (sandboxSelection) => set({ sandboxSelection }),
  setSandboxError: (sandboxError) => set({ sandboxError }),
  setSandboxDone: (sandboxDone) => set({ sandboxDone }),
  editSettings: (field, value) =>
    set((s) => {
      const { [field]: _cleared, ...errors } = s.settingsForm.errors;
      return { settingsForm: { ...s.settingsForm, draft: { ...s.settingsForm.draft, [field]: value }, dirty: true, errors, status: null } };
    }),
  setSettingsForm: (patch) => set((s) => ({ settingsForm: { ...s.settingsForm, ...patch } })),
  editNetwork: (field, value) =>
    set((s) => {
      const { [field]: _cleared, ...errors } = s.networkForm.errors;
      return { networkForm: { ...s.networkForm, draft: { ...s.networkForm.draft, [field]: value }, dirty: true, errors, status: null } };
    }),
  setNetworkForm: (patch) => set((s) => ({ networkForm: { ...s.networkForm, ...patch } })),
  editCapture: (field, value) =>
    set((s) => {
      const { [field]: _cleared, ...errors } = s.captureForm.errors;
      return { captureForm: { ...s.captureForm, draft: { ...s.captureForm.draft, [field]: value }, dirty: true, errors, status: null } };
    }),
  setCaptureForm: (patch) => set((s) => ({ captureForm: { ...s.captureForm, ...patch } })),
  applyConversation: (conversation) =>
    set((s) => {
      const merged = mergeConversation(s.conversations[conversation.contact], conversation);
      return merged === s.conversations[conversation.contact] ? {} : { conversations: { ...s.conversations, [conversation.contact]: merged } };
    }),
  selectContact: (selectedContact) => set((s) => (s.selectedContact === selectedContact ? {} : { selectedContact, contactNotice: null, contactError: null })),
  updateComposer: (contact, change) => set((s) => ({ composers: { ...s.composers, [contact]: change(composerFor(s, contact)) } })),
  setContactInput: (contactInput) => set({ contactInput, contactError: null }),
  setContactError: (contactError) => set({ contactError }),
  setContactNotice: (contactNotice) => set({ contactNotice }),
  setSandboxMessage: (sandboxMessage) => set({ sandboxMessage }),
}));

/** Settles once the first snapshot is in, or could not be had: the saved preferences are known then. */
export function firstSnapshotSettled(store: StoreApi<AppState> = appStore): Promise<void> {
  const settled = (s: AppState): boolean => s.snapshotLoaded || s.snapshotError !== null;
  return new Promise((resolve) => {
    if (settled(store.getState())) {
      resolve();
      return;
    }
    const stop = store.subscribe((s) => {
      if (!settled(s)) return;
      stop();
      resolve();
    });
  });
}

/** Back to a fresh start, keeping the actions (for tests). */
export function resetStore(): void {
  appStore.setState(initialState());
}

export function useAppStore<T>(selector: (state: AppState) => T): T {
  return useStore(appStore, selector);
}

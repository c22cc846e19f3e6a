// A supervisor's side of the Team view (shared/supervision.ts): the team's live calls as last read, a
// "Listen", "Whisper" or "Barge" under way or refused on each, and the call this window joined.
// Kept apart from the app store, like wallboard.ts: app/monitor-actions.ts is its only writer,
// components/LiveCalls.tsx and components/MonitorPanel.tsx its readers. Tests call
// resetSupervisionStore().
import { useStore } from 'zustand';
import { createStore } from 'zustand/vanilla';
import type { LiveCall, LiveCalls, MonitorMode } from '../../shared/supervision';

/** The live calls as the relay listed them at `at`; `offsetMs`: the relay's clock less the window's then. */
export type LiveCallsView = { kind: 'loading' } | { kind: 'list'; calls: LiveCall[]; offsetMs: number };

/** A "Listen", "Whisper" or "Barge" of this window on a call it has not joined yet: under way, or refused in words. */
export type LiveCallNote = { kind: 'joining' } | { kind: 'refused'; text: string };

/** Who is in a joined call, as the live calls named them. */
export interface CallParties {
  agents: string[];
  customer: LiveCall['customer'];
}

/**
 * The call this window joined: `joining` while the relay's offer is answered, `connecting` once the
 * relay took the answer, `connected` once the audio flows. `switching`: a mode asked for and not
 * confirmed yet. `problem`: a switch refused, in words. `recording`: the team's bridge records the
 * call now, as the relay told this supervisor (the monitorChanged push).
 */
export interface JoinedCall {
  callId: string;
  mode: MonitorMode;
  parties: CallParties;
  stage: 'joining' | 'connecting' | 'connected';
  switching: MonitorMode | null;
  problem: string | null;
  recording: boolean;
}

export interface SupervisionState {
  live: LiveCallsView;
  /** The last read failed (its words); the list before it stays. */
  error: string | null;
  /** By call id. */
  notes: Readonly<Record<string, LiveCallNote>>;
  joined: JoinedCall | null;
  /** Why this window is no longer in the call it joined (it ended, the relay took it out, the audio failed); cleared by the next join. */
  notice: string | null;
  applyLiveCalls(calls: LiveCalls, receivedAt: number): void;
  setError(text: string | null): void;
  setNote(callId: string, note: LiveCallNote | null): void;
  setJoined(joined: JoinedCall | null): void;
  updateJoined(patch: Partial<Omit<JoinedCall, 'callId'>>): void;
  setNotice(text: string | null): void;
  /** The view closed: the list and its notes go; a joined call stays (its panel shows on every screen). */
  forgetList(): void;
}

export const partiesOf = (call: Pick<LiveCall, 'agents' | 'customer'>): CallParties => ({ agents: call.agents.map((a) => a.name), customer: call.customer });

/** The notes after a new list: a join under way stays; a refusal stays while its call is listed. */
export function notesAfter(notes: Readonly<Record<string, LiveCallNote>>, calls: readonly LiveCall[]): Record<string, LiveCallNote> {
  const listed = new Set(calls.map((c) => c.callId));
  return Object.fromEntries(Object.entries(notes).filter(([id, note]) => note.kind === 'joining' || listed.has(id)));
}

const listState = (): Pick<SupervisionState, 'live' | 'error' | 'notes'> => ({ live: { kind: 'loading' }, error: null, notes: {} });
const initialState = (): Pick<SupervisionState, 'live' | 'error' | 'notes' | 'joined' | 'notice'> => ({ ...listState(), joined: null, notice: null });

export const supervisionStore = createStore<SupervisionState>()((set) => ({
  ...initialState(),
  applyLiveCalls: (live, receivedAt) =>
    set((s) => {
      const joinedCall = s.joined && live.calls.find((c) => c.callId === s.joined?.callId);
      return {
        live: { kind: 'list', calls: live.calls, offsetMs: live.at - receivedAt },
        error: null,
        notes: notesAfter(s.notes, live.calls),
        // The names as the relay has them now (a transfer brings another agent in).
        ...(s.joined && joinedCall ? { joined: { ...s.joined, parties: partiesOf(joinedCall) } } : {}),
      };
    }),
  setError: (error) => set({ error }),
  setNote: (callId, note) =>
    set((s) => {
      const { [callId]: _gone, ...others } = s.notes;
      return { notes: note === null ? others : { ...others, [callId]: note } };
    }),
  setJoined: (joined) => set(joined ? { joined, notice: null } : { joined }),
  updateJoined: (patch) => set((s) => (s.joined ? { joined: { ...s.joined, ...patch } } : {})),
  setNotice: (notice) => set({ notice }),
  forgetList: () => set(listState()),
}));

export function resetSupervisionStore(): void {
  supervisionStore.setState(initialState());
}

export function useSupervision<T>(selector: (state: SupervisionState) => T): T {
  return useStore(supervisionStore, selector);
}

// The Team view's wallboard: the last board read, the day's figures and the team's voicemails it
// shows, a read that failed, and each "Call back" under way or refused. Kept apart from the app
// store, like updates.ts: app/wallboard-actions.ts is its only writer, components/TeamView.tsx and
// its parts its readers. Tests call resetWallboardStore().
import { useStore } from 'zustand';
import { createStore } from 'zustand/vanilla';
import type { CallbackRequest } from '../../shared/callbacks';
import type { TeamVoicemail } from '../../shared/voicemail';
import type { BoardAgent, TeamBoard } from '../bridge/payload-schemas';

/** The day's figures as the relay read them at `at` (its clock). */
export interface DayFigures {
  waiting: NonNullable<TeamBoard['waiting']>;
  today: NonNullable<TeamBoard['today']>;
  at: number;
  dayStartedAt: number;
}

/**
 * What the figures show: `loading` before the first answer; `live` from records read now; `none`
 * from a relay that keeps no records; `unavailable` while the records cannot be read, with the last
 * figures of the same day read before (`kept`), if any.
 */
export type FiguresView = { kind: 'loading' } | { kind: 'live'; figures: DayFigures } | { kind: 'none' } | { kind: 'unavailable'; kept: DayFigures | null };

/**
 * The team's voicemails, which come from its records: `list` as read now; `none` from a relay that
 * keeps no records; `unavailable` while they cannot be read, with the list read before (`kept`), if any.
 */
export type VoicemailsView = { kind: 'loading' } | { kind: 'list'; voicemails: TeamVoicemail[] } | { kind: 'none' } | { kind: 'unavailable'; kept: TeamVoicemail[] | null };

/** A "Call back" of this window: the take under way, or its refusal in words. */
export type CallbackNote = { kind: 'taking' } | { kind: 'refused'; text: string };

export interface BoardView {
  agents: BoardAgent[];
  /** "Callback requested", the oldest first, as the relay has them now. */
  callbacks: CallbackRequest[];
  timezone: string;
  dayStartedAt: number;
  /** The relay's clock less the window's when this board came: the clocks count from Date.now() plus this. */
  offsetMs: number;
}

export interface WallboardState {
  board: BoardView | null;
  figures: FiguresView;
  voicemails: VoicemailsView;
  /** The last read failed (its words); the board before it stays. */
  error: string | null;
  /** By request id. */
  callbackNotes: Readonly<Record<string, CallbackNote>>;
  applyBoard(board: TeamBoard, receivedAt: number): void;
  setError(text: string | null): void;
  setCallbackNote(id: string, note: CallbackNote | null): void;
  reset(): void;
}

const keptOf = (figures: FiguresView): DayFigures | null => (figures.kind === 'live' ? figures.figures : figures.kind === 'unavailable' ? figures.kept : null);

/** The figures after a new board: records that cannot be read keep the last ones of the same day. */
export function nextFigures(previous: FiguresView, board: TeamBoard): FiguresView {
  switch (board.records) {
    case 'ok':
      if (board.waiting && board.today) return { kind: 'live', figures: { waiting: board.waiting, today: board.today, at: board.at, dayStartedAt: board.dayStartedAt } };
      break;
    case 'none':
      return { kind: 'none' };
    case 'unavailable':
      break;
  }
  const kept = keptOf(previous);
  return { kind: 'unavailable', kept: kept?.dayStartedAt === board.dayStartedAt ? kept : null };
}

/** The voicemails after a new board: records that cannot be read keep the last list read. */
export function nextVoicemails(previous: VoicemailsView, board: TeamBoard): VoicemailsView {
  switch (board.records) {
    case 'ok':
      return { kind: 'list', voicemails: board.voicemails ?? [] };
    case 'none':
      return { kind: 'none' };
    case 'unavailable':
      return { kind: 'unavailable', kept: previous.kind === 'list' ? previous.voicemails : previous.kind === 'unavailable' ? previous.kept : null };
  }
}

/** The notes after a new board: a take under way stays; a refusal stays while its request is listed. */
export function notesAfter(notes: Readonly<Record<string, CallbackNote>>, callbacks: readonly CallbackRequest[]): Record<string, CallbackNote> {
  const listed = new Set(callbacks.map((c) => c.id));
  return Object.fromEntries(Object.entries(notes).filter(([id, note]) => note.kind === 'taking' || listed.has(id)));
}

const initialState = (): Pick<WallboardState, 'board' | 'figures' | 'voicemails' | 'error' | 'callbackNotes'> => ({
  board: null,
  figures: { kind: 'loading' },
  voicemails: { kind: 'loading' },
  error: null,
  callbackNotes: {},
});

export const wallboardStore = createStore<WallboardState>()((set) => ({
  ...initialState(),
  applyBoard: (board, receivedAt) =>
    set((s) => ({
      board: { agents: board.agents, callbacks: board.callbacks, timezone: board.timezone, dayStartedAt: board.dayStartedAt, offsetMs: board.at - receivedAt },
      figures: nextFigures(s.figures, board),
      voicemails: nextVoicemails(s.voicemails, board),
      error: null,
      callbackNotes: notesAfter(s.callbackNotes, board.callbacks),
    })),
  setError: (error) => set({ error }),
  setCallbackNote: (id, note) =>
    set((s) => {
      const { [id]: _gone, ...others } = s.callbackNotes;
      return { callbackNotes: note === null ? others : { ...others, [id]: note } };
    }),
  reset: () => set(initialState()),
}));

export function resetWallboardStore(): void {
  wallboardStore.setState(initialState());
}

export function useWallboardStore<T>(selector: (state: WallboardState) => T): T {
  return useStore(wallboardStore, selector);
}

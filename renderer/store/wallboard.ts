// The Team view's wallboard: the last board read, the day's figures it shows, and a read that failed.
// Kept apart from the app store, like updates.ts: app/wallboard-actions.ts is its only writer,
// components/TeamView.tsx its reader. Tests call resetWallboardStore().
import { useStore } from 'zustand';
import { createStore } from 'zustand/vanilla';
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

export interface BoardView {
  agents: BoardAgent[];
  timezone: string;
  dayStartedAt: number;
  /** The relay's clock less the window's when this board came: the clocks count from Date.now() plus this. */
  offsetMs: number;
}

export interface WallboardState {
  board: BoardView | null;
  figures: FiguresView;
  /** The last read failed (its words); the board before it stays. */
  error: string | null;
  applyBoard(board: TeamBoard, receivedAt: number): void;
  setError(text: string | null): void;
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

const initialState = (): Pick<WallboardState, 'board' | 'figures' | 'error'> => ({ board: null, figures: { kind: 'loading' }, error: null });

export const wallboardStore = createStore<WallboardState>()((set) => ({
  ...initialState(),
  applyBoard: (board, receivedAt) =>
    set((s) => ({
      board: { agents: board.agents, timezone: board.timezone, dayStartedAt: board.dayStartedAt, offsetMs: board.at - receivedAt },
      figures: nextFigures(s.figures, board),
      error: null,
    })),
  setError: (error) => set({ error }),
  reset: () => set(initialState()),
}));

export function resetWallboardStore(): void {
  wallboardStore.setState(initialState());
}

export function useWallboardStore<T>(selector: (state: WallboardState) => T): T {
  return useStore(wallboardStore, selector);
}

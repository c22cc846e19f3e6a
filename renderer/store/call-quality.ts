// How each connected call's media is doing, from the media engine once a second: "Reconnecting…"
// while media is away, the MOS estimate and the quality warnings (kind and figure: the call panel
// words them in the UI's language, call-display.ts qualityWarningWords). Kept apart from the app
// store: it changes every second, and only the call panel reads it. app/call-actions.ts is its only
// writer. Tests call resetCallQualityStore().
import { useStore } from 'zustand';
import { createStore } from 'zustand/vanilla';
import type { QualityWarningKind } from '../../shared/call-quality';

export interface CallQualityView {
  reconnecting: boolean;
  mos?: number;
  /**
   * Most pressing first; `value` is the figure rounded as it is shown (call-display.ts warningFigure);
   * `leg` 'customer' for a bridged call's customer leg (absent: the agent's own leg, or the call).
   */
  warnings: { kind: QualityWarningKind; value?: number; leg?: 'customer' }[];
}

export interface CallQualityState {
  byCall: Readonly<Record<string, CallQualityView>>;
  update(localId: string, view: CallQualityView): void;
  forget(localId: string): void;
}

const sameView = (a: CallQualityView | undefined, b: CallQualityView): boolean =>
  a !== undefined &&
  a.reconnecting === b.reconnecting &&
  a.mos === b.mos &&
  a.warnings.length === b.warnings.length &&
  a.warnings.every((w, i) => w.kind === b.warnings[i]?.kind && w.value === b.warnings[i]?.value && w.leg === b.warnings[i]?.leg);

export const callQualityStore = createStore<CallQualityState>()((set, get) => ({
  byCall: {},
  update: (localId, view) => {
    if (sameView(get().byCall[localId], view)) return;
    set((s) => ({ byCall: { ...s.byCall, [localId]: view } }));
  },
  forget: (localId) =>
    set((s) => {
      if (!(localId in s.byCall)) return {};
      const { [localId]: _gone, ...rest } = s.byCall;
      return { byCall: rest };
    }),
}));

export function resetCallQualityStore(): void {
  callQualityStore.setState({ byCall: {} });
}

export function useCallQuality<T>(selector: (state: CallQualityState) => T): T {
  return useStore(callQualityStore, selector);
}

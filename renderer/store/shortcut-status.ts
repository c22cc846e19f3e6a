// Which global shortcuts another application holds (the Electron host's shortcutsRefused push):
// those work only while the softphone has the focus, and Settings says so next to their fields.
// Kept apart from the app store: app/shortcuts.ts is its only writer, components/DeskSettings.tsx
// its reader. Tests call resetShortcutStatusStore().
import { useStore } from 'zustand';
import { createStore } from 'zustand/vanilla';
import type { PushPayloads } from '../../shared/api';

export type RefusedShortcut = PushPayloads['shortcutsRefused']['refused'][number];

export interface ShortcutStatusState {
  /** Empty in the browser host, which has no global shortcuts. */
  refused: readonly RefusedShortcut[];
  setRefused(refused: readonly RefusedShortcut[]): void;
}

export const shortcutStatusStore = createStore<ShortcutStatusState>()((set) => ({
  refused: [],
  setRefused: (refused) => set({ refused }),
}));

export function resetShortcutStatusStore(): void {
  shortcutStatusStore.setState({ refused: [] });
}

export function useShortcutStatusStore<T>(selector: (state: ShortcutStatusState) => T): T {
  return useStore(shortcutStatusStore, selector);
}

import { useSyncExternalStore } from 'react';

// One ticker for every clock on screen (countdowns, call timers, "3 min ago"), running only while
// something shows a clock.
const TICK_MS = 250;
const listeners = new Set<() => void>();
let now = Date.now();
let timer: ReturnType<typeof setInterval> | undefined;

function subscribe(listener: () => void): () => void {
  listeners.add(listener);
  if (timer === undefined) {
    now = Date.now();
    timer = setInterval(() => {
      now = Date.now();
      for (const l of [...listeners]) l();
    }, TICK_MS);
  }
  return () => {
    listeners.delete(listener);
    if (listeners.size === 0 && timer !== undefined) {
      clearInterval(timer);
      timer = undefined;
    }
  };
}

/**
 * The current time in steps of `resolutionMs`: a component re-renders only when its step changes,
 * so a list that shows minutes does not re-render four times a second.
 */
export function useNow(resolutionMs = TICK_MS): number {
  return useSyncExternalStore(subscribe, () => Math.floor(now / resolutionMs) * resolutionMs);
}

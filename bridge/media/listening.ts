// What each listener of a bridged call hears, decided from the relay's routes (shared/bridge.ts
// `Routes`) and the participants whose media flows now. Pure: the call's media applies it.
//
// - A listener never hears itself, and hears only participants whose legs are connected (a leg not
//   connected yet, or gone, sends nothing to hear).
// - Nobody to hear: silence, or the hold music when the routes list `music` — a frame every 20 ms
//   either way, so that the listener's stream stays alive (protocol.md: no media for 20–30 s ends
//   the call).
// - One participant and no music: forwarded as it comes, undecoded (the lowest latency and cost).
// - Anything more: decoded, mixed and encoded for this listener alone.
import { CUSTOMER, HOLD_MUSIC, type ParticipantId, type Routes } from '../../shared/bridge';

export type Listening =
  | { kind: 'silence' }
  | { kind: 'music' }
  | { kind: 'forward'; source: ParticipantId }
  | { kind: 'mix'; sources: ParticipantId[]; music: boolean };

export function listeningOf(routes: Routes, listener: ParticipantId, connected: ReadonlySet<ParticipantId>): Listening {
  const heard = routes[listener] ?? [];
  const music = heard.includes(HOLD_MUSIC);
  const sources = [...new Set(heard)].filter((p) => p !== listener && p !== HOLD_MUSIC && connected.has(p));
  // A customer whose agents are all gone for now (a window reloading, a network change) hears the
  // hold music, never dead air, until an agent is back; silence only when the relay routes none.
  const waitsForAgent = listener === CUSTOMER && heard.length > 0;
  if (sources.length === 0) return music || waitsForAgent ? { kind: 'music' } : { kind: 'silence' };
  if (sources.length === 1 && !music) return { kind: 'forward', source: sources[0]! };
  return { kind: 'mix', sources, music };
}

/** Whether two listenings are the same (a change of routes that changes nothing for this listener). */
export function sameListening(a: Listening, b: Listening): boolean {
  if (a.kind !== b.kind) return false;
  if (a.kind === 'forward' && b.kind === 'forward') return a.source === b.source;
  if (a.kind === 'mix' && b.kind === 'mix') return a.music === b.music && a.sources.length === b.sources.length && a.sources.every((s, i) => s === b.sources[i]);
  return true;
}

/**
 * The routes of a call the relay has not routed yet: the customer hears the first agent whose leg
 * connected, and that agent hears the customer; with no agent connected, the customer hears the
 * hold music.
 */
export function defaultRoutes(connectedAgents: readonly string[]): Routes {
  const first = connectedAgents[0];
  if (first === undefined) return { [CUSTOMER]: [HOLD_MUSIC] };
  return { [CUSTOMER]: [first], [first]: [CUSTOMER] };
}

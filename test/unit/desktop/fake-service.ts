// The service the desktop host wraps, reduced to what the host uses: commands are recorded, pushes
// are sent by the test, and the desk state (presence, connection, history, preferences) behaves
// like the real service's (electron/core/softphone-service.ts): a change is pushed to subscribers.
import type { AgentPresence, ConnectionState, PushMessage } from '../../../shared/api';
import type { CallState } from '../../../shared/call-state';
import { numberFromDialLink } from '../../../shared/dial-link';
import type { HistoryEntry } from '../../../shared/history';
import type { RuleText } from '../../../shared/i18n/text';
import { DEFAULT_PREFERENCES, type Preferences } from '../../../shared/preferences';
import { ok, type Result } from '../../../shared/result';
import type { DesktopService } from '../../../electron/desktop/desktop-app';
import { OFFER_SDP } from '../../fixtures/sdp';

export function deferred<T>() {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

export class FakeService implements DesktopService {
  readonly handled: Array<{ name: string; params: unknown }> = [];
  readonly listeners = new Set<(push: PushMessage) => void>();
  readonly closing = deferred<void>();
  readonly dialLinks: string[] = [];
  /** Every windowGone the host reported: which calls, and why. */
  readonly gone: Array<{ calls: readonly string[] | 'all'; reason: RuleText }> = [];
  closeCalls = 0;
  prefs: Preferences = structuredClone(DEFAULT_PREFERENCES);
  presence: AgentPresence = { choice: 'available', status: 'available' };
  connection: ConnectionState = { status: 'connected', since: 1 };
  history: HistoryEntry[] = [];

  async handle(name: string, params: unknown): Promise<Result<never>> {
    this.handled.push({ name, params });
    if (name === 'getSnapshot') {
      // Only the parts the host reads; the rest of AppSnapshot is the renderer's business.
      return ok({ mode: 'sandbox', calls: [], history: this.history, connection: this.connection, presence: this.presence, preferences: this.prefs } as never);
    }
    if (name === 'setPresence') {
      const status = (params as { status: AgentPresence['choice'] }).status;
      this.setPresence({ choice: status, status });
      return ok(this.presence as never);
    }
    return ok(null as never);
  }
  async windowGone(calls: readonly string[] | 'all', reason: RuleText): Promise<void> {
    this.gone.push({ calls, reason });
  }
  subscribe(listener: (push: PushMessage) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
  push(message: PushMessage): void {
    for (const listener of [...this.listeners]) listener(message);
  }
  close(): Promise<void> {
    this.closeCalls += 1;
    return this.closing.promise;
  }
  preferences(): Preferences {
    return this.prefs;
  }
  requestDial(link: string): Result<{ number: string; dial: boolean }> {
    this.dialLinks.push(link);
    const number = numberFromDialLink(link);
    if (!number.ok) return number;
    const request = { number: number.value.digits, dial: this.prefs.dialLinksAtOnce && number.value.verified };
    this.push({ name: 'dialRequested', payload: request });
    return ok(request);
  }

  setPreferences(change: Partial<Preferences>): void {
    this.prefs = { ...this.prefs, ...change };
    this.push({ name: 'preferencesChanged', payload: this.prefs });
  }
  setPresence(presence: AgentPresence): void {
    this.presence = presence;
    this.push({ name: 'presenceChanged', payload: presence });
  }
  setConnection(connection: ConnectionState): void {
    this.connection = connection;
    this.push({ name: 'connectionChanged', payload: connection });
  }
  setHistory(history: HistoryEntry[]): void {
    this.history = history;
    this.push({ name: 'historyChanged', payload: history });
  }
}

export const ringing = (phase: 'ringing' | 'active' = 'ringing', localId = 'in:wacid.1'): CallState =>
  ({
    localId,
    callId: localId.slice(3),
    direction: 'incoming',
    peer: { number: '447700900123', name: 'Ada' },
    createdAt: 1,
    offerSdp: OFFER_SDP,
    ...(phase === 'ringing' ? { phase, ringsUntil: 2 } : { phase, answeredAt: 1, connectedAt: 2 }),
  }) as CallState;

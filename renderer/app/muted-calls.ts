// Which calls the agent muted, kept in the tab's sessionStorage: a bridged call outlives a reload of
// its window (it rejoins, shared/calls/rejoin.ts), and an agent who muted it must not be heard again
// because the page was reloaded. Only the ids of live calls are kept (nothing of what was said).
import { createLogger } from '../../shared/log';
import { errorText } from '../../shared/result';

const log = createLogger('calls');

const KEY = 'softphone.mutedCalls';
/** More calls than an agent can hold at once; the oldest goes first should ids ever pile up. */
const MAX_KEPT = 20;

export type MuteStorage = Pick<Storage, 'getItem' | 'setItem'>;

/** The tab's sessionStorage, where the page has one it may use. */
export function tabStorage(): MuteStorage | undefined {
  try {
    return typeof sessionStorage === 'undefined' ? undefined : sessionStorage;
  } catch {
    // A page whose storage is forbidden (privacy settings) throws at the mere access.
    return undefined;
  }
}

export class MutedCalls {
  constructor(private readonly storage: MuteStorage | undefined) {}

  /** The calls muted in this tab before its page was (re)loaded. */
  muted(): string[] {
    const raw = this.read();
    if (raw === null) return [];
    try {
      const parsed: unknown = JSON.parse(raw);
      return Array.isArray(parsed) ? parsed.filter((id): id is string => typeof id === 'string' && id !== '') : [];
    } catch {
      return [];
    }
  }

  set(localId: string, muted: boolean): void {
    const before = this.muted();
    if (before.includes(localId) === muted) return;
    const kept = before.filter((id) => id !== localId);
    if (muted) kept.push(localId);
    this.write(kept.slice(-MAX_KEPT));
  }

  /** Forgets the calls that are over (or that the main process no longer has). */
  keepOnly(live: ReadonlySet<string>): void {
    const kept = this.muted();
    const still = kept.filter((id) => live.has(id));
    if (still.length !== kept.length) this.write(still);
  }

  private read(): string | null {
    try {
      return this.storage?.getItem(KEY) ?? null;
    } catch (e) {
      log.debug('the muted calls could not be read', { problem: errorText(e) });
      return null;
    }
  }

  private write(ids: string[]): void {
    try {
      this.storage?.setItem(KEY, JSON.stringify(ids));
    } catch (e) {
      log.debug('the muted calls could not be kept', { problem: errorText(e) });
    }
  }
}

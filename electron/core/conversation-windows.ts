// The 24-hour conversation window per contact (gateway-spec.md 3.1): OPEN from the customer's last
// message until 24 hours after it, CLOSED afterwards; free-form messages need it open, templates do
// not. Kept in `<dataDir>/conversation-windows.json` so that a restart does not forget who wrote.
//
// Inputs: `message.inbound` events (recordInbound, with the message's own timestamp), and the
// gateway's 131047 answer (recordClosed) — the gateway is the judge, so its "closed" wins over our
// arithmetic until the customer writes again.
import { join } from 'node:path';
import { z } from 'zod';
import { createLogger, type Logger } from '../../shared/log';
import { unixMs } from '../../shared/validation';
import { CoalescingWriter, CONTACT_KEY, loadContactFile, writeJsonFileAtomic } from './json-file';

/** gateway-spec.md 3.1 and 8. */
export const CONVERSATION_WINDOW_MS = 24 * 60 * 60 * 1000;
const WINDOWS_FILE = 'conversation-windows.json';
const FILE_VERSION = 1;
/** Contacts remembered at most; the ones quiet the longest are forgotten first. */
const MAX_CONTACTS = 5_000;

export type ConversationWindowState =
  /** Free-form messages may be sent until `closesAt` (unix ms; at that moment it is closed). */
  | { open: true; closesAt: number; lastInboundAt: number }
  /** Only templates: the customer never wrote, wrote over 24 hours ago, or the gateway said 131047. */
  | { open: false; lastInboundAt?: number; closedAt?: number };

export interface ConversationWindowChange {
  /** Gateway digits. */
  contactNumber: string;
  state: ConversationWindowState;
}

export interface ConversationWindowsOptions {
  dataDir: string;
  logger?: Logger;
  now?: () => number;
  /** The window's length; 24 hours unless a test says otherwise. */
  windowMs?: number;
}

interface ContactRecord {
  lastInboundAt?: number;
  closedAt?: number;
}

const recordSchema = z.object({ lastInboundAt: unixMs.optional(), closedAt: unixMs.optional() });

export class ConversationWindows {
  private readonly contacts = new Map<string, ContactRecord>();
  private readonly listeners = new Set<(change: ConversationWindowChange) => void>();
  /** Contacts last reported open: the expiry timer tells them apart when their windows close. */
  private readonly reportedOpen = new Set<string>();
  private readonly writer: CoalescingWriter;
  private readonly path: string;
  private readonly log: Logger;
  private readonly now: () => number;
  private readonly windowMs: number;
  private expiryTimer: NodeJS.Timeout | undefined;
  private closed = false;

  private constructor(options: ConversationWindowsOptions) {
    this.path = join(options.dataDir, WINDOWS_FILE);
    this.log = options.logger ?? createLogger('conversation-windows');
    this.now = options.now ?? Date.now;
    this.windowMs = options.windowMs ?? CONVERSATION_WINDOW_MS;
    this.writer = new CoalescingWriter(
      () => writeJsonFileAtomic(this.path, { version: FILE_VERSION, contacts: Object.fromEntries(this.contacts) }),
      (e) => this.log.error('could not save the conversation windows', { error: e }),
    );
  }

  /** Loads the saved windows; an unreadable file is set aside and the windows start empty. Never throws. */
  static async open(options: ConversationWindowsOptions): Promise<ConversationWindows> {
    const windows = new ConversationWindows(options);
    await windows.load();
    const now = windows.now();
    for (const number of windows.contacts.keys()) if (windows.stateOf(number, now).open) windows.reportedOpen.add(number);
    windows.scheduleExpiry();
    return windows;
  }

  /** The customer wrote at `at` (unix ms, the message's own time): the window is open for 24 hours from it. */
  recordInbound(contactNumber: string, at: number): void {
    this.update(contactNumber, at, 'inbound', (record, when) => {
      if (record.lastInboundAt !== undefined && record.lastInboundAt >= when) return false; // duplicate or older
      record.lastInboundAt = when;
      return true;
    });
  }

  /** The gateway answered 131047 at `at`: closed until the customer writes again. */
  recordClosed(contactNumber: string, at: number): void {
    this.update(contactNumber, at, 'closed', (record, when) => {
      if (record.closedAt !== undefined && record.closedAt >= when) return false;
      record.closedAt = when;
      return true;
    });
  }

  stateOf(contactNumber: string, now: number = this.now()): ConversationWindowState {
    const record = this.contacts.get(keyOf(contactNumber));
    return stateFrom(record, now, this.windowMs);
  }

  /** Every remembered contact's state, for a snapshot. */
  states(now: number = this.now()): Record<string, ConversationWindowState> {
    return Object.fromEntries([...this.contacts.entries()].map(([number, record]) => [number, stateFrom(record, now, this.windowMs)]));
  }

  /** Called when a window opens, closes (also when 24 hours run out) or moves its closing time. */
  onChanged(listener: (change: ConversationWindowChange) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Resolves when every change so far is on disk. */
  flush(): Promise<void> {
    return this.writer.flush();
  }

  /** Stops the expiry timer; saved state stays. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.expiryTimer) clearTimeout(this.expiryTimer);
    this.expiryTimer = undefined;
    await this.flush();
  }

  private update(contactNumber: string, at: number, what: string, apply: (record: ContactRecord, when: number) => boolean): void {
    const key = keyOf(contactNumber);
    if (!CONTACT_KEY.test(key) || !Number.isFinite(at) || at < 0) {
      this.log.warn('conversation window update ignored', { what, number: contactNumber, reason: 'not a gateway number or not a time' });
      return;
    }
    const now = this.now();
    // A sender's clock ahead of ours must not stretch the window past 24 hours from now.
    const when = Math.min(at, now);
    const record = this.contacts.get(key) ?? {};
    const before = stateFrom(this.contacts.get(key), now, this.windowMs);
    if (!apply(record, when)) return;
    this.contacts.set(key, record);
    this.prune();
    this.writer.request();
    const after = stateFrom(record, now, this.windowMs);
    if (after.open) this.reportedOpen.add(key);
    else this.reportedOpen.delete(key);
    this.scheduleExpiry();
    if (before.open !== after.open || (before.open && after.open && before.closesAt !== after.closesAt)) this.emit(key, after);
  }

  private emit(contactNumber: string, state: ConversationWindowState): void {
    for (const listener of this.listeners) {
      try {
        listener({ contactNumber, state });
      } catch (e) {
        this.log.error('conversation window listener failed', { error: e });
      }
    }
  }

  /** One timer for the next window to run out; when it fires, every window that ran out is reported. */
  private scheduleExpiry(): void {
    if (this.expiryTimer) clearTimeout(this.expiryTimer);
    this.expiryTimer = undefined;
    if (this.closed) return;
    const now = this.now();
    let next = Infinity;
    for (const key of this.reportedOpen) {
      const state = stateFrom(this.contacts.get(key), now, this.windowMs);
      if (state.open) next = Math.min(next, state.closesAt);
    }
    if (next === Infinity) return;
    this.expiryTimer = setTimeout(() => this.expire(), Math.max(0, next - now));
    this.expiryTimer.unref?.();
  }

  private expire(): void {
    this.expiryTimer = undefined;
    const now = this.now();
    for (const key of [...this.reportedOpen]) {
      const state = stateFrom(this.contacts.get(key), now, this.windowMs);
      if (state.open) continue;
      this.reportedOpen.delete(key);
      this.emit(key, state);
    }
    this.scheduleExpiry();
  }

  private prune(): void {
    if (this.contacts.size <= MAX_CONTACTS) return;
    const byActivity = [...this.contacts.entries()].sort((a, b) => latest(a[1]) - latest(b[1]));
    for (const [key] of byActivity.slice(0, this.contacts.size - MAX_CONTACTS)) {
      this.contacts.delete(key);
      this.reportedOpen.delete(key);
    }
  }

  private async load(): Promise<void> {
    try {
      const loaded = await loadContactFile<ContactRecord>({
        path: this.path,
        version: FILE_VERSION,
        what: 'conversation windows',
        now: this.now(),
        log: this.log,
        parse: (raw) => {
          const parsed = recordSchema.safeParse(raw);
          if (!parsed.success) return undefined;
          const record: ContactRecord = {};
          if (parsed.data.lastInboundAt !== undefined) record.lastInboundAt = parsed.data.lastInboundAt;
          if (parsed.data.closedAt !== undefined) record.closedAt = parsed.data.closedAt;
          return { record, bad: 0 };
        },
      });
      for (const [number, record] of loaded) this.contacts.set(number, record);
      this.prune();
    } catch (e) {
      // An unreadable data directory must not stop the app: the windows live in memory only.
      this.contacts.clear();
      this.log.error('could not load the conversation windows; starting empty', { error: e });
    }
  }
}

function stateFrom(record: ContactRecord | undefined, now: number, windowMs: number): ConversationWindowState {
  const last = record?.lastInboundAt;
  const closedAt = record?.closedAt;
  const closedByGateway = closedAt !== undefined && (last === undefined || closedAt >= last);
  if (last !== undefined && !closedByGateway && now < last + windowMs) return { open: true, closesAt: last + windowMs, lastInboundAt: last };
  return { open: false, ...(last === undefined ? {} : { lastInboundAt: last }), ...(closedAt === undefined ? {} : { closedAt }) };
}

const latest = (record: ContactRecord) => Math.max(record.lastInboundAt ?? 0, record.closedAt ?? 0);

/** Events carry gateway digits; a leading "+" or spaces from elsewhere are tolerated. */
const keyOf = (contactNumber: string) => contactNumber.replace(/[\s+]/g, '');

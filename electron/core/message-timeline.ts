// Every contact's messages, sent and received, with their delivery status: the timeline beside the
// call. Kept in `<dataDir>/message-timeline.json` so a restart shows what was said, bounded per
// contact (CONVERSATION_MESSAGE_LIMIT) and in contacts (the quietest are forgotten first).
//
// protocol.md "Events": statuses come in any order and duplicated, and the relay may deliver one
// before the send's own answer has told us the message's id. So a status for an unknown id waits
// (bounded, for PENDING_TTL_MS) and is applied when the send is recorded; a status only moves
// forward, except to failed (shared/conversation.ts isLaterStatus).
import { join } from 'node:path';
import { z } from 'zod';
import { CONVERSATION_MESSAGE_LIMIT, isLaterStatus, NOT_DELIVERED_FAILURE, type DeliveryStatus, type MessageFailure, type TimelineMessage } from '../../shared/conversation';
import { ruleTextSchema } from '../../shared/i18n/text';
import { createLogger, type Logger } from '../../shared/log';
import { unixMs } from '../../shared/validation';
import { CoalescingWriter, CONTACT_KEY, loadContactFile, writeJsonFileAtomic } from './json-file';

const TIMELINE_FILE = 'message-timeline.json';
const FILE_VERSION = 1;
const MAX_CONTACTS = 500;
/** How long a status for a message this app has not (yet) recorded is kept. */
export const PENDING_TTL_MS = 10 * 60_000;
/** Statuses waiting at most: messages go to every agent, so colleagues' statuses pass through here too. */
const MAX_PENDING = 2_000;

export interface MessageTimelineOptions {
  dataDir: string;
  logger?: Logger;
  now?: () => number;
  maxContacts?: number;
  maxPerContact?: number;
}

export interface OutboundRecord {
  messageId: string;
  contact: string;
  kind: string;
  interactiveType?: string;
  summary: string;
  at: number;
}

export interface InboundRecord extends OutboundRecord {
  name?: string;
}

export interface StatusRecord {
  messageId: string;
  status: Exclude<DeliveryStatus, 'accepted'>;
  at: number;
  failure?: MessageFailure;
}

interface ContactRecord {
  name?: string;
  /** Oldest first. */
  messages: TimelineMessage[];
}

const statusSchema = z.enum(['accepted', 'sent', 'delivered', 'read', 'failed']);
const messageSchema = z.object({
  id: z.string().min(1).max(512),
  direction: z.enum(['outbound', 'inbound']),
  kind: z.string().max(64),
  interactiveType: z.string().max(64).optional(),
  summary: z.string().max(8192),
  at: unixMs,
  status: statusSchema.optional(),
  statusAt: unixMs.optional(),
  failure: z.object({ code: z.number().optional(), message: z.string().max(2048), text: ruleTextSchema.optional().catch(undefined) }).optional(),
});
const contactSchema = z.object({ name: z.string().max(256).optional(), messages: z.array(z.unknown()) });

export class MessageTimeline {
  private readonly contacts = new Map<string, ContactRecord>();
  /** messageId → contact, for statuses. */
  private readonly index = new Map<string, string>();
  /** Statuses for ids not recorded yet, in arrival order. */
  private readonly pending = new Map<string, { statuses: StatusRecord[]; since: number }>();
  private readonly listeners = new Set<(contact: string) => void>();
  private readonly writer: CoalescingWriter;
  private readonly path: string;
  private readonly log: Logger;
  private readonly now: () => number;
  private readonly maxContacts: number;
  private readonly maxPerContact: number;

  private constructor(options: MessageTimelineOptions) {
    this.path = join(options.dataDir, TIMELINE_FILE);
    this.log = options.logger ?? createLogger('message-timeline');
    this.now = options.now ?? Date.now;
    this.maxContacts = options.maxContacts ?? MAX_CONTACTS;
    this.maxPerContact = options.maxPerContact ?? CONVERSATION_MESSAGE_LIMIT;
    this.writer = new CoalescingWriter(
      () => writeJsonFileAtomic(this.path, { version: FILE_VERSION, contacts: Object.fromEntries(this.contacts) }),
      (e) => this.log.error('could not save the message timeline', { error: e }),
    );
  }

  /** Loads the saved timeline; an unreadable file is set aside and the timeline starts empty. Never throws. */
  static async open(options: MessageTimelineOptions): Promise<MessageTimeline> {
    const timeline = new MessageTimeline(options);
    await timeline.load();
    return timeline;
  }

  /** A message the gateway accepted (it has an id): `accepted` until its first status, which may be waiting already. */
  recordOutbound(record: OutboundRecord): void {
    const message: TimelineMessage = { id: record.messageId, direction: 'outbound', kind: record.kind, summary: record.summary, at: record.at, status: 'accepted' };
    if (record.interactiveType !== undefined) message.interactiveType = record.interactiveType;
    if (!this.insert(record.contact, message)) return;
    const waiting = this.pending.get(record.messageId);
    if (waiting) {
      this.pending.delete(record.messageId);
      for (const status of waiting.statuses) this.applyTo(message, status);
    }
    this.changed(keyOf(record.contact));
  }

  /** A customer's message; duplicates (the relay's replays) change nothing. */
  recordInbound(record: InboundRecord): void {
    const message: TimelineMessage = { id: record.messageId, direction: 'inbound', kind: record.kind, summary: record.summary, at: record.at };
    if (record.interactiveType !== undefined) message.interactiveType = record.interactiveType;
    const key = keyOf(record.contact);
    const nameChanged = record.name !== undefined && record.name !== '' && this.contacts.get(key)?.name !== record.name;
    const inserted = this.insert(record.contact, message);
    if (nameChanged) this.contacts.get(key)!.name = record.name;
    if (inserted || nameChanged) this.changed(key);
  }

  /** Remembers a customer's name learnt elsewhere (a call), for contacts with a timeline. */
  rememberName(contact: string, name: string): void {
    const record = this.contacts.get(keyOf(contact));
    if (!record || name.trim() === '' || record.name === name) return;
    record.name = name;
    this.changed(keyOf(contact));
  }

  /** A delivery status: applied when it moves the message forward, kept for later when the id is not known yet. */
  applyStatus(status: StatusRecord): void {
    const contact = this.index.get(status.messageId);
    if (contact === undefined) {
      this.keepPending(status);
      return;
    }
    const message = this.contacts.get(contact)?.messages.find((m) => m.id === status.messageId);
    if (!message || !this.applyTo(message, status)) return;
    this.changed(contact);
  }

  /** Oldest first. */
  messagesOf(contact: string): TimelineMessage[] {
    return (this.contacts.get(keyOf(contact))?.messages ?? []).map((m) => ({ ...m, ...(m.failure ? { failure: { ...m.failure } } : {}) }));
  }

  nameOf(contact: string): string | undefined {
    return this.contacts.get(keyOf(contact))?.name;
  }

  /** Contacts with messages, the most recent activity first. */
  contactsByActivity(): { contact: string; lastActivityAt: number }[] {
    return [...this.contacts.entries()].map(([contact, record]) => ({ contact, lastActivityAt: lastAt(record) })).sort((a, b) => b.lastActivityAt - a.lastActivityAt);
  }

  /** Called with the contact whose timeline changed. */
  onChanged(listener: (contact: string) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Resolves when every change so far is on disk. */
  flush(): Promise<void> {
    return this.writer.flush();
  }

  async close(): Promise<void> {
    this.listeners.clear();
    await this.flush();
  }

  /** Inserts in time order; false for an id already recorded or a contact that is not gateway digits. */
  private insert(contact: string, message: TimelineMessage): boolean {
    const key = keyOf(contact);
    if (!CONTACT_KEY.test(key)) {
      this.log.warn('timeline entry ignored', { number: contact, reason: 'not a gateway number' });
      return false;
    }
    if (this.index.has(message.id)) return false;
    let record = this.contacts.get(key);
    if (!record) {
      record = { messages: [] };
      this.contacts.set(key, record);
    }
    const list = record.messages;
    let i = list.length;
    while (i > 0 && list[i - 1]!.at > message.at) i--;
    list.splice(i, 0, message);
    this.index.set(message.id, key);
    while (list.length > this.maxPerContact) this.index.delete(list.shift()!.id);
    this.prune();
    return true;
  }

  private applyTo(message: TimelineMessage, status: StatusRecord): boolean {
    if (message.direction !== 'outbound' || !isLaterStatus(message.status, status.status)) return false;
    message.status = status.status;
    message.statusAt = status.at;
    if (status.status === 'failed') message.failure = status.failure ?? NOT_DELIVERED_FAILURE;
    return true;
  }

  private keepPending(status: StatusRecord): void {
    const now = this.now();
    for (const [id, entry] of this.pending) {
      // Map order is insertion order: the oldest come first.
      if (now - entry.since <= PENDING_TTL_MS && this.pending.size < MAX_PENDING) break;
      this.pending.delete(id);
    }
    const entry = this.pending.get(status.messageId);
    if (entry) entry.statuses.push(status);
    else this.pending.set(status.messageId, { statuses: [status], since: now });
  }

  private changed(contact: string): void {
    this.writer.request();
    for (const listener of this.listeners) {
      try {
        listener(contact);
      } catch (e) {
        this.log.error('timeline listener failed', { error: e });
      }
    }
  }

  private prune(): void {
    if (this.contacts.size <= this.maxContacts) return;
    const byActivity = [...this.contacts.entries()].sort((a, b) => lastAt(a[1]) - lastAt(b[1]));
    for (const [contact, record] of byActivity.slice(0, this.contacts.size - this.maxContacts)) {
      for (const m of record.messages) this.index.delete(m.id);
      this.contacts.delete(contact);
    }
  }

  private async load(): Promise<void> {
    try {
      const loaded = await loadContactFile<ContactRecord>({
        path: this.path,
        version: FILE_VERSION,
        what: 'message timeline',
        now: this.now(),
        log: this.log,
        parse: (raw, contact) => {
          const parsed = contactSchema.safeParse(raw);
          if (!parsed.success) return undefined;
          let bad = 0;
          const record: ContactRecord = { messages: [] };
          if (parsed.data.name !== undefined) record.name = parsed.data.name;
          for (const item of parsed.data.messages) {
            const message = messageSchema.safeParse(item);
            if (!message.success || this.index.has(message.data.id)) {
              bad++;
              continue;
            }
            record.messages.push(message.data as TimelineMessage);
            this.index.set(message.data.id, contact);
          }
          record.messages.sort((a, b) => a.at - b.at);
          while (record.messages.length > this.maxPerContact) this.index.delete(record.messages.shift()!.id);
          return { record, bad };
        },
      });
      for (const [contact, record] of loaded) this.contacts.set(contact, record);
      this.prune();
    } catch (e) {
      // An unreadable data directory must not stop the app: the timeline lives in memory only.
      this.contacts.clear();
      this.index.clear();
      this.log.error('could not load the message timeline; starting empty', { error: e });
    }
  }
}

const lastAt = (record: ContactRecord): number => record.messages[record.messages.length - 1]?.at ?? 0;

/** Events carry gateway digits; a leading "+" or spaces from elsewhere are tolerated. */
const keyOf = (contact: string): string => contact.replace(/[\s+]/g, '');

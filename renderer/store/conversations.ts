// Pure rules for the store's copy of the conversations (shared/conversation.ts) and how they read
// on screen: the window's countdown, the status words, the contact's name, and whether the last
// call to the contact failed for want of permission. Tested without a DOM. The words are made when
// they are asked for (renderer/i18n), so a render after a language change gives the new ones.
import type { CallState } from '../../shared/call-state';
import type { Conversation, ConversationWindowState, TimelineMessage } from '../../shared/conversation';
import type { HistoryEntry } from '../../shared/history';
import { formatPhoneNumber } from '../../shared/phone';
import { directionOf } from '../../shared/i18n/languages';
import type { SandboxCustomer } from '../../shared/sandbox';
import { formatClock, isolateLtr } from '../i18n/format';
import { currentLanguage, i18n } from '../i18n/i18n';

const t = i18n.getFixedT(null, 'messages');

/** Pushes and snapshots can cross: the higher revision is the newer truth; on a tie, the one that arrived last. */
export function mergeConversation(existing: Conversation | undefined, incoming: Conversation): Conversation {
  if (existing === undefined) return incoming;
  return incoming.revision >= existing.revision ? incoming : existing;
}

export function mergeConversations(current: Readonly<Record<string, Conversation>>, incoming: readonly Conversation[]): Record<string, Conversation> {
  let next: Record<string, Conversation> | undefined;
  for (const conversation of incoming) {
    const merged = mergeConversation((next ?? current)[conversation.contact], conversation);
    if (merged === (next ?? current)[conversation.contact]) continue;
    next ??= { ...current };
    next[conversation.contact] = merged;
  }
  return next ?? (current as Record<string, Conversation>);
}

/** Open by the clock too: the countdown reaches zero before the main process's push arrives. */
export function isWindowOpen(window: ConversationWindowState | undefined, now: number): window is Extract<ConversationWindowState, { open: true }> {
  return window !== undefined && window.open && now < window.closesAt;
}

/**
 * "Window open · 23:41:10 left" or "Window closed: send a template". One string, so that it stays
 * one text node; in a right-to-left language the clock is isolated to keep its order.
 */
export function windowText(window: ConversationWindowState | undefined, now: number): string {
  if (!isWindowOpen(window, now)) return t('window.closed');
  const clock = formatClock(Math.ceil((window.closesAt - now) / 1000));
  return t('window.open', { left: directionOf(currentLanguage()) === 'rtl' ? isolateLtr(clock) : clock });
}

/** Why the window is closed, in one sentence, for the blocked composer. */
export function windowClosedReason(window: ConversationWindowState | undefined): string {
  if (window && !window.open && window.closedAt !== undefined && (window.lastInboundAt === undefined || window.closedAt >= window.lastInboundAt)) {
    return t('window.closedByGateway');
  }
  if (window?.lastInboundAt !== undefined) return t('window.closedLongAgo');
  return t('window.closedNeverWrote');
}

/** A message's status, as a code: the timeline words it (`timeline.status.*`) when it renders. */
export type StatusWord = 'accepted' | 'sent' | 'delivered' | 'read' | 'failed' | 'received';

export function statusWord(message: Pick<TimelineMessage, 'direction' | 'status'>): StatusWord {
  if (message.direction === 'inbound') return 'received';
  return message.status ?? 'accepted';
}

/** The ticks beside the word (decoration only: the word is what assistive technology reads). */
export const STATUS_MARK: Readonly<Record<StatusWord, string>> = {
  accepted: '◷',
  sent: '✓',
  delivered: '✓✓',
  read: '✓✓',
  failed: '!',
  received: '',
};

/** The customer's name from whatever knows it, else the formatted number. */
export function contactTitle(
  contact: string,
  sources: { conversation?: Conversation; history?: readonly HistoryEntry[]; calls?: Readonly<Record<string, CallState>>; customers?: readonly SandboxCustomer[] },
): string {
  const named = (name: string | undefined) => (name !== undefined && name.trim() !== '' ? name : undefined);
  return (
    named(sources.conversation?.name) ??
    named(Object.values(sources.calls ?? {}).find((c) => c.peer.number === contact && named(c.peer.name))?.peer.name) ??
    named(sources.history?.find((h) => h.number === contact && named(h.name))?.name) ??
    named(sources.customers?.find((c) => c.number === contact)?.name) ??
    formatPhoneNumber(contact)
  );
}

/** gateway 138006: the last call with this contact failed because the customer has not allowed business calls. */
export function lastCallNeedsPermission(contact: string, calls: Readonly<Record<string, CallState>>, history: readonly HistoryEntry[]): boolean {
  let latest: { at: number; code: string | undefined } | undefined;
  for (const call of Object.values(calls)) {
    if (call.peer.number !== contact) continue;
    const at = call.phase === 'ended' ? call.endedAt : call.createdAt;
    const code = call.phase === 'ended' && call.end.kind === 'failed' ? call.end.code : undefined;
    if (!latest || at > latest.at) latest = { at, code };
  }
  for (const entry of history) {
    if (entry.number !== contact) continue;
    if (!latest || entry.endedAt > latest.at) latest = { at: entry.endedAt, code: entry.outcome === 'failed' ? entry.failureCode : undefined };
  }
  return latest?.code === '138006' || latest?.code === 'no_call_permission';
}

/** Conversations for the chooser: the most recent first. */
export function recentConversations(conversations: Readonly<Record<string, Conversation>>, limit = 25): Conversation[] {
  return Object.values(conversations)
    .sort((a, b) => b.lastActivityAt - a.lastActivityAt || a.contact.localeCompare(b.contact))
    .slice(0, limit);
}

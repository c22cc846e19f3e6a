import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Conversation } from '../../../shared/conversation';
import type { HistoryEntry } from '../../../shared/history';
import { parseConversation, parsePush, parseSnapshot } from '../../../renderer/bridge/payload-schemas';
import { setUiLanguage } from '../../../renderer/i18n/i18n';
import {
  contactTitle,
  isWindowOpen,
  lastCallNeedsPermission,
  mergeConversation,
  mergeConversations,
  recentConversations,
  statusWord,
  windowClosedReason,
  windowText,
} from '../../../renderer/store/conversations';
import { appStore, composerFor, resetStore } from '../../../renderer/store/store';
import { T0, ended, snapshot } from './fixtures';

const ADA = '447700900123';
const HOUR = 3_600_000;

const conversation = (extra: Partial<Conversation> = {}): Conversation => ({
  contact: ADA,
  window: { open: true, closesAt: T0 + 24 * HOUR, lastInboundAt: T0 },
  messages: [],
  lastActivityAt: T0,
  revision: 10,
  ...extra,
});

describe('the window countdown', () => {
  it('counts down to the second, and reads closed once it runs out, before any push says so', () => {
    const window = { open: true as const, closesAt: T0 + 24 * HOUR, lastInboundAt: T0 };
    expect(windowText(window, T0 + 19 * 60_000 + 50_000)).toBe('Window open · 23:40:10 left');
    expect(windowText(window, T0 + 23 * HOUR + 59 * 60_000 + 59_500)).toBe('Window open · 00:01 left');
    expect(isWindowOpen(window, T0 + 24 * HOUR - 1)).toBe(true);
    expect(isWindowOpen(window, T0 + 24 * HOUR)).toBe(false);
    expect(windowText(window, T0 + 24 * HOUR)).toBe('Window closed: send a template');
    expect(windowText(undefined, T0)).toBe('Window closed: send a template');
    expect(windowText({ open: false }, T0)).toBe('Window closed: send a template');
  });

  it('says why free-form is blocked', () => {
    expect(windowClosedReason(undefined)).toMatch(/has not written to you/);
    expect(windowClosedReason({ open: false, lastInboundAt: T0 })).toMatch(/more than 24 hours ago/);
    expect(windowClosedReason({ open: false, lastInboundAt: T0, closedAt: T0 + 1 })).toMatch(/gateway answered/);
  });

  describe('in another language', () => {
    afterEach(async () => {
      await setUiLanguage('en', undefined);
    });

    it('reads in the UI\u2019s language when asked, the clock kept left to right inside Arabic', async () => {
      const window = { open: true as const, closesAt: T0 + 24 * HOUR, lastInboundAt: T0 };
      await setUiLanguage('es', undefined);
      expect(windowText(window, T0 + 19 * 60_000 + 50_000)).toBe('Ventana abierta · quedan 23:40:10');
      expect(windowText(window, T0 + 24 * HOUR)).toBe('Ventana cerrada: envía una plantilla');
      expect(windowClosedReason({ open: false, lastInboundAt: T0 })).toMatch(/hace más de 24 horas/);
      await setUiLanguage('ar', undefined);
      // Latin digits (intlLocale), in a left-to-right isolate: the clock's order survives the Arabic around it.
      expect(windowText(window, T0 + 19 * 60_000 + 50_000)).toBe('النافذة مفتوحة · متبقٍ \u206623:40:10\u2069');
      await setUiLanguage('en', undefined);
      expect(windowText(window, T0 + 19 * 60_000 + 50_000)).toBe('Window open · 23:40:10 left');
    });
  });
});

describe('conversations in the store', () => {
  beforeEach(() => resetStore());

  it('keeps the higher revision when a snapshot and a push cross', () => {
    const older = conversation({ revision: 5, messages: [] });
    const newer = conversation({ revision: 6, messages: [{ id: 'wamid.1', direction: 'outbound', kind: 'text', summary: 'Hi', at: T0, status: 'read' }] });
    expect(mergeConversation(newer, older)).toBe(newer);
    expect(mergeConversation(older, newer)).toBe(newer);
    const same = conversation({ revision: 6 });
    expect(mergeConversation(newer, same)).toBe(same);
    const map = mergeConversations({ [ADA]: newer }, [older]);
    expect(map[ADA]).toBe(newer);

    appStore.getState().applyConversation(newer);
    appStore.getState().applySnapshot(snapshot([], { conversations: [older, conversation({ contact: '14155550123', revision: 1 })] }));
    expect(appStore.getState().conversations[ADA]).toBe(newer);
    expect(Object.keys(appStore.getState().conversations).sort()).toEqual(['14155550123', ADA]);
  });

  it('a new composer opens on Text inside the window and on Template outside it; typed text survives switching contacts', () => {
    const s = () => appStore.getState();
    s().applyConversation(conversation());
    s().applyConversation(conversation({ contact: '14155550123', window: { open: false } }));
    expect(composerFor(s(), ADA, T0).tab).toBe('text');
    expect(composerFor(s(), '14155550123', T0).tab).toBe('template');
    expect(composerFor(s(), '14155550123', T0).template.to).toBe('+1 415 555 0123');
    s().updateComposer(ADA, (d) => ({ ...d, text: 'Half a thought' }));
    s().selectContact('14155550123');
    s().selectContact(ADA);
    expect(s().composers[ADA]!.text).toBe('Half a thought');
  });

  it('lists the most recent conversations first', () => {
    const list = recentConversations({ a: conversation({ contact: 'a', lastActivityAt: 1 }), b: conversation({ contact: 'b', lastActivityAt: 3 }), c: conversation({ contact: 'c', lastActivityAt: 2 }) }, 2);
    expect(list.map((c) => c.contact)).toEqual(['b', 'c']);
  });
});

describe('how a conversation reads', () => {
  it('words each delivery status; inbound messages were received', () => {
    expect(statusWord({ direction: 'outbound' })).toBe('accepted');
    for (const s of ['sent', 'delivered', 'read', 'failed'] as const) expect(statusWord({ direction: 'outbound', status: s })).toBe(s);
    expect(statusWord({ direction: 'inbound' })).toBe('received');
  });

  it('names the contact from the conversation, a call, the history or the sandbox, else the number', () => {
    const history: HistoryEntry[] = [{ localId: 'x', direction: 'incoming', number: ADA, name: 'From history', outcome: 'completed', startedAt: T0, endedAt: T0, durationSec: 1 }];
    expect(contactTitle(ADA, { conversation: conversation({ name: 'Ada Lovelace' }), history })).toBe('Ada Lovelace');
    expect(contactTitle(ADA, { conversation: conversation(), history })).toBe('From history');
    expect(contactTitle(ADA, { customers: [{ number: ADA, name: 'Sandbox Ada', behaviour: 'answers' }] })).toBe('Sandbox Ada');
    expect(contactTitle(ADA, {})).toBe('+44 7700 900123');
  });

  it('offers the permission request when the latest call with the contact failed with 138006', () => {
    const failed: HistoryEntry = { localId: 'o1', direction: 'outgoing', number: ADA, outcome: 'failed', failureCode: '138006', failureMessage: 'x', startedAt: T0, endedAt: T0 + 1000, durationSec: 0 };
    expect(lastCallNeedsPermission(ADA, {}, [failed])).toBe(true);
    expect(lastCallNeedsPermission('14155550123', {}, [failed])).toBe(false);
    // A later call that went through means permission was given meanwhile.
    const later = ended('wacid.9', T0 + 5000, T0 + 9000);
    expect(lastCallNeedsPermission(ADA, { [later.localId]: later }, [failed])).toBe(false);
  });
});

describe('the renderer edge', () => {
  it('accepts a conversation push and refuses a malformed one', () => {
    expect(parsePush('conversationChanged', conversation()).ok).toBe(true);
    expect(parseConversation({ ...conversation(), window: { open: true } }).ok).toBe(false);
    const bad = parsePush('conversationChanged', { ...conversation(), messages: [{ id: 'x', direction: 'up' }] });
    expect(bad.ok).toBe(false);
  });

  it('reads snapshots with and without conversations and sandbox templates', () => {
    expect(parseSnapshot(snapshot()).ok).toBe(true);
    const full = parseSnapshot(snapshot([], { conversations: [conversation()], sandboxTemplates: [{ name: 't', language: 'en', category: 'UTILITY', body: 'b', apiPayload: '{}' }] }));
    expect(full.ok && full.value.conversations).toHaveLength(1);
  });
});

// The message timeline: statuses only move forward (except to failed), statuses that arrive before
// the send's answer are kept and applied, duplicates change nothing, bounds hold, and the timeline
// survives a restart (and an unreadable file).
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MessageTimeline, PENDING_TTL_MS, type StatusRecord } from '../../../electron/core/message-timeline';
import type { DeliveryStatus } from '../../../shared/conversation';
import { text } from '../../../shared/i18n/text';
import { configureLogging } from '../../../shared/log';
import { FakeClock } from '../../support/fake-clock';

configureLogging({ sink: () => undefined });

const ADA = '12025550101';
const GRACE = '442079460101';
const T0 = Date.UTC(2026, 4, 4, 9, 0, 0);

let dataDir: string;
const opened: MessageTimeline[] = [];

async function open(options: { now?: () => number; maxContacts?: number; maxPerContact?: number } = {}): Promise<MessageTimeline> {
  const timeline = await MessageTimeline.open({ dataDir, now: () => T0, ...options });
  opened.push(timeline);
  return timeline;
}

beforeEach(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'timeline-'));
});
afterEach(async () => {
  await Promise.all(opened.splice(0).map((t) => t.close()));
  await rm(dataDir, { recursive: true, force: true });
});

const outbound = (messageId: string, at = T0, contact = ADA) => ({ messageId, contact, kind: 'text', summary: `message ${messageId}`, at });
const status = (messageId: string, s: StatusRecord['status'], at = T0): StatusRecord => ({ messageId, status: s, at });
const statusOf = (t: MessageTimeline, id: string, contact = ADA) => t.messagesOf(contact).find((m) => m.id === id)?.status;

describe('delivery statuses', () => {
  it('a sent message is accepted until its first status, then moves forward', async () => {
    const t = await open();
    t.recordOutbound(outbound('wamid.1'));
    expect(t.messagesOf(ADA)).toEqual([{ id: 'wamid.1', direction: 'outbound', kind: 'text', summary: 'message wamid.1', at: T0, status: 'accepted' }]);
    t.applyStatus(status('wamid.1', 'sent', T0 + 1));
    t.applyStatus(status('wamid.1', 'delivered', T0 + 2));
    expect(t.messagesOf(ADA)[0]).toMatchObject({ status: 'delivered', statusAt: T0 + 2 });
    t.applyStatus(status('wamid.1', 'read', T0 + 3));
    expect(statusOf(t, 'wamid.1')).toBe('read');
  });

  it('never moves backwards: a late delivered or sent after read changes nothing', async () => {
    const t = await open();
    const changes: string[] = [];
    t.onChanged((c) => changes.push(c));
    t.recordOutbound(outbound('wamid.1'));
    t.applyStatus(status('wamid.1', 'read', T0 + 5));
    t.applyStatus(status('wamid.1', 'delivered', T0 + 6));
    t.applyStatus(status('wamid.1', 'sent', T0 + 7));
    t.applyStatus(status('wamid.1', 'read', T0 + 8)); // a duplicate
    expect(t.messagesOf(ADA)[0]).toMatchObject({ status: 'read', statusAt: T0 + 5 });
    expect(changes).toEqual([ADA, ADA]);
  });

  it('failed wins from anywhere, keeps its reason, and nothing moves it afterwards', async () => {
    const t = await open();
    t.recordOutbound(outbound('wamid.1'));
    t.applyStatus(status('wamid.1', 'delivered'));
    t.applyStatus({ messageId: 'wamid.1', status: 'failed', at: T0 + 1, failure: { code: 131026, message: 'The message could not be delivered to this customer' } });
    t.applyStatus(status('wamid.1', 'read', T0 + 2));
    expect(t.messagesOf(ADA)[0]).toMatchObject({ status: 'failed', failure: { code: 131026, message: 'The message could not be delivered to this customer' } });
    t.recordOutbound(outbound('wamid.2'));
    t.applyStatus(status('wamid.2', 'failed'));
    expect(t.messagesOf(ADA)[1]!.failure).toEqual({ message: 'The message could not be delivered', text: text('messaging.notDelivered') });
  });

  it('keeps statuses that arrive before the send is recorded, and applies them when it is', async () => {
    const t = await open();
    const changes: string[] = [];
    t.onChanged((c) => changes.push(c));
    t.applyStatus(status('wamid.early', 'delivered', T0 + 2));
    t.applyStatus(status('wamid.early', 'sent', T0 + 1));
    expect(changes).toEqual([]);
    expect(t.messagesOf(ADA)).toEqual([]);
    t.recordOutbound(outbound('wamid.early'));
    expect(t.messagesOf(ADA)[0]).toMatchObject({ status: 'delivered', statusAt: T0 + 2 });
    expect(changes).toEqual([ADA]);
    // Applied once: a later read still moves it on.
    t.applyStatus(status('wamid.early', 'read', T0 + 3));
    expect(statusOf(t, 'wamid.early')).toBe('read');
  });

  it('forgets waiting statuses after PENDING_TTL_MS (they belong to messages this app never sent)', async () => {
    const clock = new FakeClock(T0);
    const t = await open({ now: clock.now });
    t.applyStatus(status('wamid.colleague', 'read'));
    clock.advance(PENDING_TTL_MS + 1);
    t.applyStatus(status('wamid.other', 'sent'));
    t.recordOutbound(outbound('wamid.colleague', clock.now()));
    expect(statusOf(t, 'wamid.colleague')).toBe('accepted');
    t.recordOutbound(outbound('wamid.other', clock.now()));
    expect(statusOf(t, 'wamid.other')).toBe('sent');
  });

  it('ends at the highest status whatever order and duplication they arrive in (property)', async () => {
    const all: Exclude<DeliveryStatus, 'accepted'>[] = ['sent', 'delivered', 'read', 'failed'];
    const rank = { accepted: 0, sent: 1, delivered: 2, read: 3, failed: 4 } as const;
    await fc.assert(
      fc.asyncProperty(fc.array(fc.constantFrom(...all), { maxLength: 8 }), fc.integer({ min: 0, max: 8 }), async (statuses, recordAt) => {
        const t = await MessageTimeline.open({ dataDir, now: () => T0 });
        const id = `wamid.p${Math.random()}`;
        statuses.forEach((s, i) => {
          if (i === recordAt) t.recordOutbound(outbound(id));
          t.applyStatus(status(id, s, T0 + i));
        });
        if (recordAt >= statuses.length) t.recordOutbound(outbound(id));
        const expected = statuses.reduce<DeliveryStatus>((best, s) => (rank[s] > rank[best] ? s : best), 'accepted');
        expect(statusOf(t, id)).toBe(expected);
        await t.close();
      }),
      { numRuns: 150 },
    );
  });
});

describe('the timeline', () => {
  it('keeps inbound and outbound messages in time order; a replayed inbound message is not added twice', async () => {
    const t = await open();
    t.recordInbound({ messageId: 'wamid.in1', contact: ADA, name: 'Ada Lovelace', kind: 'text', summary: 'Hello', at: T0 });
    t.recordOutbound(outbound('wamid.out1', T0 + 2000));
    t.recordInbound({ messageId: 'wamid.in2', contact: ADA, kind: 'text', summary: 'Are you there?', at: T0 + 1000 });
    t.recordInbound({ messageId: 'wamid.in1', contact: ADA, kind: 'text', summary: 'Hello', at: T0 });
    expect(t.messagesOf(ADA).map((m) => m.id)).toEqual(['wamid.in1', 'wamid.in2', 'wamid.out1']);
    expect(t.messagesOf(ADA)[0]).toEqual({ id: 'wamid.in1', direction: 'inbound', kind: 'text', summary: 'Hello', at: T0 });
    expect(t.nameOf(ADA)).toBe('Ada Lovelace');
    // Statuses are about the business's messages only.
    t.applyStatus(status('wamid.in1', 'read'));
    expect(t.messagesOf(ADA)[0]!.status).toBeUndefined();
  });

  it('ignores what is not a gateway number, and tolerates "+" and spaces', async () => {
    const t = await open();
    t.recordOutbound({ ...outbound('wamid.1'), contact: 'not-a-number' });
    t.recordOutbound({ ...outbound('wamid.2'), contact: '+1 2025550101' });
    expect(t.contactsByActivity()).toEqual([{ contact: ADA, lastActivityAt: T0 }]);
    expect(t.messagesOf(`+${ADA}`).map((m) => m.id)).toEqual(['wamid.2']);
  });

  it('is bounded per contact (the oldest go) and in contacts (the quietest go)', async () => {
    const t = await open({ maxPerContact: 3, maxContacts: 2 });
    for (let i = 0; i < 5; i++) t.recordOutbound(outbound(`wamid.${i}`, T0 + i));
    expect(t.messagesOf(ADA).map((m) => m.id)).toEqual(['wamid.2', 'wamid.3', 'wamid.4']);
    // A status for a message that was let go waits like any unknown one; nothing breaks.
    t.applyStatus(status('wamid.0', 'read'));
    t.recordOutbound(outbound('wamid.g1', T0 + 10, GRACE));
    t.recordOutbound(outbound('wamid.x1', T0 + 20, '447700900123'));
    expect(t.contactsByActivity().map((c) => c.contact)).toEqual(['447700900123', GRACE]);
    expect(t.messagesOf(ADA)).toEqual([]);
  });

  it('reports the contacts by their latest message, newest first', async () => {
    const t = await open();
    t.recordOutbound(outbound('wamid.a', T0 + 5, ADA));
    t.recordOutbound(outbound('wamid.g', T0 + 9, GRACE));
    expect(t.contactsByActivity()).toEqual([
      { contact: GRACE, lastActivityAt: T0 + 9 },
      { contact: ADA, lastActivityAt: T0 + 5 },
    ]);
  });

  it('remembers a name learnt from a call for a contact it has', async () => {
    const t = await open();
    t.rememberName(ADA, 'Ada');
    expect(t.nameOf(ADA)).toBeUndefined();
    t.recordOutbound(outbound('wamid.1'));
    t.rememberName(ADA, 'Ada Lovelace');
    expect(t.nameOf(ADA)).toBe('Ada Lovelace');
  });
});

describe('persistence', () => {
  it('survives a restart with statuses and names, and statuses still find their messages', async () => {
    const first = await open();
    first.recordInbound({ messageId: 'wamid.in', contact: ADA, name: 'Ada Lovelace', kind: 'text', summary: 'Hi', at: T0 });
    first.recordOutbound(outbound('wamid.out', T0 + 1));
    first.applyStatus(status('wamid.out', 'delivered', T0 + 2));
    await first.close();

    const second = await open();
    expect(second.messagesOf(ADA).map((m) => [m.id, m.status])).toEqual([
      ['wamid.in', undefined],
      ['wamid.out', 'delivered'],
    ]);
    expect(second.nameOf(ADA)).toBe('Ada Lovelace');
    second.applyStatus(status('wamid.out', 'read', T0 + 3));
    expect(statusOf(second, 'wamid.out')).toBe('read');
    // A duplicate of the inbound message after the restart is still a duplicate.
    second.recordInbound({ messageId: 'wamid.in', contact: ADA, kind: 'text', summary: 'Hi', at: T0 });
    expect(second.messagesOf(ADA)).toHaveLength(2);
  });

  it('sets an unreadable file aside and starts empty', async () => {
    await writeFile(join(dataDir, 'message-timeline.json'), '{"version":1,"contacts":');
    const t = await open();
    expect(t.contactsByActivity()).toEqual([]);
    expect((await readdir(dataDir)).some((f) => f.startsWith('message-timeline.json.corrupt-'))).toBe(true);
    t.recordOutbound(outbound('wamid.1'));
    await t.flush();
    expect(JSON.parse(await readFile(join(dataDir, 'message-timeline.json'), 'utf8')).contacts[ADA].messages).toHaveLength(1);
  });

  it('keeps the readable entries of a partly damaged file, and a copy of the file as it was', async () => {
    const good = { id: 'wamid.ok', direction: 'outbound', kind: 'text', summary: 'fine', at: T0, status: 'read' };
    const bad = { id: 'wamid.bad', direction: 'sideways', kind: 'text', summary: 'x', at: T0 };
    await writeFile(join(dataDir, 'message-timeline.json'), JSON.stringify({ version: 1, contacts: { [ADA]: { messages: [good, bad] }, 'not-a-number': { messages: [] } } }));
    const t = await open();
    expect(t.messagesOf(ADA)).toEqual([good]);
    expect((await readdir(dataDir)).filter((f) => f.includes('.corrupt-'))).toHaveLength(1);
  });
});

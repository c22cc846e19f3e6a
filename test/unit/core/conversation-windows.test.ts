// The 24-hour window per contact (gateway-spec.md 3.1): open and close, expiry at exactly 24 hours,
// 131047 closing it, change notifications, persistence across instances, and unreadable files.
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { CONVERSATION_WINDOW_MS, ConversationWindows, type ConversationWindowChange } from '../../../electron/core/conversation-windows';
import { configureLogging } from '../../../shared/log';
import { FakeClock } from '../../support/fake-clock';

configureLogging({ sink: () => undefined });

const ADA = '12025550101';
const GRACE = '442079460101';
const HOUR = 60 * 60 * 1000;
const T0 = Date.UTC(2026, 4, 4, 9, 0, 0);

let dataDir: string;
const opened: ConversationWindows[] = [];

async function open(now: () => number = () => T0, windowMs?: number): Promise<ConversationWindows> {
  const windows = await ConversationWindows.open({ dataDir, now, ...(windowMs === undefined ? {} : { windowMs }) });
  opened.push(windows);
  return windows;
}

beforeEach(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'windows-'));
});
afterEach(async () => {
  await Promise.all(opened.splice(0).map((w) => w.close()));
  vi.useRealTimers();
  await rm(dataDir, { recursive: true, force: true });
});

describe('the window', () => {
  it('is closed for a contact who never wrote', async () => {
    const windows = await open();
    expect(windows.stateOf(ADA)).toEqual({ open: false });
  });

  it('opens with an inbound message and closes exactly 24 hours after it', async () => {
    const windows = await open(() => T0 + HOUR);
    windows.recordInbound(ADA, T0);
    expect(windows.stateOf(ADA, T0 + HOUR)).toEqual({ open: true, closesAt: T0 + CONVERSATION_WINDOW_MS, lastInboundAt: T0 });
    expect(windows.stateOf(ADA, T0 + CONVERSATION_WINDOW_MS - 1).open).toBe(true);
    expect(windows.stateOf(ADA, T0 + CONVERSATION_WINDOW_MS)).toEqual({ open: false, lastInboundAt: T0 });
    expect(windows.stateOf(GRACE, T0 + HOUR)).toEqual({ open: false });
  });

  it('the last message counts; older and duplicate ones change nothing', async () => {
    const windows = await open(() => T0 + 10 * HOUR);
    windows.recordInbound(ADA, T0 + 5 * HOUR);
    windows.recordInbound(ADA, T0);
    windows.recordInbound(ADA, T0 + 5 * HOUR);
    expect(windows.stateOf(ADA)).toMatchObject({ open: true, closesAt: T0 + 29 * HOUR });
    windows.recordInbound(ADA, T0 + 8 * HOUR);
    expect(windows.stateOf(ADA)).toMatchObject({ open: true, closesAt: T0 + 32 * HOUR });
  });

  it('a 131047 answer closes it until the customer writes again', async () => {
    const clock = new FakeClock(T0 + HOUR);
    const windows = await open(clock.now);
    windows.recordInbound(ADA, T0);
    windows.recordClosed(ADA, T0 + HOUR);
    expect(windows.stateOf(ADA)).toEqual({ open: false, lastInboundAt: T0, closedAt: T0 + HOUR });
    // A late webhook for a message from before the refusal does not reopen it.
    windows.recordInbound(ADA, T0 + HOUR - 1);
    expect(windows.stateOf(ADA).open).toBe(false);
    clock.advance(HOUR);
    windows.recordInbound(ADA, T0 + 2 * HOUR);
    expect(windows.stateOf(ADA)).toEqual({ open: true, closesAt: T0 + 26 * HOUR, lastInboundAt: T0 + 2 * HOUR });
  });

  it('a sender clock ahead of ours does not stretch the window', async () => {
    const windows = await open(() => T0);
    windows.recordInbound(ADA, T0 + 3 * HOUR);
    expect(windows.stateOf(ADA)).toMatchObject({ open: true, closesAt: T0 + CONVERSATION_WINDOW_MS });
  });

  it('ignores what is not a gateway number or not a time, and tolerates a "+"', async () => {
    const windows = await open();
    windows.recordInbound('', T0);
    windows.recordInbound('not-a-number', T0);
    windows.recordInbound(ADA, Number.NaN);
    windows.recordInbound(ADA, -5);
    expect(windows.states()).toEqual({});
    windows.recordInbound(`+${ADA}`, T0);
    expect(windows.stateOf(ADA).open).toBe(true);
    expect(windows.stateOf(`+${ADA}`).open).toBe(true);
  });
});

describe('change notifications', () => {
  it('on opening, on moving the closing time and on 131047; nothing for what changes nothing', async () => {
    const windows = await open(() => T0 + HOUR);
    const changes: ConversationWindowChange[] = [];
    const stop = windows.onChanged((c) => changes.push(c));
    windows.recordInbound(ADA, T0);
    windows.recordInbound(ADA, T0);
    windows.recordInbound(ADA, T0 + HOUR);
    windows.recordClosed(ADA, T0 + HOUR);
    windows.recordClosed(ADA, T0 + HOUR);
    windows.recordClosed(GRACE, T0 + HOUR);
    expect(changes).toEqual([
      { contactNumber: ADA, state: { open: true, closesAt: T0 + 24 * HOUR, lastInboundAt: T0 } },
      { contactNumber: ADA, state: { open: true, closesAt: T0 + 25 * HOUR, lastInboundAt: T0 + HOUR } },
      { contactNumber: ADA, state: { open: false, lastInboundAt: T0 + HOUR, closedAt: T0 + HOUR } },
    ]);
    stop();
    windows.recordInbound(GRACE, T0 + HOUR);
    expect(changes).toHaveLength(3);
  });

  it('when the 24 hours run out, once per window', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    vi.setSystemTime(T0);
    const windows = await open(Date.now);
    const changes: ConversationWindowChange[] = [];
    windows.onChanged((c) => changes.push(c));
    windows.recordInbound(ADA, T0);
    windows.recordInbound(GRACE, T0 + 0); // same moment, another contact
    await vi.advanceTimersByTimeAsync(CONVERSATION_WINDOW_MS - 1);
    expect(changes.filter((c) => !c.state.open)).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(changes.filter((c) => !c.state.open)).toEqual([
      { contactNumber: ADA, state: { open: false, lastInboundAt: T0 } },
      { contactNumber: GRACE, state: { open: false, lastInboundAt: T0 } },
    ]);
    await vi.advanceTimersByTimeAsync(CONVERSATION_WINDOW_MS);
    expect(changes.filter((c) => !c.state.open)).toHaveLength(2);
  });

  it('a listener that throws does not stop the others', async () => {
    const windows = await open();
    const seen: string[] = [];
    windows.onChanged(() => {
      throw new Error('listener bug');
    });
    windows.onChanged((c) => seen.push(c.contactNumber));
    windows.recordInbound(ADA, T0);
    expect(seen).toEqual([ADA]);
  });
});

describe('persistence', () => {
  it('survives a restart: a new instance reads what the last one saved', async () => {
    const first = await open(() => T0 + HOUR);
    first.recordInbound(ADA, T0);
    first.recordInbound(GRACE, T0);
    first.recordClosed(GRACE, T0 + HOUR);
    await first.flush();
    const saved = JSON.parse(await readFile(join(dataDir, 'conversation-windows.json'), 'utf8')) as unknown;
    expect(saved).toEqual({ version: 1, contacts: { [ADA]: { lastInboundAt: T0 }, [GRACE]: { lastInboundAt: T0, closedAt: T0 + HOUR } } });

    const second = await open(() => T0 + 2 * HOUR);
    expect(second.stateOf(ADA)).toEqual({ open: true, closesAt: T0 + 24 * HOUR, lastInboundAt: T0 });
    expect(second.stateOf(GRACE).open).toBe(false);
    const later = await open(() => T0 + 25 * HOUR);
    expect(later.stateOf(ADA)).toEqual({ open: false, lastInboundAt: T0 });
  });

  it('writes atomically: no temporary file is left behind', async () => {
    const windows = await open();
    for (let i = 0; i < 20; i++) windows.recordInbound(ADA, T0 - 20 + i);
    await windows.flush();
    expect(await readdir(dataDir)).toEqual(['conversation-windows.json']);
  });

  it('an unparsable file is set aside and the windows start empty, without a crash', async () => {
    await writeFile(join(dataDir, 'conversation-windows.json'), '{"version":1,"contacts":{"1202', 'utf8');
    const windows = await open();
    expect(windows.states()).toEqual({});
    const files = await readdir(dataDir);
    expect(files.some((f) => f.startsWith('conversation-windows.json.corrupt-'))).toBe(true);
    windows.recordInbound(ADA, T0);
    await windows.flush();
    expect(JSON.parse(await readFile(join(dataDir, 'conversation-windows.json'), 'utf8'))).toMatchObject({ contacts: { [ADA]: { lastInboundAt: T0 } } });
  });

  it('a file of the wrong shape is set aside; unreadable entries are left out and kept in a copy', async () => {
    await writeFile(join(dataDir, 'conversation-windows.json'), JSON.stringify({ version: 7, windows: [] }), 'utf8');
    expect((await open()).states()).toEqual({});
    await rm(join(dataDir, 'conversation-windows.json'), { force: true });
    await writeFile(
      join(dataDir, 'conversation-windows.json'),
      JSON.stringify({ version: 1, contacts: { [ADA]: { lastInboundAt: T0 }, [GRACE]: { lastInboundAt: 'yesterday' }, 'not-a-number': { lastInboundAt: T0 } } }),
      'utf8',
    );
    const windows = await open(() => T0 + HOUR);
    expect(Object.keys(windows.states())).toEqual([ADA]);
    expect((await readdir(dataDir)).filter((f) => f.includes('.corrupt-')).length).toBeGreaterThanOrEqual(2);
  });

  it('a data directory that cannot be read leaves the windows in memory only', async () => {
    const notADirectory = join(dataDir, 'file');
    await writeFile(notADirectory, 'x', 'utf8');
    const windows = await ConversationWindows.open({ dataDir: notADirectory, now: () => T0 });
    opened.push(windows);
    windows.recordInbound(ADA, T0);
    expect(windows.stateOf(ADA).open).toBe(true);
    await windows.flush();
  });
});

// The voicemail keeper against a real HTTP server standing in for the gateway's media endpoints
// (fake-media.ts): the entry marked at once, the audio fetched and kept as a file named from the call
// id's hash, the fetch tried again on its schedule, a voicemail that comes before its call's entry,
// the tries again at start, and "Play voicemail" from the file or from the service. The keeper's
// timers and clock are the test's (FakeClock); the network and the disk are real.
import { createHash } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { GatewayClient } from '../../../electron/core/gateway-client';
import { HistoryStore } from '../../../electron/core/history-store';
import { MediaFiles, mediaFileName } from '../../../electron/core/media-files';
import { VOICEMAIL_HOLD_MS, VOICEMAIL_RETRY_LATER_MS, VOICEMAIL_RETRY_MS, VoicemailKeeper } from '../../../electron/core/voicemail-keeper';
import type { RelayEnvelope, RelayEvent } from '../../../shared/events';
import type { HistoryEntry } from '../../../shared/history';
import { text } from '../../../shared/i18n/text';
import { configureLogging, createLogger } from '../../../shared/log';
import { VOICEMAIL_KEPT_MS } from '../../../shared/voicemail';
import { FakeClock } from '../../support/fake-clock';
import { startFakeGateway, success, type FakeGateway } from './fake-gateway';
import { mediaLibrary, mediaRoutes, VOICE_MIME, voiceBytes, type MediaLibrary } from './fake-media';

configureLogging({ sink: () => undefined });

const API_KEY = 'sk_live_voicemail_key_4e8a';
const T0 = Date.UTC(2026, 10, 29, 9, 0, 0);

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function until(what: string, condition: () => boolean, ms = 5_000): Promise<void> {
  for (let waited = 0; waited < ms && !condition(); waited += 5) await new Promise((resolve) => setTimeout(resolve, 5));
  if (!condition()) throw new Error(`never happened: ${what}`);
}

const missed = (n: number, extra: Partial<HistoryEntry> = {}): HistoryEntry => ({
  localId: `in:wacid.vm-${n}`,
  callId: `wacid.vm-${n}`,
  direction: 'incoming',
  number: '447400123456',
  name: 'Ada Lovelace',
  outcome: 'missed',
  startedAt: T0 - 60_000,
  endedAt: T0 - 30_000,
  durationSec: 0,
  ...extra,
});

const audio = (callId: string, mediaId: string, timestamp = T0): RelayEnvelope => ({
  id: `ev-${callId}-${mediaId}`,
  receivedAt: timestamp,
  event: { type: 'message.inbound', messageId: callId, from: '447400123456', name: 'Ada Lovelace', timestamp, messageType: 'audio', mediaId },
});

interface Setup {
  dataDir: string;
  gateway: FakeGateway;
  library: MediaLibrary;
  client: GatewayClient;
  clock: FakeClock;
  history: HistoryStore;
  /** Every history change, as the windows hear it (historyChanged). */
  changes: HistoryEntry[][];
  /** The pause of every try the keeper put off, in order. */
  pauses: number[];
  keeper: VoicemailKeeper;
  /** A keeper as a new start of the app builds it, on the same data folder. */
  restart(): Promise<{ history: HistoryStore; keeper: VoicemailKeeper }>;
}

async function setup(options: { gateway?: boolean } = {}): Promise<Setup> {
  const dataDir = await mkdtemp(join(tmpdir(), 'softphone-voicemail-'));
  const library = mediaLibrary(API_KEY);
  const routes = mediaRoutes(library, { keyOnDownload: true });
  const gateway = await startFakeGateway((req) => routes(req) ?? success());
  library.fileOrigin = new URL(gateway.baseUrl).origin;
  const client = new GatewayClient({ baseUrl: gateway.baseUrl, apiKey: API_KEY, product: 'chatapp' });
  const clock = new FakeClock(T0);
  const pauses: number[] = [];
  const changes: HistoryEntry[][] = [];
  const built: { history: HistoryStore; keeper: VoicemailKeeper }[] = [];
  const build = async () => {
    const history = await HistoryStore.open({ dataDir, now: clock.now });
    history.onChanged((entries) => changes.push(entries));
    const keeper = new VoicemailKeeper({
      history,
      files: new MediaFiles(join(dataDir, 'voicemails'), createLogger('voicemail-test')),
      gateway: () => (options.gateway === false ? undefined : client),
      now: clock.now,
      log: createLogger('voicemail-test'),
      setTimer: (run, ms) => {
        pauses.push(ms);
        return clock.setTimeout(run, ms) as unknown as ReturnType<typeof setTimeout>;
      },
      clearTimer: (timer) => clock.clearTimeout(timer),
    });
    built.push({ history, keeper });
    return { history, keeper };
  };
  cleanups.push(async () => {
    for (const { history, keeper } of built) {
      await keeper.stop();
      await history.flush();
    }
    await client.close();
    await gateway.close();
    await rm(dataDir, { recursive: true, force: true });
  });
  const { history, keeper } = await build();
  return { dataDir, gateway, library, client, clock, history, changes, pauses, keeper, restart: build };
}

const entryOf = (history: HistoryStore, callId: string): HistoryEntry | undefined => history.entries().find((e) => e.callId === callId);
const mediaRequests = (gateway: FakeGateway): string[] => gateway.requests.map((r) => r.path.replace(/\?.*$/, ''));

describe('a voicemail for a call in recent calls', () => {
  it('marks the entry at once, fetches the audio and keeps it in the data folder under the call id’s hash; Play reads it back', async () => {
    const s = await setup();
    const bytes = voiceBytes(40_000);
    s.library.files.set('media-vm-1', { bytes, mimeType: VOICE_MIME });
    s.history.record(missed(1));
    s.history.record(missed(2));
    s.changes.length = 0;

    s.keeper.relayEvent(audio('wacid.vm-1', 'media-vm-1', T0 - 5_000));
    // Marked before anything came back from the service: the windows show it at once.
    expect(s.changes).toHaveLength(1);
    expect(s.changes[0]!.find((e) => e.callId === 'wacid.vm-1')!.voicemail).toEqual({ mediaId: 'media-vm-1', at: T0 - 5_000, saved: false });
    expect(entryOf(s.history, 'wacid.vm-2')!.voicemail).toBeUndefined();

    await until('kept', () => entryOf(s.history, 'wacid.vm-1')?.voicemail?.saved === true);
    expect(entryOf(s.history, 'wacid.vm-1')!.voicemail).toEqual({ mediaId: 'media-vm-1', at: T0 - 5_000, saved: true });
    expect(s.changes.at(-1)!.find((e) => e.callId === 'wacid.vm-1')!.voicemail!.saved).toBe(true);
    expect(mediaRequests(s.gateway)).toEqual(['/restapi/v1/chatapp/media/media-vm-1', '/restapi/v1/chatapp/media/media-vm-1/file']);

    const name = createHash('sha256').update('wacid.vm-1').digest('hex');
    expect(mediaFileName('wacid.vm-1')).toBe(name);
    const folder = join(s.dataDir, 'voicemails');
    expect((await readdir(folder)).sort()).toEqual([`${name}.json`, `${name}.ogg`]);
    expect((await readFile(join(folder, `${name}.ogg`))).equals(bytes)).toBe(true);
    expect(JSON.parse(await readFile(join(folder, `${name}.json`), 'utf8'))).toEqual({
      version: 1,
      callId: 'wacid.vm-1',
      mediaId: 'media-vm-1',
      mimeType: VOICE_MIME,
      file: `${name}.ogg`,
      size: bytes.length,
      sha256: createHash('sha256').update(bytes).digest('hex'),
      savedAt: T0,
    });

    // Play: the kept file, with the service gone and the media id forgotten by it.
    s.library.files.clear();
    await s.gateway.close();
    const played = await s.keeper.play('wacid.vm-1');
    expect(played).toEqual({ ok: true, value: { mimeType: VOICE_MIME, data: bytes.toString('base64') } });

    // And after a start of the app: the file is what plays.
    const again = await s.restart();
    expect(await again.keeper.play('wacid.vm-1')).toEqual(played);
    expect(s.gateway.requests).toHaveLength(2);
  });

  it('asks for the media id again when its url lapsed, and sends the API key to no other origin than the gateway’s', async () => {
    const s = await setup();
    const cdnRoutes = mediaRoutes(s.library, { keyOnDownload: false });
    const cdn = await startFakeGateway((req) => cdnRoutes(req) ?? success());
    cleanups.push(() => cdn.close());
    s.library.fileOrigin = new URL(cdn.baseUrl).origin;
    s.library.expiredUrls = 1;
    const bytes = voiceBytes(12_000, 5);
    s.library.files.set('media-cdn', { bytes, mimeType: VOICE_MIME });
    s.history.record(missed(16));
    s.keeper.relayEvent(audio('wacid.vm-16', 'media-cdn'));
    await until('kept', () => entryOf(s.history, 'wacid.vm-16')?.voicemail?.saved === true);
    expect(s.gateway.requests.map((r) => [r.path, r.headers['api-key']])).toEqual([
      ['/restapi/v1/chatapp/media/media-cdn', API_KEY],
      ['/restapi/v1/chatapp/media/media-cdn', API_KEY],
    ]);
    expect(cdn.requests.map((r) => [r.path.replace(/\?.*$/, ''), r.headers['api-key']])).toEqual([
      ['/restapi/v1/chatapp/media/media-cdn/file', undefined],
      ['/restapi/v1/chatapp/media/media-cdn/file', undefined],
    ]);
    expect(s.pauses).toEqual([]);
    expect(await s.keeper.play('wacid.vm-16')).toEqual({ ok: true, value: { mimeType: VOICE_MIME, data: bytes.toString('base64') } });
  });

  it('tries a failed fetch again after 2, 5, 15, 30 and 60 s, then every 10 minutes, saying why on the entry; a try that works clears it', async () => {
    const s = await setup();
    const bytes = voiceBytes(3_000, 4);
    s.library.files.set('media-retry', { bytes, mimeType: VOICE_MIME });
    s.library.failingLookups = 7;
    s.history.record(missed(3));
    s.keeper.relayEvent(audio('wacid.vm-3', 'media-retry'));

    await until('the first try failed', () => s.pauses.length === 1);
    expect(entryOf(s.history, 'wacid.vm-3')!.voicemail).toEqual({ mediaId: 'media-retry', at: T0, saved: false, fetchError: 'An unknown error occurred' });
    for (let tries = 2; tries <= 7; tries++) {
      s.clock.fire(s.clock.timers()[0]!.handle);
      await until(`try ${tries} failed`, () => s.pauses.length === tries);
    }
    expect(s.pauses).toEqual([...VOICEMAIL_RETRY_MS, VOICEMAIL_RETRY_LATER_MS, VOICEMAIL_RETRY_LATER_MS]);
    expect(VOICEMAIL_RETRY_MS).toEqual([2_000, 5_000, 15_000, 30_000, 60_000]);
    expect(VOICEMAIL_RETRY_LATER_MS).toBe(600_000);
    const writes = s.changes.length;
    // The same reason try after try: the entry is not written again for it.
    expect(s.changes.filter((entries) => entries.find((e) => e.callId === 'wacid.vm-3')?.voicemail?.fetchError !== undefined)).toHaveLength(1);

    s.clock.fire(s.clock.timers()[0]!.handle);
    await until('kept', () => entryOf(s.history, 'wacid.vm-3')?.voicemail?.saved === true);
    expect(entryOf(s.history, 'wacid.vm-3')!.voicemail).toEqual({ mediaId: 'media-retry', at: T0, saved: true });
    expect(s.changes.length).toBe(writes + 1);
    expect(s.clock.timers()).toEqual([]);
    expect(mediaRequests(s.gateway).filter((p) => p.endsWith('/media-retry'))).toHaveLength(8);
  });

  it('stops trying 7 days after the voicemail came: the service keeps media no longer', async () => {
    const s = await setup();
    s.history.record(missed(4));
    // Left 7 days ago less 10 s: the tries after 2 and 5 s fit, the one 15 s later would not.
    s.keeper.relayEvent(audio('wacid.vm-4', 'media-gone', T0 - VOICEMAIL_KEPT_MS + 10_000));
    await until('the first try failed', () => s.pauses.length === 1);
    expect(entryOf(s.history, 'wacid.vm-4')!.voicemail).toMatchObject({ saved: false, fetchError: 'The service does not have this media (it keeps media for 7 days)' });
    s.clock.fire(s.clock.timers()[0]!.handle);
    await until('the second try failed', () => s.pauses.length === 2);
    s.clock.fire(s.clock.timers()[0]!.handle);
    await until('the third try', () => s.gateway.requests.length === 3);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(s.clock.timers()).toEqual([]);
    expect(s.pauses).toEqual([2_000, 5_000]);
    expect(entryOf(s.history, 'wacid.vm-4')!.voicemail!.saved).toBe(false);

    // Nor at a start of the app, once the 7 days are over.
    s.clock.t = T0 + 10_000;
    const again = await s.restart();
    again.keeper.resume();
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(s.gateway.requests).toHaveLength(3);
  });

  it('says why on the entry when there is no gateway to fetch from, and tries again', async () => {
    const s = await setup({ gateway: false });
    s.history.record(missed(5));
    s.keeper.relayEvent(audio('wacid.vm-5', 'media-5'));
    await until('the try failed', () => s.pauses.length === 1);
    expect(entryOf(s.history, 'wacid.vm-5')!.voicemail).toEqual({ mediaId: 'media-5', at: T0, saved: false, fetchError: 'No account is set up and the sandbox is not running: open the settings' });
  });

  it('changes nothing for the same voicemail again (a replayed event), and ignores other messages', async () => {
    const s = await setup();
    s.library.files.set('media-6', { bytes: voiceBytes(1_000), mimeType: VOICE_MIME });
    s.history.record(missed(6));
    s.keeper.relayEvent(audio('wacid.vm-6', 'media-6'));
    await until('kept', () => entryOf(s.history, 'wacid.vm-6')?.voicemail?.saved === true);
    const writes = s.changes.length;
    s.keeper.relayEvent(audio('wacid.vm-6', 'media-6'));
    const other = (event: Partial<Extract<RelayEvent, { type: 'message.inbound' }>>): RelayEnvelope => ({
      id: 'ev-other',
      receivedAt: T0,
      event: { type: 'message.inbound', messageId: 'wacid.vm-6', timestamp: T0, messageType: 'audio', ...event },
    });
    s.keeper.relayEvent(other({ messageType: 'image', mediaId: 'media-img' }));
    s.keeper.relayEvent(other({ messageType: 'audio' }));
    s.keeper.relayEvent(other({ messageType: 'text', text: 'hello' }));
    // An id that only begins like the call's is another id.
    s.keeper.relayEvent(audio('wacid.vm-6.x', 'media-x'));
    s.keeper.relayEvent(audio('wacid.vm', 'media-x'));
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(s.changes.length).toBe(writes);
    expect(s.gateway.requests).toHaveLength(2);
    expect(entryOf(s.history, 'wacid.vm-6')!.voicemail!.mediaId).toBe('media-6');
  });

  it('keeps the voicemail through a later correction of the entry (a late terminate re-records the call)', async () => {
    const s = await setup();
    s.library.files.set('media-7', { bytes: voiceBytes(1_000), mimeType: VOICE_MIME });
    s.history.record(missed(7));
    s.keeper.relayEvent(audio('wacid.vm-7', 'media-7'));
    s.history.record(missed(7, { endedAt: T0 - 29_000 }));
    expect(entryOf(s.history, 'wacid.vm-7')!.voicemail).toEqual({ mediaId: 'media-7', at: T0, saved: false });
    await until('kept', () => entryOf(s.history, 'wacid.vm-7')?.voicemail?.saved === true);
    s.history.record(missed(7, { endedAt: T0 - 28_000 }));
    expect(entryOf(s.history, 'wacid.vm-7')).toMatchObject({ endedAt: T0 - 28_000, voicemail: { mediaId: 'media-7', saved: true } });
  });
});

describe('a voicemail whose call has no entry yet', () => {
  it('waits for the entry, for 10 minutes, and is attached and fetched when it comes', async () => {
    const s = await setup();
    const bytes = voiceBytes(2_000, 8);
    s.library.files.set('media-8', { bytes, mimeType: VOICE_MIME });
    s.keeper.relayEvent(audio('wacid.vm-8', 'media-8'));
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(s.changes).toEqual([]);
    expect(s.gateway.requests).toEqual([]);

    s.clock.t += VOICEMAIL_HOLD_MS - 1_000;
    s.history.record(missed(8));
    expect(entryOf(s.history, 'wacid.vm-8')!.voicemail).toEqual({ mediaId: 'media-8', at: T0, saved: false });
    await until('kept', () => entryOf(s.history, 'wacid.vm-8')?.voicemail?.saved === true);
    expect(await s.keeper.play('wacid.vm-8')).toEqual({ ok: true, value: { mimeType: VOICE_MIME, data: bytes.toString('base64') } });
  });

  it('is let go after 10 minutes', async () => {
    const s = await setup();
    s.library.files.set('media-9', { bytes: voiceBytes(2_000), mimeType: VOICE_MIME });
    s.keeper.relayEvent(audio('wacid.vm-9', 'media-9'));
    s.clock.t += VOICEMAIL_HOLD_MS + 1;
    s.history.record(missed(9));
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(entryOf(s.history, 'wacid.vm-9')!.voicemail).toBeUndefined();
    expect(s.gateway.requests).toEqual([]);
  });

  it('plays from the service meanwhile, kept nowhere', async () => {
    const s = await setup();
    const bytes = voiceBytes(2_500, 10);
    s.library.files.set('media-10', { bytes, mimeType: VOICE_MIME });
    s.keeper.relayEvent(audio('wacid.vm-10', 'media-10'));
    expect(await s.keeper.play('wacid.vm-10')).toEqual({ ok: true, value: { mimeType: VOICE_MIME, data: bytes.toString('base64') } });
    await expect(readdir(join(s.dataDir, 'voicemails'))).rejects.toMatchObject({ code: 'ENOENT' });
  });
});

describe('at start', () => {
  it('fetches the voicemails not kept yet', async () => {
    const s = await setup();
    const bytes = voiceBytes(6_000, 11);
    s.library.files.set('media-11', { bytes, mimeType: VOICE_MIME });
    s.library.failingLookups = 1;
    s.history.record(missed(11));
    s.history.record(missed(12, { voicemail: { mediaId: 'media-12', at: T0 - VOICEMAIL_KEPT_MS - 1, saved: false } }));
    s.keeper.relayEvent(audio('wacid.vm-11', 'media-11'));
    await until('the first try failed', () => s.pauses.length === 1);
    await s.keeper.stop();
    await s.history.flush();

    const again = await s.restart();
    expect(entryOf(again.history, 'wacid.vm-11')!.voicemail).toMatchObject({ saved: false, fetchError: 'An unknown error occurred' });
    again.keeper.resume();
    await until('kept', () => entryOf(again.history, 'wacid.vm-11')?.voicemail?.saved === true);
    expect(await again.keeper.play('wacid.vm-11')).toEqual({ ok: true, value: { mimeType: VOICE_MIME, data: bytes.toString('base64') } });
    // The one older than 7 days is not asked for.
    expect(mediaRequests(s.gateway).filter((p) => p.includes('media-12'))).toEqual([]);
  });
});

describe('Play voicemail', () => {
  it('fetches by the given media id when this app knows no voicemail of the call, and keeps nothing', async () => {
    const s = await setup();
    const bytes = voiceBytes(1_500, 13);
    s.library.files.set('media-team', { bytes, mimeType: VOICE_MIME });
    expect(await s.keeper.play('wacid.from-the-team', 'media-team')).toEqual({ ok: true, value: { mimeType: VOICE_MIME, data: bytes.toString('base64') } });
    expect(await s.keeper.play('wacid.unknown')).toEqual({ ok: false, error: expect.objectContaining({ code: 'not_found', text: text('voicemail.none', { callId: 'wacid.unknown' }), message: 'There is no voicemail for call wacid.unknown' }) });
    expect(await s.keeper.play('wacid.gone', 'media-gone')).toMatchObject({ ok: false, error: { code: 'gateway_error', gatewayCode: 100 } });
    await expect(readdir(join(s.dataDir, 'voicemails'))).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('fetches an entry’s voicemail not kept yet at once, keeps it, and its schedule stops', async () => {
    const s = await setup();
    const bytes = voiceBytes(2_200, 14);
    s.library.files.set('media-14', { bytes, mimeType: VOICE_MIME });
    s.library.failingLookups = 1;
    s.history.record(missed(14));
    s.keeper.relayEvent(audio('wacid.vm-14', 'media-14'));
    await until('the first try failed', () => s.pauses.length === 1);
    expect(await s.keeper.play('wacid.vm-14', 'media-ignored')).toEqual({ ok: true, value: { mimeType: VOICE_MIME, data: bytes.toString('base64') } });
    expect(entryOf(s.history, 'wacid.vm-14')!.voicemail).toEqual({ mediaId: 'media-14', at: T0, saved: true });
    expect(s.clock.timers()).toEqual([]);
    expect(mediaRequests(s.gateway).filter((p) => p.includes('ignored'))).toEqual([]);
  });

  it('fetches again a kept file that is gone or damaged, and keeps it again', async () => {
    const s = await setup();
    const bytes = voiceBytes(2_300, 15);
    s.library.files.set('media-15', { bytes, mimeType: VOICE_MIME });
    s.history.record(missed(15));
    s.keeper.relayEvent(audio('wacid.vm-15', 'media-15'));
    await until('kept', () => entryOf(s.history, 'wacid.vm-15')?.voicemail?.saved === true);
    const file = join(s.dataDir, 'voicemails', `${mediaFileName('wacid.vm-15')}.ogg`);
    await writeFile(file, 'not the voicemail');
    expect(await s.keeper.play('wacid.vm-15')).toEqual({ ok: true, value: { mimeType: VOICE_MIME, data: bytes.toString('base64') } });
    expect((await readFile(file)).equals(bytes)).toBe(true);
    expect(s.gateway.requests).toHaveLength(4);
  });
});

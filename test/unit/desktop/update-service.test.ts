// Updates end to end on this machine: a feed on 127.0.0.1 as electron-builder publishes it,
// electron-updater's real AppImageUpdater and generic provider, the real update service. Found,
// downloaded with its sha512 checked, offered, installed only when no call is live; a wrong
// checksum refused; the beta channel; bad settings refused by name.
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { EventEmitter } from 'node:events';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startUpdateService, type UpdateService } from '../../../electron/desktop/update-service';
import type { CallPhase } from '../../../shared/call-state';
import { configureLogging } from '../../../shared/log';
import type { UpdateStatus } from '../../../shared/updates';
import { appImageScript, feedUpdater, installElectronAutoUpdaterStandIn, publishRelease, sha512, startUpdateFeed, TestApp, type UpdateFeed } from '../../support/update-feed';

configureLogging({ sink: () => undefined });

const NEVER = 24 * 60 * 60 * 1000;

let electronAutoUpdater: EventEmitter;
beforeAll(() => {
  electronAutoUpdater = installElectronAutoUpdaterStandIn();
});

interface Setup {
  dir: string;
  feed: UpdateFeed;
  app: TestApp;
  service: UpdateService;
  statuses: UpdateStatus[];
  /** The installed AppImage (APPIMAGE). */
  installed: string;
  marker: string;
  relaunched: string[];
  restartsPrepared: number;
  setCall(phase: CallPhase | undefined): void;
  /** The feed addresses the agent was asked to confirm, in order. */
  confirmations: string[];
  /** The agent's answer to the next confirmations. */
  answer: boolean;
}

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

let savedEnv: { APPIMAGE: string | undefined; SOFTPHONE_TEST_MARKER: string | undefined };
beforeEach(() => {
  savedEnv = { APPIMAGE: process.env.APPIMAGE, SOFTPHONE_TEST_MARKER: process.env.SOFTPHONE_TEST_MARKER };
});
afterEach(() => {
  for (const [name, value] of Object.entries(savedEnv)) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
});

async function setup(options: { version?: string; appImage?: boolean; restartGiveUpMs?: number } = {}): Promise<Setup> {
  const dir = await mkdtemp(join(tmpdir(), 'softphone-updates-'));
  const feed = await startUpdateFeed();
  cleanups.push(async () => {
    await feed.close();
    await rm(dir, { recursive: true, force: true });
  });
  const app = new TestApp(options.version ?? '1.0.0', dir);
  await app.writeUpdateConfig();
  const installed = join(dir, 'Applications', `Softphone-${app.version}.AppImage`);
  await mkdir(join(dir, 'Applications'), { recursive: true });
  await writeFile(installed, '#!/bin/sh\nexit 0\n', { mode: 0o755 });
  const marker = join(dir, 'installed.txt');
  if (options.appImage !== false) process.env.APPIMAGE = installed;
  else delete process.env.APPIMAGE;
  process.env.SOFTPHONE_TEST_MARKER = marker;

  let phase: CallPhase | undefined;
  const relaunched: string[] = [];
  const state = { restartsPrepared: 0, answer: true };
  const confirmations: string[] = [];
  const service = await startUpdateService({
    dataDir: join(dir, 'data'),
    updater: feedUpdater(app),
    host: { liveCall: () => phase },
    beforeRestart: () => {
      state.restartsPrepared += 1;
      return () => {
        state.restartsPrepared -= 1;
      };
    },
    relaunch: (execPath) => relaunched.push(execPath),
    confirmFeedChange: (feedUrl) => {
      confirmations.push(feedUrl);
      return Promise.resolve(state.answer);
    },
    firstCheckDelayMs: NEVER,
    checkEveryMs: NEVER,
    ...(options.restartGiveUpMs !== undefined ? { restartGiveUpMs: options.restartGiveUpMs } : {}),
  });
  cleanups.push(() => service.close());
  const statuses: UpdateStatus[] = [];
  service.onStatus((status) => statuses.push(status));
  return {
    dir,
    feed,
    app,
    service,
    statuses,
    installed,
    marker,
    relaunched,
    get restartsPrepared() {
      return state.restartsPrepared;
    },
    setCall: (next) => {
      phase = next;
    },
    confirmations,
    get answer() {
      return state.answer;
    },
    set answer(value: boolean) {
      state.answer = value;
    },
  };
}

async function until(condition: () => boolean, what: string, ms = 15_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`never happened: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

const settled = (s: Setup) => () => ['ready', 'error', 'idle'].includes(s.service.status().kind) && s.statuses.length > 0;

describe('the update service', () => {
  it('finds a newer version, downloads it with its sha512 checked, and offers it', async () => {
    const s = await setup();
    const body = appImageScript('1.1.0');
    publishRelease(s.feed, { channelFile: 'latest-linux.yml', version: '1.1.0', body });
    expect(s.service.status()).toEqual({ kind: 'off' });

    const saved = await s.service.setSettings({ feedUrl: s.feed.url, channel: 'stable' });
    expect(saved).toEqual({ ok: true, value: { feedUrl: s.feed.url, channel: 'stable' } });
    await until(settled(s), 'the update is downloaded');

    expect(s.service.status()).toEqual({ kind: 'ready', version: '1.1.0' });
    const kinds = s.statuses.map((status) => status.kind);
    expect(kinds[0]).toBe('idle');
    expect(kinds).toContain('checking');
    expect(s.statuses).toContainEqual({ kind: 'available', version: '1.1.0' });
    expect(kinds.at(-1)).toBe('ready');
    // Nothing else than what electron-builder publishes was asked for.
    expect(new Set(s.feed.requested)).toEqual(new Set(['/latest-linux.yml', '/Softphone-1.1.0.AppImage']));

    // The file arrived whole: electron-updater checked its sha512 against the feed's before it said so.
    const pending = await readFile(join(s.app.pendingDir(), 'Softphone-1.1.0.AppImage'));
    expect(sha512(pending)).toBe(sha512(body));
    expect(s.app.quitHandlers).toHaveLength(1);

    // Asking again changes nothing and fetches nothing: the update waits for its restart.
    const requests = s.feed.requested.length;
    expect(await s.service.check()).toEqual({ ok: true, value: { kind: 'ready', version: '1.1.0' } });
    expect(s.feed.requested).toHaveLength(requests);
  });

  it('restarts to update only when no call is live; refused with the reason during one', async () => {
    const s = await setup();
    publishRelease(s.feed, { channelFile: 'latest-linux.yml', version: '1.1.0', body: appImageScript('1.1.0') });
    const before = s.service.restart();
    expect(before).toEqual({ ok: false, error: { code: 'invalid_state', message: 'No update is ready to install', text: { code: 'updates.notReady' } } });

    await s.service.setSettings({ feedUrl: s.feed.url, channel: 'stable' });
    await until(settled(s), 'the update is downloaded');
    expect(s.service.status().kind).toBe('ready');

    for (const [phase, words] of [
      ['ringing', 'a call is ringing'],
      ['active', 'a call is in progress'],
      ['connecting', 'a call is connecting'],
      ['dialing', 'a call is being placed'],
    ] as const) {
      s.setCall(phase);
      const refused = s.service.restart();
      expect(refused.ok).toBe(false);
      if (!refused.ok) {
        expect(refused.error.code).toBe('invalid_state');
        expect(refused.error.message).toBe(`The softphone does not restart during a call (${words}): restart to update once it has ended`);
      }
    }
    // Nothing was installed, nothing quit.
    expect(existsSync(s.marker)).toBe(false);
    expect(await readFile(s.installed, 'utf8')).toBe('#!/bin/sh\nexit 0\n');
    expect(s.app.quits).toBe(0);
    expect(s.restartsPrepared).toBe(0);

    s.setCall(undefined);
    const beforeQuit: string[] = [];
    electronAutoUpdater.once('before-quit-for-update', () => beforeQuit.push('before-quit-for-update'));
    expect(s.service.restart()).toEqual({ ok: true, value: null });
    expect(s.restartsPrepared).toBe(1);

    // The new AppImage took the old one's place under its own versioned name and was run once to
    // install (it exits at once: APPIMAGE_EXIT_AFTER_INSTALL); it starts for real once this process has quit.
    const replaced = join(s.dir, 'Applications', 'Softphone-1.1.0.AppImage');
    expect(existsSync(s.installed)).toBe(false);
    expect(await readFile(replaced)).toEqual(appImageScript('1.1.0'));
    expect(await readFile(s.marker, 'utf8')).toBe('1.1.0 installed, exit after install: true\n');
    expect(s.relaunched).toEqual([replaced]);
    await until(() => s.app.quits === 1, 'the app quits');
    expect(beforeQuit).toEqual(['before-quit-for-update']);
  });

  it('refuses an update whose file does not match its sha512: nothing is offered or installed', async () => {
    const s = await setup();
    publishRelease(s.feed, { channelFile: 'latest-linux.yml', version: '1.1.0', body: appImageScript('1.1.0'), claimedSha512: sha512(Buffer.from('another file')) });

    await s.service.setSettings({ feedUrl: s.feed.url, channel: 'stable' });
    await until(settled(s), 'the download ends');

    const status = s.service.status();
    expect(status).toMatchObject({
      kind: 'error',
      message: 'The update 1.1.0 was discarded: the downloaded file does not match the sha512 checksum the feed gives for it',
      text: { code: 'updates.checksumVersion', values: { version: '1.1.0' } },
    });
    expect(s.statuses.map((x) => x.kind)).not.toContain('ready');
    expect(s.feed.requested).toContain('/Softphone-1.1.0.AppImage');
    // The file is gone, nothing waits to install on quit, and "Restart to update" is refused.
    const pending = existsSync(s.app.pendingDir()) ? await readdir(s.app.pendingDir()) : [];
    expect(pending.filter((name) => name.endsWith('.AppImage'))).toEqual([]);
    expect(s.app.quitHandlers).toHaveLength(0);
    expect(s.service.restart()).toEqual({ ok: false, error: { code: 'invalid_state', message: 'No update is ready to install', text: { code: 'updates.notReady' } } });
    expect(await readFile(s.installed, 'utf8')).toBe('#!/bin/sh\nexit 0\n');
    expect(existsSync(s.marker)).toBe(false);
  });

  it('reads beta-linux.yml on the beta channel, latest-linux.yml on stable', async () => {
    const s = await setup();
    publishRelease(s.feed, { channelFile: 'latest-linux.yml', version: '1.1.0', body: appImageScript('1.1.0') });
    publishRelease(s.feed, { channelFile: 'beta-linux.yml', version: '1.2.0-beta.1', body: appImageScript('1.2.0-beta.1') });

    await s.service.setSettings({ feedUrl: s.feed.url, channel: 'beta' });
    await until(settled(s), 'the beta is downloaded');
    expect(s.service.status()).toEqual({ kind: 'ready', version: '1.2.0-beta.1' });
    expect(s.feed.requested).toEqual(['/beta-linux.yml', '/Softphone-1.2.0-beta.1.AppImage']);
    expect(s.service.settings()).toEqual({ ok: true, value: { feedUrl: s.feed.url, channel: 'beta' } });
  });

  it('a change of channel during a download drops it and checks the new channel', async () => {
    const s = await setup();
    publishRelease(s.feed, { channelFile: 'latest-linux.yml', version: '1.1.0', body: appImageScript('1.1.0') });
    publishRelease(s.feed, { channelFile: 'beta-linux.yml', version: '1.2.0-beta.1', body: appImageScript('1.2.0-beta.1') });
    // The stable file never comes: its download is under way when the agent switches to beta.
    s.feed.files.get('/Softphone-1.1.0.AppImage')!.gate = new Promise(() => undefined);

    await s.service.setSettings({ feedUrl: s.feed.url, channel: 'stable' });
    await until(() => s.feed.requested.includes('/Softphone-1.1.0.AppImage'), 'the stable download starts');
    expect(s.service.status()).toEqual({ kind: 'available', version: '1.1.0' });

    await s.service.setSettings({ feedUrl: s.feed.url, channel: 'beta' });
    await until(() => s.service.status().kind === 'ready', 'the beta is downloaded');
    expect(s.service.status()).toEqual({ kind: 'ready', version: '1.2.0-beta.1' });
    expect(s.feed.requested).toEqual(['/latest-linux.yml', '/Softphone-1.1.0.AppImage', '/beta-linux.yml', '/Softphone-1.2.0-beta.1.AppImage']);
    expect(existsSync(join(s.app.pendingDir(), 'Softphone-1.1.0.AppImage'))).toBe(false);
  });

  it('never offers an older version: back on stable, a beta build waits for a newer stable release', async () => {
    const s = await setup({ version: '1.2.0-beta.1' });
    publishRelease(s.feed, { channelFile: 'latest-linux.yml', version: '1.1.0', body: appImageScript('1.1.0') });

    await s.service.setSettings({ feedUrl: s.feed.url, channel: 'stable' });
    await until(settled(s), 'the check ends');
    expect(s.service.status()).toEqual({ kind: 'idle', checkedAt: expect.any(Number) });
    expect(s.feed.requested).toEqual(['/latest-linux.yml']);
  });

  it('refuses a bad feed address or channel, naming the field and the rule; nothing is saved or asked', async () => {
    const s = await setup();
    const cases: Array<[unknown, string, string]> = [
      [{ feedUrl: 'http://updates.example.com/softphone', channel: 'stable' }, 'feedUrl', 'must be an https:// address (http:// only on this computer: localhost, 127.0.0.1 or [::1]), or empty to turn updates off: plain http:// would let anyone on the way replace the update'],
      [{ feedUrl: 'ftp://updates.example.com/', channel: 'stable' }, 'feedUrl', 'must be an https:// address (http:// only on this computer: localhost, 127.0.0.1 or [::1]), or empty to turn updates off'],
      [{ feedUrl: 'updates.example.com', channel: 'stable' }, 'feedUrl', 'must be an https:// address'],
      [{ feedUrl: 'https://it:hunter2@updates.example.com/', channel: 'stable' }, 'feedUrl', 'must not contain a user name or password'],
      [{ feedUrl: 'https://updates.example.com/?sig=1', channel: 'stable' }, 'feedUrl', 'must not have a query'],
      [{ feedUrl: s.feed.url, channel: 'nightly' }, 'channel', 'must be one of stable, beta'],
      [{ feedUrl: s.feed.url }, 'channel', 'must be one of stable, beta'],
    ];
    for (const [input, field, rule] of cases) {
      const result = await s.service.setSettings(input);
      expect(result.ok, JSON.stringify(input)).toBe(false);
      if (result.ok) continue;
      expect(result.error.code).toBe('invalid_input');
      expect(result.error.field).toBe(field);
      expect(result.error.message).toContain(`${field}: ${rule}`);
    }
    expect(s.service.settings()).toEqual({ ok: true, value: { feedUrl: '', channel: 'stable' } });
    expect(s.service.status()).toEqual({ kind: 'off' });
    expect(existsSync(join(s.dir, 'data', 'updates.json'))).toBe(false);
    expect(s.feed.requested).toEqual([]);
  });

  it('shows a feed that is not there as an error in the status, and keeps running', async () => {
    const s = await setup();
    await s.service.setSettings({ feedUrl: `${s.feed.url}nowhere/`, channel: 'beta' });
    await until(settled(s), 'the check ends');
    expect(s.service.status()).toMatchObject({ kind: 'error', message: 'The update feed has no beta-linux.yml: check the feed address and that the channel is published there' });
    // The feed appears: the next check finds the update.
    publishRelease(s.feed, { channelFile: 'nowhere/beta-linux.yml', version: '1.1.0', body: appImageScript('1.1.0') });
    s.feed.files.set('/nowhere/Softphone-1.1.0.AppImage', s.feed.files.get('/Softphone-1.1.0.AppImage')!);
    expect((await s.service.check()).ok).toBe(true);
    await until(() => s.service.status().kind === 'ready', 'the update is downloaded');
  });

  it('keeps the settings across starts; turning updates off stops the checks', async () => {
    const s = await setup();
    await s.service.setSettings({ feedUrl: s.feed.url, channel: 'beta' });
    await until(settled(s), 'the check ends');
    expect(JSON.parse(await readFile(join(s.dir, 'data', 'updates.json'), 'utf8'))).toEqual({ version: 1, settings: { feedUrl: s.feed.url, channel: 'beta' } });

    const again = await startUpdateService({ dataDir: join(s.dir, 'data'), updater: feedUpdater(s.app), host: { liveCall: () => undefined }, firstCheckDelayMs: NEVER });
    cleanups.push(() => again.close());
    expect(again.settings()).toEqual({ ok: true, value: { feedUrl: s.feed.url, channel: 'beta' } });
    expect(again.status()).toEqual({ kind: 'idle' });

    expect(await again.setSettings({ feedUrl: '', channel: 'beta' })).toEqual({ ok: true, value: { feedUrl: '', channel: 'beta' } });
    expect(again.status()).toEqual({ kind: 'off' });
    const requests = s.feed.requested.length;
    expect(await again.check()).toEqual({ ok: false, error: { code: 'not_configured', message: 'Updates are off: enter the update feed’s address in Settings first', text: { code: 'updates.off' } } });
    expect(s.feed.requested).toHaveLength(requests);
  });

  it('a damaged settings file is kept aside and updates stay off', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'softphone-updates-'));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    await mkdir(join(dir, 'data'));
    await writeFile(join(dir, 'data', 'updates.json'), '{"version":1,"settings":{"feedUrl":"http://evil.example/","channel":"stable"}}');
    const app = new TestApp('1.0.0', dir);
    await app.writeUpdateConfig();
    process.env.APPIMAGE = join(dir, 'Softphone.AppImage');
    const service = await startUpdateService({ dataDir: join(dir, 'data'), updater: feedUpdater(app), host: { liveCall: () => undefined }, firstCheckDelayMs: NEVER });
    cleanups.push(() => service.close());
    expect(service.settings()).toEqual({ ok: true, value: { feedUrl: '', channel: 'stable' } });
    expect(service.status()).toEqual({ kind: 'off' });
    expect((await readdir(join(dir, 'data'))).some((name) => name.startsWith('updates.json.corrupt-'))).toBe(true);
  });

  it('a copy that is not an installed app (no AppImage) says it does not update itself', async () => {
    const s = await setup({ appImage: false });
    expect(s.service.status()).toMatchObject({ kind: 'unsupported', reason: expect.stringContaining('does not update itself') });
    expect(await s.service.check()).toMatchObject({ ok: false, error: { code: 'not_available' } });
    // The choice is still kept for when it runs installed.
    expect((await s.service.setSettings({ feedUrl: s.feed.url, channel: 'stable' })).ok).toBe(true);
    expect(s.feed.requested).toEqual([]);
  });
  it('takes a new feed only once the agent confirms it outside the window; a cancel changes nothing', async () => {
    const s = await setup();
    publishRelease(s.feed, { channelFile: 'latest-linux.yml', version: '1.1.0', body: appImageScript('1.1.0') });
    s.answer = false;
    const refused = await s.service.setSettings({ feedUrl: s.feed.url, channel: 'stable' });
    expect(refused).toEqual({
      ok: false,
      error: { code: 'invalid_state', message: `The update feed was not changed: ${s.feed.url} was not confirmed`, text: { code: 'updates.feedNotConfirmed', values: { url: s.feed.url } } },
    });
    expect(s.confirmations).toEqual([s.feed.url]);
    expect(s.service.settings()).toEqual({ ok: true, value: { feedUrl: '', channel: 'stable' } });
    expect(s.service.status()).toEqual({ kind: 'off' });
    expect(existsSync(join(s.dir, 'data', 'updates.json'))).toBe(false);
    expect(s.feed.requested).toEqual([]);

    // A bad address is refused by its rule before anyone is asked.
    expect((await s.service.setSettings({ feedUrl: 'ftp://updates.example.com/', channel: 'stable' })).ok).toBe(false);
    expect(s.confirmations).toHaveLength(1);

    s.answer = true;
    expect(await s.service.setSettings({ feedUrl: s.feed.url, channel: 'stable' })).toEqual({ ok: true, value: { feedUrl: s.feed.url, channel: 'stable' } });
    expect(s.confirmations).toEqual([s.feed.url, s.feed.url]);
    await until(settled(s), 'the update is downloaded');

    // The same feed, another channel, or no feed at all needs no confirmation.
    s.answer = false;
    expect((await s.service.setSettings({ feedUrl: s.feed.url, channel: 'beta' })).ok).toBe(true);
    expect((await s.service.setSettings({ feedUrl: '', channel: 'beta' })).ok).toBe(true);
    expect(s.confirmations).toHaveLength(2);
    // Back to the feed after turning updates off is a change again.
    expect((await s.service.setSettings({ feedUrl: s.feed.url, channel: 'beta' })).ok).toBe(false);
    expect(s.confirmations).toHaveLength(3);
    expect(s.service.settings()).toEqual({ ok: true, value: { feedUrl: '', channel: 'beta' } });
  });

  it('without a way to ask the agent, a new feed is never taken', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'softphone-updates-'));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    const app = new TestApp('1.0.0', dir);
    await app.writeUpdateConfig();
    process.env.APPIMAGE = join(dir, 'Softphone.AppImage');
    const service = await startUpdateService({ dataDir: join(dir, 'data'), updater: feedUpdater(app), host: { liveCall: () => undefined }, firstCheckDelayMs: NEVER });
    cleanups.push(() => service.close());
    const refused = await service.setSettings({ feedUrl: 'https://updates.example.com/softphone/', channel: 'stable' });
    expect(refused).toMatchObject({ ok: false, error: { code: 'invalid_state', message: 'The update feed was not changed: https://updates.example.com/softphone/ was not confirmed' } });
    expect(service.settings()).toEqual({ ok: true, value: { feedUrl: '', channel: 'stable' } });
    expect((await service.setSettings({ feedUrl: '', channel: 'beta' })).ok).toBe(true);
  });

  it('a change of settings during a check cancels what it finds: the old feed’s version is never shown', async () => {
    const s = await setup();
    publishRelease(s.feed, { channelFile: 'latest-linux.yml', version: '1.1.0', body: appImageScript('1.1.0') });
    publishRelease(s.feed, { channelFile: 'beta-linux.yml', version: '1.2.0-beta.1', body: appImageScript('1.2.0-beta.1') });
    // The stable channel file answers only once the agent has switched to beta.
    let answerStable: () => void = () => undefined;
    s.feed.files.get('/latest-linux.yml')!.gate = new Promise<void>((resolve) => {
      answerStable = resolve;
    });

    await s.service.setSettings({ feedUrl: s.feed.url, channel: 'stable' });
    await until(() => s.feed.requested.includes('/latest-linux.yml'), 'the stable check starts');
    await s.service.setSettings({ feedUrl: s.feed.url, channel: 'beta' });
    const sinceChange = s.statuses.length;
    answerStable();

    await until(() => s.service.status().kind === 'ready', 'the beta is downloaded');
    expect(s.service.status()).toEqual({ kind: 'ready', version: '1.2.0-beta.1' });
    const shown = s.statuses.slice(sinceChange);
    expect(shown.filter((status) => 'version' in status && status.version === '1.1.0')).toEqual([]);
    expect(existsSync(join(s.app.pendingDir(), 'Softphone-1.1.0.AppImage'))).toBe(false);
    expect(s.feed.requested).toContain('/beta-linux.yml');
  });

  it('a restart that does not quit the app lets the window hide to the tray again', async () => {
    const s = await setup({ restartGiveUpMs: 200 });
    publishRelease(s.feed, { channelFile: 'latest-linux.yml', version: '1.1.0', body: appImageScript('1.1.0') });
    await s.service.setSettings({ feedUrl: s.feed.url, channel: 'stable' });
    await until(settled(s), 'the update is downloaded');
    expect(s.service.restart()).toEqual({ ok: true, value: null });
    expect(s.restartsPrepared).toBe(1);
    // The test's app counts the quit and goes on running: the restart did not happen.
    await until(() => s.app.quits === 1, 'the app is asked to quit');
    await until(() => s.restartsPrepared === 0, 'the window may hide again');
  });
});

// The recordings' flags of `npm run relay` (relay/REFERENCE.md "Recordings", "Flags and environment"):
// --record and its need of a bridge, the notice by language or file, the folder and the retention;
// every refusal names its flag and its rule. The notice file's own rules are read at start
// (loadRecordNotice), and a relay that records says so to its agents.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parseRelayCli } from '../../../relay/cli-options';
import { bundledNoticePath, loadRecordNotice } from '../../../relay/record-notice';
import { pcmWavFile } from '../../../shared/wav';
import { relayDataDir, type RelayDataDir } from '../../support/relay-data-dir';

const root = resolve(import.meta.dirname, '../../..');
const TOKEN = 'agent-token-1-0123456789abcdef0123';
const BRIDGE_TOKEN = 'bridge-token-0123456789abcdef-0123456789';
const good = ['--app-secret', 'app-secret-1', '--agent-token', TOKEN];
const LANGUAGES = 'en_US, en_GB, es_ES, es_MX, pt_BR, hi, id, ar';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  await Promise.all(cleanups.splice(0).map((cleanup) => cleanup()));
});

async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'relay-cli-recordings-'));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

const refusal = (args: string[], env: Record<string, string> = {}) => {
  const parsed = parseRelayCli([...good, ...args], env);
  return parsed.ok ? undefined : { message: parsed.error.message, field: parsed.error.field };
};

describe('the recordings flags', () => {
  it('keep no recordings without a bridge, and with one keep them in <data-dir>/recordings, recording never by default', () => {
    expect(parseRelayCli(good, {})).not.toHaveProperty('value.recordings');
    expect(parseRelayCli([...good, '--bridge'], {})).toMatchObject({ ok: true, value: { recordings: { mode: 'never', dir: 'relay-data/recordings' } } });
    expect(parseRelayCli([...good, '--bridge'], {})).not.toHaveProperty('value.recordings.notice');
    expect(parseRelayCli([...good, '--bridge-token', BRIDGE_TOKEN, '--data-dir', '/srv/relay'], {})).toMatchObject({ ok: true, value: { recordings: { mode: 'never', dir: '/srv/relay/recordings' } } });
  });

  it('read --record, the notice, the folder and the retention from flags or the environment, flags first', () => {
    expect(parseRelayCli([...good, '--bridge', '--record', 'on-demand'], {})).toEqual({
      ok: true,
      value: expect.objectContaining({ recordings: { mode: 'on-demand', dir: 'relay-data/recordings', notice: { language: 'en_US' } } }),
    });
    expect(
      parseRelayCli([...good, '--bridge', '--record', 'always', '--record-notice-language', 'pt_BR', '--recordings-dir', '/var/recordings', '--recordings-retention-days', '90'], {}),
    ).toMatchObject({ ok: true, value: { recordings: { mode: 'always', dir: '/var/recordings', retentionDays: 90, notice: { language: 'pt_BR' } } } });
    expect(parseRelayCli([...good, '--bridge', '--record', 'always', '--record-notice', 'notice.wav'], {})).toMatchObject({ ok: true, value: { recordings: { notice: { file: 'notice.wav' } } } });
    const env = { RELAY_BRIDGE: '1', RELAY_RECORD: 'always', RELAY_RECORD_NOTICE_LANGUAGE: 'hi', RELAY_RECORDINGS_DIR: '/env/rec', RELAY_RECORDINGS_RETENTION_DAYS: '7' };
    expect(parseRelayCli(good, env)).toMatchObject({ ok: true, value: { recordings: { mode: 'always', dir: '/env/rec', retentionDays: 7, notice: { language: 'hi' } } } });
    expect(parseRelayCli([...good, '--record', 'on-demand', '--record-notice-language', 'ar'], env)).toMatchObject({ ok: true, value: { recordings: { mode: 'on-demand', notice: { language: 'ar' } } } });
    expect(parseRelayCli(good, { RELAY_BRIDGE: '1', RELAY_RECORD: 'on-demand', RELAY_RECORD_NOTICE: '/etc/notice.wav' })).toMatchObject({ ok: true, value: { recordings: { notice: { file: '/etc/notice.wav' } } } });
  });

  it('refuse each broken rule naming the flag and the rule', () => {
    expect(refusal(['--record', 'on-demand'])).toEqual({ message: "--record on-demand needs a bridge (--bridge or --bridge-token): recordings are made on the team's bridge", field: '--record' });
    expect(refusal(['--record', 'always'])).toEqual({ message: "--record always needs a bridge (--bridge or --bridge-token): recordings are made on the team's bridge", field: '--record' });
    expect(refusal([], { RELAY_RECORD: 'always' })).toMatchObject({ field: '--record' });
    expect(refusal(['--bridge', '--record', 'sometimes'])).toEqual({ message: '--record must be one of never, on-demand, always (got "sometimes")', field: '--record' });
    expect(refusal(['--bridge', '--record-notice-language', 'en_US'])).toEqual({
      message: '--record-notice-language needs --record on-demand or --record always: it is the language of the notice played as a recording starts',
      field: '--record-notice-language',
    });
    expect(refusal(['--bridge', '--record', 'never', '--record-notice', 'n.wav'])).toEqual({
      message: '--record-notice needs --record on-demand or --record always: it is the notice played as a recording starts',
      field: '--record-notice',
    });
    expect(refusal(['--record-notice', 'n.wav'])).toMatchObject({ field: '--record-notice' });
    expect(refusal(['--bridge', '--record', 'always', '--record-notice-language', 'fr_FR'])).toEqual({ message: `--record-notice-language must be one of ${LANGUAGES} (got "fr_FR")`, field: '--record-notice-language' });
    expect(refusal(['--bridge', '--record', 'always', '--record-notice-language', 'en_US', '--record-notice', 'n.wav'])).toEqual({
      message: "--record-notice and --record-notice-language are two notices: give one (the team's own file, or the bundled notice of a language)",
      field: '--record-notice',
    });
    expect(refusal(['--bridge', '--record', 'always', '--record-notice', 'a\0b'])).toEqual({ message: '--record-notice must be the path of a WAV file', field: '--record-notice' });
    expect(refusal(['--recordings-dir', '/srv/rec'])).toEqual({ message: "--recordings-dir needs a bridge (--bridge or --bridge-token): recordings are made on the team's bridge", field: '--recordings-dir' });
    expect(refusal(['--recordings-retention-days', '30'])).toEqual({
      message: "--recordings-retention-days needs a bridge (--bridge or --bridge-token): recordings are made on the team's bridge",
      field: '--recordings-retention-days',
    });
    expect(refusal(['--bridge', '--recordings-dir', 'x\0y'])).toEqual({ message: '--recordings-dir must be a directory path', field: '--recordings-dir' });
    for (const days of ['0', '36501', '1.5', 'week', '-3']) {
      expect(refusal(['--bridge', `--recordings-retention-days=${days}`]), days).toEqual({
        message: `--recordings-retention-days must be a whole number of days from 1 to 36500 (got "${days}")`,
        field: '--recordings-retention-days',
      });
    }
    expect(refusal(['--bridge', '--recordings-retention-days', '36500'])).toBeUndefined();
  });
});

describe('loadRecordNotice', () => {
  it('reads a bundled notice, and a team’s file of any rate from 8 to 48 kHz, mono or stereo, as 48 kHz mono', async () => {
    const bundled = await loadRecordNotice(bundledNoticePath('en_US'));
    if (!bundled.ok) throw new Error(bundled.error.message);
    // 16 kHz to 48 kHz: three samples for one.
    expect(bundled.value.length).toBeGreaterThan(48_000);
    const dir = await tempDir();
    const stereo = join(dir, 'stereo.wav');
    await writeFile(stereo, pcmWavFile(new Int16Array(8_000 * 2).fill(1000), 8_000, 2));
    expect(await loadRecordNotice(stereo)).toMatchObject({ ok: true, value: { length: 48_000 } });
    const exact = join(dir, 'exact.wav');
    await writeFile(exact, pcmWavFile(Int16Array.from([1, 2, 3]), 48_000));
    expect(await loadRecordNotice(exact)).toEqual({ ok: true, value: Int16Array.from([1, 2, 3]) });
  });

  it('names the rule a file breaks, judging one too large to be a notice by its header alone', async () => {
    const dir = await tempDir();
    const cases: [string, Uint8Array, string][] = [
      ['text.wav', new TextEncoder().encode('this is no sound at all'), 'not a WAV file: it starts with "this", not "RIFF"'],
      ['surround.wav', pcmWavFile(new Int16Array(6 * 100), 16_000, 6), 'must be mono or stereo: this file has 6 channels'],
      ['slow.wav', pcmWavFile(new Int16Array(100), 6_000), 'must have a sample rate from 8000 to 48000 Hz: this file\'s is 6000 Hz'],
      ['fast.wav', pcmWavFile(new Int16Array(100), 96_000), 'must have a sample rate from 8000 to 48000 Hz: this file\'s is 96000 Hz'],
      ['empty.wav', pcmWavFile(new Int16Array(0), 16_000), 'holds no samples: a notice says something'],
      ['long.wav', pcmWavFile(new Int16Array(8_000 * 31), 8_000), 'must be at most 30 seconds long: this file lasts 31.0 s'],
      ['huge.wav', pcmWavFile(new Int16Array(48_000 * 2 * 40), 48_000, 2), 'must be at most 30 seconds long: this file lasts 40.0 s'],
    ];
    for (const [name, bytes, problem] of cases) {
      await writeFile(join(dir, name), bytes);
      expect(await loadRecordNotice(join(dir, name)), name).toEqual({ ok: false, error: { code: 'invalid_input', message: problem } });
    }
    expect(await loadRecordNotice(join(dir, 'missing.wav'))).toMatchObject({ ok: false, error: { message: expect.stringMatching(/^cannot be read: .*no such file/i) } });
  });
});

describe('npm run relay with recordings', () => {
  it('exits with code 2 naming the flag, the file and the rule of a notice it cannot play', async () => {
    const dir = await tempDir();
    const notice = join(dir, 'notice.wav');
    await writeFile(notice, pcmWavFile(new Int16Array(100), 96_000));
    const refused = await runCli([...good, '--bridge', '--record', 'on-demand', '--record-notice', notice, '--port', '0']);
    expect(refused.code).toBe(2);
    expect(refused.stderr.trim().split('\n')).toEqual([`relay: --record-notice: ${notice}: must have a sample rate from 8000 to 48000 Hz: this file's is 96000 Hz`]);
  });

  it('records with --bridge: its folder made for its owner, and its agents told the mode', async () => {
    const dir = await tempDir();
    const recordings = join(dir, 'kept', 'recordings');
    const child = await spawnCli([...good, '--bridge', '--record', 'always', '--record-notice-language', 'es_MX', '--recordings-dir', recordings, '--port', '0', '--log-level', 'error']);
    const exited = new Promise<number | null>((done) => child.on('exit', (code) => done(code)));
    const url = await listeningUrl(child);
    const me = await fetch(`${url}/me`, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(await me.json()).toMatchObject({ agentId: 'agent-1', bridged: true, record: 'always' });
    expect((await stat(recordings)).mode & 0o777).toBe(0o700);
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
  });
});

/** `npm run relay` in the checkout, its files in a data directory of its own. */
async function spawnCli(args: string[]): Promise<ChildProcessWithoutNullStreams> {
  const data: RelayDataDir = await relayDataDir();
  cleanups.push(() => data.remove());
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('RELAY_')));
  return spawn(process.execPath, ['--import', 'tsx', 'relay/cli.ts', ...args, ...data.flags], { cwd: root, env });
}

async function runCli(args: string[]): Promise<{ code: number | null; stderr: string }> {
  const child = await spawnCli(args);
  return new Promise((done) => {
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('exit', (code) => done({ code, stderr }));
  });
}

/** The URL a started relay prints; rejects when it exits first. */
function listeningUrl(child: ChildProcessWithoutNullStreams): Promise<string> {
  let stdout = '';
  return new Promise<string>((done, fail) => {
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      const match = /relay listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(stdout);
      if (match) done(match[1]!);
    });
    child.on('exit', () => fail(new Error(`the relay exited early: ${stdout}`)));
  });
}

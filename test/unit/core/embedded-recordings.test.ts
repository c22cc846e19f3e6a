// The embedded team records on demand (electron/embedded.ts): given the host's folder for
// recordings, its relay says so to the app, keeps them there, and serves none it does not have;
// without one, it never records.
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { startEmbeddedEnvironment } from '../../../electron/embedded';
import { RECORDING_AGENT_PATHS } from '../../../shared/bridge-recording';
import { configureLogging } from '../../../shared/log';

configureLogging({ sink: () => undefined });

const closing: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of closing.splice(0).reverse()) await close();
});

it('records on demand into the host’s folder, with the bundled notice', { timeout: 60_000 }, async () => {
  const dataDir = await mkdtemp(join(tmpdir(), 'embedded-recordings-'));
  closing.push(() => rm(dataDir, { recursive: true, force: true }));
  const recordingsDir = join(dataDir, 'relay-data', 'recordings');
  const env = await startEmbeddedEnvironment({ recordingsDir });
  closing.push(() => env.close());
  const { relayUrl, agentToken } = env.account;
  const headers = { authorization: `Bearer ${agentToken}` };
  expect(await (await fetch(`${relayUrl}/me`, { headers })).json()).toMatchObject({ bridged: true, record: 'on-demand' });
  expect((await stat(recordingsDir)).isDirectory()).toBe(true);
  expect((await fetch(`${relayUrl}${RECORDING_AGENT_PATHS.file('wacid.none')}`, { headers })).status).toBe(404);
});

it('never records without a folder for recordings', { timeout: 60_000 }, async () => {
  const env = await startEmbeddedEnvironment();
  closing.push(() => env.close());
  const me = (await (await fetch(`${env.account.relayUrl}/me`, { headers: { authorization: `Bearer ${env.account.agentToken}` } })).json()) as Record<string, unknown>;
  expect(me).toMatchObject({ bridged: true });
  expect(me).not.toHaveProperty('record');
});

// The service's own recording and transcription through the service, as the window reaches it:
// Settings → saveServiceCapture (kept beside the other settings, in every settings answer and push,
// refused naming the field), what accept and initiate then carry to the gateway (never reject or
// terminate), and a call's recording and transcript kept with its recent-calls entry when the
// service says they are ready, played with getServiceRecording and read with getTranscript. Real
// servers on 127.0.0.1 throughout.
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { MemorySecretStore } from '../../../electron/core/secret-store';
import { createSoftphoneService, type SoftphoneService } from '../../../electron/core/softphone-service';
import type { PushMessage } from '../../../shared/api';
import type { HistoryEntry } from '../../../shared/history';
import { configureLogging } from '../../../shared/log';
import { DEFAULT_SERVICE_CAPTURE, type ServiceCaptureSettings } from '../../../shared/service-capture';
import type { AccountConfig, PublicSettings } from '../../../shared/settings';
import { ANSWER_SDP, DIAL_OFFER_SDP, OFFER_SDP } from '../../fixtures/sdp';
import { happyGateway, initiated, startFakeGateway, type FakeGateway } from './fake-gateway';
import { mediaLibrary, mediaRoutes, type MediaLibrary } from './fake-media';
import { ALICE, startTeamRelay, type TeamRelay } from './team-relay';

configureLogging({ sink: () => undefined });

const API_KEY = 'account-api-key-capture-1';
const ASKED: ServiceCaptureSettings = { record: true, transcribe: true, purpose: 'Quality and training', language: 'en_GB' };
const REQUEST = { status: 'ENABLED', purpose: 'Quality and training', announcement_language: 'en_GB' };

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function until(what: string, condition: () => boolean, ms = 5_000): Promise<void> {
  for (let waited = 0; waited < ms && !condition(); waited += 5) await new Promise((resolve) => setTimeout(resolve, 5));
  if (!condition()) throw new Error(`never happened: ${what}`);
}

interface Desk {
  dataDir: string;
  relay: TeamRelay;
  gateway: FakeGateway;
  library: MediaLibrary;
  pushes: PushMessage[];
  app: SoftphoneService;
  /** The app started again on the same data folder (the one before closed first). */
  open(): Promise<SoftphoneService>;
}

/** Alice's app on an account: a relay, a gateway with call control and media. */
async function desk(): Promise<Desk> {
  const dataDir = await mkdtemp(join(tmpdir(), 'softphone-capture-service-'));
  const relay = await startTeamRelay([ALICE]);
  const library = mediaLibrary(API_KEY);
  const routes = mediaRoutes(library, { keyOnDownload: true });
  const gateway = await startFakeGateway((req) => routes(req) ?? (req.path.endsWith('/initiate') ? initiated('wacid.out-c1') : happyGateway(req)));
  library.fileOrigin = new URL(gateway.baseUrl).origin;
  const account: AccountConfig = { gatewayUrl: gateway.baseUrl, apiKey: API_KEY, productSegment: 'chatapp', relayUrl: relay.url, agentToken: ALICE.token };
  const pushes: PushMessage[] = [];
  const open = async (): Promise<SoftphoneService> => {
    const app = await createSoftphoneService({ dataDir, secrets: new MemorySecretStore(), account });
    cleanups.push(() => app.close());
    app.subscribe((p) => pushes.push(p));
    await until('the stream connects', () => relay.connected('alice') === 1);
    return app;
  };
  cleanups.push(async () => {
    await gateway.close();
    await relay.close();
    await rm(dataDir, { recursive: true, force: true });
  });
  const app = await open();
  return { dataDir, relay, gateway, library, pushes, app, open };
}

const bodiesOf = (gateway: FakeGateway, action: string): unknown[] => gateway.requests.filter((r) => r.path.endsWith(`/calls/${action}`)).map((r) => r.body);

/** A call to Alice that she answers and hangs up: its entry in recent calls. */
async function answered(d: Desk, callId: string): Promise<void> {
  d.relay.send({ type: 'call.incoming', callId, from: '447400123456', name: 'Ada Lovelace', sdp: OFFER_SDP, timestamp: Date.now() }, ['alice']);
  await until(`${callId} rings`, () => d.pushes.some((p) => p.name === 'callChanged' && p.payload.callId === callId && p.payload.phase === 'ringing'));
  expect(await d.app.handle('answerCall', { localId: `in:${callId}`, sdp: ANSWER_SDP })).toEqual({ ok: true, value: null });
  expect(await d.app.handle('hangUp', { localId: `in:${callId}` })).toEqual({ ok: true, value: null });
  await until(`${callId} is in recent calls`, () => historyOf(d.pushes, callId) !== undefined);
}

const settingsPushes = (pushes: PushMessage[]): PublicSettings[] =>
  pushes.filter((p): p is Extract<PushMessage, { name: 'settingsChanged' }> => p.name === 'settingsChanged').map((p) => p.payload);

/** The call's entry as the last historyChanged push had it. */
function historyOf(pushes: PushMessage[], callId: string): HistoryEntry | undefined {
  const last = pushes.filter((p): p is Extract<PushMessage, { name: 'historyChanged' }> => p.name === 'historyChanged').at(-1);
  return last?.payload.find((e) => e.callId === callId);
}

describe('Settings → the service’s recording and transcription', () => {
  it('starts with nothing asked, saves beside the other settings, pushes settingsChanged and survives a restart', async () => {
    const d = await desk();
    expect(await d.app.handle('getSnapshot', {})).toMatchObject({ ok: true, value: { settings: { serviceCapture: DEFAULT_SERVICE_CAPTURE } } });

    const saved = await d.app.handle('saveServiceCapture', { serviceCapture: { ...ASKED, purpose: '  Quality and training ' } });
    expect(saved).toEqual({ ok: true, value: expect.objectContaining({ mode: 'account', serviceCapture: ASKED, network: expect.objectContaining({ servers: [] }) }) });
    expect(settingsPushes(d.pushes)).toContainEqual(saved.ok && saved.value);
    expect(JSON.parse(await readFile(join(d.dataDir, 'service-capture.json'), 'utf8'))).toEqual(ASKED);

    await d.app.close();
    const app = await d.open();
    expect(await app.handle('getSnapshot', {})).toMatchObject({ ok: true, value: { settings: { serviceCapture: ASKED } } });
  });

  it('refuses a missing or over-long purpose naming the field, and changes nothing', async () => {
    const d = await desk();
    const before = settingsPushes(d.pushes).length;
    const missing = await d.app.handle('saveServiceCapture', { serviceCapture: { ...ASKED, transcribe: false, purpose: ' ' } });
    expect(missing).toMatchObject({ ok: false, error: { code: 'invalid_input', field: 'serviceCapture.purpose' } });
    const long = await d.app.handle('saveServiceCapture', { serviceCapture: { ...ASKED, purpose: 'p'.repeat(251) } });
    expect(long).toMatchObject({ ok: false, error: { code: 'invalid_input', field: 'serviceCapture.purpose', message: expect.stringContaining('250') } });
    expect(settingsPushes(d.pushes).slice(before).filter((s) => s.serviceCapture.record)).toEqual([]);
    expect(await readdir(d.dataDir)).not.toContain('service-capture.json');
    // Nothing asked for: no purpose needed.
    expect(await d.app.handle('saveServiceCapture', { serviceCapture: DEFAULT_SERVICE_CAPTURE })).toMatchObject({ ok: true, value: { serviceCapture: DEFAULT_SERVICE_CAPTURE } });
    expect(await readdir(d.dataDir)).toContain('service-capture.json');
  });

  it('a damaged file is kept aside and nothing is asked of the service', async () => {
    const d = await desk();
    expect((await d.app.handle('saveServiceCapture', { serviceCapture: ASKED })).ok).toBe(true);
    await d.app.close();
    await writeFile(join(d.dataDir, 'service-capture.json'), '{"record": tru');
    const app = await d.open();
    expect(await app.handle('getSnapshot', {})).toMatchObject({ ok: true, value: { settings: { serviceCapture: DEFAULT_SERVICE_CAPTURE } } });
    expect((await readdir(d.dataDir)).filter((f) => f.startsWith('service-capture.json'))).toEqual([expect.stringMatching(/^service-capture\.json\..+/)]);
  });
});

describe('accept and initiate', () => {
  it('carry what the settings ask for, from the next call on; reject and terminate never do', async () => {
    const d = await desk();
    await answered(d, 'wacid.c0');
    expect((await d.app.handle('saveServiceCapture', { serviceCapture: ASKED })).ok).toBe(true);
    await answered(d, 'wacid.c1');
    const dialed = await d.app.handle('startCall', { localId: 'out:c1', to: '+44 7400 123456', sdp: DIAL_OFFER_SDP });
    expect(dialed).toMatchObject({ ok: true, value: { callId: 'wacid.out-c1' } });
    expect(await d.app.handle('hangUp', { localId: 'out:c1' })).toEqual({ ok: true, value: null });
    d.relay.send({ type: 'call.incoming', callId: 'wacid.c2', from: '447400123456', sdp: OFFER_SDP, timestamp: Date.now() }, ['alice']);
    await until('wacid.c2 rings', () => d.pushes.some((p) => p.name === 'callChanged' && p.payload.callId === 'wacid.c2' && p.payload.phase === 'ringing'));
    expect(await d.app.handle('declineCall', { localId: 'in:wacid.c2' })).toEqual({ ok: true, value: null });
    await until('the calls end on the gateway', () => bodiesOf(d.gateway, 'terminate').length === 3 && bodiesOf(d.gateway, 'reject').length === 1);

    const accepts = bodiesOf(d.gateway, 'accept');
    expect(accepts).toEqual([
      expect.not.objectContaining({ recording: expect.anything() }),
      expect.objectContaining({ call_id: 'wacid.c1', recording: REQUEST, transcription: REQUEST }),
    ]);
    expect(accepts[0]).not.toHaveProperty('transcription');
    expect(bodiesOf(d.gateway, 'initiate')).toEqual([expect.objectContaining({ action: 'connect', recording: REQUEST, transcription: REQUEST })]);
    for (const body of [...bodiesOf(d.gateway, 'terminate'), ...bodiesOf(d.gateway, 'reject')]) expect(Object.keys(body as object).sort()).toEqual(['action', 'call_id', 'messaging_product']);

    // Only the recording asked for: the transcription is left out.
    expect((await d.app.handle('saveServiceCapture', { serviceCapture: { ...ASKED, transcribe: false } })).ok).toBe(true);
    await answered(d, 'wacid.c3');
    const last = bodiesOf(d.gateway, 'accept').at(-1);
    expect(last).toMatchObject({ call_id: 'wacid.c3', recording: REQUEST });
    expect(last).not.toHaveProperty('transcription');
  });
});

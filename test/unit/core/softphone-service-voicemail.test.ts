// Voicemails and callback requests through the service, as the window reaches them: a declined
// call's voicemail marked in recent calls (historyChanged) and kept in the data folder, played with
// getVoicemail, fetched again at the next start when it was not kept; takeCallback against the
// relay's contract ("Taken by NAME" in the agent's language); the sandbox's voicemail and
// callback-request controls, refused outside the sandbox. Real servers on 127.0.0.1 throughout.
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { EmbeddedEnvironment } from '../../../electron/core/embedded-environment';
import { MemorySecretStore } from '../../../electron/core/secret-store';
import { createSoftphoneService } from '../../../electron/core/softphone-service';
import { mediaFileName } from '../../../electron/core/media-files';
import { desktopTexts } from '../../../electron/desktop/desktop-texts';
import type { CallbackRequest } from '../../../shared/callbacks';
import { LANGUAGES } from '../../../shared/i18n/languages';
import { text } from '../../../shared/i18n/text';
import { configureLogging } from '../../../shared/log';
import { OFFER_SDP } from '../../fixtures/sdp';
import { happyGateway, json, startFakeGateway, type RecordedRequest } from './fake-gateway';
import { VOICE_MIME, voiceBytes } from './fake-media';
import { closeDesks, closeWithDesks, historyOf, mediaDesk, until, type Desk } from './media-desk';
import { ALICE, BOB, startTeamRelay, type TeamRelay } from './team-relay';

configureLogging({ sink: () => undefined });

const API_KEY = 'account-api-key-voicemail-1';

afterEach(closeDesks);

/** Alice's app on an account: a relay, a gateway with call control and media. */
const desk = (): Promise<Desk> => mediaDesk({ apiKey: API_KEY, dirPrefix: 'softphone-voicemail-service-', agents: [ALICE, BOB] });

/** A call to Alice that she declines: its entry in recent calls. */
async function declined(d: Desk, callId: string): Promise<void> {
  d.relay.send({ type: 'call.incoming', callId, from: '447400123456', name: 'Ada Lovelace', sdp: OFFER_SDP, timestamp: Date.now() }, ['alice']);
  await until(`${callId} rings`, () => d.pushes.some((p) => p.name === 'callChanged' && p.payload.callId === callId && p.payload.phase === 'ringing'));
  expect(await d.app.handle('declineCall', { localId: `in:${callId}` })).toEqual({ ok: true, value: null });
  await until(`${callId} is in recent calls`, () => historyOf(d.pushes, callId) !== undefined);
}


const leaveVoicemail = (relay: TeamRelay, callId: string, mediaId: string, at = Date.now()): void =>
  relay.send({ type: 'message.inbound', messageId: callId, from: '447400123456', name: 'Ada Lovelace', timestamp: at, messageType: 'audio', mediaId });

describe('a declined call’s voicemail', () => {
  it('is marked in recent calls at once, kept in the data folder, and played by getVoicemail', async () => {
    const d = await desk();
    const bytes = voiceBytes(30_000, 21);
    d.library.files.set('media-d1', { bytes, mimeType: VOICE_MIME });
    await declined(d, 'wacid.d1');
    expect(historyOf(d.pushes, 'wacid.d1')).toMatchObject({ outcome: 'declined' });
    expect(historyOf(d.pushes, 'wacid.d1')!.voicemail).toBeUndefined();

    const at = Date.now();
    leaveVoicemail(d.relay, 'wacid.d1', 'media-d1', at);
    await until('marked', () => historyOf(d.pushes, 'wacid.d1')?.voicemail !== undefined);
    // The first word of it the windows hear: marked, not kept yet.
    const marked = d.pushes.filter((p) => p.name === 'historyChanged').map((p) => historyOf([p], 'wacid.d1')?.voicemail).find((v) => v !== undefined);
    expect(marked).toEqual({ mediaId: 'media-d1', at, saved: false });
    await until('kept', () => historyOf(d.pushes, 'wacid.d1')?.voicemail?.saved === true);
    expect(await readdir(join(d.dataDir, 'voicemails'))).toContain(`${mediaFileName('wacid.d1')}.ogg`);

    expect(await d.app.handle('getVoicemail', { callId: 'wacid.d1' })).toEqual({ ok: true, value: { mimeType: VOICE_MIME, data: bytes.toString('base64') } });
    expect(await d.app.handle('getSnapshot', {})).toMatchObject({ ok: true, value: { history: [{ callId: 'wacid.d1', voicemail: { mediaId: 'media-d1', saved: true } }] } });
    expect(await d.app.handle('getVoicemail', { callId: 'wacid.none' })).toMatchObject({ ok: false, error: { code: 'not_found', text: text('voicemail.none', { callId: 'wacid.none' }) } });
  });

  it('not kept when the app closes, is fetched at its next start', async () => {
    const d = await desk();
    const bytes = voiceBytes(8_000, 22);
    d.library.files.set('media-d2', { bytes, mimeType: VOICE_MIME });
    d.library.failingLookups = 1;
    await declined(d, 'wacid.d2');
    leaveVoicemail(d.relay, 'wacid.d2', 'media-d2');
    await until('the fetch failed', () => historyOf(d.pushes, 'wacid.d2')?.voicemail?.fetchError !== undefined);
    await d.app.close();
    const lookups = (): RecordedRequest[] => d.gateway.requests.filter((r) => r.path === '/restapi/v1/chatapp/media/media-d2');
    expect(lookups()).toHaveLength(1);

    const app = await d.open();
    await until('kept at start', () => historyOf(d.pushes, 'wacid.d2')?.voicemail?.saved === true);
    expect(lookups()).toHaveLength(2);
    expect(await app.handle('getVoicemail', { callId: 'wacid.d2' })).toEqual({ ok: true, value: { mimeType: VOICE_MIME, data: bytes.toString('base64') } });
  });

  it('plays a team voicemail this app has no entry for, by the media id the Team view gives', async () => {
    const d = await desk();
    const bytes = voiceBytes(4_000, 23);
    d.library.files.set('media-team', { bytes, mimeType: VOICE_MIME });
    expect(await d.app.handle('getVoicemail', { callId: 'wacid.colleague', mediaId: 'media-team' })).toEqual({ ok: true, value: { mimeType: VOICE_MIME, data: bytes.toString('base64') } });
  });
});

describe('takeCallback', () => {
  const request = (id: string, extra: Partial<CallbackRequest> = {}): CallbackRequest => ({
    id,
    number: '447400123456',
    name: 'Ada Lovelace',
    requestedAt: Date.now() - 60_000,
    expiresAt: Date.now() + 6 * 24 * 3_600_000,
    permanent: false,
    ...extra,
  });

  it('takes a request for this agent (again when it already is hers)', async () => {
    const d = await desk();
    d.relay.callbacks.set('wacid.cb-1', request('wacid.cb-1'));
    const taken = await d.app.handle('takeCallback', { id: 'wacid.cb-1' });
    expect(taken).toEqual({ ok: true, value: { ...request('wacid.cb-1'), requestedAt: expect.any(Number), expiresAt: expect.any(Number), takenBy: { agentId: 'alice', name: 'Alice Agent', at: expect.any(Number) } } });
    expect(await d.app.handle('takeCallback', { id: 'wacid.cb-1' })).toEqual(taken);
    expect(d.relay.requests.filter((r) => r.method === 'POST').map((r) => [r.path, r.authorization])).toEqual([
      ['/team/callbacks/wacid.cb-1/take', `Bearer ${ALICE.token}`],
      ['/team/callbacks/wacid.cb-1/take', `Bearer ${ALICE.token}`],
    ]);
  });

  it('refuses a colleague’s with "Taken by NAME", in every language, and one no longer on the list', async () => {
    const d = await desk();
    d.relay.callbacks.set('wacid.cb-2', request('wacid.cb-2', { takenBy: { agentId: 'bob', name: 'Bob Agent', at: Date.now() } }));
    const refused = await d.app.handle('takeCallback', { id: 'wacid.cb-2' });
    expect(refused).toEqual({
      ok: false,
      error: { code: 'answered_elsewhere', message: 'Taken by Bob Agent', text: text('callbacks.taken', { name: 'Bob Agent' }), httpStatus: 409, detail: 'taken by bob' },
    });
    const said = LANGUAGES.map((language) => (refused.ok ? '' : desktopTexts(language).text(refused.error.text!)));
    expect(said[0]).toBe('Taken by Bob Agent');
    for (const [i, words] of said.entries()) {
      expect(words, LANGUAGES[i]).toContain('Bob Agent');
      if (i > 0) expect(words, LANGUAGES[i]).not.toBe(said[0]);
    }
    expect(said.slice(1)).toEqual(['Lo tomó Bob Agent', 'Assumido por Bob Agent', 'Bob Agent ने लिया', 'Diambil oleh Bob Agent', 'أخذه \u2066Bob Agent\u2069']);

    expect(await d.app.handle('takeCallback', { id: 'wacid.cb-gone' })).toEqual({
      ok: false,
      error: { code: 'not_found', message: "This callback request is no longer on the team's list", text: text('callbacks.gone'), httpStatus: 404 },
    });
    expect(d.relay.callbacks.get('wacid.cb-2')!.takenBy!.agentId).toBe('bob');
  });
});

describe('the sandbox’s voicemail and callback request', () => {
  it('reach the sandbox’s controls in sandbox mode, and are refused on an account', async () => {
    const control: RecordedRequest[] = [];
    const sandbox = await startFakeGateway((req) => {
      if (req.path === '/control/customers' || req.path === '/control/templates') return json(200, []);
      if (req.path === '/control/voicemail' || req.path === '/control/callback-request') {
        control.push(req);
        const number = (req.body as { number?: string }).number;
        if (number === '449999999999') return json(409, { error: 'no unanswered incoming call from 449999999999' });
        return json(200, req.path === '/control/voicemail' ? { callId: 'wacid.sb-1', mediaId: 'media-sb-1' } : { callId: 'wacid.sb-1', messageId: 'wamid.sb-2' });
      }
      return happyGateway(req);
    });
    const relay = await startTeamRelay([ALICE]);
    const dataDir = await mkdtemp(join(tmpdir(), 'softphone-voicemail-sandbox-'));
    closeWithDesks(async () => {
      await sandbox.close();
      await relay.close();
      await rm(dataDir, { recursive: true, force: true });
    });
    const embedded = (): Promise<EmbeddedEnvironment> =>
      Promise.resolve({
        account: { gatewayUrl: sandbox.baseUrl, apiKey: 'sandbox-key-0001', productSegment: 'chatapp', relayUrl: relay.url, agentToken: ALICE.token },
        sandboxControlUrl: sandbox.baseUrl.replace(/\/restapi\/v1$/, ''),
        close: () => Promise.resolve(),
      });
    const app = await createSoftphoneService({ dataDir, secrets: new MemorySecretStore(), embedded });
    closeWithDesks(() => app.close());

    expect(await app.handle('simulateVoicemail', { number: '447400123456' })).toEqual({ ok: true, value: { callId: 'wacid.sb-1' } });
    expect(await app.handle('simulateCallbackRequest', { number: '447400123456' })).toEqual({ ok: true, value: { callId: 'wacid.sb-1' } });
    expect(control.map((r) => [r.method, r.path, r.body])).toEqual([
      ['POST', '/control/voicemail', { number: '447400123456' }],
      ['POST', '/control/callback-request', { number: '447400123456' }],
    ]);
    expect(await app.handle('simulateVoicemail', { number: '449999999999' })).toMatchObject({ ok: false, error: { code: 'invalid_input', httpStatus: 409 } });

    const d = await desk();
    const outside = { ok: false, error: { code: 'not_available', text: text('service.sandboxOnly') } };
    expect(await d.app.handle('simulateVoicemail', { number: '447400123456' })).toMatchObject(outside);
    expect(await d.app.handle('simulateCallbackRequest', { number: '447400123456' })).toMatchObject(outside);
  });
});

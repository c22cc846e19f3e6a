// The app shell's words in the agent's language: the header's missed calls (a plural in every form
// the language has), the sandbox's customer list (numbers and durations through Intl), the notices
// the sandbox and the host link make, and the English that the accessible names keep.
import { afterEach, describe, expect, test } from 'vitest';
import type { AppSnapshot } from '../../../shared/api';
import type { HistoryEntry } from '../../../shared/history';
import { err, ok, type Result } from '../../../shared/result';
import ptBR from '../../../shared/i18n/locales/pt-BR/index';
import { DEFAULT_CUSTOMERS } from '../../../sandbox/customers';
import { HostSync } from '../../../renderer/app/host-sync';
import { SandboxActions } from '../../../renderer/app/sandbox-actions';
import { permanentLink } from '../../../renderer/bridge/host-link';
import { connectBrowserHost, createWsBridge } from '../../../renderer/bridge/ws-bridge';
import { missedCallsButton } from '../../../renderer/components/Header';
import { sandboxCustomerText, sandboxNetworkText } from '../../../renderer/components/SandboxPanel';
import { snapshotProblemText } from '../../../renderer/error-texts';
import { setUiLanguage } from '../../../renderer/i18n/i18n';
import { appStore, resetStore } from '../../../renderer/store/store';
import { fakeApi } from './fake-api';
import { T0 } from './fixtures';

afterEach(async () => {
  await setUiLanguage('en', undefined);
  resetStore();
});

const missed = (count: number): HistoryEntry[] =>
  Array.from({ length: count }, (_, i) => ({
    localId: `in:${i}`,
    direction: 'incoming',
    outcome: 'missed',
    startedAt: T0 + i * 1_000 - 500,
    endedAt: T0 + i * 1_000,
    durationSec: 0,
    number: '447700900123',
  }));
const missedText = (count: number) => missedCallsButton(missed(count), 0)?.text;

const lossy = DEFAULT_CUSTOMERS.find((c) => c.network?.lossPercent !== undefined)!;
const blackout = DEFAULT_CUSTOMERS.find((c) => c.network?.blackoutMs !== undefined)!;

describe('the header’s missed calls', () => {
  test('English keeps the accessible names the tests rely on', () => {
    expect([missedText(1), missedText(2), missedText(12)]).toEqual(['1 missed call', '2 missed calls', '12 missed calls']);
  });

  test('Spanish and Arabic use their own plural forms', async () => {
    await setUiLanguage('es', undefined);
    expect([missedText(1), missedText(3)]).toEqual(['1 llamada perdida', '3 llamadas perdidas']);
    await setUiLanguage('ar', undefined);
    expect([missedText(1), missedText(2), missedText(3), missedText(11), missedText(100)]).toEqual([
      'مكالمة فائتة واحدة',
      'مكالمتان فائتتان',
      '3 مكالمات فائتة',
      '11 مكالمة فائتة',
      '100 مكالمة فائتة',
    ]);
    await setUiLanguage('id', undefined);
    expect(missedText(4)).toBe('4 panggilan tak terjawab');
  });
});

describe('the sandbox’s customer list', () => {
  test('says each built-in bad network from its numbers, through Intl', async () => {
    expect(sandboxNetworkText(lossy.network!)).toBe('lossy network (5% loss, 40 ms jitter)');
    expect(sandboxNetworkText(blackout.network!)).toBe('network blackout (10 sec, 8 sec into the call)');
    expect(sandboxNetworkText({ label: 'a network of its own' })).toBe('a network of its own');

    await setUiLanguage('es', undefined);
    // Spanish writes a percentage with a no-break space and joins units with "y".
    expect(sandboxNetworkText(lossy.network!)).toBe('red con pérdidas (5\u00a0% de pérdida y 40 ms de jitter)');
    expect(sandboxNetworkText(blackout.network!)).toBe('corte de red (10 s, a los 8 s de iniciar la llamada)');
    await setUiLanguage('hi', undefined);
    expect(sandboxNetworkText(lossy.network!)).toBe('पैकेट लॉस वाला नेटवर्क (5% लॉस, 40 मि॰से॰ जिटर)');
  });

  test('keeps the phone number left to right inside the line, also in Arabic', async () => {
    await setUiLanguage('ar', undefined);
    const line = sandboxCustomerText(lossy);
    expect(line.startsWith(`${lossy.name} · \u2066+1 202 555 0105\u2069 (`)).toBe(true);
    expect(line).toContain('شبكة تفقد حزمًا');
    // Latin digits, as intlLocale() asks for Arabic.
    expect(line).toMatch(/فقدان 5\u200e?%/);
  });
});

describe('notices made as things happen', () => {
  test('the sandbox asks for a customer and a message in the agent’s language', async () => {
    const fake = fakeApi({});
    const sandbox = new SandboxActions({ api: fake.api, store: appStore, selectContact: () => undefined });
    await sandbox.simulateIncomingCall();
    expect(appStore.getState().sandboxError).toBe('Choose a sandbox customer first.');

    await setUiLanguage('pt-BR', undefined);
    await sandbox.simulateIncomingCall();
    expect(appStore.getState().sandboxError).toBe('Escolha um cliente de teste primeiro.');
    appStore.getState().setSandboxSelection('12025550101');
    await sandbox.simulateInboundMessage();
    expect(appStore.getState().sandboxError).toBe('Digite o que o cliente escreve.');
    expect(fake.calls).toEqual([]);
  });

  test('a snapshot refused or unreadable, or a start that failed, is said in the language the banner is shown in', async () => {
    // All happen at the start, before the agent's language is in place: the banner words them later.
    const syncWith = (getSnapshot: () => Result<AppSnapshot>) =>
      new HostSync({
        api: fakeApi({ getSnapshot }).api,
        link: permanentLink(),
        store: appStore,
        calls: { callChanged: () => undefined, callsReloaded: () => undefined, dialRequested: async () => undefined, customerLegQuality: () => undefined },
        selectContact: () => undefined,
        setUpdateStatus: () => undefined,
      });
    await syncWith(() => ok({ nonsense: true }) as unknown as Result<AppSnapshot>).refreshSnapshot();
    // What the banner (components/HostBanner.tsx) gives as its reason.
    const reason = () => snapshotProblemText(appStore.getState().snapshotError!);
    await setUiLanguage('id', undefined);
    expect(reason()).toBe('Layanan softphone mengirim data yang tidak dapat dibaca jendela ini. Muat ulang jendela.');

    await setUiLanguage('en', undefined);
    appStore.getState().setSnapshotError({ kind: 'startFailed', reason: 'the bridge is closed' });
    await setUiLanguage('es', undefined);
    expect(reason()).toBe('La ventana no pudo conectarse con el servicio del softphone (the bridge is closed).');

    await setUiLanguage('en', undefined);
    await syncWith(() => err('timeout', 'the softphone service did not answer')).refreshSnapshot();
    await setUiLanguage('pt-BR', undefined);
    expect(reason()).toBe(ptBR.errors.code.timeout);
  });

  test('a page the softphone did not serve, or with no token, says how to open it', async () => {
    const history = { state: null, replaceState: () => undefined };
    await setUiLanguage('es', undefined);
    const notServed = connectBrowserHost({ location: { href: 'file:///index.html', host: '', protocol: 'file:' }, history });
    expect(notServed.link.state()).toEqual({
      status: 'unavailable',
      message: 'Esta página no se abrió desde el servicio del softphone; inícialo con "npm start" y abre la dirección que muestra.',
    });
    const noToken = connectBrowserHost({ location: { href: 'http://127.0.0.1:1/', host: '127.0.0.1:1', protocol: 'http:' }, history });
    const answer = await noToken.api.getSnapshot({});
    expect(answer).toEqual({
      ok: false,
      error: { code: 'gateway_unreachable', message: 'La dirección de la página no tiene token de acceso; abre la dirección que mostró el softphone al iniciarse.' },
    });
  });

  test('a bridge closed by the page fails its commands in the agent’s language', async () => {
    await setUiLanguage('hi', undefined);
    const { api, link } = createWsBridge({ url: 'ws://127.0.0.1:9/api', createSocket: () => ({ readyState: 0, send: () => undefined, close: () => undefined, addEventListener: () => undefined }) });
    link.close();
    expect(link.state()).toEqual({ status: 'unavailable', message: 'सॉफ़्टफ़ोन सेवा से कनेक्शन बंद हो गया' });
    expect(await api.getSnapshot({})).toEqual({ ok: false, error: { code: 'gateway_unreachable', message: 'सॉफ़्टफ़ोन सेवा से कनेक्शन बंद हो गया' } });
  });
});

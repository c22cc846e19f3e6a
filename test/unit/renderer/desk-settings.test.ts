// The desk settings' rules: a refusal lands next to the shortcut it names, only edited shortcuts are
// sent, a global shortcut another application holds is named for its field, and "Start at login" is
// offered only where Electron has login items. And the whole Settings screen in another language and
// in the pseudo-locale, where any text that bypassed translation shows.
import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { afterEach, beforeEach, describe, expect, test, vi } from 'vitest';
import { applyPreferencesPatch, DEFAULT_PREFERENCES } from '../../../shared/preferences';
import { ok } from '../../../shared/result';
import { ControllersContext } from '../../../renderer/app/controllers-context';
import { createControllers } from '../../../renderer/app/controllers';
import { permanentLink } from '../../../renderer/bridge/host-link';
import { DeskSettings, offersStartAtLogin, shortcutOfError, shortcutsPatch, takenShortcutText } from '../../../renderer/components/DeskSettings';
import { DeviceNotice } from '../../../renderer/components/DeviceNotice';
import { SettingsScreen } from '../../../renderer/components/SettingsScreen';
import { setUiLanguage } from '../../../renderer/i18n/i18n';
import { PSEUDO_CLOSE, PSEUDO_OPEN } from '../../../renderer/i18n/pseudo';
import { appStore, resetStore } from '../../../renderer/store/store';
import { fakeApi } from './fake-api';
import { accountSettings, idleMediaControls } from './fixtures';

describe('a refused shortcut', () => {
  test('is placed next to the field the main process names', () => {
    const taken = applyPreferencesPatch(DEFAULT_PREFERENCES, { shortcuts: { mute: 'Ctrl+Shift+A' } });
    expect(taken.ok).toBe(false);
    if (!taken.ok) {
      expect(taken.error.message).toContain('shortcuts.mute');
      expect(shortcutOfError(taken.error)).toBe('mute');
    }
    const reserved = applyPreferencesPatch(DEFAULT_PREFERENCES, { shortcuts: { hangUp: 'ctrl+shift+i' } });
    expect(!reserved.ok && shortcutOfError(reserved.error)).toBe('hangUp');
    // Without the field (an older main process), the message's own start names it.
    expect(shortcutOfError({ message: 'shortcuts.decline (Decline): needs Ctrl, Alt or Meta' })).toBe('decline');
    expect(shortcutOfError({ message: 'The connection to the softphone service was closed' })).toBeUndefined();
    expect(shortcutOfError({ field: 'missedSeenAt', message: 'missedSeenAt: must be a time' })).toBeUndefined();
  });
});

describe('the shortcuts patch', () => {
  test('carries only what the agent edited', () => {
    expect(shortcutsPatch({})).toEqual({});
    expect(shortcutsPatch({ mute: 'Alt+M', answer: undefined })).toEqual({ mute: 'Alt+M' });
    expect(shortcutsPatch({ answer: 'Ctrl+Alt+A', decline: 'Ctrl+Alt+D', hangUp: 'Ctrl+Alt+H', mute: 'Ctrl+Alt+M' })).toEqual({
      answer: 'Ctrl+Alt+A',
      decline: 'Ctrl+Alt+D',
      hangUp: 'Ctrl+Alt+H',
      mute: 'Ctrl+Alt+M',
    });
  });
});

describe('a global shortcut another application holds', () => {
  test('is named for its own action while it is the saved combination', () => {
    const refused = [{ action: 'decline' as const, accelerator: 'Ctrl+Shift+D' }];
    expect(takenShortcutText(refused, 'decline', 'Ctrl+Shift+D')).toBe('Ctrl+Shift+D is taken by another application: it works only while the softphone has the focus');
    expect(takenShortcutText(refused, 'answer', 'Ctrl+Shift+A')).toBeUndefined();
    // Saved again since: the list that follows will say whether the new one is taken.
    expect(takenShortcutText(refused, 'decline', 'Ctrl+Alt+D')).toBeUndefined();
    expect(takenShortcutText([], 'decline', 'Ctrl+Shift+D')).toBeUndefined();
  });
});

describe('"Start at login"', () => {
  test('is offered on macOS and Windows, not on Linux (Electron has no login items there)', () => {
    expect(offersStartAtLogin('MacIntel')).toBe(true);
    expect(offersStartAtLogin('Win32')).toBe(true);
    expect(offersStartAtLogin('Linux x86_64')).toBe(false);
    expect(offersStartAtLogin('Linux aarch64')).toBe(false);
  });
});

describe('the rendered desk settings', () => {
  const engine = idleMediaControls();
  const render = (hostKind: 'electron' | 'browser', component: () => unknown = DeskSettings): string => {
    const { controllers } = createControllers({ api: fakeApi({}).api, link: permanentLink(), store: appStore, engine, hostKind });
    return renderToStaticMarkup(createElement(ControllersContext.Provider, { value: controllers }, createElement(component as () => null)));
  };

  beforeEach(() => {
    resetStore();
  });
  afterEach(async () => {
    vi.unstubAllGlobals();
    vi.restoreAllMocks();
    await setUiLanguage('en', undefined);
  });

  test('"Start at login" shows in Electron on Windows, not on Linux, never in the browser', () => {
    // The browser host's part reads the page's address.
    vi.stubGlobal('location', { origin: 'http://127.0.0.1:5170', port: '5170' });
    vi.stubGlobal('navigator', { platform: 'Win32' });
    expect(render('electron')).toContain('Start at login');
    expect(render('browser')).not.toContain('Start at login');
    vi.stubGlobal('navigator', { platform: 'Linux x86_64' });
    const linux = render('electron');
    expect(linux).not.toContain('Start at login');
    expect(linux).toContain('Quit when the window is closed');
    expect(linux).toContain('Global shortcuts');
  });

  test('in Spanish: the shortcut fields name their actions in Spanish, the English accessible names in English', async () => {
    vi.stubGlobal('location', { origin: 'http://127.0.0.1:5170', port: '5170' });
    vi.stubGlobal('navigator', { platform: 'Win32' });
    expect(render('electron')).toContain('>Hang up</label>');
    await setUiLanguage('es', undefined);
    const es = render('browser');
    expect(es).toContain('>Colgar</label>');
    expect(es).toContain('Aplicar atajos');
    expect(es).toContain('Los enlaces van al puerto 5170. Dejan de funcionar si el softphone se inicia en otro puerto: inícialo con un --port fijo (npm run start:browser -- --port 5170).');
    expect(takenShortcutText([{ action: 'mute', accelerator: 'Ctrl+Shift+M' }], 'mute', 'Ctrl+Shift+M')).toBe(
      'Ctrl+Shift+M lo usa otra aplicación: solo funciona mientras el softphone tiene el foco',
    );
    // In Arabic the flag and the command keep their order inside the right-to-left sentence: isolated, in the one text node.
    await setUiLanguage('ar', undefined);
    expect(render('browser')).toContain('شغّله بقيمة \u2066--port\u2069 ثابتة (\u2066npm run start:browser -- --port 5170\u2069).');
  });

  test('in the pseudo-locale, every text and name of the Settings screen is translated, the setup report and notes too', async () => {
    vi.stubGlobal('location', { origin: 'http://127.0.0.1:5170', port: '5170' });
    vi.stubGlobal('navigator', { platform: 'Win32', languages: ['en-US'], language: 'en-US' });
    const host = fakeApi({
      checkRelay: () => ok({ reachable: true, roundTripMs: 35, relayTurn: 'unreachable' }),
      getIceConfig: () => ok({ iceServers: [{ urls: 'stun:stun.example.com:3478' }], iceTransportPolicy: 'relay' }),
      exportDiagnostics: () => ok({ fileName: 'softphone-diagnostics.json', content: '{}' }),
    });
    const measureMicrophone = async () => ({ peak: 0.0001, muted: false, label: '' });
    for (const hostKind of ['electron', 'browser'] as const) {
      resetStore();
      const { controllers } = createControllers({ api: host.api, link: permanentLink(), store: appStore, engine, hostKind, diagnostics: { measureMicrophone } });
      appStore.getState().setSettings({ ...accountSettings, network: { ...accountSettings.network, servers: [], fromCommandLine: true, relayTurn: 'unreachable' } });
      controllers.settings.editNetwork('relayOnly', true);
      // Made in English; shown in the language of the moment.
      await controllers.diagnostics.testSetup();
      await controllers.diagnostics.exportDiagnostics();
      // Server rendering reads a store's initial state: here it is the state just set.
      const drawn = appStore.getState();
      vi.spyOn(appStore, 'getInitialState').mockReturnValue(drawn);
      await setUiLanguage('en-XA', undefined);
      const html = [SettingsScreen, DeviceNotice]
        .map((component) => renderToStaticMarkup(createElement(ControllersContext.Provider, { value: controllers }, createElement(component))))
        .join('');
      await setUiLanguage('en', undefined);
      // The language options are each language's own name: data, not text to translate.
      const withoutData = html.replace(/<option[^>]* lang="[^"]*"[^>]*>[^<]*<\/option>/g, '');
      const texts = [...withoutData.matchAll(/>([^<]+)</g)].map((m) => m[1]!);
      const names = [...withoutData.matchAll(/ (?:aria-label|title|placeholder|alt)="([^"]*)"/g)].map((m) => m[1]!);
      const all = texts.join('');
      expect(all).toContain('⟦Ŕéļåý ŕéåçĥåƀļé (35 ɱš), ƀûţ îţš ŢÛŔÑ çŕéđéñţîåļš çöûļđ ñöţ ƀé ƒéţçĥéđ⟧');
      expect(all).toContain('⟦Çåļļš ɱåý ƒåîļ: ⟦ţĥé ɱîçŕöþĥöñé îš šîļéñţ⟧⟦; ⟧⟦ţĥé ŕéļåý’š ŢÛŔÑ çŕéđéñţîåļš çöûļđ ñöţ ƀé ƒéţçĥéđ⟧.⟧');
      expect(all).toContain('⟦Éẋþöŕţ ƒåîļéđ: ţĥîš ŵîñđöŵ çåññöţ šåṽé ƒîļéš.⟧');
      // What the store holds: the account, a stored key, the command line's servers, "Relay only" without TURN.
      expect(all).toContain('⟦Ûšîñĝ ýöûŕ åççöûñţ.⟧');
      expect(all).toContain('⟦šţöŕéđ⟧');
      expect(all).toContain('⟦Šéţ ƒŕöɱ ţĥé çöɱɱåñđ ļîñé');
      expect(all).toContain('⟦Ŕéļåý öñļý ñééđš å ŢÛŔÑ šéŕṽéŕ');
      // Each text node on its own, as a screen reader meets it: a sentence split by an element would leave an open bracket.
      const unbracketed = (text: string): string => {
        let rest = text;
        for (let before = ''; before !== rest; ) {
          before = rest;
          rest = rest.replace(new RegExp(`${PSEUDO_OPEN}[^${PSEUDO_OPEN}${PSEUDO_CLOSE}]*${PSEUDO_CLOSE}`, 'g'), ' ');
        }
        return rest;
      };
      for (const text of [...texts, ...names]) expect(unbracketed(text), text).not.toMatch(/\p{L}/u);
    }
  });
});

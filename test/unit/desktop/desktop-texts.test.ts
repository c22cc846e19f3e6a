// The main process's own words: which language it speaks for the preference `language`, and that
// each language has them. (test/unit/renderer/translations.test.ts checks every key and plural form.)
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { desktopTexts, desktopTextsFor, systemLanguages } from '../../../electron/desktop/desktop-texts';
import { numberFromDialLink } from '../../../shared/dial-link';
import type { RuleText } from '../../../shared/i18n/text';
import type { AppError } from '../../../shared/result';
import arRules from '../../../shared/i18n/locales/ar/rules.json';
import esRules from '../../../shared/i18n/locales/es/rules.json';
import hiCalls from '../../../shared/i18n/locales/hi/calls.json';
import idCalls from '../../../shared/i18n/locales/id/calls.json';
import { app, resetFakeElectron } from './fake-electron';

vi.mock('electron', () => import('./fake-electron'));

describe('desktop texts', () => {
  beforeEach(() => {
    resetFakeElectron();
  });

  it("'auto' follows the operating system's preferred languages, matched on the primary subtag", () => {
    app.systemLanguages = ['fr-FR', 'es-MX', 'en-US'];
    expect(desktopTextsFor('auto', app).language).toBe('es');
    expect(desktopTextsFor('auto', app).t('tray.show')).toBe('Mostrar');
    expect(app.getPreferredSystemLanguages).toHaveBeenCalled();
    app.systemLanguages = ['ar-AE'];
    expect(desktopTextsFor('auto', app).t('incomingCall.title')).toBe('مكالمة واردة');
  });

  it("'auto' falls back to the locale Chromium runs in when the system lists no language, then to English", () => {
    app.systemLanguages = [];
    app.locale = 'pt-BR';
    expect(systemLanguages(app)).toEqual(['pt-BR']);
    expect(desktopTextsFor('auto', app).t('tray.quit')).toBe('Sair');
    app.locale = '';
    expect(desktopTextsFor('auto', app).language).toBe('en');
    app.systemLanguages = ['de-DE'];
    expect(desktopTextsFor('auto', app).language).toBe('en');
  });

  it('a chosen language wins over the system, which is not even asked', () => {
    app.systemLanguages = ['es-ES'];
    expect(desktopTextsFor('hi', app).t('tray.show')).toBe('दिखाएं');
    expect(desktopTextsFor('id', app).t('missedCalls', { count: 3 })).toBe('3 panggilan tak terjawab');
    expect(app.getPreferredSystemLanguages).not.toHaveBeenCalled();
    expect(desktopTextsFor('en-XA', app).t('tray.show')).toBe('Show');
  });

  it('English keeps the words the rest of the app and its tests rely on', () => {
    const { t } = desktopTexts('en');
    expect(t('missedCalls', { count: 1 })).toBe('1 missed call');
    expect(t('missedCalls', { count: 2 })).toBe('2 missed calls');
    expect(t('dialLinkRefused')).toBe('This link cannot be dialled');
    expect(t('incomingCall.caller', { name: 'Ada', number: '+44 7700 900123' })).toBe('Ada (+44 7700 900123)');
  });

  it('keeps data left to right inside Arabic only', () => {
    expect(desktopTexts('ar').ltr('+44 7700 900123')).toBe('\u2066+44 7700 900123\u2069');
    expect(desktopTexts('es').ltr('+44 7700 900123')).toBe('+44 7700 900123');
  });

  it('sets a name apart in its own direction inside Arabic only', () => {
    expect(desktopTexts('ar').name('Ben Agent')).toBe('\u2068Ben Agent\u2069');
    expect(desktopTexts('ar').name('ليلى')).toBe('\u2068ليلى\u2069');
    expect(desktopTexts('hi').name('Ben Agent')).toBe('Ben Agent');
  });

  it("says the window's words for a call where main says the same (calls.json), in each language", () => {
    expect(desktopTexts('en').call('incoming.transferFrom', { name: 'Ben' })).toBe('Transfer from Ben');
    expect(desktopTexts('en').call('incoming.consultFrom', { name: 'Ben' })).toBe('Consult from Ben');
    expect(desktopTexts('en').call('transfer.aColleague')).toBe('a colleague');
    expect(desktopTexts('hi').call('incoming.transferFrom', { name: 'Ben' })).toBe(hiCalls.incoming.transferFrom.replace('{{name}}', 'Ben'));
    expect(desktopTexts('id').call('transfer.aColleague')).toBe(idCalls.transfer.aColleague);
    expect(desktopTexts('en-XA').call('incoming.consultFrom', { name: 'Ben' })).toBe('Consult from Ben');
  });

  describe("shared/'s rule messages, from their codes and values", () => {
    /** "Phone number: "http:" links are not phone numbers (use tel: or callto:)", as the service refuses such a link. */
    const refusal = (link: string): AppError => {
      const result = numberFromDialLink(link);
      if (result.ok) throw new Error(`${link} was taken`);
      return result.error;
    };
    const textOf = (link: string): RuleText => {
      const said = refusal(link).text;
      if (said === undefined) throw new Error(`${link}: no text`);
      return said;
    };

    it('are said in Spanish, the value kept and the field named in Spanish', () => {
      expect(refusal('http://example.com/call').message).toBe('Phone number: "http:" links are not phone numbers (use tel: or callto:)');
      const spanish = desktopTexts('es').text(textOf('http://example.com/call'));
      expect(spanish).toBe(`${esRules.terms.phoneNumber}: ${esRules.phone.linkScheme.replace('{{scheme}}', 'http')}`);
      expect(spanish).toContain('tel:');
      expect(spanish).not.toMatch(/Phone number|links are not|use tel/);
    });

    it('keep their values left to right in Arabic, as ltr does', () => {
      expect(desktopTexts('ar').text(textOf('http://example.com/call'))).toBe(
        `${arRules.terms.phoneNumber}: ${arRules.phone.linkScheme.replace('{{scheme}}', '\u2066http\u2069')}`,
      );
      // A count picks the language's own plural form (Arabic: 512 is "many").
      expect(desktopTexts('ar').text(textOf(`tel:${'1'.repeat(600)}`))).toBe(`${arRules.terms.phoneNumber}: ${arRules.phone.linkTooLong_many.replace('{{count}}', '512')}`);
    });

    it('are the English message in English and the pseudo-locale; words of no catalogue stay as they came', () => {
      const english = refusal('tel:not-a-number');
      expect(desktopTexts('en').text(english.text!)).toBe(english.message);
      expect(desktopTexts('en-XA').text(english.text!)).toBe(english.message);
      expect(desktopTexts('es').text('EACCES: permission denied, mkdir \'/data\'')).toBe("EACCES: permission denied, mkdir '/data'");
    });
  });
});

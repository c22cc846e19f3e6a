import { afterEach, describe, expect, it } from 'vitest';
import {
  BEHAVIOUR_TEXT,
  SECRET_STORAGE_TEXT,
  connectionIndicator,
  customerLegWarningWords,
  legWarningWords,
  formatCallTime,
  formatClock,
  formatTalkTime,
  ltrInText,
  peerNumberText,
  peerTitle,
  phaseText,
  qualitySummaryText,
  qualityWarningWords,
  secondsUntil,
  warningFigure,
} from '../../../renderer/call-display';
import { formatNumber } from '../../../renderer/i18n/format';
import { i18n, setUiLanguage } from '../../../renderer/i18n/i18n';
import { CUSTOMER_LEG_KINDS, customerLegWarningText } from '../../../shared/bridged-quality';
import type { UiLanguage } from '../../../shared/i18n/languages';
import { QUALITY_WARNING_KINDS, qualityWarningText, type QualityWarningKind } from '../../../shared/call-quality';
import { T0, active, dialing, ringing } from './fixtures';
import type { CallState } from '../../../shared/call-state';

describe('call display', () => {
  it('formats clocks', () => {
    expect(formatClock(0)).toBe('00:00');
    expect(formatClock(7.9)).toBe('00:07');
    expect(formatClock(83)).toBe('01:23');
    expect(formatClock(3723)).toBe('1:02:03');
    expect(formatClock(-5)).toBe('00:00');
    expect(formatTalkTime(0)).toBe('—');
    expect(formatTalkTime(61)).toBe('01:01');
  });

  it('counts down in whole seconds, never below zero', () => {
    expect(secondsUntil(T0 + 42_001, T0)).toBe(43);
    expect(secondsUntil(T0 + 1, T0)).toBe(1);
    expect(secondsUntil(T0, T0 + 5000)).toBe(0);
  });

  it('names the peer by name, number or user id', () => {
    expect(peerTitle({ name: 'Amelia Hart', number: '447700900123' })).toBe('Amelia Hart');
    expect(peerTitle({ number: '447700900123' })).toBe('+44 7700 900123');
    expect(peerTitle({ userId: 'US.123' })).toBe('User ID US.123');
    expect(peerTitle({ name: '  ' })).toBe('Unknown caller');
    expect(peerNumberText({ number: '14155550123' })).toBe('+1 415 555 0123');
  });

  it('words each phase', () => {
    expect(phaseText(ringing())).toBe('Incoming call');
    expect(phaseText(dialing())).toBe('Calling…');
    expect(phaseText({ ...dialing(), phase: 'remote_ringing', callId: 'c', dialsUntil: T0 } as never)).toBe('Ringing…');
    expect(phaseText(active())).toBe('Connected');
  });

  it('shows the host link first, then the relay link', () => {
    expect(connectionIndicator({ status: 'connecting' }, null).text).toBe('Connecting…');
    expect(connectionIndicator({ status: 'reconnecting', attempt: 2, retryAt: T0, lastError: 'closed' }, { status: 'connected', since: T0 }).text).toBe('Reconnecting…');
    expect(connectionIndicator({ status: 'open' }, null).text).toBe('Connecting…');
    expect(connectionIndicator({ status: 'open' }, { status: 'connected', since: T0 })).toEqual({ text: 'Connected', tone: 'ok', detail: 'Receiving calls' });
    expect(connectionIndicator({ status: 'open' }, { status: 'reconnecting', since: T0, lastError: 'HTTP 401' })).toEqual({
      text: 'Reconnecting…',
      tone: 'down',
      detail: 'HTTP 401',
    });
    expect(connectionIndicator({ status: 'unavailable', message: 'no token' }, null).text).toBe('Not connected');
  });

  it('shows the time of day for today and the date before', () => {
    const now = new Date(2026, 2, 10, 15, 0).getTime();
    expect(formatCallTime(new Date(2026, 2, 10, 9, 5).getTime(), now, 'en-GB')).toBe('09:05');
    expect(formatCallTime(new Date(2026, 2, 8, 9, 5).getTime(), now, 'en-GB')).toBe('Sun 09:05');
    expect(formatCallTime(new Date(2026, 0, 3, 9, 5).getTime(), now, 'en-GB')).toBe('3 Jan, 09:05');
  });

  it('says "Reconnecting…" for an active call whose media is away, and nothing else changes', () => {
    const call = active('wacid.9');
    expect(phaseText(call)).toBe('Connected');
    expect(phaseText(call, true)).toBe('Reconnecting…');
    expect(phaseText(ringing('wacid.8'), true)).toBe('Incoming call');
  });

  it('says "Rejoining…" for a call whose leg is being replaced, over its old leg\'s "Reconnecting…", connecting or active', () => {
    const rejoining = { ...active('wacid.9'), bridged: true, rejoin: { since: T0 } } as CallState;
    expect(phaseText(rejoining)).toBe('Rejoining…');
    expect(phaseText(rejoining, true)).toBe('Rejoining…');
    expect(phaseText({ ...ringing('wacid.9'), phase: 'connecting', answeredAt: T0, bridged: true, rejoin: { since: T0, legId: 'leg-2' } })).toBe('Rejoining…');
    // Connected again: the call's own phase.
    expect(phaseText({ ...active('wacid.9'), bridged: true } as CallState)).toBe('Connected');
  });

  it('sums a call\'s quality up in a few words for the recent calls', () => {
    expect(qualitySummaryText({ samples: 60, avgMos: 4.38, worstMos: 4.36, worstLossPercent: 0, warningsSeen: [] })).toBe('MOS 4.3');
    expect(qualitySummaryText({ samples: 60, avgMos: 3.9, worstMos: 3.1, worstLossPercent: 6.2, warningsSeen: ['high-packet-loss', 'low-mos'] })).toBe(
      'MOS 3.9 (worst 3.1), loss up to 6.2 %; warned: packet loss, poor quality',
    );
    expect(qualitySummaryText({ samples: 20, avgMos: 4.4, worstMos: 4.4, worstLossPercent: 0, warningsSeen: ['no-inbound-media'] })).toBe('MOS 4.4; warned: audio stopped');
    expect(qualitySummaryText({ samples: 0, avgMos: null, worstMos: null, worstLossPercent: null, warningsSeen: [] })).toBeUndefined();
  });

  it('names the leg of a bridged call’s warnings in the recent calls: the customer’s as the customer’s, the agent’s own and the call’s as on a direct call', () => {
    const leg = (warningsSeen: QualityWarningKind[]) => ({ samples: 60, avgMos: 4, worstMos: 3.5, worstLossPercent: 1, warningsSeen });
    expect(
      qualitySummaryText({ samples: 60, avgMos: 3.2, worstMos: 2.9, worstLossPercent: 12, warningsSeen: ['high-packet-loss', 'low-mos'], legs: { agent: leg([]), customer: leg(['high-packet-loss']) } }),
    ).toBe('MOS 3.2 (worst 2.9), loss up to 12 %; warned: customer’s packet loss, poor quality');
    expect(
      qualitySummaryText({
        samples: 60,
        avgMos: 3.2,
        worstMos: 3.2,
        worstLossPercent: 12,
        warningsSeen: ['high-jitter', 'high-packet-loss', 'no-inbound-media'],
        legs: { agent: leg(['high-packet-loss', 'no-inbound-media']), customer: leg(['high-jitter', 'high-packet-loss']) },
      }),
    ).toBe('MOS 3.2, loss up to 12 %; warned: audio stopped, customer’s unsteady audio, packet loss, customer’s packet loss');
  });
});

describe('call display in the agent\'s language', () => {
  afterEach(async () => {
    await setUiLanguage('en', undefined);
  });

  it('words the live quality warnings from their kind and figure as shared/call-quality.ts does in English', () => {
    const cases: [QualityWarningKind, number | undefined][] = [
      ['high-packet-loss', 6],
      ['high-packet-loss', 6.24],
      ['high-packet-loss', 9.96],
      ['high-packet-loss', 14.6],
      ['high-packet-loss', undefined],
      ['high-rtt', 620.4],
      ['high-rtt', 87.6],
      ['high-rtt', 1234],
      ['high-jitter', 47.6],
      ['low-mos', 3.14],
      ['low-mos', 3.4999],
      ['low-mos', 4],
      ['no-inbound-media', undefined],
      ['mic-silent', undefined],
      ['no-customer-audio', undefined],
    ];
    for (const [kind, value] of cases) expect(qualityWarningWords(kind, value), `${kind} ${value}`).toBe(qualityWarningText(kind, value));
    for (const kind of QUALITY_WARNING_KINDS) expect(qualityWarningWords(kind)).toBe(qualityWarningText(kind));
    expect(qualityWarningWords('high-packet-loss', 6)).toBe('Poor connection: 6 % packet loss');
  });

  it('words a bridged call’s customer-leg warnings as shared/bridged-quality.ts does in English, and the agent’s own as before', () => {
    for (const kind of CUSTOMER_LEG_KINDS) {
      expect(customerLegWarningWords(kind)).toBe(customerLegWarningText(kind));
      for (const value of [6.24, 14.6, 47.6, 617]) expect(customerLegWarningWords(kind, value), `${kind} ${value}`).toBe(customerLegWarningText(kind, value));
    }
    expect(legWarningWords({ kind: 'high-packet-loss', value: 6, leg: 'customer' })).toBe('The customer’s connection is poor: 6 % packet loss');
    expect(legWarningWords({ kind: 'high-packet-loss', value: 6 })).toBe('Poor connection: 6 % packet loss');
    expect(legWarningWords({ kind: 'low-mos', value: 3.2 })).toBe('Poor call quality (MOS 3.2)');
  });

  it('words the customer leg’s warnings in each language', async () => {
    const words = async (language: UiLanguage) => {
      await setUiLanguage(language, undefined);
      return legWarningWords({ kind: 'high-packet-loss', value: 6.2, leg: 'customer' });
    };
    expect(await words('es')).toBe('La conexión del cliente es deficiente: 6,2 % de pérdida de paquetes');
    expect(await words('pt-BR')).toBe('A conexão do cliente está ruim: 6,2% de perda de pacotes');
    expect(await words('id')).toBe('Koneksi pelanggan buruk: kehilangan paket 6,2%');
    expect(await words('hi')).toBe('ग्राहक का कनेक्शन खराब है: 6.2% पैकेट लॉस');
    expect(await words('ar')).toMatch(/^اتصال العميل ضعيف: فقدان .+% من الحزم$/);
  });

  it('rounds a warning\'s figure as its words show it', () => {
    expect(warningFigure('high-packet-loss', 6.24)).toBe(6.2);
    expect(warningFigure('high-packet-loss', 14.6)).toBe(15);
    expect(warningFigure('high-rtt', 617)).toBe(620);
    expect(warningFigure('high-jitter', 47.6)).toBe(48);
    expect(warningFigure('low-mos', 3.49)).toBe(3.4);
  });

  it('speaks Spanish once chosen: phases, warnings with decimal commas, the summary as a Spanish list, clocks and call times through Intl', async () => {
    await setUiLanguage('es', undefined);
    expect(phaseText(active())).toBe('Conectada');
    expect(phaseText(active(), true)).toBe('Reconectando…');
    expect(peerTitle({ name: ' ' })).toBe('Desconocido');
    expect(peerTitle({ userId: 'US.123' })).toBe('ID de usuario US.123');
    expect(connectionIndicator({ status: 'open' }, { status: 'connected', since: T0 })).toEqual({ text: 'Conectado', tone: 'ok', detail: 'Recibiendo llamadas' });
    expect(qualityWarningWords('high-packet-loss', 6.24)).toBe('Conexión deficiente: 6,2 % de pérdida de paquetes');
    expect(qualityWarningWords('low-mos', 3.14)).toBe('Calidad de llamada baja (MOS 3,1)');
    expect(qualitySummaryText({ samples: 60, avgMos: 3.9, worstMos: 3.1, worstLossPercent: 6.2, warningsSeen: ['high-packet-loss', 'low-mos'] })).toBe(
      'MOS 3,9 (peor 3,1) y pérdida de hasta 6,2 %; avisos: pérdida de paquetes y calidad baja',
    );
    expect(qualitySummaryText({ samples: 20, avgMos: null, worstMos: null, worstLossPercent: null, warningsSeen: ['mic-silent', 'no-inbound-media'] })).toBe(
      'avisos: audio interrumpido y micrófono sin sonido',
    );
    // What other screens read through the old names follows the language too.
    expect(BEHAVIOUR_TEXT.no_answer).toBe('no contesta');
    expect(SECRET_STORAGE_TEXT.memory).toMatch(/^La clave de API/);
    expect(formatClock(3723)).toBe('1:02:03');
    expect(formatTalkTime(61)).toBe('01:01');
    const now = new Date(2026, 2, 10, 15, 0).getTime();
    expect(formatCallTime(new Date(2026, 2, 8, 9, 5).getTime(), now)).toBe('dom, 09:05');
    expect(formatCallTime(new Date(2026, 0, 3, 9, 5).getTime(), now)).toBe('3 ene, 09:05');
  });

  it('counts the seconds left to answer with each language\'s plural forms', async () => {
    const answerWithin = (count: number) => i18n.t('calls:incoming.answerWithin', { count, seconds: formatNumber(count) });
    expect([1, 29].map(answerWithin)).toEqual(['Answer within 1 s', 'Answer within 29 s']);
    await setUiLanguage('ar', undefined);
    expect([0, 1, 2, 5, 11, 100].map(answerWithin)).toEqual([
      'أجب خلال 0 ثانية',
      'أجب خلال 1 ثانية',
      'أجب خلال 2 ثانيتين',
      'أجب خلال 5 ثوانٍ',
      'أجب خلال 11 ثانية',
      'أجب خلال 100 ثانية',
    ]);
    await setUiLanguage('hi', undefined);
    expect(answerWithin(29)).toBe('29 सेकंड में जवाब दें');
  });

  it('keeps a number left to right inside a right-to-left sentence, and leaves left-to-right ones alone', async () => {
    expect(ltrInText('+44 20 7946 0958')).toBe('+44 20 7946 0958');
    await setUiLanguage('ar', undefined);
    expect(ltrInText('+44 20 7946 0958')).toBe('\u2066+44 20 7946 0958\u2069');
  });

  it('brackets every word in the pseudo-locale, data left as it is', async () => {
    await setUiLanguage('en-XA', undefined);
    expect(phaseText(active())).toBe('⟦Çöññéçţéđ⟧');
    expect(peerTitle({ name: 'Amelia Hart' })).toBe('Amelia Hart');
    expect(qualityWarningWords('high-packet-loss', 6)).toBe('⟦Þööŕ çöññéçţîöñ: 6 % þåçķéţ ļöšš⟧');
  });
});

// Every rule the window's commands, the gateway's call bodies, the webhooks and the diagnostics are
// checked with is a rule of the catalogue: parseWith's English message is byte for byte the one the
// English literal made before (the expected messages below are that literal's output), and the
// window says each in its own language, no English rule left.
import { afterEach, describe, expect, it } from 'vitest';
import { sayText } from '../../../renderer/i18n/texts';
import { setUiLanguage } from '../../../renderer/i18n/i18n';
import { commandSchemas } from '../../../shared/api';
import { callRequestSchemas } from '../../../shared/gateway';
import { LANGUAGES } from '../../../shared/i18n/languages';
import { isRuleText } from '../../../shared/i18n/text';
import type { Result } from '../../../shared/result';
import { parseWith } from '../../../shared/validation';
import { normaliseWebhookDetailed } from '../../../shared/webhook';

afterEach(async () => {
  await setUiLanguage('en', undefined);
});

const SUMMARY = { samples: 0, avgMos: null, worstMos: null, worstLossPercent: null, warningsSeen: [] };
const SAMPLE = { rttMs: null, jitterMs: null, inboundLoss: null, micMuted: false, packetsReceived: 0, bytesReceived: 0, connected: true };
const TEXT = { type: 'text', text: { body: 'Hi' } };
const RECORD = { t: 'x', level: 'info', logger: 'media', msg: 'm' };
const DRAFT = { name: 'n', languageCode: 'en', recipient: { placeholder: false }, fields: [], template: { name: 'n', language: { code: 'en' } } };
const FIELD = { path: 'p', label: 'l', sample: 's', placeholder: false, kind: 'text' };
const ACCEPT = { messaging_product: 'chatapp', call_id: 'wacid.1', action: 'accept', session: { sdp_type: 'answer', sdp: 'v=0' } };
const INITIATE = { messaging_product: 'chatapp', to: '442079460958', action: 'connect', session: { sdp_type: 'offer', sdp: 'v=0' } };
const gateway = callRequestSchemas();
const times = <T>(n: number, item: (i: number) => T): T[] => Array.from({ length: n }, (_, i) => item(i));

const REFUSED: [string, () => Result<unknown>, string][] = [
  ['startCall: localId', () => parseWith(commandSchemas.startCall, { localId: 'in:1', to: '1', sdp: 'v=0' }), 'localId: must be "out:" followed by 8 to 100 letters, digits or dashes'],
  ['answerCall: sdp too long', () => parseWith(commandSchemas.answerCall, { localId: 'in:1', sdp: 'v'.repeat(64 * 1024 + 1) }), 'sdp: is too long (64 KiB at most)'],
  ['sendMessage: a warning not a text', () => parseWith(commandSchemas.sendMessage, { to: '1', content: TEXT, confirmed: [7] }), 'confirmed[0]: must hold the warnings as texts'],
  ['sendMessage: an empty warning', () => parseWith(commandSchemas.sendMessage, { to: '1', content: TEXT, confirmed: [''] }), 'confirmed[0]: must not hold an empty warning'],
  ['sendMessage: a long warning', () => parseWith(commandSchemas.sendMessage, { to: '1', content: TEXT, confirmed: ['w'.repeat(1001)] }), 'confirmed[0]: must hold warnings of at most 1000 characters each'],
  ['sendMessage: warnings not a list', () => parseWith(commandSchemas.sendMessage, { to: '1', content: TEXT, confirmed: 'B-frames' }), 'confirmed: must be a list of the warnings the agent confirmed'],
  ['sendMessage: too many warnings', () => parseWith(commandSchemas.sendMessage, { to: '1', content: TEXT, confirmed: times(21, (i) => `w${i}`) }), 'confirmed: must list at most 20 warnings'],
  ['sendTemplate: too many variables', () => parseWith(commandSchemas.sendTemplate, { draft: { ...DRAFT, fields: times(101, () => FIELD) }, to: '1', values: {} }), 'draft.fields: has too many variables (100 at most)'],
  ['exportDiagnostics: userAgent', () => parseWith(commandSchemas.exportDiagnostics, { window: { userAgent: 'u'.repeat(513), language: 'en', hostKind: 'browser' } }), 'window.userAgent: is too long'],
  ['exportDiagnostics: language', () => parseWith(commandSchemas.exportDiagnostics, { window: { userAgent: 'u', language: 'l'.repeat(36), hostKind: 'browser' } }), 'window.language: is too long'],
  ['writeLogs: level', () => parseWith(commandSchemas.writeLogs, { records: [{ ...RECORD, level: 'fatal' }] }), 'records[0].level: must be debug, info, warn or error'],
  ['writeLogs: msg', () => parseWith(commandSchemas.writeLogs, { records: [{ ...RECORD, msg: 'm'.repeat(2001) }] }), 'records[0].msg: is too long (2000 characters at most)'],
  ['writeLogs: fields', () => parseWith(commandSchemas.writeLogs, { records: [{ ...RECORD, fields: { blob: 'x'.repeat(5000) } }] }), 'records[0].fields: must be at most 4096 characters as JSON'],
  ['writeLogs: not a list', () => parseWith(commandSchemas.writeLogs, { records: 'everything' }), 'records: must be a list of log records'],
  ['writeLogs: too many', () => parseWith(commandSchemas.writeLogs, { records: times(101, () => RECORD) }), 'records: must hold at most 100 records'],
  ['setPresence', () => parseWith(commandSchemas.setPresence, { status: 'away' }), 'status: must be one of available, break, dnd'],
  ['checkMediaLink: type', () => parseWith(commandSchemas.checkMediaLink, { type: 'sticker', link: 'https://e.com/a.webp' }), 'type: must be one of image, audio, video, document'],
  ['parseTemplate: too long', () => parseWith(commandSchemas.parseTemplate, { pasted: 'p'.repeat(128 * 1024 + 1) }), 'pasted: is too long (128 KB at most)'],
  ['reportQuality: localId empty', () => parseWith(commandSchemas.reportQuality, { localId: '', summary: SUMMARY, samples: [] }), 'localId: must not be empty'],
  ['reportQuality: localId long', () => parseWith(commandSchemas.reportQuality, { localId: 'l'.repeat(201), summary: SUMMARY, samples: [] }), 'localId: is too long'],
  ['reportQuality: samples', () => parseWith(commandSchemas.reportQuality, { localId: 'in:1', summary: SUMMARY, samples: times(301, (at) => ({ at, ...SAMPLE })) }), 'samples: must hold at most 300 samples'],
  ['reportQuality: candidate type', () => parseWith(commandSchemas.reportQuality, { localId: 'in:1', summary: SUMMARY, samples: [], path: { localType: 'satellite', remoteType: 'host' } }), 'path.localType: must be host, srflx, prflx or relay'],
  ['reportQuality: a warning twice', () => parseWith(commandSchemas.reportQuality, { localId: 'in:1', summary: { ...SUMMARY, warningsSeen: ['high-rtt', 'high-rtt'] }, samples: [] }), 'summary.warningsSeen: must not name a warning twice'],
  ['gateway: product', () => parseWith(gateway.accept, { ...ACCEPT, messaging_product: 'other' }), 'messaging_product: must be "chatapp"'],
  ['gateway: call_id', () => parseWith(gateway.accept, { ...ACCEPT, call_id: '' }), 'call_id: call_id must not be empty'],
  ['gateway: sdp', () => parseWith(gateway.accept, { ...ACCEPT, session: { sdp_type: 'answer', sdp: '' } }), 'session.sdp: sdp must not be empty'],
  ['gateway: accept action', () => parseWith(gateway.accept, { ...ACCEPT, action: 'answer' }), 'action: must be "accept"'],
  ['gateway: accept sdp_type', () => parseWith(gateway.accept, { ...ACCEPT, session: { sdp_type: 'offer', sdp: 'v=0' } }), 'session.sdp_type: must be "answer" when accepting'],
  ['gateway: reject action', () => parseWith(gateway.reject, { messaging_product: 'chatapp', call_id: 'wacid.1', action: 'decline' }), 'action: must be "reject"'],
  ['gateway: terminate action', () => parseWith(gateway.terminate, { messaging_product: 'chatapp', call_id: 'wacid.1', action: 'end' }), 'action: must be "terminate"'],
  ['gateway: initiate action', () => parseWith(gateway.initiate, { ...INITIATE, action: 'initiate' }), 'action: must be "connect" (the path is initiate, the action is connect)'],
  ['gateway: initiate sdp_type', () => parseWith(gateway.initiate, { ...INITIATE, session: { sdp_type: 'answer', sdp: 'v=0' } }), 'session.sdp_type: must be "offer" when initiating'],
];

describe('the rules of commands, call bodies and diagnostics', () => {
  it.each(REFUSED)('%s: the English of before, as a rule of the catalogue', (_name, refuse, message) => {
    const refused = refuse();
    if (refused.ok) throw new Error('accepted');
    expect(refused.error.message).toBe(message);
    for (const issue of refused.error.issues ?? []) expect(typeof issue.text === 'object' && isRuleText(issue.text), issue.field).toBe(true);
  });

  it('each is said in every language, no English rule left', async () => {
    for (const language of LANGUAGES.filter((l) => l !== 'en')) {
      await setUiLanguage(language, undefined);
      for (const [name, refuse, message] of REFUSED) {
        const refused = refuse();
        if (refused.ok) throw new Error('accepted');
        const rule = message.slice(message.indexOf(': ') + 2);
        for (const issue of refused.error.issues ?? []) expect(sayText(issue.text), `${language} ${name}`).not.toContain(rule);
      }
    }
  });

  it('in Spanish, a list and a plural and a reason of the catalogue', async () => {
    await setUiLanguage('es', undefined);
    const said = (refused: Result<unknown>) => (refused.ok ? '' : sayText(refused.error.text!));
    expect(said(parseWith(commandSchemas.setPresence, { status: 'away' }))).toBe('status: debe ser uno de estos valores: available, break, dnd');
    expect(said(parseWith(commandSchemas.writeLogs, { records: [{ ...RECORD, level: 'fatal' }] }))).toBe('records[0].level: debe ser debug, info, warn o error');
    expect(said(parseWith(commandSchemas.sendMessage, { to: '1', content: TEXT, confirmed: times(21, (i) => `w${i}`) }))).toBe('confirmed: debe incluir como máximo 20 advertencias');
    expect(said(parseWith(gateway.initiate, { ...INITIATE, action: 'initiate' }))).toBe('action: debe ser "connect" (la ruta es initiate, la acción es connect)');
  });

  it('a webhook item with a timestamp that is not unix seconds is skipped with the reason of before', () => {
    const skipped = (timestamp: unknown) => normaliseWebhookDetailed({ statuses: [{ id: 'wamid.1', status: 'sent', timestamp }] }).skipped;
    expect(skipped('yesterday')).toEqual([{ path: 'statuses[0].timestamp', reason: 'must be unix seconds' }]);
    expect(skipped(true)).toEqual([{ path: 'statuses[0].timestamp', reason: 'must be unix seconds (a numeric string)' }]);
  });
});

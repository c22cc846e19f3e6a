// The main process's errors and reasons travel as codes and values (style.md 19), one family at a
// time: the call reducer's refusals and end reasons, the coordinator's and the service's refusals,
// the HTTP clients' sentences, a media failure's reason. Each is made by the real code; its English
// is byte for byte the sentence it always was, and a window in Spanish or Arabic says it in its own
// language, with no English word of the catalogue left but the data (a call id, a server's own words).
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CallCoordinator } from '../../../electron/core/call-coordinator';
import { ConversationWindows } from '../../../electron/core/conversation-windows';
import { RelayEventStream } from '../../../electron/core/event-stream';
import { GatewayClient } from '../../../electron/core/gateway-client';
import { HistoryStore } from '../../../electron/core/history-store';
import { LocalClaims } from '../../../electron/core/local-claims';
import { MessageTimeline } from '../../../electron/core/message-timeline';
import { MessagingService } from '../../../electron/core/messaging-service';
import { RelayClient } from '../../../electron/core/relay-client';
import { SandboxControlClient } from '../../../electron/core/sandbox-control-client';
import { commandSchemas, type ConnectionState } from '../../../shared/api';
import { applyCallEvent, emptyBook, type CallEffect, type EndedCall } from '../../../shared/call-state';
import { historyEntrySchema } from '../../../shared/history';
import { english, isRuleText, isTermRef, isTextList, type RuleText, type TextValue } from '../../../shared/i18n/text';
import es from '../../../shared/i18n/locales/es/index';
import ar from '../../../shared/i18n/locales/ar/index';
import { configureLogging } from '../../../shared/log';
import type { AppError, Result } from '../../../shared/result';
import { parseWith } from '../../../shared/validation';
import { connectionIndicator } from '../../../renderer/call-display';
import { endReasonText, errorMessage, historyOutcomeText, messageErrorText } from '../../../renderer/error-texts';
import { setUiLanguage } from '../../../renderer/i18n/i18n';
import { sayText } from '../../../renderer/i18n/texts';
import { mediaProblem, reportedReason } from '../../../renderer/webrtc/media-text';
import { ANSWER_SDP, OFFER_SDP } from '../../fixtures/sdp';
import { closedPortUrl } from '../shared/network-failures';
import { answer, CUSTOMER, hold, incoming, IN_LOCAL, T0, terminated } from '../shared/call-fixtures';
import { json, startFakeGateway, success, type FakeGateway, type GatewayHandler } from './fake-gateway';

configureLogging({ sink: () => undefined });

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  await setUiLanguage('en', undefined);
});

// ---- "No English left" ----

type Tree = { [key: string]: string | Tree };
const stringsOf = (tree: unknown): string[] =>
  typeof tree === 'string' ? [tree] : tree !== null && typeof tree === 'object' ? Object.values(tree as Tree).flatMap(stringsOf) : [];
const wordsOf = (said: string): string[] =>
  [...said.replace(/\{\{\w+\}\}/g, ' ').matchAll(/\p{L}[\p{L}\p{M}'’-]*/gu)].map((m) => m[0].replace(/['’-]+$/, ''));
const ISOLATES = /[\u2066-\u2069]/g;
const CATALOGUES = { es, ar } as const;

/** The strings among a text's values: its data, which stays as it came in any language. */
function dataOf(value: TextValue): string[] {
  if (typeof value === 'string') return [value];
  if (typeof value === 'number' || isTermRef(value)) return [];
  if (isTextList(value)) return value.list.flatMap(dataOf);
  return isRuleText(value) ? Object.values(value.values ?? {}).flatMap(dataOf) : [];
}

/** The English words of `value` (ones the language's own catalogues never use) still in `said`, its data taken out. */
function englishLeft(said: string, value: RuleText, language: keyof typeof CATALOGUES): string[] {
  const own = new Set(stringsOf(CATALOGUES[language]).flatMap(wordsOf));
  const englishOnly = new Set(wordsOf(english(value)).filter((w) => !own.has(w)));
  const rest = dataOf(value).reduce((left, data) => (data === '' ? left : left.replaceAll(data, ' ')), said.replace(ISOLATES, ''));
  return wordsOf(rest).filter((w) => englishOnly.has(w));
}

/** An error as the main process made it: its English the sentence of before, its text that English. */
function madeAs(error: AppError, message: string): RuleText {
  expect(error.message).toBe(message);
  expect(error.text, `"${message}" carries its code and values`).toBeDefined();
  expect(english(error.text!)).toBe(message);
  return error.text!;
}

const refusal = <T>(result: Result<T>): AppError => {
  if (result.ok) throw new Error('expected a refusal');
  return result.error;
};

/** How the window says it in `language`: its own words, the same as the text said there, no English left. */
async function saidIn(language: keyof typeof CATALOGUES, said: () => string, value: RuleText, english: string): Promise<string> {
  await setUiLanguage(language, undefined);
  const words = said();
  expect(words).toContain(sayText(value));
  expect(words).not.toContain(english);
  expect(englishLeft(words, value, language), words).toEqual([]);
  return words;
}

// ---- the families ----

describe('the call reducer', () => {
  it('refuses in words of the catalogue: a hold of a ringing call, an answer for a call it does not hold', async () => {
    const ringing = applyCallEvent(emptyBook(), incoming(T0)).book;
    const replyOf = (effects: readonly CallEffect[]) => effects.find((e): e is Extract<CallEffect, { kind: 'reply' }> => e.kind === 'reply')!.result;
    const held = refusal(replyOf(applyCallEvent(ringing, hold(T0 + 1, IN_LOCAL, 'rq-1')).effects));
    const said = madeAs(held, 'The call is ringing: only an active call can be held');
    expect(await saidIn('es', () => errorMessage(held), said, held.message)).toBe(
      'La llamada está sonando: solo se puede poner en espera una llamada activa',
    );
    expect(await saidIn('ar', () => errorMessage(held), said, held.message)).toBe('المكالمة ترن: لا يمكن تعليق إلا مكالمة نشطة');

    const unknown = refusal(replyOf(applyCallEvent(emptyBook(), answer(T0, 'in:wacid.gone', 'rq-2')).effects));
    const none = madeAs(unknown, 'There is no call in:wacid.gone');
    // The sandbox's domain shows a not_found's own words (sandbox-actions.ts); the call id stays as it came.
    expect(await saidIn('es', () => messageErrorText(unknown), none, unknown.message)).toBe('No existe la llamada in:wacid.gone');
  });

  it('ends a call whose terminate gave no reason with "The call failed", said in the language of each window', async () => {
    const book = [incoming(T0), terminated(T0 + 5_000, { status: 'FAILED' })].reduce((b, ev) => applyCallEvent(b, ev).book, emptyBook());
    const ended = book.calls[IN_LOCAL] as EndedCall;
    expect(ended.end).toMatchObject({ kind: 'failed', code: 'FAILED', message: 'The call failed' });
    const end = ended.end as Extract<EndedCall['end'], { kind: 'failed' }>;
    expect(english(end.text!)).toBe('The call failed');
    expect(await saidIn('es', () => endReasonText(end), end.text!, end.message)).toBe('Falló: La llamada falló');
  });
});

describe('the coordinator and the service', () => {
  async function coordinator(handler: GatewayHandler = () => success()): Promise<{ coordinator: CallCoordinator; history: HistoryStore; gateway: FakeGateway }> {
    const dataDir = await mkdtemp(join(tmpdir(), 'main-errors-'));
    const gateway = await startFakeGateway(handler);
    const client = new GatewayClient({ baseUrl: gateway.baseUrl, apiKey: 'test-api-key-123', product: 'chatapp' });
    const history = await HistoryStore.open({ dataDir });
    const made = new CallCoordinator({ gateway: client, claims: new LocalClaims(), gatewayUrl: gateway.baseUrl, dataDir, history });
    await made.start();
    cleanups.push(async () => {
      await made.shutdown();
      await client.close();
      await gateway.close();
      await history.flush();
      await rm(dataDir, { recursive: true, force: true });
    });
    return { coordinator: made, history, gateway };
  }

  it('says a media fact that cannot be, and a command after shutdown, in words of the catalogue', async () => {
    const { coordinator: c } = await coordinator();
    c.applyRelayEvent({ id: '1', receivedAt: Date.now(), event: { type: 'call.incoming', callId: 'wacid.m-1', from: CUSTOMER.number!, sdp: OFFER_SDP, timestamp: Date.now() } });
    const early = refusal(await c.reportMedia({ localId: 'in:wacid.m-1', state: 'connected' }));
    const said = madeAs(early, 'The call is ringing: media cannot have connected yet');
    expect(await saidIn('es', () => errorMessage(early), said, early.message)).toBe('La llamada está sonando: el audio todavía no puede haberse conectado');

    await c.shutdown();
    const stopped = refusal(await c.answerCall('in:wacid.m-1', ANSWER_SDP));
    const shut = madeAs(stopped, 'Calls are shutting down');
    expect(await saidIn('ar', () => errorMessage(stopped), shut, stopped.message)).toBe('يجري إيقاف المكالمات');
  });

  it('refuses a message with no account in words of the catalogue', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'main-errors-'));
    cleanups.push(() => rm(dataDir, { recursive: true, force: true }));
    const service = new MessagingService({ windows: await ConversationWindows.open({ dataDir }), timeline: await MessageTimeline.open({ dataDir }) });
    cleanups.push(() => service.close());
    const none = refusal(await service.sendMessage('+44 7400 123456', { type: 'text', text: { body: 'Hello' } }));
    const said = madeAs(none, 'No account is set up and the sandbox is not running: open the settings');
    expect(await saidIn('es', () => messageErrorText(none), said, none.message)).toBe(
      'No hay ninguna cuenta configurada y el sandbox no está en ejecución: abre la configuración',
    );
  });
});

describe('the HTTP clients', () => {
  it("the gateway: an acceptance whose answer cannot be read says the message may have gone out, in the window's language", async () => {
    const gateway = await startFakeGateway(() => ({ status: 200, body: 'OK', contentType: 'text/plain' }));
    const client = new GatewayClient({ baseUrl: gateway.baseUrl, apiKey: 'test-api-key-123', product: 'chatapp' });
    cleanups.push(async () => {
      await client.close();
      await gateway.close();
    });
    const sent = refusal(await client.sendMessage({ messaging_product: 'chatapp', recipient_type: 'individual', to: '447400123456', type: 'text', text: { body: 'Hi' } }));
    const said = madeAs(sent, 'The gateway accepted the message (HTTP 200) but its answer could not be read: it may have been sent, check before sending it again');
    expect(sent.detail).toBe('HTTP 200: OK');
    expect(await saidIn('es', () => messageErrorText(sent), said, sent.message)).toBe(
      'La pasarela aceptó el mensaje (HTTP 200), pero no se pudo leer su respuesta: es posible que se haya enviado; compruébalo antes de volver a enviarlo',
    );
  });

  it("the relay: a server's own words stay its words inside the app's sentence", async () => {
    const server = createServer((_req, res) => res.writeHead(503, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { code: 'draining', message: 'shutting down' } })));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
    const client = new RelayClient({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, token: 'agent-token-1234' });
    cleanups.push(() => client.close());
    const refused = refusal(await client.me());
    const said = madeAs(refused, 'The relay refused the me request (HTTP 503: shutting down)');
    expect(refused.detail).toBe('shutting down');
    await setUiLanguage('es', undefined);
    expect(sayText(said)).toBe('El relay rechazó la solicitud me (HTTP 503: shutting down)');
    expect(englishLeft(sayText(said), said, 'es')).toEqual([]);
  });

  it('the event stream: the connection\'s last error, shown in the header, in the window\'s language', async () => {
    const states: ConnectionState[] = [];
    const stream = new RelayEventStream({ url: await closedPortUrl(), token: 'agent-token-1234', onEvent: () => undefined, onState: (s) => states.push(s), minBackoffMs: 5_000 });
    stream.start();
    cleanups.push(() => stream.stop());
    for (let i = 0; i < 200 && states.at(-1)?.status !== 'reconnecting'; i++) await new Promise((r) => setTimeout(r, 10));
    const state = states.at(-1);
    if (state?.status !== 'reconnecting') throw new Error('never reconnecting');
    expect(state.lastError).toBe('the relay refused the connection (is it running?)');
    expect(english(state.lastErrorText!)).toBe(state.lastError);
    expect(await saidIn('es', () => connectionIndicator({ status: 'open' }, state).detail, state.lastErrorText!, state.lastError)).toBe(
      'el relay rechazó la conexión (¿está en ejecución?)',
    );
  });

  it("the sandbox's control API: its refusal, the sandbox's words a value of the sentence", async () => {
    const sandbox = await startFakeGateway(() => json(400, { error: 'no customer has this number' }));
    const client = new SandboxControlClient(sandbox.baseUrl.replace(/\/restapi\/v1$/, ''));
    cleanups.push(async () => {
      await client.close();
      await sandbox.close();
    });
    const refused = refusal(await client.incoming('447400999999'));
    const said = madeAs(refused, 'The sandbox refused: no customer has this number');
    expect(await saidIn('ar', () => errorMessage(refused), said, refused.message)).toBe('رفضت بيئة الاختبار: \u2066no customer has this number\u2069');
  });
});

describe("a media failure's reason", () => {
  it('is reported as its code and values, kept on the ended call and its history entry, and said in the language of whichever window shows it', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'main-errors-'));
    const gateway = await startFakeGateway(() => success());
    const client = new GatewayClient({ baseUrl: gateway.baseUrl, apiKey: 'test-api-key-123', product: 'chatapp' });
    const history = await HistoryStore.open({ dataDir });
    const c = new CallCoordinator({ gateway: client, claims: new LocalClaims(), gatewayUrl: gateway.baseUrl, dataDir, history });
    await c.start();
    cleanups.push(async () => {
      await c.shutdown();
      await client.close();
      await gateway.close();
      await history.flush();
      await rm(dataDir, { recursive: true, force: true });
    });
    c.applyRelayEvent({ id: '1', receivedAt: Date.now(), event: { type: 'call.incoming', callId: 'wacid.ice-1', from: CUSTOMER.number!, sdp: OFFER_SDP, timestamp: Date.now() } });
    expect((await c.answerCall('in:wacid.ice-1', ANSWER_SDP)).ok).toBe(true);

    // A window in Spanish reports it: the reason goes in English and as its code and values, checked as the hosts check it.
    await setUiLanguage('es', undefined);
    const payload = parseWith(commandSchemas.reportMedia, { localId: 'in:wacid.ice-1', state: 'failed', ...reportedReason(mediaProblem('iceFailed')) });
    if (!payload.ok) throw new Error(payload.error.message);
    expect(await c.reportMedia(payload.value)).toEqual({ ok: true, value: null });

    const iceFailed =
      'No network path to the customer (ICE failed). A firewall may block outbound UDP to the calling service: a TURN server over TCP or TLS (Settings → Network) gets through.';
    const ended = c.call('in:wacid.ice-1') as EndedCall;
    expect(ended.end).toEqual({ kind: 'failed', code: 'media_failed', message: iceFailed, text: mediaProblem('iceFailed') });
    const entry = history.entries()[0]!;
    expect(entry).toMatchObject({ outcome: 'failed', failureCode: 'media_failed', failureMessage: iceFailed, failureText: mediaProblem('iceFailed') });

    // The entry as a window's edge reads it, then shown in Arabic by a window that was never Spanish.
    const pushed = historyEntrySchema.parse(JSON.parse(JSON.stringify(entry)));
    const arabic = await saidIn('ar', () => historyOutcomeText(pushed), mediaProblem('iceFailed'), iceFailed);
    expect(arabic).toBe(`فشلت: ${ar.rules.callMedia.iceFailed}`);
    expect(await saidIn('es', () => endReasonText(ended.end), mediaProblem('iceFailed'), iceFailed)).toBe(`Falló: ${es.rules.callMedia.iceFailed}`);
  });

  it('from a window of an older version (English only) or an old history file, is shown as it came', async () => {
    const old = historyEntrySchema.parse({ localId: 'in:wacid.old', direction: 'incoming', outcome: 'failed', failureCode: 'media_failed', failureMessage: 'The network connection was lost', startedAt: 1, endedAt: 2, durationSec: 0 });
    await setUiLanguage('es', undefined);
    expect(historyOutcomeText(old)).toBe('Falló: The network connection was lost');
    // A text this version cannot read is dropped, the entry kept.
    const newer = historyEntrySchema.parse({ ...old, failureText: { code: 'callMedia.notYetInvented' } });
    expect(newer).not.toHaveProperty('failureText', expect.anything());
    expect(historyOutcomeText(newer)).toBe('Falló: The network connection was lost');
  });
});

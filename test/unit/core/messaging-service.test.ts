// The messaging service against a real HTTP gateway stand-in and a real file server on 127.0.0.1:
// the window decides what may go out (131047 closes it), media links are checked on the file's bytes
// before sending (a broken rule refused, a warning held for the agent's "Send anyway" and checked
// again when it comes, media by id left to the gateway and its refusal placed on the id's field, no
// signed link's query in a log line), the call button names this agent, templates are filled only where the paste
// had variables, and the timeline follows the relay's message events — statuses included when they
// beat the send's answer.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ConversationWindows } from '../../../electron/core/conversation-windows';
import { GatewayClient } from '../../../electron/core/gateway-client';
import { MessageTimeline } from '../../../electron/core/message-timeline';
import { MessagingService } from '../../../electron/core/messaging-service';
import { withoutQuery } from '../../../shared/media-fetch';
import type { Conversation } from '../../../shared/conversation';
import type { RelayEvent } from '../../../shared/events';
import { configureLogging, type LogFields, type Logger } from '../../../shared/log';
import { inspectMedia } from '../../../shared/media-inspect';
import { err, ok, type Result } from '../../../shared/result';
import { parseTemplatePayload, type TemplateDraft } from '../../../shared/templates';
import { decodeVoiceCallPayload } from '../../../shared/voice-call-payload';
import { mediaCorpus } from '../../fixtures/media-corpus';
import { file, redirect, startMediaFileServer, type MediaFileServer } from '../../support/media-file-server';
import { graphError, json, startFakeGateway, type FakeGateway, type GatewayHandler, type RecordedRequest } from './fake-gateway';

configureLogging({ sink: () => undefined });

const ADA = '12025550101';
const T0 = Date.now();

interface Setup {
  service: MessagingService;
  gateway: FakeGateway;
  pushes: Conversation[];
  inbound(contact?: string, at?: number): void;
  status(messageId: string, status: 'sent' | 'delivered' | 'read' | 'failed', extra?: Partial<Extract<RelayEvent, { type: 'message.status' }>>): void;
}

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

let seq = 0;
const answerSent = (id: string, to = ADA) => json(200, { messaging_product: 'chatapp', contacts: [{ input: to, wa_id: to }], messages: [{ id }] });
const happy: GatewayHandler = (req) => answerSent(`wamid.${req.path.split('/').pop()}-${++seq}`, (req.body as { to?: string }).to);

async function setup(handler: GatewayHandler = happy, agentId: () => Promise<Result<string>> = async () => ok('alice'), logger?: Logger): Promise<Setup> {
  const dataDir = await mkdtemp(join(tmpdir(), 'messaging-'));
  const gateway = await startFakeGateway(handler);
  const client = new GatewayClient({ baseUrl: gateway.baseUrl, apiKey: 'k3y-messaging-0001', product: 'chatapp' });
  const service = new MessagingService({ windows: await ConversationWindows.open({ dataDir }), timeline: await MessageTimeline.open({ dataDir }), ...(logger ? { logger } : {}) });
  service.setRuntime({ gateway: client, product: 'chatapp', agentId });
  const pushes: Conversation[] = [];
  service.onConversationChanged((c) => pushes.push(c));
  cleanups.push(async () => {
    await service.close();
    await client.close();
    await gateway.close();
    await rm(dataDir, { recursive: true, force: true });
  });
  let eventSeq = 0;
  const deliver = (event: RelayEvent) => service.applyRelayEvent({ id: `ev-${++eventSeq}`, receivedAt: Date.now(), event });
  return {
    service,
    gateway,
    pushes,
    inbound: (contact = ADA, at = Date.now()) =>
      deliver({ type: 'message.inbound', messageId: `wamid.in-${++seq}`, from: contact, name: 'Ada Lovelace', timestamp: at, messageType: 'text', text: 'Hello there' }),
    status: (messageId, status, extra = {}) => deliver({ type: 'message.status', messageId, status, timestamp: Date.now(), ...extra }),
  };
}

const settle = () => new Promise((resolve) => setTimeout(resolve, 0));
const bodies = (g: FakeGateway): RecordedRequest[] => g.requests;

describe('the window', () => {
  it('refuses free-form to a customer who never wrote, without asking the gateway', async () => {
    const { service, gateway } = await setup();
    const result = await service.sendMessage(ADA, { type: 'text', text: { body: 'Hi' } });
    expect(result.ok ? 'sent' : result.error.code).toBe('window_closed');
    if (!result.ok) expect(result.error.message).toContain('Template');
    expect(bodies(gateway)).toEqual([]);
  });

  it('opens with the customer\u2019s message; a text then goes out to replymessage and joins the timeline', async () => {
    const { service, gateway, inbound, status, pushes } = await setup();
    inbound();
    await settle();
    expect(pushes.at(-1)).toMatchObject({ contact: ADA, name: 'Ada Lovelace', window: { open: true }, messages: [{ direction: 'inbound', summary: 'Hello there' }] });

    const result = await service.sendMessage('+1 202 555 0101', { type: 'text', text: { body: 'How can I help?' } });
    expect(result).toEqual({ ok: true, value: { messageId: expect.stringMatching(/^wamid\.replymessage-/), contact: ADA, warnings: [] } });
    expect(gateway.requests.map((r) => [r.path, r.body])).toEqual([
      ['/restapi/v1/chatapp/replymessage', { messaging_product: 'chatapp', recipient_type: 'individual', to: ADA, type: 'text', text: { body: 'How can I help?' } }],
    ]);
    const id = result.ok ? result.value.messageId : '';
    status(id, 'delivered');
    await settle();
    expect(service.conversation(ADA).messages.at(-1)).toMatchObject({ id, direction: 'outbound', summary: 'How can I help?', status: 'delivered' });
    expect(pushes.at(-1)!.messages.at(-1)!.status).toBe('delivered');
  });

  it('applies a status that arrives before the send\u2019s answer', async () => {
    const ctx: Setup = await setup(async (req) => {
      const id = 'wamid.fast';
      // The relay delivers the status while the gateway's answer is still on its way.
      ctx.status(id, 'sent');
      ctx.status(id, 'delivered');
      return answerSent(id, (req.body as { to: string }).to);
    });
    ctx.inbound();
    const result = await ctx.service.sendMessage(ADA, { type: 'text', text: { body: 'Quick' } });
    expect(result.ok).toBe(true);
    expect(ctx.service.conversation(ADA).messages.at(-1)).toMatchObject({ id: 'wamid.fast', status: 'delivered' });
  });

  it('a 131047 answer closes the window (the gateway is the judge) and says to send a template', async () => {
    const { service, inbound, pushes } = await setup(() => graphError(400, 131047, '(#131047) Re-engagement message'));
    inbound();
    await settle();
    const result = await service.sendMessage(ADA, { type: 'text', text: { body: 'Hi again' } });
    expect(result.ok ? 'sent' : [result.error.code, result.error.gatewayCode]).toEqual(['window_closed', 131047]);
    await settle();
    expect(service.conversation(ADA).window.open).toBe(false);
    expect(pushes.at(-1)!.window.open).toBe(false);
    // Nothing was sent, so nothing joins the timeline.
    expect(service.conversation(ADA).messages.map((m) => m.direction)).toEqual(['inbound']);
  });

  it('sends nothing and records nothing when the gateway cannot be reached; never retries', async () => {
    const { service, gateway, inbound } = await setup(() => json(503, { nope: true }));
    inbound();
    const result = await service.sendMessage(ADA, { type: 'text', text: { body: 'Hi' } });
    expect(result.ok).toBe(false);
    expect(gateway.requests).toHaveLength(1);
    expect(service.conversation(ADA).messages).toHaveLength(1);
  });
});

describe('media by link', () => {
  it('checks the link first: a file served as the wrong type is refused by field, and nothing is sent', async () => {
    const files = await serveFiles();
    const { service, gateway, inbound } = await setup();
    inbound();
    const result = await service.sendMessage(ADA, { type: 'image', image: { link: `${files.url}/photo.png`, caption: 'Parcel' } });
    expect(result.ok).toBe(false);
    if (!result.ok) {
      expect(result.error).toMatchObject({ code: 'invalid_input', field: 'content.image.link' });
      expect(result.error.message).toContain('the server says the file is text/plain, not an image');
    }
    expect(gateway.requests).toEqual([]);
    expect(files.requestsFor('/photo.png').length).toBeGreaterThan(0);
  });

  it('sends a link that fits, with what the check noticed', async () => {
    const files = await serveFiles();
    const { service, gateway, inbound } = await setup();
    inbound();
    const result = await service.sendMessage(ADA, { type: 'document', document: { link: `${files.url}/invoice.pdf`, filename: 'invoice.pdf' } });
    expect(result.ok).toBe(true);
    if (result.ok) expect(result.value.warnings.join(' ')).toContain('private network');
    expect(gateway.requests.map((r) => (r.body as { document?: unknown }).document)).toEqual([{ link: `${files.url}/invoice.pdf`, filename: 'invoice.pdf' }]);
    expect(service.conversation(ADA).messages.at(-1)!.summary).toBe('Document: invoice.pdf');
  });

  it('checks the media header of a link button too', async () => {
    const files = await serveFiles();
    const { service, gateway, inbound } = await setup();
    inbound();
    const result = await service.sendMessage(ADA, {
      type: 'interactive',
      interactive: {
        type: 'cta_url',
        header: { type: 'image', image: { link: `${files.url}/photo.png` } },
        body: { text: 'Pay here' },
        action: { name: 'cta_url', parameters: { display_text: 'Pay', url: 'https://pay.example.com/42' } },
      },
    });
    expect(result.ok ? 'sent' : result.error.field).toBe('content.interactive.header.image.link');
    expect(gateway.requests).toEqual([]);
  });

  it('answers checkMediaLink on its own, with what the file is in words', async () => {
    const files = await serveFiles();
    const { service } = await setup();
    const checked = await service.checkMediaLink('document', `${files.url}/invoice.pdf`);
    expect(checked).toMatchObject({ ok: true, value: { contentType: 'application/pdf', contentLength: files.sizes.pdf, finalUrl: `${files.url}/invoice.pdf` } });
    expect(checked.ok && checked.value.confirm).toBeFalsy();
    // The inspection's own words, for the composer's link hint.
    const pdf = new Uint8Array(await readFile(corpus.file('doc.pdf').path));
    const inspected = await inspectMedia('document', { head: pdf, size: pdf.length }, { extension: '.pdf', mimeType: 'application/pdf' });
    if (!inspected.ok) throw new Error(inspected.error.message);
    expect(inspected.value.description).toMatch(/PDF/);
    expect(checked.ok && checked.value.description).toBe(inspected.value.description);
    const image = await service.checkMediaLink('image', `${files.url}/ok.png`);
    expect(image.ok && image.value.description).toMatch(/^8-bit RGB PNG/);
  });

  it('a checker without words for the file leaves description out', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'messaging-'));
    const service = new MessagingService({
      windows: await ConversationWindows.open({ dataDir }),
      timeline: await MessageTimeline.open({ dataDir }),
      checkLink: async () =>
        ok({
          contentType: 'image/png',
          size: 10,
          finalUrl: 'https://cdn.example.com/a.png',
          mimeType: 'image/png',
          notes: ['a note'],
          noteTexts: [{ code: 'mediaFetch.noFileThere' }],
          warnings: [],
          description: '',
          descriptionText: '',
        }),
    });
    cleanups.push(async () => {
      await service.close();
      await rm(dataDir, { recursive: true, force: true });
    });
    expect(await service.checkMediaLink('image', 'https://cdn.example.com/a.png')).toEqual({
      ok: true,
      value: { contentType: 'image/png', contentLength: 10, finalUrl: 'https://cdn.example.com/a.png', warnings: ['a note'], warningTexts: [{ code: 'mediaFetch.noFileThere' }] },
    });
  });
});

describe('the media rules (gateway-spec.md 2.3) and "Send anyway"', () => {
  const CAPTION = 'How to fit the shelf';

  it('a file that breaks a rule is refused by field with the rule, whatever is confirmed', async () => {
    const files = await serveFiles();
    const { service, gateway, inbound } = await setup();
    inbound();
    const bFrames = await warningsOf(service, `${files.url}/clip.mp4`);
    for (const options of [{}, { confirmed: bFrames }, { confirmed: ['16-bit PNG: images must be 8-bit RGB or RGBA'] }]) {
      const result = await service.sendMessage(ADA, { type: 'image', image: { link: `${files.url}/deep.png`, caption: 'Colours' } }, options);
      expect(result.ok).toBe(false);
      if (result.ok) continue;
      expect(result.error).toMatchObject({ code: 'invalid_input', field: 'content.image.link' });
      expect(result.error.message).toMatch(/16-bit (RGBA? )?PNG: images must be 8-bit RGB or RGBA/);
      expect(result.error.confirm).toBeUndefined();
    }
    expect(gateway.requests).toEqual([]);
    expect(service.conversation(ADA).messages.map((m) => m.direction)).toEqual(['inbound']);
  });

  it('a file the gateway takes with a warning waits for the agent; the same send confirming those warnings goes out', async () => {
    const files = await serveFiles();
    const { service, gateway, inbound } = await setup();
    inbound();
    const content = { type: 'video' as const, video: { link: `${files.url}/clip.mp4`, caption: CAPTION } };

    const held = await service.sendMessage(ADA, content);
    expect(held.ok).toBe(false);
    if (!held.ok) {
      expect(held.error).toMatchObject({ code: 'needs_confirmation', field: 'content.video.link' });
      expect(held.error.confirm).toEqual([expect.stringMatching(/B-frames/)]);
      expect(held.error.confirm![0]).toMatch(/Main|Baseline/);
    }
    expect(gateway.requests).toEqual([]);
    expect(service.conversation(ADA).messages.map((m) => m.direction)).toEqual(['inbound']);

    // Confirming something else is no confirmation of these.
    const other = await service.sendMessage(ADA, content, { confirmed: ['MP4 with its moov box after the media data'] });
    expect(other.ok ? 'sent' : [other.error.code, other.error.confirm]).toEqual(['needs_confirmation', held.ok ? [] : held.error.confirm]);
    expect(gateway.requests).toEqual([]);

    const sent = await service.sendMessage(ADA, content, { confirmed: held.ok ? [] : held.error.confirm! });
    expect(sent).toMatchObject({ ok: true, value: { contact: ADA } });
    expect(gateway.requests.map((r) => [r.path, (r.body as { video?: unknown }).video])).toEqual([['/restapi/v1/chatapp/replymessage', { link: `${files.url}/clip.mp4`, caption: CAPTION }]]);
    expect(service.conversation(ADA).messages.at(-1)).toMatchObject({ direction: 'outbound', summary: `Video: clip.mp4 — ${CAPTION}` });
  });

  it('a link button’s media header waits for the agent the same way', async () => {
    const files = await serveFiles();
    const { service, gateway, inbound } = await setup();
    inbound();
    const content = {
      type: 'interactive' as const,
      interactive: {
        type: 'cta_url' as const,
        header: { type: 'video' as const, video: { link: `${files.url}/clip.mp4` } },
        body: { text: 'Watch how it fits' },
        action: { name: 'cta_url' as const, parameters: { display_text: 'Shop', url: 'https://shop.example.com/shelf' } },
      },
    };
    const held = await service.sendMessage(ADA, content);
    expect(held.ok ? 'sent' : [held.error.code, held.error.field]).toEqual(['needs_confirmation', 'content.interactive.header.video.link']);
    expect(gateway.requests).toEqual([]);
    expect((await service.sendMessage(ADA, content, { confirmed: held.ok ? [] : held.error.confirm! })).ok).toBe(true);
    expect(gateway.requests).toHaveLength(1);
  });

  it('a file that changed after the agent saw its warnings is not sent on the old confirmation: the new warnings wait', async () => {
    const files = await serveFiles();
    const { service, gateway, inbound } = await setup();
    inbound();
    const content = { type: 'video' as const, video: { link: `${files.url}/clip.mp4`, caption: CAPTION } };
    const held = await service.sendMessage(ADA, content);
    const shown = held.ok ? [] : held.error.confirm!;
    expect(shown).toEqual([expect.stringMatching(/B-frames/)]);

    // Meanwhile the file at that link was replaced by one whose moov box comes last.
    files.routes.set('/clip.mp4', file(files.bytes.moovAtEnd, { contentType: 'video/mp4' }));
    const again = await service.sendMessage(ADA, content, { confirmed: shown });
    expect(again.ok).toBe(false);
    if (!again.ok) {
      expect(again.error).toMatchObject({ code: 'needs_confirmation', field: 'content.video.link' });
      expect(again.error.confirm).toEqual([expect.stringMatching(/moov box after the media data/)]);
      expect(again.error.message).toMatch(/the file now has warnings you have not confirmed/);
    }
    expect(gateway.requests).toEqual([]);

    // Confirming the new list sends it; the old word confirming more than is found does no harm.
    const sent = await service.sendMessage(ADA, content, { confirmed: [...shown, ...(again.ok ? [] : again.error.confirm!)] });
    expect(sent.ok).toBe(true);
    expect(gateway.requests).toHaveLength(1);
  });

  it('media by id goes to the gateway as it is: no link to check, the gateway judges the id', async () => {
    const files = await serveFiles();
    const { service, gateway, inbound } = await setup();
    inbound();
    const result = await service.sendMessage(ADA, { type: 'image', image: { id: '1900000000000001', caption: CAPTION } });
    expect(result).toEqual({ ok: true, value: { messageId: expect.stringMatching(/^wamid\./), contact: ADA, warnings: [] } });
    expect(gateway.requests.map((r) => (r.body as { image?: unknown }).image)).toEqual([{ id: '1900000000000001', caption: CAPTION }]);
    expect(files.seen).toEqual([]);
    expect(service.conversation(ADA).messages.at(-1)!.summary).toBe(`Image: media 1900000000000001 — ${CAPTION}`);
  });

  it('the gateway refusing an unknown media id (131053) is the id field\u2019s error, with the gateway\u2019s details', async () => {
    const details = 'image.id: unknown media id "1900000000000099": the account has no uploaded media with this id';
    const { service, gateway, inbound } = await setup(() => graphError(400, 131053, '(#131053) Media upload error', { error_data: { details } }));
    inbound();
    const result = await service.sendMessage(ADA, { type: 'image', image: { id: '1900000000000099', caption: CAPTION } });
    expect(result.ok).toBe(false);
    if (!result.ok) {
      expect(result.error).toMatchObject({
        code: 'gateway_error',
        gatewayCode: 131053,
        httpStatus: 400,
        field: 'content.image.id',
        message: 'content.image.id: unknown media id "1900000000000099": the account has no uploaded media with this id',
      });
    }
    expect(gateway.requests).toHaveLength(1);
    expect(service.conversation(ADA).messages.map((m) => m.direction)).toEqual(['inbound']);
  });

  it('places the gateway\u2019s details only on a media field the message has; other details leave the error as it was', async () => {
    const files = await serveFiles();
    const answers = [
      // A link's refusal by the gateway goes on the link field, its signed query left out.
      { details: `image.link: the link answered HTTP 403 for ${files.url}/ok.png?sig=s3cr3t`, content: { type: 'image' as const, image: { link: `${files.url}/ok.png?sig=s3cr3t` } } },
      { details: 'interactive.header.image.link: the file changed: 16-bit PNG', content: ctaWithImageHeader(`${files.url}/ok.png`) },
      // Not a field of this message, or no field at all.
      { details: 'document.id: unknown media id "7"', content: { type: 'image' as const, image: { id: '7' } } },
      { details: 'Media upload error: unsupported image type', content: { type: 'image' as const, image: { id: '7' } } },
    ];
    let next = 0;
    const { service, inbound } = await setup(() => graphError(400, 131053, '(#131053) Media upload error', { error_data: { details: answers[next++]!.details } }));
    inbound();
    const fields: (string | undefined)[] = [];
    const messages: string[] = [];
    for (const { content } of answers) {
      const result = await service.sendMessage(ADA, content);
      fields.push(result.ok ? 'sent' : result.error.field);
      messages.push(result.ok ? '' : result.error.message);
    }
    expect(fields).toEqual(['content.image.link', 'content.interactive.header.image.link', undefined, undefined]);
    expect(messages[0]).toBe(`content.image.link: the link answered HTTP 403 for ${files.url}/ok.png`);
    expect(messages[1]).toBe('content.interactive.header.image.link: the file changed: 16-bit PNG');
    expect(messages[2]).toBe('The media could not be fetched or is not in a supported format');
  });

  it('checkMediaLink says what the send will ask the agent to confirm', async () => {
    const files = await serveFiles();
    const { service } = await setup();
    const checked = await service.checkMediaLink('video', `${files.url}/clip.mp4`);
    expect(checked).toMatchObject({ ok: true, value: { contentType: 'video/mp4', contentLength: files.sizes.mp4, confirm: [expect.stringMatching(/B-frames/)] } });
  });
});

describe('signed links', () => {
  const SIGNED = '?X-Amz-Signature=s3cr3t-5ig&X-Amz-Expires=60#t=1';

  it('a link in a log line keeps its origin and path only, whether the file waits, is refused or goes out', async () => {
    const files = await serveFiles();
    files.routes.set('/away.mp4', redirect(`/clip.mp4${SIGNED}`));
    const lines: LogFields[] = [];
    const logger = recordingLogger(lines);
    const { service, inbound } = await setup(happy, async () => ok('alice'), logger);
    inbound();
    const content = { type: 'video' as const, video: { link: `${files.url}/clip.mp4${SIGNED}` } };

    const held = await service.sendMessage(ADA, content);
    expect(held.ok ? 'sent' : held.error.code).toBe('needs_confirmation');
    expect((await service.sendMessage(ADA, content, { confirmed: held.ok ? [] : held.error.confirm! })).ok).toBe(true);
    // Redirected to the signed file: what the check found is logged with the link as typed, cut.
    const redirected = await service.sendMessage(ADA, { type: 'video', video: { link: `${files.url}/away.mp4${SIGNED}` } });
    expect(redirected.ok ? 'sent' : redirected.error.code).toBe('needs_confirmation');
    const refused = await service.sendMessage(ADA, { type: 'image', image: { link: `${files.url}/deep.png${SIGNED}` } });
    expect(refused.ok ? 'sent' : refused.error.field).toBe('content.image.link');
    const checked = await service.checkMediaLink('image', `${files.url}/deep.png${SIGNED}`);
    expect(checked.ok).toBe(false);

    const logged = JSON.stringify(lines);
    expect(lines.map((l) => l.msg)).toEqual(
      expect.arrayContaining(['media send waits for the agent to confirm', 'media sent with the warnings the agent confirmed', 'media link refused before sending']),
    );
    expect(logged).toContain(`${files.url}/clip.mp4`);
    expect(logged).toContain(`${files.url}/away.mp4`);
    expect(logged).toContain(`${files.url}/deep.png`);
    expect(logged).not.toContain('s3cr3t');
    expect(logged).not.toContain('X-Amz');
    expect(JSON.stringify(refused)).not.toContain('s3cr3t');
    expect(JSON.stringify(checked)).not.toContain('s3cr3t');
  });

  it('withoutQuery cuts every address in a text to its origin and path', () => {
    expect(withoutQuery('https://cdn.example.com/a/clip.mp4?sig=1&exp=2#t=3')).toBe('https://cdn.example.com/a/clip.mp4');
    expect(withoutQuery('https://user:pw@cdn.example.com:8443/a.png')).toBe('https://cdn.example.com:8443/a.png');
    expect(withoutQuery('from http://a.example/x?k=1 to https://b.example/y#f, then')).toBe('from http://a.example/x to https://b.example/y, then');
    // Inside JSON text the escaped quote after the address stays.
    expect(withoutQuery('{"details":"at \\"https://a.example/x?k=1\\""}')).toBe('{"details":"at \\"https://a.example/x\\""}');
    expect(withoutQuery('no address here')).toBe('no address here');
  });
});

describe('the call button and the permission request', () => {
  it('sends a voice_call whose payload names this agent and the contact', async () => {
    const { service, gateway, inbound } = await setup();
    inbound();
    const result = await service.sendCallButton({ to: ADA, displayText: 'Call Ada\u2019s agent', ttlMinutes: 30 });
    expect(result.ok).toBe(true);
    const body = gateway.requests[0]!.body as { interactive: { type: string; action: { parameters: { payload: string; ttl_minutes: number; display_text: string } } } };
    expect(body.interactive.type).toBe('voice_call');
    expect(decodeVoiceCallPayload(body.interactive.action.parameters.payload)).toEqual({ kind: 'ours', payload: { v: 1, agentId: 'alice', contact: ADA } });
    expect(body.interactive.action.parameters).toMatchObject({ ttl_minutes: 30, display_text: 'Call Ada\u2019s agent' });
    expect(service.conversation(ADA).messages.at(-1)).toMatchObject({ kind: 'interactive', interactiveType: 'voice_call', summary: 'Call button: Call Ada\u2019s agent' });
  });

  it('does not send a button that could not route the call back (no agent id), nor outside the window', async () => {
    const noAgent = await setup(happy, async () => err('gateway_unreachable', 'The relay could not be reached'));
    expect((await noAgent.service.sendCallButton({ to: ADA })).ok ? 'sent' : 'refused').toBe('refused'); // window closed first
    noAgent.inbound();
    const result = await noAgent.service.sendCallButton({ to: ADA });
    expect(result.ok ? 'sent' : result.error.code).toBe('not_available');
    expect(noAgent.gateway.requests).toEqual([]);
  });

  it('asks for call permission free-form inside the window, and points to a template outside it', async () => {
    const { service, gateway, inbound } = await setup();
    const outside = await service.requestCallPermission(ADA);
    expect(outside.ok ? 'sent' : outside.error.code).toBe('window_closed');
    if (!outside.ok) expect(outside.error.message).toMatch(/only go out as a template/);
    expect(gateway.requests).toEqual([]);
    inbound();
    const inside = await service.requestCallPermission(ADA);
    expect(inside.ok).toBe(true);
    expect((gateway.requests[0]!.body as { interactive: unknown }).interactive).toEqual({
      type: 'call_permission_request',
      body: { text: expect.stringContaining('call you') },
      action: { name: 'call_permission_request' },
    });
  });
});

describe('templates', () => {
  const PASTE = JSON.stringify({
    messaging_product: 'chatapp',
    recipient_type: 'individual',
    to: '<USER_PHONE_NUMBER>',
    type: 'template',
    template: { name: 'order_update', language: { code: 'en_US' }, components: [{ type: 'body', parameters: [{ type: 'text', text: '{{1}}' }, { type: 'text', text: '{{2}}' }] }] },
  });
  const draftOf = (): TemplateDraft => {
    const parsed = parseTemplatePayload(PASTE);
    if (!parsed.ok) throw new Error(parsed.error.message);
    return parsed.value;
  };

  it('goes out whatever the window, filled, to the contact; the timeline shows the values', async () => {
    const { service, gateway } = await setup();
    const draft = draftOf();
    const values = { [draft.fields[0]!.path]: 'Ada', [draft.fields[1]!.path]: 'A-1042' };
    const result = await service.sendTemplate(draft, '+1 202 555 0101', values);
    expect(result.ok).toBe(true);
    expect(gateway.requests.map((r) => [r.path, (r.body as { to: string }).to])).toEqual([['/restapi/v1/chatapp/sendtemplate', ADA]]);
    expect(JSON.stringify(gateway.requests[0]!.body)).toContain('"text":"A-1042"');
    expect(service.conversation(ADA).messages.at(-1)).toMatchObject({ kind: 'template', summary: 'Template order_update (en_US): Ada · A-1042' });
  });

  it('fills only the paste\u2019s own variables: a draft\u2019s made-up field paths are ignored', async () => {
    const { service, gateway } = await setup();
    const draft = draftOf();
    const tampered: TemplateDraft = { ...draft, fields: [{ path: 'template.__proto__.polluted', label: 'x', sample: '', placeholder: true, kind: 'text' }] };
    const result = await service.sendTemplate(tampered, ADA, { 'template.__proto__.polluted': 'yes' });
    expect(result.ok ? 'sent' : result.error.field).toBe('template.components[0].parameters[0].text');
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(gateway.requests).toEqual([]);
  });

  it('refuses an unknown template with the gateway\u2019s words', async () => {
    const { service } = await setup(() => graphError(404, 132001, '(#132001) Template name does not exist in the translation'));
    const draft = draftOf();
    const result = await service.sendTemplate(draft, ADA, { [draft.fields[0]!.path]: 'a', [draft.fields[1]!.path]: 'b' });
    expect(result.ok ? 'sent' : result.error.message).toBe('No template with this name and language exists on the account');
  });
});

describe('events and conversations', () => {
  it('pushes once per contact per change, with a growing revision', async () => {
    const { inbound, pushes } = await setup();
    inbound(ADA);
    await settle();
    expect(pushes).toHaveLength(1); // the window and the timeline changed together: one push
    inbound(ADA);
    await settle();
    expect(pushes).toHaveLength(2);
    expect(pushes[1]!.revision).toBeGreaterThan(pushes[0]!.revision);
  });

  it('words a permission answer and media, and skips a message without a number', async () => {
    const { service } = await setup();
    const deliver = (event: RelayEvent) => service.applyRelayEvent({ id: 'x', receivedAt: T0, event });
    deliver({ type: 'message.inbound', messageId: 'wamid.p', from: ADA, timestamp: T0, messageType: 'interactive', permissionReply: { response: 'accept', isPermanent: true } });
    deliver({ type: 'message.inbound', messageId: 'wamid.i', from: ADA, timestamp: T0 + 1, messageType: 'image' });
    deliver({ type: 'message.inbound', messageId: 'wamid.u', fromUserId: 'BSUID.1', timestamp: T0 + 2, messageType: 'text', text: 'hi' });
    expect(service.conversation(ADA).messages.map((m) => [m.summary, m.interactiveType])).toEqual([
      ['Allowed calls (permanently)', 'call_permission_reply'],
      ['(Image)', undefined],
    ]);
  });

  it('lists recent conversations, those with only a window included, newest first', async () => {
    const { service, inbound } = await setup();
    inbound('442079460101', T0 - 60_000);
    const sent = await service.sendTemplate(
      (() => {
        const d = parseTemplatePayload('{"template":{"name":"welcome_back","language":{"code":"en"}}}');
        if (!d.ok) throw new Error('paste');
        return d.value;
      })(),
      ADA,
      {},
    );
    expect(sent.ok).toBe(true);
    expect(service.recentConversations().map((c) => [c.contact, c.window.open])).toEqual([
      [ADA, false],
      ['442079460101', true],
    ]);
    expect(service.lookUp('+44 20 7946 0101')).toMatchObject({ ok: true, value: { contact: '442079460101' } });
    expect(service.lookUp('+44 20')).toMatchObject({ ok: false, error: { code: 'invalid_phone_number' } });
  });

  it('says no account is set up when there is no runtime', async () => {
    const { service } = await setup();
    service.setRuntime(undefined);
    expect(await service.sendMessage(ADA, { type: 'text', text: { body: 'x' } })).toMatchObject({ ok: false, error: { code: 'not_configured' } });
  });
});

let corpus: Awaited<ReturnType<typeof mediaCorpus>>;
// The corpus is made with Debian's tools the first time (cached after that).
beforeAll(async () => {
  corpus = await mediaCorpus();
}, 300_000);

/**
 * Real files of the corpus on 127.0.0.1: /photo.png (a good PNG served as text/plain: wrong),
 * /invoice.pdf (a real PDF), /deep.png (a 16-bit PNG: refused), /clip.mp4 (H.264 High with
 * B-frames: a warning).
 */
async function serveFiles(): Promise<MediaFileServer & { sizes: { pdf: number; mp4: number }; bytes: { moovAtEnd: Uint8Array } }> {
  const bytes = (name: string) => readFile(corpus.file(name).path);
  const [png, pdf, deep, mp4, moovAtEnd] = await Promise.all([bytes('rgb.png'), bytes('doc.pdf'), bytes('rgb16.png'), bytes('high-bframes.mp4'), bytes('moov-at-end.mp4')]);
  const server = await startMediaFileServer({
    '/photo.png': file(png, { contentType: 'text/plain' }),
    '/ok.png': file(png, { contentType: 'image/png' }),
    '/invoice.pdf': file(pdf, { contentType: 'application/pdf' }),
    '/deep.png': file(deep, { contentType: 'image/png' }),
    '/clip.mp4': file(mp4, { contentType: 'video/mp4' }),
  });
  cleanups.push(() => server.close());
  return Object.assign(server, { sizes: { pdf: pdf.length, mp4: mp4.length }, bytes: { moovAtEnd } });
}

/** The warnings a send of this video would ask the agent to confirm. */
async function warningsOf(service: MessagingService, link: string): Promise<string[]> {
  const checked = await service.checkMediaLink('video', link);
  return checked.ok ? (checked.value.confirm ?? []) : [];
}

/** A link button whose header is an image by link. */
function ctaWithImageHeader(link: string) {
  return {
    type: 'interactive' as const,
    interactive: {
      type: 'cta_url' as const,
      header: { type: 'image' as const, image: { link } },
      body: { text: 'Your parcel' },
      action: { name: 'cta_url' as const, parameters: { display_text: 'Track', url: 'https://shop.example.com/track' } },
    },
  };
}

/** A logger that keeps every line's message and fields, as written. */
function recordingLogger(lines: LogFields[]): Logger {
  const write = (msg: string, fields: LogFields = {}) => void lines.push({ msg, ...fields });
  return { debug: write, info: write, warn: write, error: write };
}

// The messages domain against an in-memory SoftphoneApi that answers like the main process does:
// nothing typed is lost on an error, a closed window points to a template, and a send clears the form.
import { afterEach, beforeEach, describe, expect, it, onTestFinished } from 'vitest';
import type { SoftphoneApi } from '../../../shared/api';
import type { Conversation } from '../../../shared/conversation';
import { english, fieldRule, text } from '../../../shared/i18n/text';
import { err, ok } from '../../../shared/result';
import { fieldError } from '../../../shared/validation';
import { MessagingActions } from '../../../renderer/app/messaging-actions';
import { messageErrorText } from '../../../renderer/error-texts';
import { setUiLanguage } from '../../../renderer/i18n/i18n';
import { emptyMedia, linkCheckHint, sendNoticeText, type MediaDraft } from '../../../renderer/store/composer';
import { appStore, resetStore } from '../../../renderer/store/store';
import { fakeApi, type Answers } from './fake-api';
import { T0 } from './fixtures';

const ADA = '447700900123';

const conversation = (open: boolean): Conversation => ({
  contact: ADA,
  window: open ? { open: true, closesAt: Date.now() + 3_600_000, lastInboundAt: Date.now() } : { open: false },
  messages: [],
  lastActivityAt: T0,
  revision: 1,
});

const state = () => appStore.getState();

function messagingWith(answers: Answers) {
  const { api, calls } = fakeApi({ getConversation: () => ok(state().conversations[ADA] ?? conversation(false)), ...answers });
  return { messaging: new MessagingActions({ api, store: appStore }), calls };
}

describe('sending from the composer', () => {
  beforeEach(() => resetStore());

  it('keeps every word on an error and places it by field', async () => {
    state().applyConversation(conversation(true));
    const { messaging } = messagingWith({
      sendMessage: () => fieldError('invalid_input', 'content.image.link', 'the server says the file is text/plain, not an image'),
    });
    messaging.editComposer(ADA, (d) => ({ ...d, tab: 'media', media: { type: 'image', by: 'link', link: 'https://e.com/a.png', id: '', caption: 'Parcel', filename: '' } }));
    await messaging.send(ADA);
    const draft = state().composers[ADA]!;
    expect(draft.media).toEqual({ type: 'image', by: 'link', link: 'https://e.com/a.png', id: '', caption: 'Parcel', filename: '' });
    expect(draft.serverErrors).toEqual({ 'image.link': 'the server says the file is text/plain, not an image' });
    expect(draft.busy).toBe(false);
    // Typing in the field clears its server error.
    messaging.editComposer(ADA, (d) => ({ ...d, media: { ...d.media, link: 'https://e.com/b.png' } }), 'image.link');
    expect(state().composers[ADA]!.serverErrors).toEqual({});
  });

  it('checks locally first: a broken rule shows every error and nothing is asked of the main process', async () => {
    state().applyConversation(conversation(true));
    const { messaging, calls } = messagingWith({});
    await messaging.send(ADA);
    expect(state().composers[ADA]).toMatchObject({ showAllErrors: true, error: 'Not sent: check the highlighted fields.' });
    expect(calls.map((c) => c.name)).toEqual([]);
  });

  it('clears the text after a send, and says what the link check noticed', async () => {
    state().applyConversation(conversation(true));
    const { messaging, calls } = messagingWith({ sendMessage: () => ok({ messageId: 'wamid.1', contact: ADA, warnings: ['Unknown size'] }) });
    messaging.editComposer(ADA, (d) => ({ ...d, text: 'On its way' }), 'text.body');
    await messaging.send(ADA);
    expect(calls.at(-1)).toEqual({ name: 'sendMessage', params: { to: ADA, content: { type: 'text', text: { body: 'On its way' } } } });
    expect(state().composers[ADA]).toMatchObject({ text: '', notice: ['Unknown size'], error: null });
    expect(sendNoticeText(state().composers[ADA]!.notice!)).toBe('Sent. Unknown size');
  });

  it('says what the link check noticed in the agent\u2019s language', async () => {
    await setUiLanguage('es');
    onTestFinished(() => setUiLanguage('en'));
    state().applyConversation(conversation(true));
    const note = text('mediaFetch.noExtension', { contentType: 'video/mp4' });
    const { messaging } = messagingWith({ sendMessage: () => ok({ messageId: 'wamid.1', contact: ADA, warnings: [english(note)], warningTexts: [note] }) });
    messaging.editComposer(ADA, (d) => ({ ...d, text: 'En camino' }), 'text.body');
    await messaging.send(ADA);
    expect(state().composers[ADA]?.notice).toEqual([note]);
    const said = sendNoticeText(state().composers[ADA]!.notice!);
    expect(said).toContain('El enlace no tiene extensión de archivo; el archivo se toma como video/mp4');
    expect(said).not.toContain('The link has no file extension');
  });

  it('keeps the next words the agent typed while a send was under way', async () => {
    state().applyConversation(conversation(true));
    let answer: (r: ReturnType<typeof ok>) => void = () => undefined;
    const { api } = fakeApi({});
    const slow = { ...api, sendMessage: () => new Promise((resolve) => (answer = resolve)) } as unknown as SoftphoneApi;
    const messaging = new MessagingActions({ api: slow, store: appStore });
    messaging.editComposer(ADA, (d) => ({ ...d, text: 'First' }));
    const sending = messaging.send(ADA);
    expect(state().composers[ADA]!.busy).toBe(true);
    await messaging.send(ADA); // a second Enter while busy sends nothing
    messaging.editComposer(ADA, (d) => ({ ...d, text: 'Second thought' }), 'text.body');
    answer(ok({ messageId: 'wamid.1', contact: ADA, warnings: [] }));
    await sending;
    expect(state().composers[ADA]).toMatchObject({ text: 'Second thought', busy: false });
  });

  it('keeps the text when the gateway says the window closed', async () => {
    state().applyConversation(conversation(true));
    const { messaging } = messagingWith({ sendMessage: () => err('window_closed', 'closed', { gatewayCode: 131047 }) });
    messaging.editComposer(ADA, (d) => ({ ...d, text: 'Still there?' }));
    await messaging.send(ADA);
    expect(state().composers[ADA]).toMatchObject({ text: 'Still there?', error: expect.stringContaining('24-hour conversation window is closed') });
  });

  it('sends the call button variant through sendCallButton, with its own fields', async () => {
    state().applyConversation(conversation(true));
    const { messaging, calls } = messagingWith({ sendCallButton: () => ok({ messageId: 'wamid.2', contact: ADA, warnings: [] }) });
    messaging.editComposer(ADA, (d) => ({ ...d, tab: 'interactive', interactive: { ...d.interactive, variant: 'voice_call', callTtlMinutes: '15' } }));
    await messaging.send(ADA);
    expect(calls.at(-1)).toEqual({ name: 'sendCallButton', params: { to: ADA, displayText: 'Call us', ttlMinutes: 15 } });
  });
});

describe('media: "Send anyway", refusals and media by id', () => {
  beforeEach(() => resetStore());

  const LINK = 'https://files.example.com/clip.mp4';
  const B_FRAMES = 'MP4: H.264 High with B-frames: does not play on Android; use the Main or Baseline profile without B-frames';
  const MOOV = 'MP4: moov after mdat: the customer waits for the whole file; move it with ffmpeg -movflags +faststart';
  const CONTENT = { type: 'video', video: { link: LINK, caption: 'How to fit it' } };
  const needsConfirmation = () =>
    err('needs_confirmation', `content.video.link: not sent yet, confirm to send it anyway: ${B_FRAMES} ${MOOV}`, { field: 'content.video.link', confirm: [B_FRAMES, MOOV] });

  function videoDraft(patch: Partial<MediaDraft> = {}) {
    return (d: ReturnType<typeof state>['composers'][string]) => ({ ...d, tab: 'media' as const, media: { ...emptyMedia('video', 'link'), link: LINK, caption: 'How to fit it', ...patch } });
  }

  /** A main process that wants the warnings confirmed, and sends once `confirmed` holds every one of them. */
  function confirmingApi() {
    return messagingWith({
      sendMessage: (params) => ([B_FRAMES, MOOV].every((w) => params.confirmed?.includes(w)) ? ok({ messageId: 'wamid.v', contact: ADA, warnings: [] }) : needsConfirmation()),
    });
  }

  it('a file with warnings is not sent: the warnings wait beside the field, and every word stays', async () => {
    state().applyConversation(conversation(true));
    const { messaging, calls } = confirmingApi();
    messaging.editComposer(ADA, videoDraft());
    await messaging.send(ADA);
    const draft = state().composers[ADA]!;
    expect(calls.map((c) => c.params)).toEqual([{ to: ADA, content: CONTENT }]);
    expect(draft.confirmation).toMatchObject({ warnings: [B_FRAMES, MOOV], changed: false, asked: 1 });
    expect(draft).toMatchObject({ busy: false, error: null, serverErrors: {}, media: { link: LINK, caption: 'How to fit it' } });
  });

  it('"Send anyway" sends the same message with the warnings it showed confirmed, and clears the form', async () => {
    state().applyConversation(conversation(true));
    const { messaging, calls } = confirmingApi();
    messaging.editComposer(ADA, videoDraft());
    await messaging.send(ADA);
    // A caption edited meanwhile is not about the file: the warnings stand.
    messaging.editComposer(ADA, (d) => ({ ...d, media: { ...d.media, caption: 'How to fit the shelf' } }), 'video.caption');
    expect(state().composers[ADA]!.confirmation).not.toBeNull();
    await messaging.send(ADA, { confirmed: state().composers[ADA]!.confirmation!.warnings });
    expect(calls.at(-1)).toEqual({
      name: 'sendMessage',
      params: { to: ADA, content: { type: 'video', video: { link: LINK, caption: 'How to fit the shelf' } }, confirmed: [B_FRAMES, MOOV] },
    });
    expect(state().composers[ADA]).toMatchObject({ confirmation: null, busy: false, error: null, media: { type: 'video', link: '', caption: '' } });
  });

  it('a second Send with the same answer asks again as a new alert; an edit starts the count again', async () => {
    state().applyConversation(conversation(true));
    const { messaging, calls } = confirmingApi();
    messaging.editComposer(ADA, videoDraft());
    await messaging.send(ADA);
    const first = state().composers[ADA]!.confirmation!;
    await messaging.send(ADA);
    expect(calls).toHaveLength(2);
    // The same words, but another answer: a screen reader must hear it again.
    expect(state().composers[ADA]!.confirmation).toEqual({ ...first, asked: 2 });
    messaging.editComposer(ADA, (d) => ({ ...d, media: { ...d.media, link: 'https://files.example.com/clip-main.mp4' } }), 'video.link');
    await messaging.send(ADA);
    expect(state().composers[ADA]!.confirmation).toMatchObject({ warnings: [B_FRAMES, MOOV], asked: 1 });
  });

  it('an edit of the link or the type clears the warnings; "Send anyway" then confirms nothing', async () => {
    state().applyConversation(conversation(true));
    const { messaging, calls } = confirmingApi();
    messaging.editComposer(ADA, videoDraft());
    await messaging.send(ADA);
    messaging.editComposer(ADA, (d) => ({ ...d, media: { ...d.media, link: 'https://files.example.com/clip-main.mp4' } }), 'video.link');
    expect(state().composers[ADA]!.confirmation).toBeNull();
    await messaging.send(ADA, { confirmed: [B_FRAMES, MOOV] });
    expect(calls.at(-1)!.params).not.toHaveProperty('confirmed');
    expect(state().composers[ADA]!.confirmation).not.toBeNull(); // the new file has its own warnings

    messaging.editComposer(ADA, (d) => ({ ...d, media: { ...d.media, type: 'document' } }), 'video.link');
    expect(state().composers[ADA]!.confirmation).toBeNull();
  });

  it('a refusal is the field’s error, even after "Send anyway": nothing waits to be confirmed, every word stays', async () => {
    state().applyConversation(conversation(true));
    const RULE = '16-bit PNG: images must be 8-bit RGB or RGBA';
    const refusal = fieldError('invalid_input', 'content.image.link', text('media.imageDepthColour', { description: '16-bit PNG' }));
    expect(!refusal.ok && refusal.error.message).toBe(`content.image.link: ${RULE}`);
    const { messaging, calls } = messagingWith({
      sendMessage: (params) => (params.content.type === 'video' && params.confirmed === undefined ? needsConfirmation() : refusal),
    });
    messaging.editComposer(ADA, (d) => ({ ...d, tab: 'media', media: { ...emptyMedia('image', 'link'), link: 'https://files.example.com/deep.png', caption: 'Colours' } }));
    await messaging.send(ADA);
    expect(state().composers[ADA]).toMatchObject({
      serverErrors: { 'image.link': RULE },
      confirmation: null,
      error: `Not sent: ${RULE}`,
      media: { link: 'https://files.example.com/deep.png', caption: 'Colours' },
    });

    // A confirmed send that the main process still refuses: the refusal replaces the warnings.
    messaging.editComposer(ADA, videoDraft());
    await messaging.send(ADA);
    expect(state().composers[ADA]!.confirmation).not.toBeNull();
    await messaging.send(ADA, { confirmed: [B_FRAMES, MOOV] });
    expect(calls.at(-1)!.params).toMatchObject({ confirmed: [B_FRAMES, MOOV] });
    expect(state().composers[ADA]).toMatchObject({ confirmation: null, serverErrors: { 'image.link': RULE }, media: { link: LINK } });
  });

  it('a file that changed since the warnings were shown asks again with the new ones, saying so; nothing typed is lost', async () => {
    state().applyConversation(conversation(true));
    const CHANGED = 'MP4 with its moov box after the media data: move the moov box to the front';
    const { messaging, calls } = messagingWith({
      sendMessage: (params) =>
        params.confirmed === undefined
          ? needsConfirmation()
          : err('needs_confirmation', `content.video.link: not sent: the file now has warnings you have not confirmed: ${CHANGED}`, { field: 'content.video.link', confirm: [CHANGED] }),
    });
    messaging.editComposer(ADA, videoDraft());
    await messaging.send(ADA);
    expect(state().composers[ADA]!.confirmation).toMatchObject({ warnings: [B_FRAMES, MOOV], changed: false });
    await messaging.send(ADA, { confirmed: [B_FRAMES, MOOV] });
    expect(calls.at(-1)!.params).toMatchObject({ confirmed: [B_FRAMES, MOOV] });
    expect(state().composers[ADA]).toMatchObject({ confirmation: { warnings: [CHANGED], changed: true }, error: null, busy: false, media: { link: LINK, caption: 'How to fit it' } });
    // Only what is shown now is confirmed by the next click.
    await messaging.send(ADA, { confirmed: [B_FRAMES, MOOV, CHANGED] });
    expect(calls.at(-1)!.params).toMatchObject({ confirmed: [CHANGED] });
  });

  it('the gateway refusing a media id shows its details on the "Media id" field; every word stays', async () => {
    state().applyConversation(conversation(true));
    const RULE = 'unknown media id "1900000000000099": the account has no uploaded media with this id';
    const { messaging, calls } = messagingWith({
      sendMessage: () =>
        err('gateway_error', `content.image.id: ${RULE}`, {
          field: 'content.image.id',
          // The gateway's own words for the field (electron/core/messaging-service.ts places them).
          text: fieldRule('content.image.id', RULE),
          issues: [{ field: 'content.image.id', text: RULE }],
          gatewayCode: 131053,
          httpStatus: 400,
          detail: `(#131053) Media upload error {"details":"image.id: ${RULE.replace(/"/g, '\\"')}"}`,
        }),
    });
    messaging.editComposer(ADA, (d) => ({ ...d, tab: 'media', media: { ...emptyMedia('image', 'id'), id: '1900000000000099', caption: 'Your parcel' } }));
    await messaging.send(ADA);
    expect(calls).toHaveLength(1);
    expect(state().composers[ADA]).toMatchObject({
      busy: false,
      serverErrors: { 'image.id': RULE },
      confirmation: null,
      error: `Not sent: ${RULE}`,
      media: { by: 'id', id: '1900000000000099', caption: 'Your parcel' },
    });
    // Typing a new id clears the gateway's words for the old one.
    messaging.editComposer(ADA, (d) => ({ ...d, media: { ...d.media, id: '1900000000000001' } }), 'image.id');
    expect(state().composers[ADA]!.serverErrors).toEqual({});
  });

  it('media by id goes out as an id, with no link check on the way', async () => {
    state().applyConversation(conversation(true));
    const { messaging, calls } = messagingWith({
      sendMessage: () => ok({ messageId: 'wamid.id', contact: ADA, warnings: [] }),
      checkMediaLink: () => ok({ contentType: 'image/png', finalUrl: 'https://e.com/a.png', warnings: [] }),
    });
    messaging.editComposer(ADA, (d) => ({ ...d, tab: 'media', media: { ...emptyMedia('image', 'link'), link: 'https://e.com/a.png' } }));
    messaging.editComposer(ADA, (d) => ({ ...d, media: { ...d.media, by: 'id', id: 'media-42' } }), 'image.id');
    await messaging.checkMediaLink(ADA); // the field left: nothing to check for an id
    expect(calls).toEqual([]);
    await messaging.send(ADA);
    expect(calls).toEqual([{ name: 'sendMessage', params: { to: ADA, content: { type: 'image', image: { id: 'media-42' } } } }]);
    expect(state().composers[ADA]!.media).toEqual(emptyMedia('image', 'id'));
  });

  it('a bad id is named by its field, and nothing is asked of the main process', async () => {
    state().applyConversation(conversation(true));
    const { messaging, calls } = messagingWith({});
    messaging.editComposer(ADA, (d) => ({ ...d, tab: 'media', media: { ...emptyMedia('audio', 'id'), id: 'https://e.com/a.mp3' } }), 'audio.id');
    await messaging.send(ADA);
    expect(calls).toEqual([]);
    expect(state().composers[ADA]).toMatchObject({ showAllErrors: true, error: 'Not sent: check the highlighted fields.' });
  });

  it('the check on leaving the link field says what the file is and that it has warnings, and a refusal without repeating the field', async () => {
    state().applyConversation(conversation(true));
    const rgb = text('mediaFile.png', { depth: 8, colour: 'RGB' });
    const deep = text('media.imageDepthColour', { description: '16-bit PNG' });
    const { messaging } = messagingWith({
      checkMediaLink: ({ link }) =>
        link.endsWith('.mp4')
          ? ok({ contentType: 'video/mp4', contentLength: 2 * 1024 * 1024, finalUrl: link, warnings: [], confirm: [B_FRAMES] })
          : link.endsWith('photo.png')
            ? ok({ contentType: 'image/png', contentLength: 120 * 1024, finalUrl: link, warnings: [], description: '8-bit RGB PNG', descriptionText: rgb })
            : fieldError('invalid_input', 'link', deep),
    });
    messaging.editComposer(ADA, videoDraft());
    await messaging.checkMediaLink(ADA);
    // The warnings themselves are listed once, by the alert that "Send anyway" answers.
    const hint = () => linkCheckHint(state().composers[ADA]!.linkCheck!);
    expect(state().composers[ADA]!.linkCheck).toEqual({ link: LINK, type: 'video', state: 'confirm', found: { what: 'video/mp4', size: 2 * 1024 * 1024, toConfirm: 1, notes: [] } });
    expect(hint()).toBe('video/mp4, 2 MB: the gateway takes it, with a warning for you to confirm when you send it');
    messaging.editComposer(ADA, (d) => ({ ...d, media: { ...d.media, type: 'image', link: 'https://e.com/photo.png' } }));
    await messaging.checkMediaLink(ADA);
    expect(state().composers[ADA]!.linkCheck).toEqual({ link: 'https://e.com/photo.png', type: 'image', state: 'ok', found: { what: rgb, size: 120 * 1024, toConfirm: 0, notes: [] } });
    expect(hint()).toBe('8-bit RGB PNG, 120 KB: fits the image rules');
    messaging.editComposer(ADA, (d) => ({ ...d, media: { ...d.media, type: 'image', link: 'https://e.com/deep.png' } }));
    await messaging.checkMediaLink(ADA);
    expect(state().composers[ADA]!.linkCheck).toMatchObject({ state: 'failed', refusal: deep });
    expect(hint()).toBe('16-bit PNG: images must be 8-bit RGB or RGBA');
  });
});

describe('templates and the permission request', () => {
  beforeEach(() => resetStore());

  it('a pasted payload becomes one value per variable, with the contact as recipient', async () => {
    const paste = '{"type":"template","to":"<USER_PHONE_NUMBER>","template":{"name":"t","language":{"code":"en"},"components":[{"type":"body","parameters":[{"type":"text","text":"{{1}}"}]}]}}';
    const { messaging, calls } = messagingWith({
      parseTemplate: ({ pasted }) => {
        expect(pasted).toBe(paste);
        return ok({
          name: 't',
          languageCode: 'en',
          recipient: { raw: '<USER_PHONE_NUMBER>', placeholder: true },
          fields: [{ path: 'template.components[0].parameters[0].text', label: 'Body {{1}}', sample: '{{1}}', placeholder: true, kind: 'text' }],
          template: { name: 't', language: { code: 'en' } },
        });
      },
      sendTemplate: () => ok({ messageId: 'wamid.3', contact: ADA, warnings: [] }),
    });
    await messaging.pasteTemplate(ADA, paste);
    const draft = state().composers[ADA]!;
    expect(draft.tab).toBe('template');
    expect(draft.template).toMatchObject({ to: '+44 7700 900123', values: { 'template.components[0].parameters[0].text': '' }, parseError: null });
    messaging.editComposer(ADA, (d) => ({ ...d, template: { ...d.template, values: { 'template.components[0].parameters[0].text': 'Ada' } } }));
    await messaging.send(ADA);
    expect(calls.at(-1)).toMatchObject({ name: 'sendTemplate', params: { to: '+44 7700 900123', values: { 'template.components[0].parameters[0].text': 'Ada' } } });
  });

  it('shows why a paste is not a template, keeping the paste', async () => {
    const { messaging } = messagingWith({ parseTemplate: () => err('invalid_input', 'The pasted text is not valid JSON at line 1, column 2', { field: 'payload' }) });
    await messaging.pasteTemplate(ADA, '{oops');
    expect(state().composers[ADA]!.template).toMatchObject({ pasted: '{oops', draft: null, parseError: 'The pasted text is not valid JSON at line 1, column 2' });
  });

  it('outside the window the permission request opens the Template tab instead of sending', async () => {
    state().applyConversation(conversation(false));
    const { messaging, calls } = messagingWith({});
    await messaging.requestCallPermission(ADA);
    expect(state().composers[ADA]!.tab).toBe('template');
    expect(state().contactNotice).toMatchObject({ contact: ADA, tone: 'error', text: expect.stringContaining('template') });
    expect(calls.map((c) => c.name)).toEqual([]);
  });
});

describe('in the agent\u2019s language', () => {
  beforeEach(() => resetStore());
  afterEach(async () => {
    await setUiLanguage('en', undefined);
  });

  it('words each outcome in the language of the moment it arrives; what the gateway said stays as it came', async () => {
    await setUiLanguage('pt-BR', undefined);
    state().applyConversation(conversation(true));
    const { messaging } = messagingWith({
      sendMessage: () => ok({ messageId: 'wamid.1', contact: ADA, warnings: ['Unknown size'] }),
      sendCallButton: () => ok({ messageId: 'wamid.2', contact: ADA, warnings: [] }),
    });
    await messaging.send(ADA);
    expect(state().composers[ADA]!.error).toBe('Não enviada: verifique os campos destacados.');
    messaging.editComposer(ADA, (d) => ({ ...d, text: 'Olá' }), 'text.body');
    await messaging.send(ADA);
    expect(sendNoticeText(state().composers[ADA]!.notice!)).toBe('Enviada. Unknown size');
    await messaging.sendCallButton(ADA);
    expect(state().contactNotice).toMatchObject({ tone: 'ok', text: 'Botão de chamada enviado: quando o cliente tocar nele, a chamada vai tocar aqui primeiro.' });

    state().setContactInput('  ');
    await messaging.openContact();
    expect(state().contactError).toBe('Digite o número do cliente, com o código do país.');
  });
});

describe('the words for a send that failed', () => {
  it('keeps the main process\u2019s warning that a message may have gone out, and never suggests a blind retry', () => {
    const timeout = 'The gateway did not answer within 10 s: the message may have been sent, check for its delivery status before sending it again';
    expect(messageErrorText({ code: 'timeout', message: timeout })).toBe(timeout);
    const accepted = 'The gateway accepted the message (HTTP 200) but its answer could not be read: it may have been sent, check before sending it again';
    expect(messageErrorText({ code: 'gateway_unreachable', message: accepted, httpStatus: 200 })).toBe(accepted);
    expect(messageErrorText({ code: 'gateway_unreachable', message: 'ECONNREFUSED' })).toMatch(/Cannot reach/);
  });

  it('uses the messaging words of gateway codes, and says the window is closed', () => {
    expect(messageErrorText({ code: 'gateway_error', message: 'x', gatewayCode: 131026 })).toBe('The message could not be delivered to this customer.');
    expect(messageErrorText({ code: 'window_closed', message: '', gatewayCode: 131047 })).toMatch(/24-hour conversation window is closed/);
    expect(messageErrorText({ code: 'gateway_error', message: 'Unsupported' })).toBe('The gateway refused the message: Unsupported');
    expect(messageErrorText({ code: 'invalid_input', message: 'content.text.body: must not be empty' })).toBe('content.text.body: must not be empty');
  });
});

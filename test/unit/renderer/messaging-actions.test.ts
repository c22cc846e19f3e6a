// The messages domain against an in-memory SoftphoneApi that answers like the main process does:
// nothing typed is lost on an error, a closed window points to a template, and a send clears the form.
import { beforeEach, describe, expect, it } from 'vitest';
import type { SoftphoneApi } from '../../../shared/api';
import type { Conversation } from '../../../shared/conversation';
import { err, ok } from '../../../shared/result';
import { MessagingActions } from '../../../renderer/app/messaging-actions';
import { messageErrorText } from '../../../renderer/error-texts';
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
      sendMessage: () => err('invalid_input', 'content.image.link: the server says the file is text/plain, not an image', { field: 'content.image.link' }),
    });
    messaging.editComposer(ADA, (d) => ({ ...d, tab: 'media', media: { type: 'image', link: 'https://e.com/a.png', caption: 'Parcel', filename: '' } }));
    await messaging.send(ADA);
    const draft = state().composers[ADA]!;
    expect(draft.media).toEqual({ type: 'image', link: 'https://e.com/a.png', caption: 'Parcel', filename: '' });
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
    expect(state().composers[ADA]).toMatchObject({ text: '', notice: 'Sent. Unknown size', error: null });
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

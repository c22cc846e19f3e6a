// The controller's message flows against an in-memory SoftphoneApi that answers like the main
// process does: nothing typed is lost on an error, a closed window points to a template, a send
// clears the form, and the customer of a call becomes the contact in view.
import { beforeEach, describe, expect, it } from 'vitest';
import type { CommandName, CommandParams, CommandResults, SoftphoneApi } from '../../../shared/api';
import type { Conversation } from '../../../shared/conversation';
import { err, ok, type Result } from '../../../shared/result';
import { permanentLink } from '../../../renderer/bridge/host-link';
import { SoftphoneController } from '../../../renderer/app/softphone-controller';
import { messageErrorText } from '../../../renderer/error-texts';
import { appStore, resetStore } from '../../../renderer/store/store';
import type { MediaEngine } from '../../../renderer/webrtc/media-engine';
import { T0, active } from './fixtures';

const ADA = '447700900123';

type Answers = { [N in CommandName]?: (params: CommandParams<N>) => Result<CommandResults[N]> };

function fakeApi(answers: Answers): { api: SoftphoneApi; calls: { name: string; params: unknown }[] } {
  const calls: { name: string; params: unknown }[] = [];
  const api = new Proxy({} as SoftphoneApi, {
    get(_target, key: string) {
      if (key.startsWith('on')) return () => () => undefined;
      return async (params: unknown) => {
        calls.push({ name: key, params });
        const answer = (answers as Record<string, ((p: unknown) => Result<unknown>) | undefined>)[key];
        return answer ? answer(params) : err('not_available', `${key} is not part of this test`);
      };
    },
  });
  return { api, calls };
}

/** The media engine's part the controller touches for calls; these tests make no media. */
const engine = { onCall: () => undefined, reconcile: () => undefined, closeAll: () => undefined, has: () => false } as unknown as MediaEngine;

const conversation = (open: boolean): Conversation => ({
  contact: ADA,
  window: open ? { open: true, closesAt: Date.now() + 3_600_000, lastInboundAt: Date.now() } : { open: false },
  messages: [],
  lastActivityAt: T0,
  revision: 1,
});

const state = () => appStore.getState();

function controllerWith(answers: Answers) {
  const { api, calls } = fakeApi({ getConversation: () => ok(state().conversations[ADA] ?? conversation(false)), ...answers });
  return { controller: new SoftphoneController({ api, link: permanentLink(), store: appStore, engine }), calls };
}

describe('sending from the composer', () => {
  beforeEach(() => resetStore());

  it('keeps every word on an error and places it by field', async () => {
    state().applyConversation(conversation(true));
    const { controller } = controllerWith({
      sendMessage: () => err('invalid_input', 'content.image.link: the server says the file is text/plain, not an image', { field: 'content.image.link' }),
    });
    controller.editComposer(ADA, (d) => ({ ...d, tab: 'media', media: { type: 'image', link: 'https://e.com/a.png', caption: 'Parcel', filename: '' } }));
    await controller.send(ADA);
    const draft = state().composers[ADA]!;
    expect(draft.media).toEqual({ type: 'image', link: 'https://e.com/a.png', caption: 'Parcel', filename: '' });
    expect(draft.serverErrors).toEqual({ 'image.link': 'the server says the file is text/plain, not an image' });
    expect(draft.busy).toBe(false);
    // Typing in the field clears its server error.
    controller.editComposer(ADA, (d) => ({ ...d, media: { ...d.media, link: 'https://e.com/b.png' } }), 'image.link');
    expect(state().composers[ADA]!.serverErrors).toEqual({});
  });

  it('checks locally first: a broken rule shows every error and nothing is asked of the main process', async () => {
    state().applyConversation(conversation(true));
    const { controller, calls } = controllerWith({});
    await controller.send(ADA);
    expect(state().composers[ADA]).toMatchObject({ showAllErrors: true, error: 'Not sent: check the highlighted fields.' });
    expect(calls.map((c) => c.name)).toEqual([]);
  });

  it('clears the text after a send, and says what the link check noticed', async () => {
    state().applyConversation(conversation(true));
    const { controller, calls } = controllerWith({ sendMessage: () => ok({ messageId: 'wamid.1', contact: ADA, warnings: ['Unknown size'] }) });
    controller.editComposer(ADA, (d) => ({ ...d, text: 'On its way' }), 'text.body');
    await controller.send(ADA);
    expect(calls.at(-1)).toEqual({ name: 'sendMessage', params: { to: ADA, content: { type: 'text', text: { body: 'On its way' } } } });
    expect(state().composers[ADA]).toMatchObject({ text: '', notice: 'Sent. Unknown size', error: null });
  });

  it('keeps the next words the agent typed while a send was under way', async () => {
    state().applyConversation(conversation(true));
    let answer: (r: ReturnType<typeof ok>) => void = () => undefined;
    const { api } = fakeApi({});
    const slow = { ...api, sendMessage: () => new Promise((resolve) => (answer = resolve)) } as unknown as SoftphoneApi;
    const controller = new SoftphoneController({ api: slow, link: permanentLink(), store: appStore, engine });
    controller.editComposer(ADA, (d) => ({ ...d, text: 'First' }));
    const sending = controller.send(ADA);
    expect(state().composers[ADA]!.busy).toBe(true);
    await controller.send(ADA); // a second Enter while busy sends nothing
    controller.editComposer(ADA, (d) => ({ ...d, text: 'Second thought' }), 'text.body');
    answer(ok({ messageId: 'wamid.1', contact: ADA, warnings: [] }));
    await sending;
    expect(state().composers[ADA]).toMatchObject({ text: 'Second thought', busy: false });
  });

  it('keeps the text when the gateway says the window closed', async () => {
    state().applyConversation(conversation(true));
    const { controller } = controllerWith({ sendMessage: () => err('window_closed', 'closed', { gatewayCode: 131047 }) });
    controller.editComposer(ADA, (d) => ({ ...d, text: 'Still there?' }));
    await controller.send(ADA);
    expect(state().composers[ADA]).toMatchObject({ text: 'Still there?', error: expect.stringContaining('24-hour conversation window is closed') });
  });

  it('sends the call button variant through sendCallButton, with its own fields', async () => {
    state().applyConversation(conversation(true));
    const { controller, calls } = controllerWith({ sendCallButton: () => ok({ messageId: 'wamid.2', contact: ADA, warnings: [] }) });
    controller.editComposer(ADA, (d) => ({ ...d, tab: 'interactive', interactive: { ...d.interactive, variant: 'voice_call', callTtlMinutes: '15' } }));
    await controller.send(ADA);
    expect(calls.at(-1)).toEqual({ name: 'sendCallButton', params: { to: ADA, displayText: 'Call us', ttlMinutes: 15 } });
  });
});

describe('templates and the permission request', () => {
  beforeEach(() => resetStore());

  it('a pasted payload becomes one value per variable, with the contact as recipient', async () => {
    const paste = '{"type":"template","to":"<USER_PHONE_NUMBER>","template":{"name":"t","language":{"code":"en"},"components":[{"type":"body","parameters":[{"type":"text","text":"{{1}}"}]}]}}';
    const { controller, calls } = controllerWith({
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
    await controller.pasteTemplate(ADA, paste);
    const draft = state().composers[ADA]!;
    expect(draft.tab).toBe('template');
    expect(draft.template).toMatchObject({ to: '+44 7700 900123', values: { 'template.components[0].parameters[0].text': '' }, parseError: null });
    controller.editComposer(ADA, (d) => ({ ...d, template: { ...d.template, values: { 'template.components[0].parameters[0].text': 'Ada' } } }));
    await controller.send(ADA);
    expect(calls.at(-1)).toMatchObject({ name: 'sendTemplate', params: { to: '+44 7700 900123', values: { 'template.components[0].parameters[0].text': 'Ada' } } });
  });

  it('shows why a paste is not a template, keeping the paste', async () => {
    const { controller } = controllerWith({ parseTemplate: () => err('invalid_input', 'The pasted text is not valid JSON at line 1, column 2', { field: 'payload' }) });
    await controller.pasteTemplate(ADA, '{oops');
    expect(state().composers[ADA]!.template).toMatchObject({ pasted: '{oops', draft: null, parseError: 'The pasted text is not valid JSON at line 1, column 2' });
  });

  it('outside the window the permission request opens the Template tab instead of sending', async () => {
    state().applyConversation(conversation(false));
    const { controller, calls } = controllerWith({});
    await controller.requestCallPermission(ADA);
    expect(state().composers[ADA]!.tab).toBe('template');
    expect(state().contactNotice).toMatchObject({ contact: ADA, tone: 'error', text: expect.stringContaining('template') });
    expect(calls.map((c) => c.name)).toEqual([]);
  });
});

describe('the contact in view', () => {
  beforeEach(() => resetStore());

  it('follows the customer of a call the agent takes on, once', () => {
    const { controller } = controllerWith({});
    controller.selectContact('14155550123');
    controller.applyCall(active('wacid.7', T0));
    expect(state().selectedContact).toBe(ADA);
    controller.selectContact('14155550123');
    controller.applyCall(active('wacid.7', T0)); // the same call again: the agent's choice stays
    expect(state().selectedContact).toBe('14155550123');
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

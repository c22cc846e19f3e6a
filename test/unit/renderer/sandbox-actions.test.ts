// The sandbox's "Leave a voicemail" and "Ask to be called back" on a fake host: the chosen customer's
// number goes out, what the customer did is said, a refusal is the panel's error in the sandbox's words.
import { afterEach, describe, expect, test } from 'vitest';
import { err, ok } from '../../../shared/result';
import { SandboxActions } from '../../../renderer/app/sandbox-actions';
import { appStore, resetStore } from '../../../renderer/store/store';
import { fakeApi } from './fake-api';

afterEach(() => {
  resetStore();
});

describe('the sandbox\'s voicemail and callback request', () => {
  const ADA = '447700900123';
  const sandbox = (answers: Parameters<typeof fakeApi>[0]) => {
    const fake = fakeApi(answers);
    appStore.setState({ sandboxCustomers: [{ number: ADA, name: 'Ada Lovelace', behaviour: 'no_answer' }], sandboxSelection: ADA });
    return { ...fake, actions: new SandboxActions({ api: fake.api, store: appStore, selectContact: () => undefined }) };
  };

  test('each sends the chosen customer\'s number and says what the customer did', async () => {
    const { actions, calls } = sandbox({ simulateVoicemail: () => ok({ callId: 'wacid.1' }), simulateCallbackRequest: () => ok({ callId: 'wacid.1' }) });
    await actions.simulateVoicemail();
    expect(appStore.getState().sandboxDone).toBe('Ada Lovelace left a voicemail');
    await actions.simulateCallbackRequest();
    expect(appStore.getState().sandboxDone).toBe('Ada Lovelace asked to be called back');
    expect(calls).toEqual([
      { name: 'simulateVoicemail', params: { number: ADA } },
      { name: 'simulateCallbackRequest', params: { number: ADA } },
    ]);
    expect(appStore.getState().sandboxError).toBeNull();
  });

  test('a refusal is the panel\'s error, in the sandbox\'s words; the last success is no longer said', async () => {
    const { actions } = sandbox({ simulateVoicemail: () => ok({ callId: 'wacid.1' }), simulateCallbackRequest: () => err('invalid_state', 'Call wacid.1 was answered: only an unanswered call gets a voicemail') });
    await actions.simulateVoicemail();
    await actions.simulateCallbackRequest();
    expect(appStore.getState().sandboxError).toBe('Call wacid.1 was answered: only an unanswered call gets a voicemail');
    expect(appStore.getState().sandboxDone).toBeNull();
  });

  test('no customer chosen: said, nothing sent', async () => {
    const { actions, calls } = sandbox({});
    appStore.setState({ sandboxSelection: '' });
    await actions.simulateVoicemail();
    expect(appStore.getState().sandboxError).toBe('Choose a sandbox customer first.');
    expect(calls).toEqual([]);
  });
});


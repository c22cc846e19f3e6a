import { beforeEach, describe, expect, it } from 'vitest';
import { appStore, firstSnapshotSettled, initialState, resetStore } from '../../../renderer/store/store';
import { accountSettings, active, ended, ringing, sandboxSettings, snapshot } from './fixtures';

const state = () => appStore.getState();

describe('the store', () => {
  beforeEach(() => resetStore());

  it('starts empty and resets to that', () => {
    state().setDialInput('+44');
    state().applyCall(ringing());
    resetStore();
    const { calls, dialInput, hostLink, snapshotLoaded } = state();
    expect({ calls, dialInput, hostLink, snapshotLoaded }).toEqual({ calls: {}, dialInput: '', hostLink: { status: 'connecting' }, snapshotLoaded: false });
    expect(typeof state().applySnapshot).toBe('function');
  });

  it('mirrors a snapshot', () => {
    state().applySnapshot(snapshot([ringing()], { history: [] }));
    expect(state().snapshotLoaded).toBe(true);
    expect(state().mode).toBe('sandbox');
    expect(Object.keys(state().calls)).toEqual(['in:wacid.1']);
    expect(state().service).toEqual({ status: 'connected', since: expect.any(Number) });
    expect(state().sandboxSelection).toBe('447700900123');
  });

  it('says when the first snapshot is in, or could not be had (the saved preferences are known then)', async () => {
    const settledYet = async (promise: Promise<void>) => {
      let settled = false;
      void promise.then(() => (settled = true));
      await Promise.resolve();
      await Promise.resolve();
      return settled;
    };
    const loaded = firstSnapshotSettled(appStore);
    state().setDialInput('+44');
    expect(await settledYet(loaded)).toBe(false);
    state().applySnapshot(snapshot([], { preferences: { ...state().preferences, language: 'ar' } }));
    expect(await settledYet(loaded)).toBe(true);
    expect(await settledYet(firstSnapshotSettled(appStore))).toBe(true);

    resetStore();
    const failed = firstSnapshotSettled(appStore);
    expect(await settledYet(failed)).toBe(false);
    state().setSnapshotError({ kind: 'unreadable' });
    expect(await settledYet(failed)).toBe(true);
  });

  it("mirrors the agent's presence from snapshots and pushes, and keeps it when a snapshot has none", () => {
    expect(state().presence).toBeNull();
    state().applySnapshot(snapshot([], { presence: { choice: 'dnd', status: 'dnd' } }));
    expect(state().presence).toEqual({ choice: 'dnd', status: 'dnd' });
    state().setPresenceError('The relay could not be reached.');
    state().setPresence({ choice: 'dnd', status: 'on_call' });
    expect(state().presence).toEqual({ choice: 'dnd', status: 'on_call' });
    expect(state().presenceError).toBeNull();
    state().applySnapshot(snapshot());
    expect(state().presence).toEqual({ choice: 'dnd', status: 'on_call' });
  });

  it('keeps the chosen sandbox customer across snapshots while it still exists', () => {
    state().applySnapshot(snapshot());
    state().setSandboxSelection('14155550123');
    state().applySnapshot(snapshot());
    expect(state().sandboxSelection).toBe('14155550123');
    state().applySnapshot(snapshot([], { sandboxCustomers: [] }));
    expect(state().sandboxSelection).toBe('');
  });

  it('applies pushed calls forward only, and says what it kept', () => {
    expect(state().applyCall(active()).phase).toBe('active');
    expect(state().applyCall(ringing()).phase).toBe('active');
    expect(state().applyCall(ended()).phase).toBe('ended');
    expect(state().calls['in:wacid.1']?.phase).toBe('ended');
  });

  it('fills the settings form from settings, secrets blank', () => {
    state().setSettings(accountSettings);
    expect(state().settingsForm.draft).toEqual({
      gatewayUrl: 'https://gateway.example.com/restapi/v1',
      apiKey: '',
      productSegment: 'chatapp',
      relayUrl: 'https://relay.example.com',
      agentToken: '',
      defaultCountry: 'GB',
    });
  });

  it('never overwrites what the agent is typing', () => {
    state().editSettings('gatewayUrl', 'https://typed.example.com/v2');
    state().setSettings(accountSettings);
    expect(state().settingsForm.draft.gatewayUrl).toBe('https://typed.example.com/v2');
    expect(state().settings).toEqual(accountSettings);
    state().applySnapshot(snapshot([], { settings: sandboxSettings }));
    expect(state().settingsForm.draft.gatewayUrl).toBe('https://typed.example.com/v2');
  });

  it('clears a field error when that field is edited, and only that one', () => {
    state().setSettingsForm({ errors: { gatewayUrl: 'bad', relayUrl: 'bad too' } });
    state().editSettings('gatewayUrl', 'x');
    expect(state().settingsForm.errors).toEqual({ relayUrl: 'bad too' });
  });

  it('an edit of the number clears the dialer warning; the same number keeps it', () => {
    state().setDialInput('+44 20 5946 0958');
    state().setDialWarning('not listed');
    state().setDialInput('+44 20 5946 0958');
    expect(state().dialWarning).toBe('not listed');
    state().setDialInput('+44 20 5946 095');
    expect(state().dialWarning).toBeNull();
    expect(state().dialInput).toBe('+44 20 5946 095');
  });

  it('does not publish unchanged levels', () => {
    const before = state().levels;
    state().setLevels({ mic: 0, customer: 0 });
    expect(state().levels).toBe(before);
    state().setLevels({ mic: 0.3, customer: 0.1 });
    expect(state().levels).toEqual({ mic: 0.3, customer: 0.1 });
  });

  it('has an initial state with every slice', () => {
    expect(Object.keys(initialState()).sort()).toEqual(
      [
        'calls',
        'history',
        'hostLink',
        'service',
        'presence',
        'presenceError',
        'team',
        'afterCallWorkError',
        'wrapUps',
        'wrapUpPrompt',
        'preferences',
        'preferencesError',
        'snapshotLoaded',
        'snapshotError',
        'mode',
        'settings',
        'sandboxCustomers',
        'screen',
        'dialInput',
        'dialError',
        'dialWarning',
        'dialBusy',
        'levels',
        'callNotice',
        'muteWishes',
        'keypadOpen',
        'sandboxSelection',
        'sandboxError',
        'sandboxDone',
        'settingsForm',
        'networkForm',
        'captureForm',
        'conversations',
        'selectedContact',
        'composers',
        'contactInput',
        'contactError',
        'contactNotice',
        'sandboxTemplates',
        'sandboxMessage',
      ].sort(),
    );
  });
});

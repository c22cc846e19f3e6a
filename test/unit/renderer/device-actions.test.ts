// The audio devices domain: choices saved as preferences, applied to calls and the ringer, followed
// across devicechange (fallback at once, return when the device is back), and the Settings checks.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Preferences, PreferencesPatch } from '../../../shared/preferences';
import { err, ok, type Result } from '../../../shared/result';
import { DeviceActions, noticeOf, noticeText, type AudioRoutingControls, type RingerSink } from '../../../renderer/app/device-actions';
import { createControllers } from '../../../renderer/app/controllers';
import type { KeySource } from '../../../renderer/app/shortcuts';
import { soundCheckError, type SoundCheck } from '../../../renderer/sound/device-check';
import { setUiLanguage } from '../../../renderer/i18n/i18n';
import { Ringtone } from '../../../renderer/sound/ringtone';
import { settingsText, type SettingsText } from '../../../renderer/store/settings-form';
import { appStore, resetStore } from '../../../renderer/store/store';
import { AudioDevices } from '../../../renderer/webrtc/audio-devices';
import { MediaEngine, type AudioRouting } from '../../../renderer/webrtc/media-engine';
import { fakeApi } from './fake-api';
import { fakeAudio } from './fake-audio';
import { DESK, FakeMediaDevices, deskDevices, settle } from './fake-media-devices';
import { snapshot } from './fixtures';

const said = (text: SettingsText | null): string | null => text && settingsText(text);

const headset = {
  microphone: { id: DESK.headsetMic.deviceId, label: DESK.headsetMic.label },
  speaker: { id: DESK.headsetEar.deviceId, label: DESK.headsetEar.label },
  ringer: { id: DESK.monitor.deviceId, label: DESK.monitor.label },
};

/** Where calls are routed, as the media engine is told. */
function routingLog() {
  const routings: AudioRouting[] = [];
  const engine: AudioRoutingControls = {
    useDevices: async (routing) => {
      const r = await routing;
      routings.push({ microphone: r.microphone, speaker: r.speaker });
    },
  };
  return { engine, routings, last: () => routings[routings.length - 1] };
}

function ringerLog() {
  const sinks: string[] = [];
  const ringer: RingerSink = { setSinkId: async (id) => void sinks.push(id) };
  return { ringer, sinks };
}

/** The main process's side of setPreferences: it keeps the patch and answers with the whole. */
function savingPreferences(refuse?: string) {
  const patches: PreferencesPatch[] = [];
  const save = async (patch: PreferencesPatch): Promise<Result<Preferences>> => {
    patches.push(patch);
    if (refuse) return err('invalid_input', refuse);
    const current = appStore.getState().preferences;
    const next: Preferences = { ...current, audio: { ...current.audio, ...patch.audio } as Preferences['audio'] };
    appStore.getState().setPreferences(next);
    return ok(next);
  };
  return { save, patches };
}

function soundCheckLog(options: { failTone?: Error } = {}) {
  const played: string[] = [];
  const opened: string[] = [];
  let open = 0;
  let level = 0.25;
  const check: SoundCheck = {
    playTone: async (sinkId) => {
      played.push(sinkId);
      if (options.failTone) throw options.failTone;
    },
    openMicrophone: async (deviceId) => {
      opened.push(deviceId);
      open++;
      return { level: () => level, stop: () => void open-- };
    },
  };
  return { check, played, opened, open: () => open, setLevel: (v: number) => (level = v) };
}

const waitFor = async (what: string, check: () => boolean): Promise<void> => {
  for (let i = 0; i < 200; i++) {
    if (check()) return;
    await new Promise((r) => setTimeout(r, 5));
  }
  throw new Error(`timed out waiting for ${what}`);
};

const stops: (() => void)[] = [];

function startDesk(
  options: { choices?: Preferences['audio']; devices?: FakeMediaDevices; refuse?: string; tone?: { failTone?: Error }; ringer?: RingerSink } = {},
) {
  if (options.choices) appStore.getState().setPreferences({ ...appStore.getState().preferences, audio: options.choices });
  const media = options.devices ?? new FakeMediaDevices(deskDevices());
  const devices = new AudioDevices({ mediaDevices: media });
  const routing = routingLog();
  const sink = ringerLog();
  const saving = savingPreferences(options.refuse);
  const sound = soundCheckLog(options.tone);
  const actions = new DeviceActions({
    store: appStore,
    devices,
    engine: routing.engine,
    ringer: options.ringer ?? sink.ringer,
    soundCheck: sound.check,
    savePreferences: saving.save,
    microphoneTestMs: 200,
    levelEveryMs: 10,
  });
  stops.push(actions.start());
  return { media, devices, actions, ...routing, ...sink, ...saving, ...sound };
}

describe('DeviceActions', () => {
  beforeEach(() => resetStore());
  afterEach(() => {
    for (const stop of stops.splice(0)) stop();
  });

  it('at start, calls and the ringer go to the stored choices (the ids of today, found by label)', async () => {
    const desk = startDesk({ choices: { ...headset, microphone: { id: 'yesterday', label: DESK.headsetMic.label } } });
    await waitFor('the routing', () => desk.routings.length > 0 && desk.sinks.length > 0);
    expect(desk.last()).toEqual({ microphone: 'mic-headset', speaker: 'out-headset' });
    expect(desk.sinks).toEqual(['out-monitor']);
    expect(desk.actions.view().list.audiooutput.devices).toHaveLength(3);
  });

  it('asks for labels at start only when a choice is stored, and when the first snapshot brings one', async () => {
    const bare = startDesk({ devices: new FakeMediaDevices(deskDevices(), { permission: false }) });
    await settle();
    expect(bare.media.asked).toHaveLength(0);
    appStore.getState().applySnapshot(snapshot([], { preferences: { ...appStore.getState().preferences, audio: headset } }));
    await waitFor('the labels', () => bare.media.asked.length === 1 && bare.last()?.microphone === 'mic-headset');
    expect(bare.media.stopped).toBe(1);
    expect(bare.last()).toEqual({ microphone: 'mic-headset', speaker: 'out-headset' });
  });

  it('a choice is saved at once, with its label, and the live route follows it; System default saves null', async () => {
    const desk = startDesk();
    await waitFor('the list', () => desk.actions.view().list.labelled);
    const saved = await desk.actions.choose('microphone', 'mic-headset');
    expect(saved.ok).toBe(true);
    expect(desk.patches).toEqual([{ audio: { microphone: { id: 'mic-headset', label: 'Headset Microphone (Jabra)' } } }]);
    expect(desk.last()).toEqual({ microphone: 'mic-headset', speaker: '' });

    await desk.actions.choose('ringer', 'out-headset');
    expect(desk.sinks[desk.sinks.length - 1]).toBe('out-headset');

    await desk.actions.choose('microphone', '');
    expect(desk.patches[2]).toEqual({ audio: { microphone: null } });
    expect(desk.last()).toEqual({ microphone: '', speaker: '' });
  });

  it('a refused save is returned as the error and changes no route', async () => {
    const desk = startDesk({ refuse: 'audio.microphone: is too long' });
    await waitFor('the list', () => desk.actions.view().list.labelled);
    const before = desk.routings.length;
    const saved = await desk.actions.choose('microphone', 'mic-headset');
    expect(saved.ok).toBe(false);
    expect(appStore.getState().preferences.audio.microphone).toBeNull();
    expect(desk.routings.slice(before).every((r) => r.microphone === '')).toBe(true);
  });

  it('the headset is pulled out mid-call: the call and the notice go to the defaults at once; plugged back, it is used again', async () => {
    const desk = startDesk({ choices: { ...headset, ringer: headset.speaker } });
    await waitFor('the routing', () => desk.last()?.microphone === 'mic-headset');

    desk.media.change(deskDevices({ headset: false }));
    await waitFor('the fallback', () => desk.last()?.microphone === '');
    expect(desk.last()).toEqual({ microphone: '', speaker: '' });
    expect(desk.sinks[desk.sinks.length - 1]).toBe('');
    // The speaker and the ringer were one device: one sentence for it.
    const lost = desk.actions.view().notice;
    expect(lost?.kind).toBe('lost');
    expect(lost && noticeText(lost)).toBe(
      'Headset Microphone (Jabra) disconnected: using Microphone Array (Realtek). Headset Earphone (Jabra) disconnected: using Speakers (Realtek)',
    );
    // The stored choice stays: the agent wants the headset back when it is.
    expect(appStore.getState().preferences.audio.microphone).toEqual(headset.microphone);

    desk.media.change(deskDevices());
    await waitFor('the return', () => desk.last()?.microphone === 'mic-headset');
    expect(desk.last()).toEqual({ microphone: 'mic-headset', speaker: 'out-headset' });
    expect(desk.sinks[desk.sinks.length - 1]).toBe('out-headset');
    const back = desk.actions.view().notice;
    expect(back?.kind).toBe('back');
    expect(back && noticeText(back)).toBe('Headset Microphone (Jabra) reconnected: using it again. Headset Earphone (Jabra) reconnected: using it again');
    desk.actions.dismissNotice();
    expect(desk.actions.view().notice).toBeNull();
  });

  it('Test microphone shows the chosen microphone\'s level, stops when pressed again, and by itself after a while', async () => {
    const desk = startDesk({ choices: headset });
    await waitFor('the routing', () => desk.last()?.microphone === 'mic-headset');
    await desk.actions.toggleMicrophoneTest();
    expect(desk.opened).toEqual(['mic-headset']);
    await waitFor('a level', () => {
      const t = desk.actions.view().microphoneTest;
      return t.kind === 'running' && t.level === 0.25;
    });
    await desk.actions.toggleMicrophoneTest();
    expect(desk.actions.view().microphoneTest).toEqual({ kind: 'idle' });
    expect(desk.open()).toBe(0);

    await desk.actions.toggleMicrophoneTest();
    expect(desk.open()).toBe(1);
    await waitFor('the end of the test', () => desk.actions.view().microphoneTest.kind === 'idle');
    expect(desk.open()).toBe(0);
  });

  it('stopMicrophoneTest (the Audio settings closing) closes a running test, and does nothing when none runs', async () => {
    const desk = startDesk({ choices: headset });
    await waitFor('the routing', () => desk.last()?.microphone === 'mic-headset');
    desk.actions.stopMicrophoneTest();
    expect(desk.actions.view().microphoneTest).toEqual({ kind: 'idle' });
    expect(desk.open()).toBe(0);

    await desk.actions.toggleMicrophoneTest();
    expect(desk.open()).toBe(1);
    expect(desk.actions.view().microphoneTest.kind).toBe('running');
    desk.actions.stopMicrophoneTest();
    expect(desk.actions.view().microphoneTest).toEqual({ kind: 'idle' });
    expect(desk.open()).toBe(0);
    // The level timer went with it: the view stays idle.
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(desk.actions.view().microphoneTest).toEqual({ kind: 'idle' });
  });

  it('Test speaker and Test ringer play on their own devices; a failure is told', async () => {
    const desk = startDesk({ choices: headset });
    await waitFor('the routing', () => desk.last()?.microphone === 'mic-headset');
    await desk.actions.testOutput('speaker');
    await desk.actions.testOutput('ringer');
    expect(desk.played).toEqual(['out-headset', 'out-monitor']);
    expect(desk.actions.view().playing).toBeNull();

    resetStore();
    const broken = Object.assign(new Error('gone'), { name: 'NotFoundError' });
    const failing = startDesk({ choices: headset, tone: { failTone: broken } });
    await waitFor('the routing', () => failing.last()?.microphone === 'mic-headset');
    await failing.actions.testOutput('ringer');
    expect(said(failing.actions.view().checkError)).toBe('The chosen ringer is not connected.');
  });

  it('Test ringer plays through the ringtone itself: its own context, on the ringer device; Test speaker keeps its chime', async () => {
    const audio = fakeAudio();
    const ringtone = new Ringtone({ createContext: audio.createContext });
    const desk = startDesk({ choices: headset, ringer: ringtone });
    await waitFor('the ringer routed', () => ringtone.sinkId === 'out-monitor');
    const playing = desk.actions.testOutput('ringer');
    expect(desk.actions.view().playing).toBe('ringer');
    await waitFor('the burst', () => audio.contexts.length === 1 && audio.last().live().length === 2);
    expect(audio.last().sinkId).toBe('out-monitor');
    expect(audio.last().state).toBe('running');
    await playing;
    expect(desk.actions.view().playing).toBeNull();
    expect(desk.actions.view().checkError).toBeNull();
    // Nothing rings: the ringtone's context is left as it was found, suspended.
    expect(audio.last().state).toBe('suspended');
    expect(ringtone.state()).toBe('idle');

    await desk.actions.testOutput('speaker');
    expect(desk.played).toEqual(['out-headset']);
  });

  it('a ringer test that cannot play is told, with no chime on another path in its place', async () => {
    const audio = fakeAudio();
    audio.failSinks.add('*');
    const ringtone = new Ringtone({ createContext: audio.createContext });
    const desk = startDesk({ choices: headset, ringer: ringtone });
    await waitFor('the routing', () => desk.last()?.microphone === 'mic-headset');
    await desk.actions.testOutput('ringer');
    expect(desk.played).toEqual([]);
    expect(desk.actions.view().playing).toBeNull();
    expect(said(desk.actions.view().checkError)).toBe('The ringer check could not run (no audio output could be opened).');
  });

  it('the notice words', () => {
    expect(noticeOf([])).toBeNull();
    const lost = noticeOf([{ kind: 'lost', role: 'speaker', choice: { id: 'h', label: 'Headset' }, fallback: 'Speakers (Realtek)' }]);
    expect(lost).toEqual({ kind: 'lost', devices: [{ device: 'Headset', fallback: 'Speakers (Realtek)' }] });
    expect(lost && noticeText(lost)).toBe('Headset disconnected: using Speakers (Realtek)');
    // A system default the system does not name is named in the UI's language.
    const unnamed = noticeOf([{ kind: 'lost', role: 'ringer', choice: { id: 'h', label: 'Headset' }, fallback: 'the system default' }]);
    expect(unnamed && noticeText(unnamed)).toBe('Headset disconnected: using the system default');
  });

  it('the notice in the language of the moment: one it already shows is worded anew', async () => {
    const notice = noticeOf([
      { kind: 'lost', role: 'microphone', choice: { id: 'm', label: 'Headset Microphone' }, fallback: 'the system default' },
      { kind: 'lost', role: 'speaker', choice: { id: 's', label: 'Headset Earphone' }, fallback: 'Speakers (Realtek)' },
    ]);
    try {
      await setUiLanguage('es', undefined);
      expect(notice && noticeText(notice)).toBe('Headset Microphone desconectado: usando el predeterminado del sistema. Headset Earphone desconectado: usando Speakers (Realtek)');
      await setUiLanguage('hi', undefined);
      expect(notice && noticeText(notice)).toBe(
        'Headset Microphone डिस्कनेक्ट हो गया: सिस्टम डिफ़ॉल्ट इस्तेमाल हो रहा है। Headset Earphone डिस्कनेक्ट हो गया: Speakers (Realtek) इस्तेमाल हो रहा है',
      );
      expect(said(soundCheckError('ringer', Object.assign(new Error('gone'), { name: 'NotFoundError' })))).toBe('चुना गया रिंगर कनेक्ट नहीं है।');
    } finally {
      await setUiLanguage('en', undefined);
    }
  });
});

describe('the devices domain as createControllers wires it', () => {
  beforeEach(() => resetStore());

  it('a choice goes through setPreferences and comes back into the route', async () => {
    const media = new FakeMediaDevices(deskDevices());
    const routing = routingLog();
    const host = fakeApi({
      getSnapshot: () => ok(snapshot()),
      setPreferences: ({ preferences }) => ok({ ...appStore.getState().preferences, audio: { ...appStore.getState().preferences.audio, ...preferences.audio } as Preferences['audio'] }),
    });
    // No call is made here: the engine only has to exist for the calls domain.
    const engine = new MediaEngine();
    const keys: KeySource = { addEventListener: () => undefined, removeEventListener: () => undefined };
    const softphone = createControllers({
      api: host.api,
      link: { state: () => ({ status: 'open' }), subscribe: () => () => undefined, close: () => undefined },
      store: appStore,
      engine,
      keys,
      audio: { devices: new AudioDevices({ mediaDevices: media }), engine: routing.engine },
    });
    const stop = softphone.start();
    try {
      await waitFor('the list', () => softphone.controllers.devices.view().list.labelled);
      const saved = await softphone.controllers.devices.choose('speaker', 'out-monitor');
      expect(saved.ok).toBe(true);
      expect(host.calls.filter((c) => c.name === 'setPreferences').map((c) => c.params)).toEqual([
        { preferences: { audio: { speaker: { id: 'out-monitor', label: 'DELL U2720Q (HDMI)' } } } },
      ]);
      expect(routing.last()).toEqual({ microphone: '', speaker: 'out-monitor' });
    } finally {
      stop();
    }
  });
});

// Which device a stored choice stands for (same id, same label, or the system default), and what a
// `devicechange` means for the agent's choices: a chosen device that vanished, or came back.
import { afterEach, describe, expect, it } from 'vitest';
import { setUiLanguage } from '../../../renderer/i18n/i18n';
import { AudioDevices, EMPTY_DEVICE_LIST, deviceIdOf, deviceListOf, resolveChoice, systemDefaultLabel, type DeviceEvent } from '../../../renderer/webrtc/audio-devices';
import { DESK, FakeMediaDevices, deskDevices, input, output, settle } from './fake-media-devices';

const headsetChoices = {
  microphone: { id: DESK.headsetMic.deviceId, label: DESK.headsetMic.label },
  speaker: { id: DESK.headsetEar.deviceId, label: DESK.headsetEar.label },
  ringer: { id: DESK.monitor.deviceId, label: DESK.monitor.label },
};

describe('the device list', () => {
  it('lists real devices by kind, leaving out the entries that follow the system, and names the default', () => {
    const list = deviceListOf(deskDevices());
    expect(list.audioinput.devices).toEqual([
      { id: 'mic-laptop', label: 'Microphone Array (Realtek)' },
      { id: 'mic-headset', label: 'Headset Microphone (Jabra)' },
    ]);
    expect(list.audiooutput.devices.map((d) => d.id)).toEqual(['out-laptop', 'out-headset', 'out-monitor']);
    expect(list.audioinput.defaultLabel).toBe('Microphone Array (Realtek)');
    expect(list.audiooutput.defaultLabel).toBe('Speakers (Realtek)');
    expect(list.labelled).toBe(true);
  });

  it('names a default called just "Default" after the device of its group, or the first device when there is no default entry', () => {
    const list = deviceListOf([output('default', 'Default', 'jabra'), DESK.laptopSpeakers, DESK.headsetEar, DESK.laptopMic]);
    expect(list.audiooutput.defaultLabel).toBe('Headset Earphone (Jabra)');
    expect(list.audioinput.defaultLabel).toBe('Microphone Array (Realtek)');
    expect(deviceListOf([]).audioinput.defaultLabel).toBe('the system default');
  });

  it('without permission there are no labels: the list says so and still numbers the devices', () => {
    const list = deviceListOf([input('a', ''), input('b', '')]);
    expect(list.labelled).toBe(false);
    expect(list.audioinput.devices.map((d) => d.label)).toEqual(['Microphone 1', 'Microphone 2']);
  });
});

describe('the device list in the agent\'s language', () => {
  afterEach(async () => {
    await setUiLanguage('en', undefined);
  });

  it('numbers unlabelled devices in the language of the listing; a default without a known device is worded when read', async () => {
    const list = deviceListOf([]);
    await setUiLanguage('pt-BR', undefined);
    expect(deviceListOf([input('a', ''), output('b', '')]).audioinput.devices.map((d) => d.label)).toEqual(['Microfone 1']);
    expect(deviceListOf([input('a', ''), output('b', '')]).audiooutput.devices.map((d) => d.label)).toEqual(['Alto-falante 1']);
    // Listed in English, read in Portuguese: the words follow the language, and match systemDefaultLabel().
    expect(list.audioinput.defaultLabel).toBe('o padrão do sistema');
    expect(EMPTY_DEVICE_LIST.audiooutput.defaultLabel).toBe(systemDefaultLabel());
    expect(deviceListOf(deskDevices()).audioinput.defaultLabel).toBe('Microphone Array (Realtek)');
  });
});

describe('resolving a stored choice', () => {
  const outputs = deviceListOf(deskDevices()).audiooutput;

  it('takes the same id first', () => {
    const r = resolveChoice({ id: 'out-headset', label: 'Headset Earphone (Jabra)' }, outputs);
    expect(r).toEqual({ via: 'id', device: { id: 'out-headset', label: 'Headset Earphone (Jabra)' } });
    expect(deviceIdOf(r)).toBe('out-headset');
  });

  it('then the same label, since ids change between sessions', () => {
    const r = resolveChoice({ id: 'id-from-yesterday', label: 'DELL U2720Q (HDMI)' }, outputs);
    expect(r).toEqual({ via: 'label', device: { id: 'out-monitor', label: 'DELL U2720Q (HDMI)' } });
    expect(deviceIdOf(r)).toBe('out-monitor');
  });

  it('then the system default, saying which choice is missing', () => {
    const choice = { id: 'gone', label: 'USB Speakerphone' };
    const r = resolveChoice(choice, outputs);
    expect(r).toEqual({ via: 'missing', choice });
    expect(deviceIdOf(r)).toBe('');
  });

  it('no choice is the system default', () => {
    expect(resolveChoice(null, outputs)).toEqual({ via: 'default' });
    expect(deviceIdOf(resolveChoice(null, outputs))).toBe('');
  });

  it('an empty label never matches a device that has no label either', () => {
    expect(resolveChoice({ id: 'x', label: '' }, deviceListOf([input('a', '')]).audioinput).via).toBe('missing');
  });
});

describe('AudioDevices', () => {
  it('asks once for the microphone when labels are hidden, stops it at once, and reads the labels', async () => {
    const media = new FakeMediaDevices(deskDevices(), { permission: false });
    const devices = new AudioDevices({ mediaDevices: media });

    const plain = await devices.refresh();
    expect(plain.labelled).toBe(false);
    expect(media.asked).toHaveLength(0);

    const unlocked = await devices.refresh({ unlock: true });
    expect(media.asked).toEqual([{ audio: true, video: false }]);
    expect(media.stopped).toBe(1);
    expect(unlocked.labelled).toBe(true);
    expect(unlocked.audioinput.devices[1]?.label).toBe('Headset Microphone (Jabra)');

    // Labelled now: no second prompt.
    await devices.refresh({ unlock: true });
    expect(media.asked).toHaveLength(1);
  });

  it('routes each role to the device its choice resolves to', async () => {
    const devices = new AudioDevices({ mediaDevices: new FakeMediaDevices(deskDevices()) });
    devices.setChoices({ ...headsetChoices, ringer: { id: 'stale-id', label: DESK.monitor.label } });
    await devices.refresh();
    expect(devices.routing()).toEqual({ microphone: 'mic-headset', speaker: 'out-headset', ringer: 'out-monitor' });
    expect(devices.resolve('ringer').via).toBe('label');
  });

  it('on devicechange, reports a chosen device that vanished with the default that replaces it, then its return', async () => {
    const media = new FakeMediaDevices(deskDevices());
    const devices = new AudioDevices({ mediaDevices: media });
    const events: DeviceEvent[][] = [];
    devices.onEvents((e) => events.push(e));
    const stop = devices.watch();
    devices.setChoices(headsetChoices);
    await devices.refresh();
    expect(events).toEqual([]);

    media.change(deskDevices({ headset: false }));
    await settle();
    expect(events).toEqual([
      [
        { kind: 'lost', role: 'microphone', choice: headsetChoices.microphone, fallback: 'Microphone Array (Realtek)' },
        { kind: 'lost', role: 'speaker', choice: headsetChoices.speaker, fallback: 'Speakers (Realtek)' },
      ],
    ]);
    expect(devices.routing()).toEqual({ microphone: '', speaker: '', ringer: 'out-monitor' });

    // Another change that leaves the headset away says nothing more.
    media.change([...deskDevices({ headset: false }), output('out-usb', 'USB Speakerphone')]);
    await settle();
    expect(events).toHaveLength(1);

    media.change(deskDevices());
    await settle();
    expect(events[1]).toEqual([
      { kind: 'back', role: 'microphone', device: { id: 'mic-headset', label: 'Headset Microphone (Jabra)' } },
      { kind: 'back', role: 'speaker', device: { id: 'out-headset', label: 'Headset Earphone (Jabra)' } },
    ]);
    expect(devices.routing()).toEqual({ microphone: 'mic-headset', speaker: 'out-headset', ringer: 'out-monitor' });

    stop();
    media.change(deskDevices({ headset: false }));
    await settle();
    expect(events).toHaveLength(2);
  });

  it('a device that comes back under a new id is found by its label', async () => {
    const media = new FakeMediaDevices(deskDevices());
    const devices = new AudioDevices({ mediaDevices: media });
    const events: DeviceEvent[][] = [];
    devices.onEvents((e) => events.push(e));
    devices.watch();
    devices.setChoices({ microphone: headsetChoices.microphone, speaker: null, ringer: null });
    await devices.refresh();
    media.change(deskDevices({ headset: false }));
    await settle();
    media.change([...deskDevices({ headset: false }), input('mic-headset-2', DESK.headsetMic.label)]);
    await settle();
    expect(events.map((e) => e.map((x) => x.kind))).toEqual([['lost'], ['back']]);
    expect(devices.routing().microphone).toBe('mic-headset-2');
  });

  it('a new choice is not a disconnection: no event, even when the device chosen is not here', async () => {
    const media = new FakeMediaDevices(deskDevices({ headset: false }));
    const devices = new AudioDevices({ mediaDevices: media });
    const events: DeviceEvent[][] = [];
    devices.onEvents((e) => events.push(e));
    devices.watch();
    await devices.refresh();
    devices.setChoices(headsetChoices);
    await devices.refresh();
    expect(events).toEqual([]);
    expect(devices.routing().microphone).toBe('');
    // When it is plugged in, it is used.
    media.change(deskDevices());
    await settle();
    expect(events[0]?.map((e) => e.kind)).toEqual(['back', 'back']);
    expect(devices.routing().speaker).toBe('out-headset');
  });

  it('changes that come while a list is being read are read again', async () => {
    const media = new FakeMediaDevices(deskDevices());
    const devices = new AudioDevices({ mediaDevices: media });
    devices.setChoices(headsetChoices);
    await devices.refresh();
    const first = devices.refresh();
    media.devices = deskDevices({ headset: false });
    const second = devices.refresh();
    await first;
    await second;
    await settle();
    await settle();
    expect(devices.routing().microphone).toBe('');
    expect(media.enumerations).toBe(3);
  });
});

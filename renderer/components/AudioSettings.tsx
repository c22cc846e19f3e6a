import { useEffect, useSyncExternalStore } from 'react';
import type { AudioRole, DeviceChoice } from '../../shared/preferences';
import { useDeviceActions } from '../app/controllers-context';
import { useAppStore } from '../store/store';
import { ROLE_KIND, resolveChoice, type DeviceKindList } from '../webrtc/audio-devices';
import { LevelMeter } from './LevelMeter';

const ROLE_LABELS: Readonly<Record<AudioRole, string>> = { microphone: 'Microphone', speaker: 'Speaker', ringer: 'Ringer' };
const ROLE_HINTS: Readonly<Record<AudioRole, string>> = {
  microphone: 'What the customer hears.',
  speaker: 'Where you hear the customer.',
  ringer: 'Where incoming calls ring: it may differ from the speaker, e.g. a loudspeaker while the headset is on.',
};

/** The value the select shows: the device the choice resolves to now, or the stored one that is not here. */
function selectedValue(choice: DeviceChoice | null, list: DeviceKindList): string {
  const resolution = resolveChoice(choice, list);
  switch (resolution.via) {
    case 'default':
      return '';
    case 'id':
    case 'label':
      return resolution.device.id;
    case 'missing':
      return resolution.choice.id;
  }
}

function DeviceSelect({ role }: { role: AudioRole }) {
  const devices = useDeviceActions();
  const view = useSyncExternalStore(devices.subscribe, devices.view);
  const choice = useAppStore((s) => s.preferences.audio[role]);
  const list = view.list[ROLE_KIND[role]];
  const value = selectedValue(choice, list);
  const missing = choice !== null && !list.devices.some((d) => d.id === value);
  const id = `audio-${role}`;
  return (
    <div className="field">
      <label htmlFor={id} className="field-label">
        {ROLE_LABELS[role]}
      </label>
      <select id={id} className="input" value={value} aria-describedby={`${id}-hint`} onChange={(e) => void devices.choose(role, e.target.value)}>
        <option value="">System default</option>
        {list.devices.map((d) => (
          <option key={d.id} value={d.id}>
            {d.label}
          </option>
        ))}
        {missing && choice && <option value={choice.id}>{`${choice.label} (not connected)`}</option>}
      </select>
      <p id={`${id}-hint`} className="hint">
        {missing && choice ? `${choice.label} is not connected: ${list.defaultLabel} plays instead until it is back.` : ROLE_HINTS[role]}
      </p>
    </div>
  );
}

/** Settings' "Audio" section: the three devices, and a check of each. */
export function AudioSettings() {
  const devices = useDeviceActions();
  const view = useSyncExternalStore(devices.subscribe, devices.view);
  const preferencesError = useAppStore((s) => s.preferencesError);
  useEffect(() => {
    void devices.openSettings();
    // Leaving Settings closes the microphone a running test holds open.
    return () => devices.stopMicrophoneTest();
  }, [devices]);
  const test = view.microphoneTest;
  return (
    <section className="audio-settings" aria-labelledby="audio-settings-title">
      <h3 id="audio-settings-title" className="card-title">
        Audio
      </h3>
      {(['microphone', 'speaker', 'ringer'] as const).map((role) => (
        <DeviceSelect key={role} role={role} />
      ))}
      <div className="actions audio-checks">
        {/* The name "Test microphone" is fixed (the control's contract); aria-pressed says it runs. */}
        <button
          type="button"
          className="btn btn-secondary"
          aria-label="Test microphone"
          aria-pressed={test.kind !== 'idle'}
          onClick={() => void devices.toggleMicrophoneTest()}
        >
          {test.kind === 'idle' ? 'Test microphone' : 'Testing microphone… (press to stop)'}
        </button>
        <button type="button" className="btn btn-secondary" disabled={view.playing !== null} onClick={() => void devices.testOutput('speaker')}>
          Test speaker
        </button>
        <button type="button" className="btn btn-secondary" disabled={view.playing !== null} onClick={() => void devices.testOutput('ringer')}>
          Test ringer
        </button>
      </div>
      {test.kind !== 'idle' && (
        <div className="meters audio-test-meter">
          <LevelMeter label="Microphone test level" value={test.kind === 'running' ? test.level : 0} />
        </div>
      )}
      <p role="status" className="form-status">
        {view.playing ? `Playing a short sound on the ${view.playing}…` : ''}
      </p>
      {(view.checkError ?? preferencesError) && (
        <p role="alert" className="field-error">
          {view.checkError ?? preferencesError}
        </p>
      )}
    </section>
  );
}

import { useEffect, useSyncExternalStore } from 'react';
import { useTranslation } from 'react-i18next';
import type { AudioRole, DeviceChoice } from '../../shared/preferences';
import { useDeviceActions } from '../app/controllers-context';
import { settingsText } from '../store/settings-form';
import { useAppStore } from '../store/store';
import { ROLE_KIND, resolveChoice, type DeviceKindList } from '../webrtc/audio-devices';
import { LevelMeter } from './LevelMeter';
import { SECTION_HEADING_ID } from './settings-sections';

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
  const { t } = useTranslation('settings');
  const view = useSyncExternalStore(devices.subscribe, devices.view, devices.view);
  const choice = useAppStore((s) => s.preferences.audio[role]);
  const list = view.list[ROLE_KIND[role]];
  const value = selectedValue(choice, list);
  const missing = choice !== null && !list.devices.some((d) => d.id === value);
  const id = `audio-${role}`;
  return (
    <div className="field">
      <label htmlFor={id} className="field-label">
        {t(`audio.${role}.label`)}
      </label>
      <select id={id} className="input" value={value} aria-describedby={`${id}-hint`} onChange={(e) => void devices.choose(role, e.target.value)}>
        <option value="">{t('audio.systemDefaultOption')}</option>
        {list.devices.map((d) => (
          <option key={d.id} value={d.id}>
            {d.label}
          </option>
        ))}
        {missing && choice && <option value={choice.id}>{t('audio.notConnectedOption', { device: choice.label })}</option>}
      </select>
      <p id={`${id}-hint`} className="hint">
        {missing && choice ? t('audio.notConnectedHint', { device: choice.label, fallback: list.defaultLabel }) : t(`audio.${role}.hint`)}
      </p>
    </div>
  );
}

/** Settings' "Audio" section: the three devices, and a check of each. */
export function AudioSettings() {
  const devices = useDeviceActions();
  const { t } = useTranslation('settings');
  const view = useSyncExternalStore(devices.subscribe, devices.view, devices.view);
  const preferencesError = useAppStore((s) => s.preferencesError);
  useEffect(() => {
    void devices.openSettings();
    // Leaving Settings closes the microphone a running test holds open.
    return () => devices.stopMicrophoneTest();
  }, [devices]);
  const test = view.microphoneTest;
  const alert = view.checkError ? settingsText(view.checkError) : preferencesError;
  return (
    <section className="audio-settings settings-section" aria-labelledby={SECTION_HEADING_ID.audio}>
      <h3 id={SECTION_HEADING_ID.audio} className="settings-section-title" tabIndex={-1}>
        {t('audio.title')}
      </h3>
      {(['microphone', 'speaker', 'ringer'] as const).map((role) => (
        <DeviceSelect key={role} role={role} />
      ))}
      <div className="actions audio-checks">
        {/* The name "Test microphone" is fixed (the control's contract); aria-pressed says it runs. */}
        <button
          type="button"
          className="btn btn-secondary"
          aria-label={t('audio.testMicrophone')}
          aria-pressed={test.kind !== 'idle'}
          onClick={() => void devices.toggleMicrophoneTest()}
        >
          {test.kind === 'idle' ? t('audio.testMicrophone') : t('audio.testingMicrophone')}
        </button>
        <button type="button" className="btn btn-secondary" disabled={view.playing !== null} onClick={() => void devices.testOutput('speaker')}>
          {t('audio.testSpeaker')}
        </button>
        <button type="button" className="btn btn-secondary" disabled={view.playing !== null} onClick={() => void devices.testOutput('ringer')}>
          {t('audio.testRinger')}
        </button>
      </div>
      {test.kind !== 'idle' && (
        <div className="meters audio-test-meter">
          <LevelMeter label={t('audio.microphoneTestLevel')} value={test.kind === 'running' ? test.level : 0} />
        </div>
      )}
      <p role="status" className="form-status">
        {view.playing === 'speaker' ? t('audio.playingSpeaker') : view.playing === 'ringer' ? t('audio.playingRinger') : ''}
      </p>
      {alert && (
        <p role="alert" className="field-error">
          {alert}
        </p>
      )}
    </section>
  );
}

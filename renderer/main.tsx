import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { App } from './app/App';
import { createControllers } from './app/controllers';
import { ControllersContext } from './app/controllers-context';
import { browserEnvironment, RingAlerts } from './app/ring-alerts';
import { resolveSoftphoneHost } from './bridge/ws-bridge';
import { ErrorBoundary } from './components/ErrorBoundary';
import { RingAlertsContext } from './components/RingAlerts';
import { Ringtone } from './sound/ringtone';
import { alertsStore } from './store/alerts';
import { appStore } from './store/store';
import { MediaEngine } from './webrtc/media-engine';
import { AudioDevices } from './webrtc/audio-devices';
import { browserSoundCheck } from './sound/device-check';
import './styles.css';
import { errorText } from '../shared/result';

const host = resolveSoftphoneHost(window);
const engine = new MediaEngine({
  onNotice: (localId, text) => appStore.getState().setCallNotice({ localId, text }),
});
const ringtone = new Ringtone();
// A page without media devices (an insecure origin) still runs: it lists no device and routes nothing.
const mediaDevices = navigator.mediaDevices as MediaDevices | undefined;
const audio = mediaDevices ? { devices: new AudioDevices({ mediaDevices }), engine, ringer: ringtone, soundCheck: browserSoundCheck } : undefined;
const softphone = createControllers({ api: host.api, link: host.link, store: appStore, engine, ringtone, hostKind: host.kind, audio });
try {
  softphone.start();
} catch (e) {
  // The window still renders, with the reason in the banner.
  appStore.getState().setSnapshotError(`The window could not connect to the softphone service (${errorText(e)}).`);
}

const ringAlerts = new RingAlerts({ store: appStore, alerts: alertsStore, ringtone, host: host.kind, env: browserEnvironment() });
ringAlerts.start();

// For end-to-end tests: what the media engine hears and sends on a call.
const mediaHook = {
  stats: (localId?: string) => engine.stats(localId),
  timings: (localId?: string) => engine.timingsOf(localId),
  /** The microphone track (deviceId, label) and the remote audio's sinkId of a call. */
  audioRoute: (localId?: string) => engine.audioRouteOf(localId),
  /** Where the ringtone really plays ('' = default) and whether it plays. */
  ringer: () => ({ sinkId: ringtone.contextSinkId(), state: ringtone.state() }),
  /** Every call's media: phase, peer connection states, microphone. */
  sessions: () => engine.describe(),
};
window.__softphoneMedia = mediaHook;

// Closing or reloading the window releases the microphone; the calls themselves belong to the main process.
window.addEventListener('pagehide', () => engine.closeAll());

const rootElement = document.getElementById('root');
if (rootElement) {
  createRoot(rootElement).render(
    <StrictMode>
      <ErrorBoundary>
        <ControllersContext value={softphone.controllers}>
          <RingAlertsContext value={ringAlerts}>
            <App />
          </RingAlertsContext>
        </ControllersContext>
      </ErrorBoundary>
    </StrictMode>,
  );
}

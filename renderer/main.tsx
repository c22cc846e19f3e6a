import './zod-jitless';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { App } from './app/App';
import { createControllers } from './app/controllers';
import { ControllersContext } from './app/controllers-context';
import { browserEnvironment, RingAlerts } from './app/ring-alerts';
import { browserFileSaver } from './app/diagnostics-actions';
import type { MediaTestHook } from './bridge/host-link';
import { resolveSoftphoneHost } from './bridge/ws-bridge';
import { ErrorBoundary } from './components/ErrorBoundary';
import { RingAlertsContext } from './components/RingAlerts';
import { Ringtone } from './sound/ringtone';
import { alertsStore } from './store/alerts';
import { appStore, firstSnapshotSettled } from './store/store';
import { hasCallWithAudio } from './store/call-list';
import { MediaEngine } from './webrtc/media-engine';
import { AudioDevices } from './webrtc/audio-devices';
import { IceConfigSource } from './webrtc/ice-config';
import { LogForwarder } from './app/log-forwarder';
import { browserSoundCheck } from './sound/device-check';
import { measureMicrophonePeak } from './sound/microphone-level';
import { gatherCandidates } from './webrtc/candidate-probe';
import { browserLanguageEnvironment, startLanguageSync } from './i18n/language-sync';
import './styles.css';
import { errorText } from '../shared/result';

// Before anything renders: the first paint is already in the agent's language and direction. The
// saved "Language" comes with the first snapshot (until then the store holds the default).
const languageSync = startLanguageSync(
  {
    setting: () => appStore.getState().preferences.language,
    onSettingChange: (listener) =>
      appStore.subscribe((s, prev) => {
        if (s.preferences.language !== prev.preferences.language) listener();
      }),
    known: firstSnapshotSettled(appStore),
  },
  browserLanguageEnvironment(window),
);

const host = resolveSoftphoneHost(window);
// The window's log records join the main process's log files (for "Export diagnostics").
new LogForwarder(host.api).start();
const iceConfig = new IceConfigSource(host.api);
const engine = new MediaEngine({ iceConfig: () => iceConfig.get() });
// A saved Network section applies from the next call; asked ahead so that no call waits for it.
host.api.onSettingsChanged(() => iceConfig.invalidate());
void iceConfig.get();
// The call-waiting tone plays on the call's speaker, the ring on the ringer.
const ringtone = new Ringtone({ speaker: () => engine.speakerId() });
// A page without media devices (an insecure origin) still runs: it lists no device and routes nothing.
const mediaDevices = navigator.mediaDevices as MediaDevices | undefined;
const audio = mediaDevices ? { devices: new AudioDevices({ mediaDevices }), engine, ringer: ringtone, soundCheck: browserSoundCheck } : undefined;
const diagnostics = {
  iceConfig: () => iceConfig.get(),
  ...(mediaDevices ? { measureMicrophone: measureMicrophonePeak } : {}),
  ...(typeof RTCPeerConnection === 'function' ? { gather: gatherCandidates } : {}),
  saveFile: browserFileSaver(document),
  windowInfo: () => ({ userAgent: navigator.userAgent, language: navigator.language }),
};
const softphone = createControllers({ api: host.api, link: host.link, store: appStore, engine, monitorMedia: engine.monitor, ringtone, hostKind: host.kind, audio, diagnostics, speaker: () => engine.speakerId() });
try {
  softphone.start();
} catch (e) {
  // The window still renders, with the reason in the banner (worded there, in the window's language).
  appStore.getState().setSnapshotError({ kind: 'startFailed', reason: errorText(e) });
}

const ringAlerts = new RingAlerts({ store: appStore, alerts: alertsStore, ringtone, host: host.kind, env: browserEnvironment() });
ringAlerts.start();

// For end-to-end tests and the benchmarks: what the media engine hears and sends on a call. Every
// per-call question names its call (its localId); `localIdOf` finds it from the call's id — the live
// one, when a transfer brought back a call this window once saw ring and end.
const mediaProbe: MediaTestHook = {
  localIdOf: (callId) => {
    const withId = Object.values(appStore.getState().calls).filter((c) => c.callId === callId);
    return (withId.find((c) => c.phase !== 'ended') ?? withId[0])?.localId;
  },
  stats: (localId) => engine.stats(localId),
  timings: (localId) => engine.timingsOf(localId),
  audioRoute: (localId) => engine.audioRouteOf(localId),
  ringer: () => ({ sinkId: ringtone.contextSinkId(), state: ringtone.state() }),
  ringSound: () => ringtone.sound,
  holdMusic: () => engine.holdMusicOrigin(),
  sessions: () => engine.describe(),
  quality: (localId) => engine.qualityOf(localId),
  candidatePath: (localId) => engine.candidatePath(localId),
  monitor: () => {
    const report = engine.monitor.describe();
    const route = engine.monitor.audioRoute();
    return report && { ...report, ...(route && { route }) };
  },
};
window.__softphoneMedia = mediaProbe;

// Closing or reloading the window releases the microphone. The calls whose audio it carried end
// with it (the host sees the page go and ends them with the reason), so a browser tab asks first.
window.addEventListener('pagehide', () => engine.closeAll());
if (host.kind === 'browser') {
  window.addEventListener('beforeunload', (event) => {
    if (hasCallWithAudio(appStore.getState().calls)) event.preventDefault();
  });
}

// The agent's language (a chunk of its own) is loaded before the first paint, each wait capped
// (language-sync.ts); English needs no wait.
await languageSync.ready;
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

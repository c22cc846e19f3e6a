import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { App } from './app/App';
import { createControllers } from './app/controllers';
import { ControllersContext } from './app/controllers-context';
import { resolveSoftphoneHost } from './bridge/ws-bridge';
import { ErrorBoundary } from './components/ErrorBoundary';
import { Ringtone } from './sound/ringtone';
import { appStore } from './store/store';
import { MediaEngine } from './webrtc/media-engine';
import './styles.css';
import { errorText } from '../shared/result';

const host = resolveSoftphoneHost(window);
const engine = new MediaEngine({
  onNotice: (localId, text) => appStore.getState().setCallNotice({ localId, text }),
});
const softphone = createControllers({ api: host.api, link: host.link, store: appStore, engine, ringtone: new Ringtone() });
try {
  softphone.start();
} catch (e) {
  // The window still renders, with the reason in the banner.
  appStore.getState().setSnapshotError(`The window could not connect to the softphone service (${errorText(e)}).`);
}

// For end-to-end tests: what the media engine hears and sends on a call.
window.__softphoneMedia = {
  stats: (localId) => engine.stats(localId),
  timings: (localId) => engine.timingsOf(localId),
};

// Closing or reloading the window releases the microphone; the calls themselves belong to the main process.
window.addEventListener('pagehide', () => engine.closeAll());

const rootElement = document.getElementById('root');
if (rootElement) {
  createRoot(rootElement).render(
    <StrictMode>
      <ErrorBoundary>
        <ControllersContext value={softphone.controllers}>
          <App />
        </ControllersContext>
      </ErrorBoundary>
    </StrictMode>,
  );
}

// The Electron main process entry (bundled to dist/electron/main.cjs by scripts/build-electron.mjs).
// It only wires the real service into the host's lifecycle (desktop-app.ts).
import { join } from 'node:path';
import { app } from 'electron';
import { autoUpdater } from 'electron-updater';
import { createLogger } from '../../shared/log';
import { startFileLogging } from '../core/log-files';
import { createSoftphoneService } from '../core/softphone-service';
import { startEmbeddedEnvironment } from '../embedded';
import { startDesktopApp } from './desktop-app';
import { startUpdateService } from './update-service';

startDesktopApp({
  logger: createLogger('desktop'),
  createService: async ({ dataDir, secrets, preferencesGuard, beforeUpdateRestart, confirmUpdateFeed }) =>
    createSoftphoneService({
      dataDir,
      secrets,
      preferencesGuard,
      // electron-updater picks the updater for this platform and package (AppImage, deb, NSIS, macOS).
      updates: (host) =>
        startUpdateService({
          dataDir,
          updater: autoUpdater,
          host,
          beforeRestart: beforeUpdateRestart,
          // A new feed is what the next quit installs from: the agent confirms it in a native dialog.
          confirmFeedChange: confirmUpdateFeed,
          // No arguments: a tel: link this instance was started with must not dial again.
          relaunch: (execPath) => app.relaunch({ execPath, args: [] }),
          logger: createLogger('updates'),
        }),
      appVersion: app.getVersion(),
      // Rotating files in <userData>/logs, for "Export diagnostics"; the console alone when they cannot be written.
      logFiles: await startFileLogging({ dir: join(dataDir, 'logs') }).catch((e: unknown) => {
        createLogger('desktop').error('log files unavailable: logging to the console only', { error: e });
        return undefined;
      }),
      // The bundle cannot find assets/ from its own location: the app's folder (app.asar when
      // packaged, electron-builder.yml `files`) holds it.
      embedded: () => startEmbeddedEnvironment({ logger: createLogger('embedded'), assetsDir: join(app.getAppPath(), 'assets'), recordingsDir: join(dataDir, 'relay-data', 'recordings') }),
      logger: createLogger('softphone'),
    }),
});

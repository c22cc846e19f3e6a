// The Electron main process entry (bundled to dist/electron/main.cjs by scripts/build-electron.mjs).
// It only wires the real service into the host's lifecycle (desktop-app.ts).
import { join } from 'node:path';
import { app } from 'electron';
import { createLogger } from '../../shared/log';
import { startFileLogging } from '../core/log-files';
import { createSoftphoneService } from '../core/softphone-service';
import { startEmbeddedEnvironment } from '../embedded';
import { startDesktopApp } from './desktop-app';

startDesktopApp({
  logger: createLogger('desktop'),
  createService: async ({ dataDir, secrets, preferencesGuard }) =>
    createSoftphoneService({
      dataDir,
      secrets,
      preferencesGuard,
      appVersion: app.getVersion(),
      // Rotating files in <userData>/logs, for "Export diagnostics"; the console alone when they cannot be written.
      logFiles: await startFileLogging({ dir: join(dataDir, 'logs') }).catch((e: unknown) => {
        createLogger('desktop').error('log files unavailable: logging to the console only', { error: e });
        return undefined;
      }),
      // The bundle cannot find assets/ from its own location: the app's folder (app.asar when
      // packaged, electron-builder.yml `files`) holds it.
      embedded: () => startEmbeddedEnvironment({ logger: createLogger('embedded'), assetsDir: join(app.getAppPath(), 'assets') }),
      logger: createLogger('softphone'),
    }),
});

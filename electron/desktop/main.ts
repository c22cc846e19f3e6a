// The Electron main process entry (bundled to dist/electron/main.cjs by scripts/build-electron.mjs).
// It only wires the real service into the host's lifecycle (desktop-app.ts).
import { join } from 'node:path';
import { app } from 'electron';
import { createLogger } from '../../shared/log';
import { createSoftphoneService } from '../core/softphone-service';
import { startEmbeddedEnvironment } from '../embedded';
import { startDesktopApp } from './desktop-app';

startDesktopApp({
  logger: createLogger('desktop'),
  createService: ({ dataDir, secrets, preferencesGuard }) =>
    createSoftphoneService({
      dataDir,
      secrets,
      preferencesGuard,
      // The bundle cannot find assets/ from its own location: the app's folder (app.asar when
      // packaged, electron-builder.yml `files`) holds it.
      embedded: () => startEmbeddedEnvironment({ logger: createLogger('embedded'), assetsDir: join(app.getAppPath(), 'assets') }),
      logger: createLogger('softphone'),
    }),
});

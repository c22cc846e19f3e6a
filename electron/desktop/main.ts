// The Electron main process entry (bundled to dist/electron/main.cjs by scripts/build-electron.mjs).
// It only wires the real service into the host's lifecycle (desktop-app.ts).
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
      embedded: () => startEmbeddedEnvironment({ logger: createLogger('embedded') }),
      logger: createLogger('softphone'),
    }),
});

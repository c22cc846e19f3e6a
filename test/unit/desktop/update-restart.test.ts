// "Restart to update" and the window that closes to the tray: while an update quits the app to
// install itself the window closes for real (macOS's Squirrel closes every window before it quits,
// and a window that only hid would hold the quit back); if the install does not start, closing
// hides to the tray again.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { startDesktopApp, type DesktopServiceOptions } from '../../../electron/desktop/desktop-app';
import { app, BrowserWindow, resetFakeElectron } from './fake-electron';
import { FakeService } from './fake-service';
import { recordingLogger } from './recording-logger';

vi.mock('electron', () => import('./fake-electron'));

const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('the window during a restart to update', () => {
  let service: FakeService;
  let options: DesktopServiceOptions | undefined;

  beforeEach(async () => {
    resetFakeElectron();
    service = new FakeService();
    const desktop = startDesktopApp({
      logger: recordingLogger(),
      platform: 'linux',
      createSecretStore: () => ({ kind: 'memory', get: async () => undefined, set: async () => undefined, delete: async () => undefined }),
      createService: async (given) => {
        options = given;
        return service;
      },
    });
    await desktop.ready;
    await settle();
  });
  afterEach(() => {
    service.closing.resolve();
  });

  it('closes for real while the update restarts the app, and the app quits with it', () => {
    const window = BrowserWindow.instances[0]!;
    window.emit('ready-to-show');
    options!.beforeUpdateRestart();
    window.close();
    expect(window.destroyed).toBe(true);
    expect(app.quit).toHaveBeenCalled();
  });

  it('hides to the tray as before when the restart is undone', () => {
    const window = BrowserWindow.instances[0]!;
    window.emit('ready-to-show');
    const undo = options!.beforeUpdateRestart();
    undo();
    window.close();
    expect(window.destroyed).toBe(false);
    expect(window.visible).toBe(false);
  });
});

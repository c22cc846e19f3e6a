// The missed-call count on the app's icon: a dock or launcher badge (macOS, Unity-style Linux
// launchers) and, on Windows, where app.setBadgeCount does nothing, an overlay icon on the taskbar
// button with the count spoken as its description, in the agent's language.
import type { App, BrowserWindow, NativeImage } from 'electron';

export interface MissedBadgeOptions {
  app: Pick<App, 'setBadgeCount'>;
  platform: NodeJS.Platform;
  /** The Windows overlay (a small red dot); undefined where the image could not be loaded. */
  overlay: NativeImage | undefined;
}

export class MissedBadge {
  private count = 0;
  private description = '';

  constructor(private readonly options: MissedBadgeOptions) {}

  /** `description` says the count in words ("2 missed calls"): a change of language repaints it. */
  show(count: number, description: string, window: BrowserWindow | undefined): void {
    if (count === this.count && description === this.description) return;
    if (count !== this.count) this.options.app.setBadgeCount(count);
    this.count = count;
    this.description = description;
    this.paintWindow(window);
  }

  /** The overlay belongs to the window: a new one (after a crash, a reopen) gets it again. */
  paintWindow(window: BrowserWindow | undefined): void {
    if (this.options.platform !== 'win32' || window === undefined || window.isDestroyed()) return;
    if (this.count > 0 && this.options.overlay) window.setOverlayIcon(this.options.overlay, this.description);
    else window.setOverlayIcon(null, '');
  }
}

// tel: and callto: links (a CRM's click-to-call). The OS hands a link to the app as a command-line
// argument (Windows, Linux: to a second instance, which passes its argv to the running one through
// 'second-instance') or as 'open-url' (macOS). The link is outside data: the service checks the
// number in it (shared/dial-link.ts) before anything is dialled.
import { resolve } from 'node:path';
import type { App } from 'electron';
import type { Logger } from '../../shared/log';

export const DIAL_LINK_SCHEMES = ['tel', 'callto'] as const;

const DIAL_LINK = /^(?:tel|callto):/i;

/** The arguments that are dial links; Chromium's switches and the app's path are skipped. */
export function dialLinksIn(argv: readonly string[]): string[] {
  return argv.filter((arg) => DIAL_LINK.test(arg));
}

export interface LaunchInfo {
  /** process.defaultApp: started as `electron <script>` (development), not as the packaged app. */
  defaultApp: boolean;
  execPath: string;
  argv: readonly string[];
}

/** Makes this app the handler of tel: and callto: links. */
export function registerDialLinkSchemes(app: Pick<App, 'setAsDefaultProtocolClient'>, launch: LaunchInfo, logger: Logger): void {
  for (const scheme of DIAL_LINK_SCHEMES) {
    // In development the executable is Electron itself: the OS must also pass it our script.
    const script = launch.argv[1];
    const registered =
      launch.defaultApp && script !== undefined ? app.setAsDefaultProtocolClient(scheme, launch.execPath, [resolve(script)]) : app.setAsDefaultProtocolClient(scheme);
    if (!registered) logger.warn('the softphone could not register as the handler of a link scheme', { scheme });
  }
}

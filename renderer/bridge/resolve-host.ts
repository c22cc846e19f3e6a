import { connectBrowserHost } from './ws-bridge';
import { permanentLink, type SoftphoneHost } from './host-link';

/** The Electron preload's window.softphone when there is one; otherwise the browser bridge, installed as window.softphone. */
export function resolveSoftphoneHost(win: Window = window): SoftphoneHost {
  if (win.softphone !== undefined) return { api: win.softphone, link: permanentLink(), kind: 'electron' };
  const host = connectBrowserHost(win);
  win.softphone = host.api;
  return host;
}

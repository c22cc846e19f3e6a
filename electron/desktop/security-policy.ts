// The desktop host's security posture in one place (style.md 7): the Content-Security-Policy, the
// deny-by-default permission table, and the navigation guards for every web contents.
import type { App, Session, WebContents } from 'electron';
import { CONTENT_SECURITY_POLICY } from '../../shared/content-security-policy';
import { createLogger, type Logger } from '../../shared/log';
import { isAppUrl } from './renderer-location';

/**
 * The page's policy and the header form with frame-ancestors, one text for both hosts
 * (shared/content-security-policy.ts); the session's hook and the app: handler send the header.
 */
export { CONTENT_SECURITY_POLICY, PAGE_CONTENT_SECURITY_POLICY } from '../../shared/content-security-policy';

/** What a permission decision looks at: the page asking, and for `media` which devices it wants. */
export interface PermissionAsk {
  /** Electron's permission name, e.g. `media`, `notifications`, `geolocation`. */
  permission: string;
  /** The URL of the document asking; our own renderer page or nothing is granted. */
  requestingUrl: string | undefined;
  /** For `media`: the device kinds wanted. A request lists them all; a check names one. */
  mediaTypes: ReadonlyArray<string> | undefined;
}

/**
 * Deny by default: only the microphone (calls are audio-only, protocol.md "Media") and
 * notifications (incoming calls) are ever granted. Anything not in this table is refused.
 */
const PERMISSION_TABLE: Readonly<Record<string, (ask: PermissionAsk) => boolean>> = {
  media: (ask) => ask.mediaTypes !== undefined && ask.mediaTypes.length > 0 && ask.mediaTypes.every((kind) => kind === 'audio'),
  notifications: () => true,
};

export function isPermissionGranted(ask: PermissionAsk, appUrl: string): boolean {
  if (!isAppUrl(ask.requestingUrl, appUrl)) return false;
  const rule = Object.hasOwn(PERMISSION_TABLE, ask.permission) ? PERMISSION_TABLE[ask.permission] : undefined;
  return rule ? rule(ask) : false;
}

/** Headers with any CSP the response already carried replaced by ours (names are case-insensitive). */
export function withContentSecurityPolicy(headers: Record<string, string[]> | undefined): Record<string, string[]> {
  const kept = Object.entries(headers ?? {}).filter(([name]) => name.toLowerCase() !== 'content-security-policy');
  return { ...Object.fromEntries(kept), 'Content-Security-Policy': [CONTENT_SECURITY_POLICY] };
}

/**
 * Installs the CSP and both permission handlers on a session. Both handlers are needed: Chromium
 * asks the request handler when a page asks for a permission and the check handler when it only
 * queries one (e.g. device labels), and an unset check handler answers "granted".
 */
export function installSessionSecurity(session: Session, appUrl: string, logger: Logger = createLogger('desktop-security')): void {
  session.webRequest.onHeadersReceived((details, callback) => {
    callback({ responseHeaders: withContentSecurityPolicy(details.responseHeaders) });
  });

  session.setPermissionRequestHandler((webContents, permission, callback, details) => {
    const ask: PermissionAsk = {
      permission,
      requestingUrl: details.requestingUrl || webContents.getURL(),
      mediaTypes: 'mediaTypes' in details ? details.mediaTypes : undefined,
    };
    const granted = isPermissionGranted(ask, appUrl);
    if (!granted) logger.warn('permission request denied', { permission, mediaTypes: ask.mediaTypes, url: ask.requestingUrl });
    callback(granted);
  });

  session.setPermissionCheckHandler((webContents, permission, _requestingOrigin, details) => {
    return isPermissionGranted(
      {
        permission,
        requestingUrl: details.requestingUrl ?? webContents?.getURL(),
        mediaTypes: details.mediaType === undefined ? undefined : [details.mediaType],
      },
      appUrl,
    );
  });
}

/**
 * The window shows one page for its whole life: every navigation, new window and webview is
 * refused, for every web contents the app ever creates (one hook, so none can be missed).
 */
export function installNavigationGuards(app: App, logger: Logger = createLogger('desktop-security')): void {
  app.on('web-contents-created', (_event, contents: WebContents) => {
    contents.on('will-navigate', (event, url) => {
      event.preventDefault();
      logger.warn('navigation blocked', { url });
    });
    contents.on('will-frame-navigate', (event) => {
      if (event.isMainFrame) return; // covered by will-navigate above
      event.preventDefault();
      logger.warn('frame navigation blocked', { url: event.url });
    });
    contents.on('will-redirect', (event, url) => {
      event.preventDefault();
      logger.warn('redirect blocked', { url });
    });
    contents.setWindowOpenHandler(({ url }) => {
      logger.warn('window.open denied', { url });
      return { action: 'deny' };
    });
    contents.on('will-attach-webview', (event) => {
      event.preventDefault();
      logger.warn('webview blocked');
    });
  });
}

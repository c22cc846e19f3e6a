// Where the built renderer and preload live, and what counts as our own page. The window shows
// app://softphone/index.html, served from dist/renderer by app-protocol.ts: the packaged app's fuses
// take file:// its extra privileges, and with them the reading of files inside app.asar. "Our own
// page" is decided by the exact document URL, not by comparing origins.
import { join } from 'node:path';

/** The window's own scheme and host (app-protocol.ts registers and serves them). */
export const APP_SCHEME = 'app';
export const APP_HOST = 'softphone';

export interface RendererLocation {
  /** app://softphone/index.html: the only page the window ever shows. */
  appUrl: string;
  /** dist/renderer, whose files app://softphone/ serves. */
  rendererDir: string;
  /** dist/electron/preload.cjs, built next to main.cjs by scripts/build-electron.mjs. */
  preloadPath: string;
}

/** `appPath` is app.getAppPath(): the project root in development, the app.asar root when packaged. */
export function rendererLocation(appPath: string): RendererLocation {
  return {
    appUrl: `${APP_SCHEME}://${APP_HOST}/index.html`,
    rendererDir: join(appPath, 'dist', 'renderer'),
    preloadPath: join(appPath, 'dist', 'electron', 'preload.cjs'),
  };
}

/** The document part of a URL (no query, no fragment), or undefined when it does not parse. */
function documentOf(url: string): string | undefined {
  if (!URL.canParse(url)) return undefined;
  const parsed = new URL(url);
  return `${parsed.protocol}//${parsed.host}${parsed.pathname}`;
}

/**
 * True when `url` is our renderer page. The fragment and query are ignored because the renderer may
 * keep its view in them; everything else must match exactly.
 */
export function isAppUrl(url: string | undefined | null, appUrl: string): boolean {
  if (!url) return false;
  const candidate = documentOf(url);
  return candidate !== undefined && candidate.startsWith(`${APP_SCHEME}:`) && candidate === documentOf(appUrl);
}

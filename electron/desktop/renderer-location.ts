// Where the built renderer and preload live, and what counts as our own page. The renderer is loaded
// from a file:// URL, whose origin is opaque ("null") and shared by every file on disk, so "our own
// origin" is decided by the exact document URL, not by comparing origins.
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

export interface RendererLocation {
  /** dist/renderer/index.html as a file:// URL: the only page the window ever shows. */
  appUrl: string;
  /** dist/electron/preload.cjs, built next to main.cjs by scripts/build-electron.mjs. */
  preloadPath: string;
}

/** `appPath` is app.getAppPath(): the project root in development, the app.asar root when packaged. */
export function rendererLocation(appPath: string): RendererLocation {
  return {
    appUrl: pathToFileURL(join(appPath, 'dist', 'renderer', 'index.html')).href,
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
  return candidate !== undefined && candidate.startsWith('file:') && candidate === documentOf(appUrl);
}

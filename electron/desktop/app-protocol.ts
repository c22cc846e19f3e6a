// The window's page comes from app://softphone/, a scheme of our own, not from file://. The packaged
// app's fuses (electron-builder.yml) turn grantFileProtocolExtraPrivileges off, and with it Electron
// stops reading file:// URLs inside app.asar and Chromium refuses a file:// page its module script
// (file:// has an opaque origin, so `<script type="module" crossorigin>` is a cross-origin load).
// A standard, secure scheme gives the page a real origin ('self' in the CSP), a secure context for
// the microphone, and nothing more. Electron's security checklist asks for exactly this (item 18).
import { readFile, stat } from 'node:fs/promises';
import { extname, join, normalize, sep } from 'node:path';
import type { Protocol } from 'electron';
import { APP_HOST, APP_SCHEME } from './renderer-location';
import { CONTENT_SECURITY_POLICY } from './security-policy';

/** standard: relative URLs and an origin; secure: a secure context; fetch and CORS as for https. No service workers, no bypassing the CSP. */
export const APP_SCHEME_PRIVILEGES = { standard: true, secure: true, supportFetchAPI: true, corsEnabled: true } as const;

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.wav': 'audio/wav',
  '.woff2': 'font/woff2',
};

/** Must run before the app is ready: Chromium fixes its schemes' privileges at start. */
export function registerAppScheme(protocol: Pick<Protocol, 'registerSchemesAsPrivileged'>): void {
  protocol.registerSchemesAsPrivileged([{ scheme: APP_SCHEME, privileges: { ...APP_SCHEME_PRIVILEGES } }]);
}

/** Serves app://softphone/ from `rendererDir` (dist/renderer, inside app.asar when packaged) on the default session. */
export function serveRenderer(protocol: Pick<Protocol, 'handle'>, rendererDir: string): void {
  protocol.handle(APP_SCHEME, rendererFileHandler(rendererDir));
}

/**
 * Whether `file` lies inside the folder `root`: under it, not the folder itself, and not a sibling
 * whose name only starts the same (`<root>-evil`). A root given with a trailing separator counts as
 * the same folder.
 */
export function isInsideFolder(root: string, file: string): boolean {
  const base = normalize(root).replace(/[/\\]+$/, '');
  return normalize(file).startsWith(base + sep);
}

/**
 * The scheme's answers: GET and HEAD of a file under `root`, with the CSP and no sniffing; 404 for
 * anything else there, another host, or a path that leaves `root`. Node's fs reads inside app.asar
 * in the main process whatever the fuses say.
 */
export function rendererFileHandler(root: string): (request: Request) => Promise<Response> {
  const base = normalize(root);
  const notFound = () => new Response('Not found', { status: 404, headers: { 'Content-Type': 'text/plain; charset=utf-8' } });
  return async (request) => {
    if (request.method !== 'GET' && request.method !== 'HEAD') return new Response('Method not allowed', { status: 405, headers: { Allow: 'GET, HEAD' } });
    if (!URL.canParse(request.url)) return notFound();
    const url = new URL(request.url);
    if (url.protocol !== `${APP_SCHEME}:` || url.host !== APP_HOST) return notFound();
    let pathname: string;
    try {
      pathname = decodeURIComponent(url.pathname);
    } catch {
      return notFound();
    }
    if (pathname.includes('\0')) return notFound();
    const relative = pathname === '/' ? 'index.html' : normalize(pathname).replace(/^([/\\])+/, '');
    const file = join(base, relative);
    if (!isInsideFolder(base, file)) return notFound();
    const info = await stat(file).catch(() => undefined);
    if (!info?.isFile()) return notFound();
    const body = await readFile(file);
    return new Response(request.method === 'HEAD' ? null : body, {
      status: 200,
      headers: {
        'Content-Type': CONTENT_TYPES[extname(file).toLowerCase()] ?? 'application/octet-stream',
        'Content-Security-Policy': CONTENT_SECURITY_POLICY,
        'X-Content-Type-Options': 'nosniff',
      },
    });
  };
}

// The browser host: the product in a plain browser tab. It listens on 127.0.0.1 only, serves the
// built renderer, and carries SoftphoneApi over one WebSocket (/api) that needs the per-launch
// token and our own Origin. GET /dial takes a tel: link to the softphone tab. Everything else is refused.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { readFile, stat } from 'node:fs/promises';
import { extname, join, normalize, resolve, sep } from 'node:path';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import { commandSchemas, WINDOW_GONE_REASON, wsClientFrameSchema, type CommandName, type SoftphoneBackend, type WsServerFrame } from '../../shared/api';
import { CONTENT_SECURITY_POLICY } from '../../shared/content-security-policy';
import { createLogger, type Logger } from '../../shared/log';
import { formatPhoneNumber } from '../../shared/phone';
import { err, type Result } from '../../shared/result';
import { parseWith } from '../../shared/validation';
import { CallMediaOwners } from './call-media-owners';

/**
 * The service's hand-over of a tel:/callto: link to the windows (SoftphoneService.requestDial);
 * `dialAtOnce: false` only fills the dialer.
 */
export type DialRequester = (link: string, options?: { dialAtOnce?: boolean }) => Result<{ number: string; dial: boolean }>;

export interface BrowserHostOptions {
  /** Without requestDial, GET /dial answers that this service does not take links (503). */
  backend: SoftphoneBackend & { requestDial?: DialRequester };
  /** The built renderer (dist/renderer). */
  staticDir: string;
  port?: number;
  /** Per-launch secret; a random one when absent. */
  token?: string;
  logger?: Logger;
}

export interface BrowserHost {
  /** The address to open, with the token. */
  url: string;
  origin: string;
  port: number;
  token: string;
  close(): Promise<void>;
}

const HOST = '127.0.0.1';
const MAX_FRAME_BYTES = 256 * 1024;

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json',
  '.map': 'application/json',
  '.wav': 'audio/wav',
  '.woff2': 'font/woff2',
};

const DIAL_PAGE_STYLE = 'body{font:16px/1.5 system-ui,sans-serif;margin:3rem auto;max-width:36rem;padding:0 1rem;color:#15202b}h1{font-size:1.25rem}';

/**
 * The /dial page is written here, with its one inline style: the page's header policy
 * (shared/content-security-policy.ts, the one the Electron host sends too), with that style's hash
 * in style-src instead of 'self' (it loads no file), and never 'unsafe-inline'.
 */
export const DIAL_PAGE_CONTENT_SECURITY_POLICY = CONTENT_SECURITY_POLICY.split('; ')
  .map((directive) => (directive.startsWith('style-src ') ? `style-src 'sha256-${createHash('sha256').update(DIAL_PAGE_STYLE).digest('base64')}'` : directive))
  .join('; ');

const SECURITY_HEADERS = {
  'Content-Security-Policy': CONTENT_SECURITY_POLICY,
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Permissions-Policy': 'camera=(), geolocation=(), microphone=(self)',
  'Cache-Control': 'no-store',
};

const escapeHtml = (text: string): string =>
  text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] ?? c);

/** The page a /dial link's own tab shows: where the number went, or why it did not. Everything in it is escaped. */
function dialPage(title: string, lines: readonly string[]): string {
  return [
    '<!doctype html>',
    '<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">',
    `<title>${escapeHtml(title)}</title>`,
    `<style>${DIAL_PAGE_STYLE}</style>`,
    '</head><body><main>',
    `<h1>${escapeHtml(title)}</h1>`,
    ...lines.map((line) => `<p>${escapeHtml(line)}</p>`),
    '</main></body></html>',
  ].join('');
}

function sameSecret(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}

export async function startBrowserHost(options: BrowserHostOptions): Promise<BrowserHost> {
  const log = options.logger ?? createLogger('browser-host');
  const token = options.token ?? randomBytes(24).toString('base64url');
  const root = resolve(options.staticDir);
  const sockets = new Set<WebSocket>();
  let closing = false;
  let port = 0;
  // The page whose socket carries each call's audio. When that socket closes (a reload, the tab
  // closed, the browser gone) the call has no audio any more: it ends at once, or, bridged, rejoins
  // for the next page. Another page of the same agent closing changes nothing for it.
  const mediaOwners = new CallMediaOwners<WebSocket>();
  const reportGone = (calls: readonly string[]) => {
    if (calls.length === 0 || !options.backend.windowGone) return;
    void options.backend.windowGone(calls, WINDOW_GONE_REASON.reloaded).catch((e: unknown) => log.error('ending the calls of a closed page failed', { error: e }));
  };
  const allowedHosts = () => [`${HOST}:${port}`, `localhost:${port}`];

  const server = createServer((req, res) => {
    void serveStatic(req, res).catch((e: unknown) => {
      log.error('static file failed', { error: e });
      if (!res.headersSent) res.writeHead(500).end();
    });
  });

  async function serveStatic(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (!allowedHosts().includes(req.headers.host ?? '')) {
      res.writeHead(421, { 'Content-Type': 'text/plain' }).end('Misdirected request');
      return;
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { Allow: 'GET, HEAD', 'Content-Type': 'text/plain' }).end('Method not allowed');
      return;
    }
    const url = new URL(req.url ?? '/', `http://${HOST}`);
    if (url.pathname === '/dial') return serveDial(req, res, url);
    const pathname = decodeURIComponent(url.pathname);
    const relative = pathname === '/' ? 'index.html' : normalize(pathname).replace(/^([/\\])+/, '');
    const file = join(root, relative);
    if (!file.startsWith(root + sep)) {
      res.writeHead(404).end();
      return;
    }
    const info = await stat(file).catch(() => undefined);
    if (!info?.isFile()) {
      res.writeHead(404, { 'Content-Type': 'text/plain' }).end('Not found');
      return;
    }
    const body = await readFile(file);
    res.writeHead(200, { 'Content-Type': CONTENT_TYPES[extname(file)] ?? 'application/octet-stream', ...SECURITY_HEADERS });
    res.end(req.method === 'HEAD' ? undefined : body);
  }

  /**
   * GET /dial?to=<tel: or callto: URL, or a number>: where registerProtocolHandler sends the
   * browser's tel: links. The number goes to the softphone tab already open (no second softphone
   * starts here); this tab only says where it went. It needs no token, as a tel: link needs none,
   * but only a page the browser opens as a document may use it, not a script's fetch or an image on
   * some other site, so that no page can dial behind the agent's back. Another site can still send
   * a tab here by script, so only a navigation the agent started (`Sec-Fetch-User: ?1`, a click)
   * dials at once; any other only fills the dialer.
   */
  function serveDial(req: IncomingMessage, res: ServerResponse, url: URL): void {
    const answer = (status: number, title: string, lines: readonly string[]) => {
      res.writeHead(status, { 'Content-Type': 'text/html; charset=utf-8', ...SECURITY_HEADERS, 'Content-Security-Policy': DIAL_PAGE_CONTENT_SECURITY_POLICY }).end(dialPage(title, lines));
    };
    if (req.method !== 'GET') {
      // Dialling is a side effect: a HEAD (a link preview, a crawler) must not cause one.
      res.writeHead(405, { Allow: 'GET', 'Content-Type': 'text/plain' }).end('Method not allowed');
      return;
    }
    const dest = req.headers['sec-fetch-dest'];
    if (dest !== undefined && dest !== 'document') {
      return answer(403, 'Not dialled', ['A number can be sent to the softphone only by opening a link in a browser tab.']);
    }
    const requestDial = options.backend.requestDial;
    if (requestDial === undefined) {
      return answer(503, 'Not dialled', ['This softphone service does not take numbers from links.']);
    }
    if (sockets.size === 0) {
      return answer(503, 'No softphone tab is open', ['Open the softphone in this browser first, then the link again. Nothing was dialled.']);
    }
    const clicked = req.headers['sec-fetch-user'] === '?1';
    const handed = requestDial.call(options.backend, url.searchParams.get('to') ?? '', { dialAtOnce: clicked });
    if (!handed.ok) {
      log.info('dial link refused', { problem: handed.error.code });
      return answer(400, 'Not dialled', [handed.error.message, 'Nothing was dialled.']);
    }
    const where = handed.value.dial ? 'dialling' : 'it is in the dialer';
    const lines = [`${formatPhoneNumber(handed.value.number)} was sent to the softphone tab: ${where}`];
    if (!clicked) lines.push('This link was not opened by a click, so it is never dialled at once: press Call in the softphone to dial.');
    answer(200, 'Sent to the softphone', lines);
  }

  const wss = new WebSocketServer({ noServer: true, maxPayload: MAX_FRAME_BYTES });

  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    const refuse = (status: number, reason: string) => {
      log.warn('websocket refused', { reason });
      socket.end(`HTTP/1.1 ${status} ${reason}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
    };
    const url = new URL(req.url ?? '/', `http://${HOST}`);
    if (url.pathname !== '/api') return refuse(404, 'Not Found');
    if (!allowedHosts().includes(req.headers.host ?? '')) return refuse(421, 'Misdirected Request');
    const origin = req.headers.origin ?? '';
    if (!allowedHosts().some((h) => origin === `http://${h}`)) return refuse(403, 'Forbidden');
    const offered = url.searchParams.get('token') ?? '';
    if (!sameSecret(offered, token)) return refuse(401, 'Unauthorized');
    wss.handleUpgrade(req, socket, head, (ws) => wss.emit('connection', ws, req));
  });

  wss.on('connection', (ws: WebSocket) => {
    sockets.add(ws);
    // A supervisor's joined calls whose leg this page answered: the leg goes with the page, and so does the join.
    const joinedCalls = new Set<string>();
    const send = (frame: WsServerFrame) => {
      if (ws.readyState === ws.OPEN) ws.send(JSON.stringify(frame));
    };
    const unsubscribe = options.backend.subscribe((push) => send({ kind: 'push', push }));
    ws.on('message', (data, isBinary) => {
      void handleFrame(ws, isBinary ? '' : data.toString(), joinedCalls).then((frame) => frame && send(frame));
    });
    ws.on('close', () => {
      unsubscribe();
      sockets.delete(ws);
      const carried = mediaOwners.leave(ws);
      // The host stopping is the app quitting: the service ends its calls and leaves a joined call itself.
      if (!closing) {
        reportGone(carried);
        for (const callId of joinedCalls) {
          void options.backend.handle('leaveMonitor', { callId }).catch((e: unknown) => log.error('leaving the joined call of a closed page failed', { error: e }));
        }
      }
    });
    ws.on('error', (e) => log.warn('websocket error', { error: e }));
  });

  /** One wrapper validates every call (style.md 3): frame, then the command's payload, then the backend. */
  async function handleFrame(ws: WebSocket, text: string, joinedCalls: Set<string>): Promise<WsServerFrame | undefined> {
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      log.warn('websocket frame is not JSON');
      return undefined;
    }
    const frame = parseWith(wsClientFrameSchema, json);
    if (!frame.ok) {
      const id = typeof (json as { id?: unknown })?.id === 'number' ? (json as { id: number }).id : -1;
      return { kind: 'result', id, result: frame };
    }
    const { id, command, params } = frame.value;
    const parsed = parseWith(commandSchemas[command], params ?? {});
    if (!parsed.ok) return { kind: 'result', id, result: parsed };
    // Counted from the moment the command arrives: a reload while the accept is on its way must end
    // the call too. A refused one (a colleague's tab answered first, another page took the rejoin
    // offer) is not this page's to end. A rejoined call is this page's, and no longer the page's that had it before.
    const mediaCall = command === 'answerCall' || command === 'startCall' || command === 'rejoinCall' ? (parsed.value as { localId: string }).localId : undefined;
    if (mediaCall !== undefined) mediaOwners.claim(ws, mediaCall);
    let result: Result<unknown>;
    try {
      result = await options.backend.handle(command as CommandName, parsed.value as never);
    } catch (e) {
      log.error('command failed', { command, error: e });
      result = err('internal', 'Something went wrong in the app; the details are in its log');
    }
    if (mediaCall !== undefined && mediaOwners.settle(ws, mediaCall, result.ok) && !closing) reportGone([mediaCall]);
    if (command === 'answerMonitor' && result.ok) joinedCalls.add((parsed.value as { callId: string }).callId);
    if (command === 'leaveMonitor') joinedCalls.delete((parsed.value as { callId: string }).callId);
    return { kind: 'result', id, result };
  }

  await new Promise<void>((resolveListen, rejectListen) => {
    server.once('error', rejectListen);
    server.listen(options.port ?? 0, HOST, () => {
      server.off('error', rejectListen);
      resolveListen();
    });
  });
  const address = server.address();
  port = typeof address === 'object' && address ? address.port : 0;
  const origin = `http://${HOST}:${port}`;

  return {
    url: `${origin}/?token=${encodeURIComponent(token)}`,
    origin,
    port,
    token,
    async close() {
      // The host stopping is the app quitting: the service ends its calls itself.
      closing = true;
      for (const ws of sockets) ws.terminate();
      wss.close();
      await new Promise<void>((done) => server.close(() => done()));
    },
  };
}

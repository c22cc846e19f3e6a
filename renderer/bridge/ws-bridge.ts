// SoftphoneApi over the browser host's WebSocket (ARCHITECTURE.md: one contract, two transports).
// Client frames are { id, command, params } (wsClientFrameSchema); the host answers each with
// { kind: 'result', id, result } and pushes { kind: 'push', push: { name, payload } }. The socket can
// drop (the host restarted, the laptop slept): commands in flight then resolve as
// gateway_unreachable, the bridge reconnects with backoff, and whoever watches the link refetches
// the snapshot, because pushes sent while it was down are gone.
import { z } from 'zod';
import {
  appErrorSchema,
  COMMAND_NAMES,
  PUSH_NAMES,
  pushListenerName,
  type CommandName,
  type CommandParams,
  type CommandResults,
  type PushMessage,
  type PushName,
  type PushPayloads,
  type SoftphoneApi,
  type SoftphoneCommands,
  type SoftphonePushes,
  type Unsubscribe,
  type WsClientFrame,
} from '../../shared/api';
import { createLogger } from '../../shared/log';
import { err, type AppError, type Result, errorText } from '../../shared/result';
import { isErrorCode } from '../error-texts';
import { i18n } from '../i18n/i18n';
import { permanentLink, type HostLink, type HostLinkState, type SoftphoneHost } from './host-link';

const log = createLogger('ws-bridge');

/** The part of WebSocket the bridge uses: the browser's WebSocket has it, and so has `ws`. */
export interface BridgeSocket {
  readonly readyState: number;
  send(data: string): void;
  close(code?: number, reason?: string): void;
  addEventListener(type: 'open' | 'error', listener: () => void): void;
  addEventListener(type: 'close', listener: (ev: { code: number; reason: string }) => void): void;
  addEventListener(type: 'message', listener: (ev: { data: unknown }) => void): void;
}
const SOCKET_OPEN = 1;

export interface WsBridgeOptions {
  url: string;
  createSocket?: (url: string) => BridgeSocket;
  /** Reconnect delays: doubling from initialMs up to maxMs, with ±20 % jitter. */
  backoff?: { initialMs?: number; maxMs?: number };
  /** A command with no result by then resolves as `timeout` (the host caps its own gateway calls). */
  commandTimeoutMs?: number;
  random?: () => number;
}

const resultSchema = z.union([
  z.looseObject({ ok: z.literal(true), value: z.unknown() }),
  z.looseObject({ ok: z.literal(false), error: appErrorSchema }),
]);
/** The envelope of every frame from the host; push payloads are checked by the store's edge (payload-schemas.ts). */
export const wsServerFrameSchema = z.discriminatedUnion('kind', [
  z.looseObject({ kind: z.literal('result'), id: z.number().int().nonnegative(), result: resultSchema }),
  z.looseObject({
    kind: z.literal('push'),
    push: z.looseObject({ name: z.enum(PUSH_NAMES as [PushName, ...PushName[]]), payload: z.unknown() }),
  }),
]);

function normaliseResult(result: z.infer<typeof resultSchema>): Result<unknown> {
  if (result.ok) return { ok: true, value: result.value };
  const { code, message, ...rest } = result.error;
  const error: AppError = { code: isErrorCode(code) ? code : 'internal', message };
  for (const key of ['field', 'gatewayCode', 'httpStatus', 'detail', 'text', 'issues', 'confirm', 'confirmTexts'] as const) {
    if (rest[key] !== undefined) Object.assign(error, { [key]: rest[key] });
  }
  return { ok: false, error };
}

/** The onX(cb) → unsubscribe of one push. */
export type PushListener<N extends PushName> = (cb: (payload: PushPayloads[N]) => void) => Unsubscribe;

/**
 * SoftphonePushes with one listener per name in PUSH_NAMES, as the preload builds its own, so that a
 * new push needs no edit here. `listen` is typed per push; the one cast says that the loop filled
 * every key, which TypeScript cannot follow (ws-bridge.test.ts checks it for every name).
 */
export function buildPushListeners(listen: <N extends PushName>(name: N) => PushListener<N>): SoftphonePushes {
  const pushes: Partial<Record<keyof SoftphonePushes, PushListener<PushName>>> = {};
  for (const name of PUSH_NAMES) pushes[pushListenerName(name)] = listen(name);
  return pushes as SoftphonePushes;
}

interface Pending {
  resolve: (result: Result<unknown>) => void;
  timer: ReturnType<typeof setTimeout>;
}

export function createWsBridge(options: WsBridgeOptions): { api: SoftphoneApi; link: HostLink } {
  const createSocket = options.createSocket ?? ((url: string) => new WebSocket(url) as BridgeSocket);
  const initialMs = options.backoff?.initialMs ?? 500;
  const maxMs = options.backoff?.maxMs ?? 10_000;
  const commandTimeoutMs = options.commandTimeoutMs ?? 45_000;
  const random = options.random ?? Math.random;

  let socket: BridgeSocket | null = null;
  let state: HostLinkState = { status: 'connecting' };
  let attempt = 0;
  let nextId = 1;
  let closed = false;
  let retryTimer: ReturnType<typeof setTimeout> | undefined;
  const pending = new Map<number, Pending>();
  const waitingForOpen: string[] = [];
  const stateListeners = new Set<(s: HostLinkState) => void>();
  const pushListeners = new Map<PushName, Set<(payload: never) => void>>();

  const setState = (next: HostLinkState) => {
    state = next;
    for (const listener of [...stateListeners]) {
      try {
        listener(next);
      } catch (e) {
        log.error('link listener failed', { error: e });
      }
    }
  };

  const failAll = (message: string) => {
    waitingForOpen.length = 0;
    const all = [...pending.values()];
    pending.clear();
    for (const p of all) {
      clearTimeout(p.timer);
      p.resolve(err('gateway_unreachable', message));
    }
  };

  const scheduleRetry = (lastError: string) => {
    if (closed) return;
    attempt += 1;
    const base = Math.min(maxMs, initialMs * 2 ** (attempt - 1));
    const delay = Math.round(base * (0.8 + 0.4 * random()));
    setState({ status: 'reconnecting', attempt, retryAt: Date.now() + delay, lastError });
    retryTimer = setTimeout(connect, delay);
  };

  const dispatchPush = (push: PushMessage) => {
    const listeners = pushListeners.get(push.name);
    if (!listeners) return;
    for (const listener of [...listeners]) {
      try {
        (listener as (payload: unknown) => void)(push.payload);
      } catch (e) {
        log.error('push listener failed', { push: push.name, error: e });
      }
    }
  };

  const onMessage = (data: unknown) => {
    if (typeof data !== 'string') {
      log.warn('ignored a binary frame');
      return;
    }
    let json: unknown;
    try {
      json = JSON.parse(data);
    } catch {
      log.warn('ignored a frame that is not JSON');
      return;
    }
    const frame = wsServerFrameSchema.safeParse(json);
    if (!frame.success) {
      log.warn('ignored a malformed frame', { problem: frame.error.issues[0]?.message });
      return;
    }
    if (frame.data.kind === 'push') {
      dispatchPush(frame.data.push as PushMessage);
      return;
    }
    const waiting = pending.get(frame.data.id);
    if (!waiting) return; // already timed out, or failed by a drop
    pending.delete(frame.data.id);
    clearTimeout(waiting.timer);
    waiting.resolve(normaliseResult(frame.data.result));
  };

  function connect(): void {
    retryTimer = undefined;
    if (closed) return;
    let s: BridgeSocket;
    try {
      s = createSocket(options.url);
    } catch (e) {
      scheduleRetry(errorText(e));
      return;
    }
    socket = s;
    s.addEventListener('open', () => {
      if (socket !== s) return;
      attempt = 0;
      const queued = waitingForOpen.splice(0);
      for (const frame of queued) s.send(frame);
      setState({ status: 'open' });
    });
    s.addEventListener('message', (ev) => {
      if (socket === s) onMessage(ev.data);
    });
    s.addEventListener('close', (ev) => {
      if (socket !== s) return;
      socket = null;
      const why = ev.reason
        ? i18n.t('errors:host.closedWithReason', { code: ev.code, reason: ev.reason })
        : i18n.t('errors:host.closedWithCode', { code: ev.code });
      failAll(why);
      scheduleRetry(why);
    });
    // An error is always followed by close, which does the work.
    s.addEventListener('error', () => undefined);
  }

  function call<N extends CommandName>(name: N, params: CommandParams<N>): Promise<Result<CommandResults[N]>> {
    if (closed) return Promise.resolve(err('gateway_unreachable', i18n.t('errors:host.closed')));
    const current = socket;
    if (!current) {
      // Between attempts: fail at once rather than leave the agent waiting on a button.
      return Promise.resolve(err('gateway_unreachable', i18n.t('errors:host.notConnected')));
    }
    const id = nextId++;
    const frame: WsClientFrame = { id, command: name, params };
    const text = JSON.stringify(frame);
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        pending.delete(id);
        resolve(err('timeout', i18n.t('errors:host.timeout', { command: name })));
      }, commandTimeoutMs);
      pending.set(id, { resolve: resolve as (r: Result<unknown>) => void, timer });
      if (current.readyState === SOCKET_OPEN) current.send(text);
      else waitingForOpen.push(text);
    });
  }

  const commands = Object.fromEntries(
    COMMAND_NAMES.map((name) => [name, (params: CommandParams<typeof name>) => call(name, params)]),
  ) as unknown as SoftphoneCommands;

  const pushes = buildPushListeners(
    <N extends PushName>(name: N): PushListener<N> =>
      (cb) => {
        let set = pushListeners.get(name);
        if (!set) pushListeners.set(name, (set = new Set()));
        const listener = cb as (payload: never) => void;
        set.add(listener);
        return () => void set.delete(listener);
      },
  );

  const link: HostLink = {
    state: () => state,
    subscribe(listener) {
      stateListeners.add(listener);
      return () => void stateListeners.delete(listener);
    },
    close() {
      if (closed) return;
      closed = true;
      if (retryTimer !== undefined) clearTimeout(retryTimer);
      const s = socket;
      socket = null;
      const why = i18n.t('errors:host.closed');
      failAll(why);
      s?.close(1000, 'closing');
      setState({ status: 'unavailable', message: why });
    },
  };

  connect();
  return { api: { ...commands, ...pushes }, link };
}

/** An API that answers every command with the reason the host cannot be reached. */
export function unreachableHost(message: string): SoftphoneHost {
  const commands = Object.fromEntries(
    COMMAND_NAMES.map((name) => [name, () => Promise.resolve(err('gateway_unreachable', message))]),
  ) as unknown as SoftphoneCommands;
  const none = () => () => undefined;
  const state: HostLinkState = { status: 'unavailable', message };
  return {
    api: { ...commands, onCallChanged: none, onConnectionChanged: none, onHistoryChanged: none, onSettingsChanged: none, onPresenceChanged: none, onTeamChanged: none, onConversationChanged: none, onPreferencesChanged: none, onDialRequested: none, onShortcutPressed: none, onShortcutsRefused: none, onUpdateStatus: none, onCustomerLegQuality: none, onMonitorChanged: none },
    link: { state: () => state, subscribe: () => () => undefined, close: () => undefined },
    kind: 'browser',
  };
}

/** What the browser bridge needs from `window`: a narrow slice, so it can be tested without a DOM. */
export interface BrowserEnvironment {
  location: { href: string; host: string; protocol: string };
  history: { state: unknown; replaceState(data: unknown, unused: string, url?: string | URL | null): void };
  sessionStorage?: { getItem(key: string): string | null; setItem(key: string, value: string): void } | undefined;
}

const TOKEN_KEY = 'softphone.hostToken';

/**
 * Takes the access token from the page address (`?token=`) and removes it from the address bar,
 * so it does not linger in history or get copied along with the URL. It is kept in this tab's
 * sessionStorage so that a reload still connects.
 */
export function takeHostToken(env: BrowserEnvironment): string | null {
  const url = new URL(env.location.href);
  const fromAddress = url.searchParams.get('token');
  if (fromAddress) {
    url.searchParams.delete('token');
    env.history.replaceState(env.history.state, '', `${url.pathname}${url.search}${url.hash}`);
    try {
      env.sessionStorage?.setItem(TOKEN_KEY, fromAddress);
    } catch {
      // Storage can be disabled; the token then lasts until the next reload.
    }
    return fromAddress;
  }
  try {
    return env.sessionStorage?.getItem(TOKEN_KEY) ?? null;
  } catch {
    return null;
  }
}

export function hostSocketUrl(location: { host: string; protocol: string }, token: string): string {
  const scheme = location.protocol === 'https:' ? 'wss' : 'ws';
  return `${scheme}://${location.host}/api?token=${encodeURIComponent(token)}`;
}

/** The browser host: this page builds SoftphoneApi itself over the host's WebSocket. */
export function connectBrowserHost(env: BrowserEnvironment, options: Omit<WsBridgeOptions, 'url'> = {}): SoftphoneHost {
  if (!env.location.host || !/^https?:$/.test(env.location.protocol)) {
    return unreachableHost(i18n.t('errors:host.notServed'));
  }
  const token = takeHostToken(env);
  if (!token) {
    return unreachableHost(i18n.t('errors:host.noToken'));
  }
  const { api, link } = createWsBridge({ ...options, url: hostSocketUrl(env.location, token) });
  return { api, link, kind: 'browser' };
}

/**
 * Commands that never reject: a host that throws (a preload bug, a main-process handler that
 * threw) still yields an error value, as the contract promises (ARCHITECTURE.md).
 */
export function guardApi(api: SoftphoneApi): SoftphoneApi {
  const commands = Object.fromEntries(
    COMMAND_NAMES.map((name) => [
      name,
      async (params: unknown) => {
        try {
          const command = api[name] as ((p: unknown) => Promise<Result<unknown>>) | undefined;
          if (typeof command !== 'function') return err('internal', i18n.t('errors:host.notOffered', { command: name }));
          return await command(params);
        } catch (e) {
          log.error('a command threw instead of returning an error', { command: name, error: e });
          return err('internal', errorText(e));
        }
      },
    ]),
  ) as unknown as SoftphoneCommands;
  const pushes = buildPushListeners(
    <N extends PushName>(name: N): PushListener<N> =>
      (cb) => {
        const subscribe = api[pushListenerName(name)] as PushListener<N> | undefined;
        if (typeof subscribe !== 'function') {
          log.error('the softphone service offers no push', { push: name });
          return () => undefined;
        }
        return subscribe(cb);
      },
  );
  return { ...commands, ...pushes };
}

/**
 * The host for this window: the Electron preload's window.softphone when there is one; otherwise
 * the browser bridge, which then becomes window.softphone.
 */
export function resolveSoftphoneHost(win: Window & BrowserEnvironment = window): SoftphoneHost {
  if (win.softphone !== undefined) return { api: guardApi(win.softphone), link: permanentLink(), kind: 'electron' };
  const host = connectBrowserHost(win);
  win.softphone = host.api;
  return host;
}

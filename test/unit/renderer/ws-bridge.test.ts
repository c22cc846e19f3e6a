// The browser bridge against a real WebSocket server on 127.0.0.1, with the `ws` client standing
// in for the browser's WebSocket (same interface: the bridge uses addEventListener, send, close).
import { afterEach, describe, expect, expectTypeOf, it } from 'vitest';
import { DEFAULT_PREFERENCES } from '../../../shared/preferences';
import { DEFAULT_TEAM_SETTINGS } from '../../../shared/team-settings';
import { WebSocket, WebSocketServer } from 'ws';
import { COMMAND_NAMES, PUSH_NAMES, pushListenerName, wsClientFrameSchema, type PushMessage, type PushName, type PushPayloads, type WsServerFrame } from '../../../shared/api';
import type { HostLinkState } from '../../../renderer/bridge/host-link';
import type { SoftphoneApi, SoftphonePushes } from '../../../shared/api';
import { ANSWER_SDP, DIAL_OFFER_SDP } from '../../fixtures/sdp';
import {
  buildPushListeners,
  connectBrowserHost,
  createWsBridge,
  guardApi,
  hostSocketUrl,
  takeHostToken,
  type BrowserEnvironment,
} from '../../../renderer/bridge/ws-bridge';
import { T0, ringing, sandboxSettings } from './fixtures';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

interface TestServer {
  url: string;
  server: WebSocketServer;
  frames: unknown[];
  connections: WebSocket[];
  nextConnection(): Promise<WebSocket>;
  nextFrame(): Promise<{ id: number; command: string; params: unknown }>;
}

async function startServer(answer?: (frame: { id: number; command: string; params: unknown }, socket: WebSocket) => void): Promise<TestServer> {
  const server = new WebSocketServer({ host: '127.0.0.1', port: 0 });
  await new Promise<void>((resolve) => server.once('listening', () => resolve()));
  const frames: unknown[] = [];
  const connections: WebSocket[] = [];
  const connectionWaiters: ((s: WebSocket) => void)[] = [];
  const frameWaiters: ((f: { id: number; command: string; params: unknown }) => void)[] = [];
  server.on('connection', (socket) => {
    connections.push(socket);
    connectionWaiters.shift()?.(socket);
    socket.on('message', (data) => {
      const frame = wsClientFrameSchema.parse(JSON.parse(String(data)));
      frames.push(frame);
      const waiter = frameWaiters.shift();
      waiter?.(frame);
      answer?.(frame, socket);
    });
  });
  const { port } = server.address() as { port: number };
  cleanups.push(
    () =>
      new Promise<void>((resolve) => {
        for (const c of server.clients) c.terminate();
        server.close(() => resolve());
      }),
  );
  return {
    url: `ws://127.0.0.1:${port}/api?token=t0ken`,
    server,
    frames,
    connections,
    nextConnection: () => new Promise((resolve) => connectionWaiters.push(resolve)),
    nextFrame: () => new Promise((resolve) => frameWaiters.push(resolve)),
  };
}

const send = (socket: WebSocket, frame: WsServerFrame | Record<string, unknown> | string) => socket.send(typeof frame === 'string' ? frame : JSON.stringify(frame));

function bridge(url: string, backoff = { initialMs: 20, maxMs: 40 }, commandTimeoutMs?: number) {
  const made = createWsBridge({ url, createSocket: (u) => new WebSocket(u), backoff, ...(commandTimeoutMs ? { commandTimeoutMs } : {}) });
  cleanups.push(() => made.link.close());
  return made;
}

function waitForLink(link: { state(): HostLinkState; subscribe(cb: (s: HostLinkState) => void): () => void }, status: HostLinkState['status']): Promise<HostLinkState> {
  if (link.state().status === status) return Promise.resolve(link.state());
  return new Promise((resolve) => {
    const stop = link.subscribe((s) => {
      if (s.status === status) {
        stop();
        resolve(s);
      }
    });
  });
}

describe('the WebSocket bridge', () => {
  it('sends commands as { id, command, params } and resolves with the matching result', async () => {
    const srv = await startServer((frame, socket) => {
      if (frame.command === 'startCall') send(socket, { kind: 'result', id: frame.id, result: { ok: true, value: { localId: 'out:0a1b2c3d', to: '447700900123', callId: 'wacid.out1' } } });
      if (frame.command === 'hangUp') send(socket, { kind: 'result', id: frame.id, result: { ok: false, error: { code: 'not_found', message: 'No such call' } } });
    });
    const { api } = bridge(srv.url);
    // Sent before the socket is open: queued, then sent on open.
    const [started, hung] = await Promise.all([api.startCall({ localId: 'out:0a1b2c3d', to: '+44 7700 900123', sdp: DIAL_OFFER_SDP }), api.hangUp({ localId: 'nope' })]);
    expect(started).toEqual({ ok: true, value: { localId: 'out:0a1b2c3d', to: '447700900123', callId: 'wacid.out1' } });
    expect(hung).toEqual({ ok: false, error: { code: 'not_found', message: 'No such call' } });
    expect(srv.frames).toEqual([
      { id: 1, command: 'startCall', params: { localId: 'out:0a1b2c3d', to: '+44 7700 900123', sdp: DIAL_OFFER_SDP } },
      { id: 2, command: 'hangUp', params: { localId: 'nope' } },
    ]);
  });

  it('delivers pushes to their listeners until unsubscribed', async () => {
    const srv = await startServer();
    const connected = srv.nextConnection();
    const { api, link } = bridge(srv.url);
    const socket = await connected;
    await waitForLink(link, 'open');
    const calls: unknown[] = [];
    const connections: unknown[] = [];
    const stop = api.onCallChanged((c) => calls.push(c));
    api.onConnectionChanged((c) => connections.push(c));
    send(socket, { kind: 'push', push: { name: 'callChanged', payload: ringing() } });
    send(socket, { kind: 'push', push: { name: 'connectionChanged', payload: { status: 'connected', since: T0 } } });
    // A round trip after the pushes proves they were handled (frames arrive in order).
    const ping = srv.nextFrame().then((f) => send(socket, { kind: 'result', id: f.id, result: { ok: true, value: null } }));
    await api.reportMedia({ localId: 'x', state: 'connected' });
    await ping;
    expect(calls).toEqual([ringing()]);
    expect(connections).toEqual([{ status: 'connected', since: T0 }]);
    stop();
    send(socket, { kind: 'push', push: { name: 'callChanged', payload: ringing('other') } });
    const ping2 = srv.nextFrame().then((f) => send(socket, { kind: 'result', id: f.id, result: { ok: true, value: null } }));
    await api.reportMedia({ localId: 'x', state: 'connected' });
    await ping2;
    expect(calls).toHaveLength(1);
  });

  it('ignores malformed frames and keeps working', async () => {
    const srv = await startServer((frame, socket) => {
      send(socket, 'not json');
      send(socket, { kind: 'shout', id: frame.id });
      send(socket, { kind: 'push', push: { name: 'somethingElse', payload: {} } });
      send(socket, { kind: 'result', id: frame.id, result: { maybe: true } });
      send(socket, { kind: 'result', id: frame.id, result: { ok: false, error: { code: 'teapot', message: 'I am a teapot', gatewayCode: 418 } } });
    });
    const { api } = bridge(srv.url);
    const result = await api.declineCall({ localId: 'in:1' });
    // An unknown code arrives as `internal`, keeping the message and the known extra fields.
    expect(result).toEqual({ ok: false, error: { code: 'internal', message: 'I am a teapot', gatewayCode: 418 } });
  });

  it('carries the warnings a send waits to have confirmed', async () => {
    const confirm = ['MP4: H.264 High with B-frames: does not play on Android'];
    const srv = await startServer((frame, socket) => {
      send(socket, { kind: 'result', id: frame.id, result: { ok: false, error: { code: 'needs_confirmation', message: 'not sent yet', field: 'content.video.link', confirm, extra: 'dropped' } } });
    });
    const { api } = bridge(srv.url);
    const result = await api.sendMessage({ to: '12025550101', content: { type: 'video', video: { link: 'https://e.com/a.mp4' } } });
    expect(result).toEqual({ ok: false, error: { code: 'needs_confirmation', message: 'not sent yet', field: 'content.video.link', confirm } });
  });

  it('sends the confirmed warnings as they were shown, and carries a media refusal placed on its field with its detail', async () => {
    const confirmed = ['H.264 High profile with B-frames does not play on Android: re-encode it in the Main or Baseline profile without B-frames (ffmpeg: -profile:v main -bf 0)'];
    const refusal = {
      code: 'gateway_error',
      message: 'content.image.id: unknown media id "1900000000000099": the account has no uploaded media with this id',
      field: 'content.image.id',
      gatewayCode: 131053,
      httpStatus: 400,
      detail: '(#131053) Media upload error {"details":"image.id: unknown media id \\"1900000000000099\\": the account has no uploaded media with this id"}',
    };
    const srv = await startServer((frame, socket) => send(socket, { kind: 'result', id: frame.id, result: { ok: false, error: refusal } }));
    const { api } = bridge(srv.url);
    const content = { type: 'image' as const, image: { id: '1900000000000099' } };
    expect(await api.sendMessage({ to: '12025550101', content, confirmed })).toEqual({ ok: false, error: refusal });
    expect(srv.frames).toEqual([{ id: expect.any(Number), command: 'sendMessage', params: { to: '12025550101', content, confirmed } }]);
  });

  it('fails commands in flight when the socket drops, reconnects, and reports the way back', async () => {
    const srv = await startServer();
    const first = srv.nextConnection();
    const { api, link } = bridge(srv.url);
    const seen: HostLinkState['status'][] = [];
    link.subscribe((s) => seen.push(s.status));
    const socket = await first;
    await waitForLink(link, 'open');

    const sent = srv.nextFrame();
    const pending = api.answerCall({ localId: 'in:1', sdp: ANSWER_SDP });
    await sent;
    const second = srv.nextConnection();
    socket.terminate();
    const result = await pending;
    expect(result.ok).toBe(false);
    expect(!result.ok && result.error.code).toBe('gateway_unreachable');

    await second;
    await waitForLink(link, 'open');
    expect(seen).toEqual(['open', 'reconnecting', 'open']);
  });

  it('fails at once while waiting to reconnect, instead of leaving a button hanging', async () => {
    const srv = await startServer();
    const first = srv.nextConnection();
    const { api, link } = bridge(srv.url, { initialMs: 60_000, maxMs: 60_000 });
    const socket = await first;
    await waitForLink(link, 'open');
    socket.terminate();
    const state = await waitForLink(link, 'reconnecting');
    expect(state.status === 'reconnecting' && state.lastError).toMatch(/closed/);
    const result = await api.getSnapshot({});
    expect(!result.ok && result.error.code).toBe('gateway_unreachable');
  });

  it('gives a command up as timeout when the host never answers it', async () => {
    const srv = await startServer();
    const { api } = bridge(srv.url, undefined, 50);
    const result = await api.getSnapshot({});
    expect(result).toEqual({ ok: false, error: { code: 'timeout', message: 'The softphone service did not answer getSnapshot in time' } });
  });

  it('keeps retrying while nothing listens', async () => {
    const srv = await startServer();
    const url = srv.url;
    await new Promise<void>((resolve) => srv.server.close(() => resolve()));
    const { link } = bridge(url, { initialMs: 5, maxMs: 10 });
    const state = await new Promise<HostLinkState>((resolve) => {
      const stop = link.subscribe((s) => {
        if (s.status === 'reconnecting' && s.attempt >= 3) {
          stop();
          resolve(s);
        }
      });
    });
    expect(state.status).toBe('reconnecting');
  });
});

/** One payload per push, typed by the contract: a new push does not compile here until it has one. */
const PUSH_SAMPLES: { [N in PushName]: PushPayloads[N] } = {
  callChanged: ringing(),
  connectionChanged: { status: 'reconnecting', since: T0, lastError: 'relay restarted' },
  historyChanged: [{ localId: 'in:wacid.1', callId: 'wacid.1', direction: 'incoming', number: '447700900123', outcome: 'completed', startedAt: T0, endedAt: T0 + 10_000, durationSec: 7 }],
  settingsChanged: sandboxSettings,
  presenceChanged: { choice: 'available', status: 'on_call' },
  teamChanged: { role: 'supervisor', settings: { ...DEFAULT_TEAM_SETTINGS, breakReasons: ['Lunch', 'Coaching'], dispositionRequired: true } },
  preferencesChanged: { ...DEFAULT_PREFERENCES, quitOnClose: true },
  dialRequested: { number: '447700900123', dial: false },
  shortcutPressed: { action: 'decline', localId: 'in:wacid.1' },
  shortcutsRefused: { refused: [{ action: 'decline', accelerator: 'Ctrl+Shift+D' }] },
  updateStatus: { kind: 'ready', version: '1.2.0' },
  customerLegQuality: { localId: 'in:wacid.1', callId: 'wacid.1', report: { state: 'connected', packetsReceived: 500, packetsLost: 12, jitterMs: 4, roundTripMs: 80, lastPacketAt: T0 } },
  monitorChanged: { callId: 'wacid.1', mode: 'left', reason: 'call_ended' },
  conversationChanged: {
    contact: '447700900123',
    name: 'Amelia Hart',
    window: { open: true, closesAt: T0 + 86_400_000, lastInboundAt: T0 },
    messages: [{ id: 'wamid.in1', direction: 'inbound', kind: 'text', summary: 'Hello', at: T0 }],
    lastActivityAt: T0,
    revision: 3,
  },
};
const pushFrame = (name: PushName): WsServerFrame => ({ kind: 'push', push: { name, payload: PUSH_SAMPLES[name] } as PushMessage });

describe('the push listeners', () => {
  it('are exactly one onX per name in PUSH_NAMES, beside one function per command', async () => {
    const srv = await startServer();
    const { api } = bridge(srv.url);
    expect(Object.keys(api).sort()).toEqual([...COMMAND_NAMES, ...PUSH_NAMES.map(pushListenerName)].sort());
    for (const value of Object.values(api)) expect(typeof value).toBe('function');
    expect(Object.keys(guardApi(api)).sort()).toEqual(Object.keys(api).sort());
    expectTypeOf(buildPushListeners).returns.toEqualTypeOf<SoftphonePushes>();
  });

  it('deliver every push a real server sends to its own listener only, directly and through guardApi', async () => {
    const srv = await startServer((frame, socket) => send(socket, { kind: 'result', id: frame.id, result: { ok: true, value: null } }));
    const connected = srv.nextConnection();
    const { api, link } = bridge(srv.url);
    const socket = await connected;
    await waitForLink(link, 'open');
    const guarded = guardApi(api);
    const seen: { via: string; name: PushName; payload: unknown }[] = [];
    for (const name of PUSH_NAMES) {
      const key = pushListenerName(name);
      for (const [via, host] of [['bridge', api], ['guard', guarded]] as const) {
        (host[key] as (cb: (payload: unknown) => void) => () => void)((payload) => seen.push({ via, name, payload }));
      }
    }
    for (const name of PUSH_NAMES) send(socket, pushFrame(name));
    // A round trip after the pushes proves they were all handled (frames arrive in order).
    await api.reportMedia({ localId: 'x', state: 'connected' });
    expect(seen).toEqual(PUSH_NAMES.flatMap((name) => ['bridge', 'guard'].map((via) => ({ via, name, payload: PUSH_SAMPLES[name] }))));
    expect(seen).toHaveLength(2 * Object.keys(PUSH_SAMPLES).length);
  });

  it('each stop only its own subscription', async () => {
    const srv = await startServer((frame, socket) => send(socket, { kind: 'result', id: frame.id, result: { ok: true, value: null } }));
    const connected = srv.nextConnection();
    const { api, link } = bridge(srv.url);
    const socket = await connected;
    await waitForLink(link, 'open');
    const kept: PushName[] = [];
    const stopped: PushName[] = [];
    for (const name of PUSH_NAMES) {
      const listen = api[pushListenerName(name)] as (cb: (payload: unknown) => void) => () => void;
      listen(() => kept.push(name));
      listen(() => stopped.push(name))();
    }
    for (const name of PUSH_NAMES) send(socket, pushFrame(name));
    send(socket, { kind: 'push', push: { name: 'historyChanged', payload: [] } });
    await api.reportMedia({ localId: 'x', state: 'connected' });
    expect(kept).toEqual([...PUSH_NAMES, 'historyChanged']);
    expect(stopped).toEqual([]);
  });
});

describe('the browser host address', () => {
  function env(href: string) {
    const replaced: string[] = [];
    const storage = new Map<string, string>();
    const e: BrowserEnvironment = {
      location: new URL(href),
      history: { state: null, replaceState: (_d, _u, url) => void replaced.push(String(url)) },
      sessionStorage: { getItem: (k) => storage.get(k) ?? null, setItem: (k, v) => void storage.set(k, v) },
    };
    return { e, replaced, storage };
  }

  it('takes the token from the address and removes it from the address bar', () => {
    const { e, replaced } = env('http://127.0.0.1:5173/?token=s3cret&view=x#top');
    expect(takeHostToken(e)).toBe('s3cret');
    expect(replaced).toEqual(['/?view=x#top']);
  });

  it('still has the token after a reload of the cleaned address', () => {
    const first = env('http://127.0.0.1:5173/?token=s3cret');
    takeHostToken(first.e);
    const reloaded: BrowserEnvironment = { ...first.e, location: new URL('http://127.0.0.1:5173/') };
    expect(takeHostToken(reloaded)).toBe('s3cret');
  });

  it('builds ws:// or wss:// to /api on the page host', () => {
    expect(hostSocketUrl({ protocol: 'http:', host: '127.0.0.1:5173' }, 'a b')).toBe('ws://127.0.0.1:5173/api?token=a%20b');
    expect(hostSocketUrl({ protocol: 'https:', host: 'phone.local' }, 't')).toBe('wss://phone.local/api?token=t');
  });

  it('says why it cannot connect without a token or outside http', async () => {
    const noToken = connectBrowserHost(env('http://127.0.0.1:5173/').e);
    expect(noToken.link.state()).toEqual({ status: 'unavailable', message: expect.stringMatching(/access token/) });
    const fromFile = connectBrowserHost({ ...env('http://127.0.0.1/').e, location: { href: 'file:///x/index.html', host: '', protocol: 'file:' } });
    expect(fromFile.link.state().status).toBe('unavailable');
    const result = await noToken.api.startCall({ localId: 'out:0a1b2c3d', to: '1', sdp: DIAL_OFFER_SDP });
    expect(!result.ok && result.error.code).toBe('gateway_unreachable');
  });
});

describe('guardApi', () => {
  it('turns a command that throws or is missing into an error value', async () => {
    const partial = {
      getSnapshot: () => {
        throw new Error('handler exploded');
      },
      hangUp: () => Promise.reject(new Error('ipc failed')),
      onCallChanged: () => () => undefined,
    } as unknown as SoftphoneApi;
    const api = guardApi(partial);
    expect(await api.getSnapshot({})).toEqual({ ok: false, error: { code: 'internal', message: 'handler exploded' } });
    expect(await api.hangUp({ localId: 'x' })).toEqual({ ok: false, error: { code: 'internal', message: 'ipc failed' } });
    expect(await api.answerCall({ localId: 'x', sdp: ANSWER_SDP })).toEqual({ ok: false, error: { code: 'internal', message: 'The softphone service does not offer answerCall' } });
    expect(typeof api.onHistoryChanged(() => undefined)).toBe('function');
  });
});

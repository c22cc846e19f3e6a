// The window in a page of its own for Chromium (window-in-chromium.ts bundles it): the real App, its
// domains, store and styles, on an in-page host whose answers the test gives. For what only a real
// browser shows (a modal dialog's focus, Escape, the top layer) and for looking at the window. The
// host answers as fake-api.ts does: a command the test did not answer is `not_available`.
import { createElement } from 'react';
import { createRoot } from 'react-dom/client';
import type { AppSnapshot, SoftphoneApi } from '../../../shared/api';
import type { Result } from '../../../shared/result';
import type { UiLanguage } from '../../../shared/i18n/languages';
import { App } from '../../../renderer/app/App';
import type { MediaControls } from '../../../renderer/app/call-actions';
import { createControllers } from '../../../renderer/app/controllers';
import { ControllersContext } from '../../../renderer/app/controllers-context';
import { RingAlerts, type RingtoneControl } from '../../../renderer/app/ring-alerts';
import { permanentLink } from '../../../renderer/bridge/host-link';
import type { MonitorControls } from '../../../renderer/app/monitor-actions';
import type { MonitorFact } from '../../../renderer/webrtc/monitor-media';
import { mediaFailure, mediaProblem } from '../../../renderer/webrtc/media-text';
import { RingAlertsContext } from '../../../renderer/components/RingAlerts';
import { setUiLanguage } from '../../../renderer/i18n/i18n';
import { alertsStore } from '../../../renderer/store/alerts';
import { appStore } from '../../../renderer/store/store';

/** What the test reaches in the page (`window.__host`). */
export interface PageHost {
  /** Renders the window on this first snapshot. */
  start(snapshot: AppSnapshot, language?: UiLanguage): Promise<void>;
  /** Every later call of the command gets this answer. */
  answer(name: string, result: Result<unknown>): void;
  /** Every later call of the command waits until `settle` answers it. */
  defer(name: string): void;
  /** Answers the oldest waiting call of the command; false when none waits. */
  settle(name: string, result: Result<unknown>): boolean;
  /** Delivers a push as the main process would. */
  push(name: string, payload: unknown): void;
  /** Every command so far, in order. */
  commands: { name: string; params: unknown }[];
  /** What the supervisor's leg was asked, in order: "answer CALLID LEGID MODE", "connect LEGID", "mode MODE", "close". */
  monitorLog: string[];
  /** The supervisor's leg says it connected or failed. */
  monitorFact(fact: MonitorFact): void;
  /** The microphone of a rejoining call's new leg cannot be opened from now on (true), or can again (false). */
  refuseRejoinMicrophone(refused: boolean): void;
  /** Every rejoining call's answer asked of the media, in order: "LOCALID" or "LOCALID again". */
  rejoinAnswers: string[];
}

const fixed = new Map<string, Result<unknown>>();
const deferred = new Set<string>();
const waiting = new Map<string, Array<(result: Result<unknown>) => void>>();
const listeners = new Map<string, Set<(payload: unknown) => void>>();
const commands: PageHost['commands'] = [];

const listenersOf = (name: string): Set<(payload: unknown) => void> => {
  let set = listeners.get(name);
  if (!set) listeners.set(name, (set = new Set()));
  return set;
};

const api = new Proxy({} as SoftphoneApi, {
  get(_target, key) {
    if (typeof key !== 'string') return undefined;
    if (key.startsWith('on')) {
      return (cb: (payload: unknown) => void) => {
        listenersOf(key).add(cb);
        return () => listenersOf(key).delete(cb);
      };
    }
    return (params: unknown): Promise<Result<unknown>> => {
      commands.push({ name: key, params });
      if (deferred.has(key)) {
        return new Promise((resolve) => {
          const queue = waiting.get(key) ?? [];
          queue.push(resolve);
          waiting.set(key, queue);
        });
      }
      return Promise.resolve(fixed.get(key) ?? { ok: false, error: { code: 'not_available', message: `${key} is not part of this page` } });
    };
  },
});

/** A refused microphone, as the media engine says it. */
const MIC_REFUSED = mediaFailure('media_failed', mediaProblem('micDenied'));
let rejoinMicRefused = false;
const rejoinAnswers: string[] = [];

/** No media in this page: calls are what the host pushes. */
const engine: MediaControls = {
  onCall: () => undefined,
  reconcile: () => undefined,
  answerFor: async () => ({ ok: true, value: { sdp: 'v=0\r\n' } }),
  rejoinAnswerFor: async (call, again) => {
    rejoinAnswers.push(again === true ? `${call.localId} again` : call.localId);
    return rejoinMicRefused ? MIC_REFUSED : { ok: true, value: { sdp: 'v=0\r\n' } };
  },
  closeRejoinLeg: () => undefined,
  ringLegOf: async () => undefined,
  answerRingLegAgain: () => false,
  warmRingLeg: () => undefined,
  prepareOutgoing: async () => ({ ok: true, value: { sdp: 'v=0\r\n' } }),
  onFact: () => () => undefined,
  onCondition: () => () => undefined,
  onCallQuality: () => () => undefined,
  onNotice: () => () => undefined,
  noteTiming: () => undefined,
  close: () => undefined,
  closeAll: () => undefined,
  sendDtmf: () => false,
  has: () => false,
  levels: async () => ({ mic: 0, customer: 0 }),
  customerLegQuality: () => undefined,
};

/** The supervisor's leg of a joined call: answers every offer, keeps a log of what it is asked. */
const monitorLog: string[] = [];
const monitorListeners = new Set<(fact: MonitorFact) => void>();
let monitorLeg: { callId: string; legId: string } | undefined;
const monitorMedia: MonitorControls = {
  answer: async (callId, legId, _offer, mode) => {
    monitorLog.push(`answer ${callId} ${legId} ${mode}`);
    monitorLeg = { callId, legId };
    return { ok: true, value: { sdp: 'v=0\r\n' } };
  },
  connect: (legId) => void monitorLog.push(`connect ${legId}`),
  setMode: (mode) => void monitorLog.push(`mode ${mode}`),
  close: () => {
    if (monitorLeg) monitorLog.push('close');
    monitorLeg = undefined;
  },
  legOf: (callId) => (monitorLeg?.callId === callId ? monitorLeg.legId : undefined),
  onFact: (listener) => {
    monitorListeners.add(listener);
    return () => monitorListeners.delete(listener);
  },
};

/** A ringtone that plays whenever asked: no "Enable sound" in this page. */
const ringtone: RingtoneControl = {
  state: () => 'playing',
  onStateChange: () => () => undefined,
  wanted: false,
  playing: true,
  contextState: () => 'running',
  recover: () => undefined,
  unlock: async () => true,
  setCallWaiting: () => undefined,
};

const host: PageHost = {
  async start(snapshot, language = 'en') {
    fixed.set('getSnapshot', { ok: true, value: snapshot });
    await setUiLanguage(language);
    const softphone = createControllers({ api, link: permanentLink(), store: appStore, engine, monitorMedia, hostKind: 'electron' });
    softphone.start();
    const ringAlerts = new RingAlerts({ store: appStore, alerts: alertsStore, ringtone, host: 'electron', env: { document, window, Notification: undefined } });
    ringAlerts.start();
    const root = document.getElementById('root');
    if (!root) throw new Error('the page has no #root');
    createRoot(root).render(
      createElement(ControllersContext.Provider, { value: softphone.controllers }, createElement(RingAlertsContext.Provider, { value: ringAlerts }, createElement(App))),
    );
  },
  answer: (name, result) => {
    deferred.delete(name);
    fixed.set(name, result);
  },
  defer: (name) => void deferred.add(name),
  settle: (name, result) => {
    const next = waiting.get(name)?.shift();
    next?.(result);
    return next !== undefined;
  },
  push: (name, payload) => {
    const listener = `on${name[0]?.toUpperCase() ?? ''}${name.slice(1)}`;
    for (const cb of [...listenersOf(listener)]) cb(payload);
  },
  commands,
  monitorLog,
  monitorFact: (fact) => {
    for (const listener of [...monitorListeners]) listener(fact);
  },
  refuseRejoinMicrophone: (refused) => void (rejoinMicRefused = refused),
  rejoinAnswers,
};

(window as unknown as { __host: PageHost }).__host = host;

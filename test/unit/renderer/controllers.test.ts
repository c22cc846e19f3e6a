// The renderer's domains as main.tsx builds them: pushes and snapshots reach the store through host
// sync, calls (and a bridged call's customer leg) go on to the media engine through the calls domain,
// the customer of a call the agent takes on becomes the contact in view, and stopping undoes every
// subscription.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { Unsubscribe } from '../../../shared/api';
import type { LegReport } from '../../../shared/bridge';
import type { CallState } from '../../../shared/call-state';
import { ok } from '../../../shared/result';
import { createControllers } from '../../../renderer/app/controllers';
import type { HostLink, HostLinkState } from '../../../renderer/bridge/host-link';
import { appStore, resetStore } from '../../../renderer/store/store';
import { fakeApi, type Answers } from './fake-api';
import { T0, active, idleMediaControls, ringing, sandboxSettings, snapshot } from './fixtures';

const ADA = '447700900123';
const JONAS = '14155550123';

/** A media engine that only records what it is told; these tests make no media. */
function recordingEngine() {
  const followed: CallState[] = [];
  const reconciled: string[][] = [];
  const customerLegs: { localId: string; report: LegReport }[] = [];
  let closedAll = 0;
  const engine = idleMediaControls({
    onCall: (call) => void followed.push(call),
    reconcile: (calls) => void reconciled.push(calls.map((c) => c.localId)),
    closeAll: () => void closedAll++,
    customerLegQuality: (localId, report) => void customerLegs.push({ localId, report }),
  });
  return { engine, followed, reconciled, customerLegs, closedAll: () => closedAll };
}

/** A host link a test can drop and bring back. */
function switchableLink(initial: HostLinkState): HostLink & { set(state: HostLinkState): void } {
  let current = initial;
  const listeners = new Set<(state: HostLinkState) => void>();
  return {
    state: () => current,
    subscribe: (listener) => {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    close: () => undefined,
    set: (state) => {
      current = state;
      for (const listener of listeners) listener(state);
    },
  };
}

function ringtoneLog() {
  const events: string[] = [];
  return { ringtone: { start: () => void events.push('start'), stop: () => void events.push('stop') }, events };
}

const state = () => appStore.getState();
const settle = () => new Promise((resolve) => setTimeout(resolve, 0));

const stops: Unsubscribe[] = [];

function startWith(answers: Answers, link: HostLink = switchableLink({ status: 'open' })) {
  const host = fakeApi({ getConversation: ({ contact }) => ok({ contact, window: { open: false }, messages: [], lastActivityAt: T0, revision: 1 }), ...answers });
  const media = recordingEngine();
  const sound = ringtoneLog();
  const softphone = createControllers({ api: host.api, link, store: appStore, engine: media.engine, ringtone: sound.ringtone });
  const stop = softphone.start();
  stops.push(stop);
  return { ...host, ...media, ...sound, softphone, stop };
}

describe('the composition root', () => {
  beforeEach(() => resetStore());
  afterEach(() => {
    for (const stop of stops.splice(0)) stop();
  });

  it('loads the snapshot while the host is reachable and has the media engine follow its calls', async () => {
    const { reconciled, calls, events } = startWith({ getSnapshot: () => ok(snapshot([ringing('wacid.1')])) });
    expect(calls.map((c) => c.name)).toEqual(['getSnapshot']);
    await settle();
    expect(Object.keys(state().calls)).toEqual(['in:wacid.1']);
    expect(reconciled).toEqual([['in:wacid.1']]);
    // The snapshot's ringing call rings, once the render is over.
    await settle();
    expect(events.at(-1)).toBe('start');
  });

  it('takes a fresh snapshot after the host link comes back, and shows the link', async () => {
    const link = switchableLink({ status: 'connecting' });
    const { calls } = startWith({ getSnapshot: () => ok(snapshot()) }, link);
    expect(state().hostLink).toEqual({ status: 'connecting' });
    expect(calls).toEqual([]);
    link.set({ status: 'open' });
    link.set({ status: 'open' });
    expect(calls.map((c) => c.name)).toEqual(['getSnapshot']);
    link.set({ status: 'reconnecting', attempt: 1, retryAt: T0, lastError: 'closed' });
    expect(state().hostLink.status).toBe('reconnecting');
    link.set({ status: 'open' });
    expect(calls.map((c) => c.name)).toEqual(['getSnapshot', 'getSnapshot']);
  });

  it('a call push reaches the store and the media engine, and its customer becomes the contact in view once', async () => {
    const { push, followed, calls } = startWith({ getSnapshot: () => ok(snapshot()) });
    await settle();
    state().selectContact(JONAS);
    push('callChanged', active('wacid.7', T0));
    expect(state().calls['in:wacid.7']?.phase).toBe('active');
    expect(followed.map((c) => [c.localId, c.phase])).toEqual([['in:wacid.7', 'active']]);
    expect(state().selectedContact).toBe(ADA);
    await settle();
    expect(calls.at(-1)).toEqual({ name: 'getConversation', params: { contact: ADA } });
    expect(state().conversations[ADA]?.contact).toBe(ADA);
    // The same call again: the agent's choice stays.
    state().selectContact(JONAS);
    push('callChanged', active('wacid.7', T0));
    expect(state().selectedContact).toBe(JONAS);
    expect(followed).toHaveLength(2);
  });

  it('drops a malformed push before it reaches the store or the media engine', async () => {
    const { push, followed } = startWith({ getSnapshot: () => ok(snapshot()) });
    await settle();
    push('callChanged', { ...active('wacid.8', T0), phase: 'levitating' });
    push('connectionChanged', { status: 'reconnecting', since: T0 });
    expect(state().calls['in:wacid.8']).toBeUndefined();
    expect(followed).toEqual([]);
    push('connectionChanged', { status: 'connected', since: T0 + 5 });
    expect(state().service).toEqual({ status: 'connected', since: T0 + 5 });
  });

  it('a bridged call’s customer leg, pushed by main, reaches that call’s media; a malformed one does not', async () => {
    const { push, customerLegs, listeners } = startWith({ getSnapshot: () => ok(snapshot([active('wacid.7')])) });
    await settle();
    const report: LegReport = { state: 'connected', packetsReceived: 440, packetsLost: 60, jitterMs: 12, roundTripMs: 90, lastPacketAt: T0 };
    push('customerLegQuality', { localId: 'in:wacid.7', callId: 'wacid.7', report });
    push('customerLegQuality', { localId: 'in:wacid.7', callId: 'wacid.7', report: { ...report, packetsLost: -1 } });
    push('customerLegQuality', { localId: 'in:wacid.7', report });
    expect(customerLegs).toEqual([{ localId: 'in:wacid.7', report }]);
    expect(listeners('customerLegQuality')).toBe(1);
  });

  it('a settings push updates the settings and takes a fresh snapshot', async () => {
    const { push, calls } = startWith({ getSnapshot: () => ok(snapshot()) });
    await settle();
    push('settingsChanged', sandboxSettings);
    expect(state().settings).toEqual(sandboxSettings);
    expect(calls.map((c) => c.name)).toEqual(['getSnapshot', 'getSnapshot']);
  });

  it('the sandbox shows the customer who wrote when no contact is in view', async () => {
    const { softphone, calls } = startWith({ getSnapshot: () => ok(snapshot()), simulateInboundMessage: () => ok({ messageId: 'wamid.in' }) });
    await settle();
    state().setSandboxSelection(ADA);
    state().setSandboxMessage('Hello?');
    await softphone.controllers.sandbox.simulateInboundMessage();
    expect(calls.find((c) => c.name === 'simulateInboundMessage')?.params).toEqual({ number: ADA, text: 'Hello?' });
    expect(state().selectedContact).toBe(ADA);
    expect(state().sandboxMessage).toBe('');
  });

  it('stopping unsubscribes everything, silences the ringtone and releases the media', async () => {
    const { push, listeners, stop, closedAll, events, followed } = startWith({ getSnapshot: () => ok(snapshot()) });
    await settle();
    push('callChanged', ringing('wacid.9'));
    await settle();
    expect(events.at(-1)).toBe('start');
    stop();
    expect(listeners('callChanged')).toBe(0);
    expect(listeners('settingsChanged')).toBe(0);
    expect(listeners('customerLegQuality')).toBe(0);
    expect(closedAll()).toBe(1);
    expect(events.at(-1)).toBe('stop');
    push('callChanged', active('wacid.9'));
    expect(followed).toHaveLength(1);
  });

  it('polls the levels only while started', async () => {
    vi.useFakeTimers();
    try {
      const { stop } = startWith({ getSnapshot: () => ok(snapshot()) });
      state().setLevels({ mic: 0.5, customer: 0.5 });
      await vi.advanceTimersByTimeAsync(250);
      // No call has media: the meters fall to zero.
      expect(state().levels).toEqual({ mic: 0, customer: 0 });
      stop();
      state().setLevels({ mic: 0.5, customer: 0.5 });
      await vi.advanceTimersByTimeAsync(1000);
      expect(state().levels).toEqual({ mic: 0.5, customer: 0.5 });
    } finally {
      vi.useRealTimers();
    }
  });
});

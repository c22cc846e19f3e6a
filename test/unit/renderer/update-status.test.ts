// The renderer's edge and store for the update status: what the updateStatus push and the snapshot
// carry is parsed before it lands, and "Restart to update" is offered only when it can work.
import { beforeEach, describe, expect, it } from 'vitest';
import { parsePush, parseSnapshot } from '../../../renderer/bridge/payload-schemas';
import { offersRestart, resetUpdateStatusStore, updateStatusStore } from '../../../renderer/store/updates';

const SNAPSHOT = {
  mode: 'sandbox',
  calls: [],
  history: [],
  connection: { status: 'connected', since: 1 },
  settings: {
    mode: 'sandbox',
    productSegment: 'chatapp',
    hasApiKey: false,
    hasAgentToken: false,
    secretStorage: 'memory',
    network: { servers: [], hasTurnPassword: false, relayOnly: false, fromCommandLine: false, relayTurn: 'unknown' },
  },
};

describe('the update status at the renderer’s edge', () => {
  beforeEach(() => resetUpdateStatusStore());

  it('takes a well-formed push and snapshot, and drops a malformed one', () => {
    expect(parsePush('updateStatus', { kind: 'ready', version: '1.2.0' })).toEqual({ ok: true, value: { kind: 'ready', version: '1.2.0' } });
    expect(parsePush('updateStatus', { kind: 'ready' }).ok).toBe(false);
    expect(parsePush('updateStatus', { kind: 'restarting' }).ok).toBe(false);
    const snapshot = parseSnapshot({ ...SNAPSHOT, updateStatus: { kind: 'unsupported', reason: 'browser' } });
    expect(snapshot.ok && snapshot.value.updateStatus).toEqual({ kind: 'unsupported', reason: 'browser' });
    expect(parseSnapshot({ ...SNAPSHOT, updateStatus: { kind: 'downloading', version: '1', percent: -1 } }).ok).toBe(false);
  });

  it('offers "Restart to update" once an update is ready and no call is live', () => {
    expect(updateStatusStore.getState().status).toBeUndefined();
    updateStatusStore.getState().setStatus({ kind: 'ready', version: '1.2.0' });
    const status = updateStatusStore.getState().status;
    expect(offersRestart(status, false)).toBe(true);
    expect(offersRestart(status, true)).toBe(false);
    expect(offersRestart({ kind: 'downloading', version: '1.2.0', percent: 50 }, false)).toBe(false);
    expect(offersRestart(undefined, false)).toBe(false);
  });
});

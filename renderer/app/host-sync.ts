// Keeps the store in step with the host: the pushes (checked at the edge with payload-schemas.ts),
// the host link, and a fresh snapshot whenever pushes may have been missed. Calls go to the store
// first and then to the calls domain, which has the media engine follow them.
import type { PushName, PushPayloads, SoftphoneApi, Unsubscribe } from '../../shared/api';
import { isBusy, type CallState } from '../../shared/call-state';
import { createLogger } from '../../shared/log';
import type { StoreApi } from 'zustand/vanilla';
import type { HostLink, HostLinkState } from '../bridge/host-link';
import { parsePush, parseSnapshot } from '../bridge/payload-schemas';
import type { AppState } from '../store/store';
import type { UpdateStatus } from '../../shared/updates';
import type { CallActions } from './call-actions';

const log = createLogger('host-sync');

/** The phases in which a call is the agent's current work: its customer becomes the contact in view. */

export interface HostSyncDeps {
  api: Pick<
    SoftphoneApi,
    | 'getSnapshot'
    | 'onCallChanged'
    | 'onConnectionChanged'
    | 'onHistoryChanged'
    | 'onPresenceChanged'
    | 'onTeamChanged'
    | 'onConversationChanged'
    | 'onSettingsChanged'
    | 'onPreferencesChanged'
    | 'onDialRequested'
    | 'onUpdateStatus'
    | 'onCustomerLegQuality'
  >;
  link: HostLink;
  store: StoreApi<AppState>;
  calls: Pick<CallActions, 'callChanged' | 'callsReloaded' | 'dialRequested' | 'customerLegQuality'>;
  /** The messages domain's: the customer of a call the agent takes on becomes the contact in view. */
  selectContact: (contact: string) => void;
  /** Where the update status goes (store/updates.ts). */
  setUpdateStatus: (status: UpdateStatus) => void;
}

export class HostSync {
  private readonly api: HostSyncDeps['api'];
  private readonly link: HostLink;
  private readonly store: StoreApi<AppState>;
  private readonly calls: HostSyncDeps['calls'];
  private readonly selectContact: (contact: string) => void;
  private readonly setUpdateStatus: (status: UpdateStatus) => void;
  private snapshotRequest = 0;

  constructor(deps: HostSyncDeps) {
    this.api = deps.api;
    this.link = deps.link;
    this.store = deps.store;
    this.calls = deps.calls;
    this.selectContact = deps.selectContact;
    this.setUpdateStatus = deps.setUpdateStatus;
  }

  private get state(): AppState {
    return this.store.getState();
  }

  /** Subscribes to every push and the host link, and loads the first snapshot once the host is reachable. */
  start(): Unsubscribe {
    const stops: Unsubscribe[] = [];
    const onPush = <N extends PushName>(name: N, apply: (payload: PushPayloads[N]) => void) => (payload: unknown) => {
      const parsed = parsePush(name, payload);
      if (!parsed.ok) {
        log.warn('dropped a malformed push', { push: name, problem: parsed.error.message });
        return;
      }
      apply(parsed.value);
    };
    stops.push(this.api.onCallChanged(onPush('callChanged', (call) => this.applyCall(call))));
    stops.push(this.api.onConnectionChanged(onPush('connectionChanged', (c) => this.state.setService(c))));
    stops.push(this.api.onHistoryChanged(onPush('historyChanged', (h) => this.state.setHistory(h))));
    stops.push(this.api.onPresenceChanged(onPush('presenceChanged', (p) => this.state.setPresence(p))));
    stops.push(this.api.onTeamChanged(onPush('teamChanged', (team) => this.state.setTeam(team))));
    stops.push(this.api.onConversationChanged(onPush('conversationChanged', (c) => this.state.applyConversation(c))));
    stops.push(this.api.onPreferencesChanged(onPush('preferencesChanged', (p) => this.state.setPreferences(p))));
    stops.push(this.api.onDialRequested(onPush('dialRequested', (request) => void this.calls.dialRequested(request))));
    stops.push(this.api.onUpdateStatus(onPush('updateStatus', (status) => this.setUpdateStatus(status))));
    stops.push(this.api.onCustomerLegQuality(onPush('customerLegQuality', (quality) => this.calls.customerLegQuality(quality))));
    stops.push(
      this.api.onSettingsChanged(
        onPush('settingsChanged', (settings) => {
          this.state.setSettings(settings);
          // The mode, the sandbox customers and the calls may all have changed with it.
          void this.refreshSnapshot();
        }),
      ),
    );

    let previous: HostLinkState['status'] = this.link.state().status;
    this.state.setHostLink(this.link.state());
    stops.push(
      this.link.subscribe((linkState) => {
        this.state.setHostLink(linkState);
        // After a (re)connect the pushes sent meanwhile are lost: the snapshot is the truth again.
        if (linkState.status === 'open' && previous !== 'open') void this.refreshSnapshot();
        previous = linkState.status;
      }),
    );
    if (previous === 'open') void this.refreshSnapshot();

    return () => {
      for (const stop of stops.splice(0)) stop();
    };
  }

  async refreshSnapshot(): Promise<void> {
    const request = ++this.snapshotRequest;
    const result = await this.api.getSnapshot({});
    if (request !== this.snapshotRequest) return; // a newer request is on its way
    if (!result.ok) {
      this.state.setSnapshotError({ kind: 'refused', error: result.error });
      return;
    }
    const snapshot = parseSnapshot(result.value);
    if (!snapshot.ok) {
      log.error('the snapshot was malformed', { problem: snapshot.error.message });
      this.state.setSnapshotError({ kind: 'unreadable' });
      return;
    }
    this.state.applySnapshot(snapshot.value);
    if (snapshot.value.updateStatus) this.setUpdateStatus(snapshot.value.updateStatus);
    this.calls.callsReloaded(Object.values(this.state.calls));
  }

  applyCall(call: CallState): void {
    const before = this.state.calls[call.localId];
    const merged = this.state.applyCall(call);
    this.calls.callChanged(merged);
    // The customer of a call the agent takes on becomes the contact in view (once, so that the
    // agent may look at another contact during the call).
    const number = merged.peer.number;
    if (number !== undefined && isBusy(merged) && (before === undefined || !isBusy(before))) this.selectContact(number);
  }
}

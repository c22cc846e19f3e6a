// Wires the three parts of the renderer together: the host's SoftphoneApi (the only way to the main
// process), the store (plain data the UI renders), and the media engine (live WebRTC objects).
// Components call the methods here; nothing in a component talks to the API or the engine directly.
import type { PresenceChoice, PushName, PushPayloads, SoftphoneApi, Unsubscribe } from '../../shared/api';
import type { CallState } from '../../shared/call-state';
import { createLogger } from '../../shared/log';
import { formatPhoneNumber } from '../../shared/phone';
import type { StoreApi } from 'zustand/vanilla';
import type { HostLink, HostLinkState } from '../bridge/host-link';
import { parsePresence, parsePush, parseSettings, parseSnapshot } from '../bridge/payload-schemas';
import { errorMessage } from '../messages';
import { currentCall, hasBusyCall } from '../store/call-list';
import { SETTINGS_FIELDS, draftFromSettings, settingsErrorsFrom, validateDraft, type SettingsField } from '../store/settings-form';
import type { AppState } from '../store/store';
import type { MediaEngine } from '../webrtc/media-engine';

const log = createLogger('controller');

const LEVEL_POLL_MS = 200;

export interface RingtonePlayer {
  start(): void;
  stop(): void;
}

export interface ControllerDeps {
  api: SoftphoneApi;
  link: HostLink;
  store: StoreApi<AppState>;
  engine: MediaEngine;
  ringtone?: RingtonePlayer;
}

export class SoftphoneController {
  private readonly api: SoftphoneApi;
  private readonly link: HostLink;
  private readonly store: StoreApi<AppState>;
  private readonly engine: MediaEngine;
  private readonly ringtone: RingtonePlayer | undefined;
  private snapshotRequest = 0;

  constructor(deps: ControllerDeps) {
    this.api = deps.api;
    this.link = deps.link;
    this.store = deps.store;
    this.engine = deps.engine;
    this.ringtone = deps.ringtone;
  }

  private get state(): AppState {
    return this.store.getState();
  }

  /** Subscribes to everything and loads the first snapshot once the host is reachable. */
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

    stops.push(this.store.subscribe((s, before) => this.followRinging(s.calls, before.calls)));
    this.followRinging(this.state.calls, {});

    const poll = setInterval(() => void this.pollLevels(), LEVEL_POLL_MS);
    stops.push(() => clearInterval(poll));

    return () => {
      for (const stop of stops.splice(0)) stop();
      this.ringtone?.stop();
      this.engine.closeAll();
    };
  }

  async refreshSnapshot(): Promise<void> {
    const request = ++this.snapshotRequest;
    const result = await this.api.getSnapshot({});
    if (request !== this.snapshotRequest) return; // a newer request is on its way
    if (!result.ok) {
      this.state.setSnapshotError(errorMessage(result.error));
      return;
    }
    const snapshot = parseSnapshot(result.value);
    if (!snapshot.ok) {
      log.error('the snapshot was malformed', { problem: snapshot.error.message });
      this.state.setSnapshotError('The softphone service sent data this window cannot read. Reload the window.');
      return;
    }
    this.state.applySnapshot(snapshot.value);
    this.engine.reconcile(Object.values(this.state.calls));
  }

  applyCall(call: CallState): void {
    const merged = this.state.applyCall(call);
    this.engine.onCall(merged);
  }

  // ---- dialer ----

  setDialInput(value: string): void {
    this.state.setDialInput(value);
    if (this.state.dialError) this.state.setDialError(null);
  }

  /** The Call button: startCall, then the media engine makes and sends the offer. */
  async dial(): Promise<void> {
    const s = this.state;
    if (s.dialBusy || hasBusyCall(s.calls)) return;
    s.setDialBusy(true);
    s.setDialError(null);
    s.setCallNotice(null);
    try {
      const started = await this.api.startCall({ to: s.dialInput });
      if (!started.ok) {
        this.state.setDialError(errorMessage(started.error));
        return;
      }
      const sent = await this.engine.startOutgoing(started.value.localId);
      if (!sent.ok) this.state.setDialError(errorMessage(sent.error));
    } finally {
      this.state.setDialBusy(false);
    }
  }

  /** A recent call: its number goes into the dialer, formatted as people type it. */
  useNumber(number: string): void {
    this.setDialInput(formatPhoneNumber(number));
  }

  // ---- calls ----

  /** Resolves once the answer went out or failed (the card re-enables its buttons if the call is still ringing). */
  async answer(localId: string): Promise<void> {
    const call = this.state.calls[localId];
    if (!call || call.direction !== 'incoming' || call.phase !== 'ringing') return;
    this.state.setCallNotice(null);
    this.ringtone?.stop();
    await this.engine.answer(call);
  }

  async decline(localId: string): Promise<void> {
    const result = await this.api.declineCall({ localId });
    if (!result.ok) this.state.setCallNotice({ localId, text: errorMessage(result.error) });
  }

  async hangUp(localId: string): Promise<void> {
    const request = this.api.hangUp({ localId });
    // The agent wants silence now, whatever the gateway says.
    this.engine.close(localId);
    const result = await request;
    if (!result.ok && result.error.code !== 'not_found') this.state.setCallNotice({ localId, text: errorMessage(result.error) });
  }

  toggleMute(localId: string): void {
    const muted = !this.state.muted[localId];
    this.state.setMuted(localId, muted);
    this.engine.setMuted(localId, muted);
  }

  sendDtmf(localId: string, tone: string): boolean {
    return this.engine.sendDtmf(localId, tone);
  }

  // ---- presence ----

  /** The presence control: available or do not disturb (the main process adds "on a call" itself). */
  async setPresence(choice: PresenceChoice): Promise<void> {
    const result = await this.api.setPresence({ status: choice });
    if (!result.ok) {
      this.state.setPresenceError(errorMessage(result.error));
      return;
    }
    const presence = parsePresence(result.value);
    if (presence.ok) this.state.setPresence(presence.value);
  }

  // ---- sandbox ----

  async simulateIncomingCall(): Promise<void> {
    const number = this.state.sandboxSelection;
    this.state.setSandboxError(null);
    if (!number) {
      this.state.setSandboxError('Choose a sandbox customer first.');
      return;
    }
    const result = await this.api.simulateIncomingCall({ number });
    if (!result.ok) this.state.setSandboxError(errorMessage(result.error));
  }

  async customerHangsUp(localId: string): Promise<void> {
    const result = await this.api.simulateCustomerHangUp({ localId });
    if (!result.ok) this.state.setSandboxError(errorMessage(result.error));
  }

  // ---- settings ----

  editSettings(field: SettingsField, value: string): void {
    this.state.editSettings(field, value);
  }

  /** Returns the first field with an error, for the form to move focus to. */
  async saveSettings(): Promise<SettingsField | null> {
    const form = this.state.settingsForm;
    if (form.busy) return null;
    const checked = validateDraft(form.draft);
    if (!checked.ok) {
      this.state.setSettingsForm({ errors: checked.errors, formError: null, status: null });
      return firstField(checked.errors);
    }
    this.state.setSettingsForm({ busy: true, errors: {}, formError: null, status: null });
    const result = await this.api.saveSettings({ settings: checked.input });
    if (!result.ok) {
      const placed = settingsErrorsFrom(result.error);
      const formError = placed.form === null ? null : result.error.code === 'invalid_input' ? placed.form : errorMessage(result.error);
      this.state.setSettingsForm({ busy: false, errors: placed.fields, formError });
      return firstField(placed.fields);
    }
    this.adoptSettings(result.value, 'Settings saved.');
    return null;
  }

  async useSandbox(): Promise<void> {
    this.state.setSettingsForm({ busy: true, formError: null, status: null });
    const result = await this.api.clearSettings({});
    if (!result.ok) {
      this.state.setSettingsForm({ busy: false, formError: errorMessage(result.error) });
      return;
    }
    this.adoptSettings(result.value, 'The account was forgotten: you are in the sandbox.');
  }

  private adoptSettings(value: unknown, status: string): void {
    const settings = parseSettings(value);
    if (!settings.ok) {
      this.state.setSettingsForm({ busy: false, formError: 'The softphone service answered with settings this window cannot read.' });
      return;
    }
    // Saved: the secrets leave the form (blank means "keep the stored one").
    this.state.setSettingsForm({ busy: false, dirty: false, errors: {}, formError: null, status, draft: draftFromSettings(settings.value) });
    this.state.setSettings(settings.value);
  }

  // ---- internals ----

  private followRinging(calls: AppState['calls'], before: AppState['calls']): void {
    if (calls === before || !this.ringtone) return;
    const ringing = Object.values(calls).some((c) => c.phase === 'ringing');
    if (ringing) this.ringtone.start();
    else this.ringtone.stop();
  }

  private async pollLevels(): Promise<void> {
    const call = currentCall(this.state.calls, Date.now());
    if (!call || call.phase === 'ended' || !this.engine.has(call.localId)) {
      this.state.setLevels({ mic: 0, customer: 0 });
      return;
    }
    try {
      const levels = await this.engine.levels(call.localId);
      this.state.setLevels({ mic: round2(levels.mic), customer: round2(levels.customer) });
    } catch (e) {
      log.debug('reading levels failed', { problem: e instanceof Error ? e.message : String(e) });
    }
  }
}

const round2 = (v: number): number => Math.round(v * 100) / 100;

function firstField(errors: Partial<Record<SettingsField, string>>): SettingsField | null {
  return SETTINGS_FIELDS.find((f) => errors[f] !== undefined) ?? null;
}

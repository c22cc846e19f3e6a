// The desk domain: the agent's presence (available, a break with its reason, do not disturb),
// "Ready" at the end of after-call work, and each call's wrap-up, asked for as a call ends. The main
// process keeps the states and tells the relay; this domain sends the agent's choices and keeps what
// was typed.
import type { PresenceChoice, SoftphoneApi, Unsubscribe } from '../../shared/api';
import type { StoreApi } from 'zustand/vanilla';
import { parseHistoryEntry, parsePresence } from '../bridge/payload-schemas';
import { errorMessage } from '../error-texts';
import { i18n } from '../i18n/i18n';
import type { AppState } from '../store/store';
import { firstWrapUpField, validateWrapUp, wrapUpErrorsFrom, wrapUpFormOf, type WrapUpDraft, type WrapUpField, type WrapUpFormState } from '../store/wrap-up-form';
import { followWrapUpPrompt, NO_WRAP_UP_PROMPT } from '../store/wrap-up-prompt';

const t = i18n.getFixedT(null, 'calls');

export interface DeskActionsDeps {
  api: Pick<SoftphoneApi, 'setPresence' | 'endAfterCallWork' | 'saveWrapUp'>;
  store: StoreApi<AppState>;
}

export class DeskActions {
  private readonly api: DeskActionsDeps['api'];
  private readonly store: StoreApi<AppState>;

  constructor(deps: DeskActionsDeps) {
    this.api = deps.api;
    this.store = deps.store;
  }

  private get state(): AppState {
    return this.store.getState();
  }

  /** Follows the calls and the presence: the wrap-up card opens as a talked-on call ends, and closes as another begins. */
  start(): Unsubscribe {
    return this.store.subscribe((s, before) => {
      if (s.calls === before.calls && s.presence === before.presence) return;
      const next = followWrapUpPrompt(s.wrapUpPrompt, s.calls, before.calls, s.presence);
      if (next !== s.wrapUpPrompt) s.setWrapUpPrompt(next);
    });
  }

  // ---- presence ----

  /** The "Presence" select: available, a break for one of the team's reasons, or do not disturb (main adds "on a call" itself). */
  async setPresence(choice: PresenceChoice, reason?: string): Promise<void> {
    const result = await this.api.setPresence(choice === 'break' && reason !== undefined ? { status: choice, reason } : { status: choice });
    if (!result.ok) {
      this.state.setPresenceError(errorMessage(result.error));
      return;
    }
    const presence = parsePresence(result.value);
    if (presence.ok) this.state.setPresence(presence.value);
  }

  // ---- after-call work ----

  /** "Ready": the after-call work ends now (refused while the team's required wrap-up is not saved). */
  async endAfterCallWork(): Promise<void> {
    this.state.setAfterCallWorkError(null);
    const result = await this.api.endAfterCallWork({});
    if (!result.ok) {
      this.state.setAfterCallWorkError(errorMessage(result.error));
      return;
    }
    const presence = parsePresence(result.value);
    if (presence.ok) this.state.setPresence(presence.value);
  }

  // ---- wrap-up ----

  /** "Later": the card closes; the draft stays, and the call's "Wrap-up" in recent calls opens it again. */
  wrapUpLater(): void {
    if (this.state.wrapUpPrompt.kind !== 'none') this.state.setWrapUpPrompt(NO_WRAP_UP_PROMPT);
  }

  private form(localId: string): WrapUpFormState {
    const entry = this.state.history.find((h) => h.localId === localId);
    return wrapUpFormOf(this.state.wrapUps[localId], entry?.wrapUp);
  }

  /** The agent typed or chose: the draft is theirs from now on, and that field's error goes. */
  editWrapUp<F extends WrapUpField>(localId: string, field: F, value: WrapUpDraft[F]): void {
    const form = this.form(localId);
    const { [field]: _cleared, ...errors } = form.errors;
    this.state.setWrapUpForm(localId, { ...form, draft: { ...form.draft, [field]: value }, dirty: true, errors, saved: false });
  }

  /**
   * "Save wrap-up". Kept with the call's recent-calls entry at once by the main process (which sends
   * it on to the team's records). Returns the first field with an error, for the form to focus.
   */
  async saveWrapUp(localId: string): Promise<WrapUpField | null> {
    const form = this.form(localId);
    if (form.busy) return null;
    const checked = validateWrapUp(localId, form.draft, this.state.team.settings);
    if (!checked.ok) {
      this.state.setWrapUpForm(localId, { ...form, errors: checked.errors, formError: null, saved: false });
      return firstWrapUpField(checked.errors);
    }
    const sent = form.draft;
    this.state.setWrapUpForm(localId, { ...form, busy: true, errors: {}, formError: null, saved: false });
    const result = await this.api.saveWrapUp(checked.params);
    const now = this.form(localId);
    if (!result.ok) {
      const placed = wrapUpErrorsFrom(result.error, t('wrapUp.notSaved', { reason: errorMessage(result.error) }));
      // The draft stays as typed (dirty), whatever the refusal: nothing is lost.
      this.state.setWrapUpForm(localId, { ...now, busy: false, dirty: true, errors: placed.fields, formError: placed.form });
      return firstWrapUpField(placed.fields);
    }
    const entry = parseHistoryEntry(result.value);
    if (entry.ok) this.state.applyHistoryEntry(entry.value);
    // What was typed while the save was under way stays a draft; so does all of it when the answer
    // could not be read (the entry then shows the old wrap-up until the history is pushed).
    const edited = now.draft.disposition !== sent.disposition || now.draft.notes !== sent.notes;
    const kept = edited || !entry.ok || entry.value.wrapUp === undefined;
    this.state.setWrapUpForm(localId, { ...now, busy: false, dirty: kept, errors: {}, formError: null, saved: true });
    // Saved from whichever form: the card that asked for it has its answer.
    const prompt = this.state.wrapUpPrompt;
    if (prompt.kind === 'asking' && prompt.localId === localId) this.state.setWrapUpPrompt({ kind: 'saved', localId, at: Date.now() });
    return null;
  }
}

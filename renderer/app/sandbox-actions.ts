// The sandbox domain: what the simulated customers do (call in, hang up, write, press the call
// button, leave a voicemail after a call nobody answered, ask to be called back). Only offered
// while the main process runs the sandbox.
import type { SoftphoneApi } from '../../shared/api';
import type { AppError } from '../../shared/result';
import type { StoreApi } from 'zustand/vanilla';
import { formatPhoneNumber } from '../../shared/phone';
import { ltrInText } from '../call-display';
import { errorMessage } from '../error-texts';
import { i18n } from '../i18n/i18n';
import { sayError } from '../i18n/texts';
import type { AppState } from '../store/store';

/** Sandbox control errors say exactly what the simulated customer could not do; keep their words. */
const sandboxErrorText = (error: AppError): string =>
  error.code === 'not_found' || error.code === 'invalid_input' || error.code === 'invalid_state' ? sayError(error) : errorMessage(error);

export interface SandboxActionsDeps {
  api: Pick<SoftphoneApi, 'simulateIncomingCall' | 'simulateCustomerHangUp' | 'simulateInboundMessage' | 'simulatePressCallButton' | 'simulateVoicemail' | 'simulateCallbackRequest'>;
  store: StoreApi<AppState>;
  /** The messages domain's: the customer who wrote becomes the contact in view. */
  selectContact: (contact: string) => void;
}

export class SandboxActions {
  private readonly api: SandboxActionsDeps['api'];
  private readonly store: StoreApi<AppState>;
  private readonly selectContact: (contact: string) => void;

  constructor(deps: SandboxActionsDeps) {
    this.api = deps.api;
    this.store = deps.store;
    this.selectContact = deps.selectContact;
  }

  private get state(): AppState {
    return this.store.getState();
  }

  /** The chosen customer, the panel's last words cleared; undefined (and said) when none is chosen. */
  private chosen(): string | undefined {
    const number = this.state.sandboxSelection;
    this.state.setSandboxError(null);
    this.state.setSandboxDone(null);
    if (!number) {
      this.state.setSandboxError(i18n.t('sandbox.chooseCustomer'));
      return undefined;
    }
    return number;
  }

  /** The chosen customer's name, as the panel lists them. */
  private nameOf(number: string): string {
    return this.state.sandboxCustomers.find((c) => c.number === number)?.name ?? ltrInText(formatPhoneNumber(number));
  }

  async simulateIncomingCall(): Promise<void> {
    const number = this.chosen();
    if (!number) return;
    const result = await this.api.simulateIncomingCall({ number });
    if (!result.ok) this.state.setSandboxError(errorMessage(result.error));
  }

  /** "Leave a voicemail": the customer's last call, which nobody answered, gets a voicemail (recent calls and the Team view show it). */
  async simulateVoicemail(): Promise<void> {
    const number = this.chosen();
    if (!number) return;
    const result = await this.api.simulateVoicemail({ number });
    if (!result.ok) this.state.setSandboxError(sandboxErrorText(result.error));
    else this.state.setSandboxDone(i18n.t('sandbox.voicemailLeft', { name: this.nameOf(number) }));
  }

  /** "Ask to be called back": the customer's automatic permission reply about its last call (the Team view's "Callback requested"). */
  async simulateCallbackRequest(): Promise<void> {
    const number = this.chosen();
    if (!number) return;
    const result = await this.api.simulateCallbackRequest({ number });
    if (!result.ok) this.state.setSandboxError(sandboxErrorText(result.error));
    else this.state.setSandboxDone(i18n.t('sandbox.callbackAsked', { name: this.nameOf(number) }));
  }

  async customerHangsUp(localId: string): Promise<void> {
    const result = await this.api.simulateCustomerHangUp({ localId });
    if (!result.ok) this.state.setSandboxError(errorMessage(result.error));
  }

  async simulateInboundMessage(): Promise<void> {
    const number = this.chosen();
    const text = this.state.sandboxMessage.trim();
    if (!number) return;
    if (text === '') {
      this.state.setSandboxError(i18n.t('sandbox.typeMessage'));
      return;
    }
    const result = await this.api.simulateInboundMessage({ number, text });
    if (!result.ok) {
      this.state.setSandboxError(sandboxErrorText(result.error));
      return;
    }
    this.state.setSandboxMessage('');
    if (this.state.selectedContact === null) this.selectContact(number);
  }

  async customerPressesCallButton(contact: string): Promise<void> {
    const result = await this.api.simulatePressCallButton({ number: contact });
    if (!result.ok) this.state.setContactNotice({ contact, text: sandboxErrorText(result.error), tone: 'error' });
  }
}

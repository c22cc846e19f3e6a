// The sandbox domain: what the simulated customers do (call in, hang up, write, press the call
// button). Only offered while the main process runs the sandbox.
import type { SoftphoneApi } from '../../shared/api';
import type { AppError } from '../../shared/result';
import type { StoreApi } from 'zustand/vanilla';
import { errorMessage } from '../error-texts';
import { i18n } from '../i18n/i18n';
import { sayError } from '../i18n/texts';
import type { AppState } from '../store/store';

/** Sandbox control errors say exactly what the simulated customer could not do; keep their words. */
const sandboxErrorText = (error: AppError): string =>
  error.code === 'not_found' || error.code === 'invalid_input' || error.code === 'invalid_state' ? sayError(error) : errorMessage(error);

export interface SandboxActionsDeps {
  api: Pick<SoftphoneApi, 'simulateIncomingCall' | 'simulateCustomerHangUp' | 'simulateInboundMessage' | 'simulatePressCallButton'>;
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

  async simulateIncomingCall(): Promise<void> {
    const number = this.state.sandboxSelection;
    this.state.setSandboxError(null);
    if (!number) {
      this.state.setSandboxError(i18n.t('sandbox.chooseCustomer'));
      return;
    }
    const result = await this.api.simulateIncomingCall({ number });
    if (!result.ok) this.state.setSandboxError(errorMessage(result.error));
  }

  async customerHangsUp(localId: string): Promise<void> {
    const result = await this.api.simulateCustomerHangUp({ localId });
    if (!result.ok) this.state.setSandboxError(errorMessage(result.error));
  }

  async simulateInboundMessage(): Promise<void> {
    const number = this.state.sandboxSelection;
    const text = this.state.sandboxMessage.trim();
    this.state.setSandboxError(null);
    if (!number) {
      this.state.setSandboxError(i18n.t('sandbox.chooseCustomer'));
      return;
    }
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

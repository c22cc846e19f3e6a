// How a supervisor's live calls and a joined call read (shared/supervision.ts): a call's state, its
// quality from the bridge's MOS, the customer and the agents by name, the sentence of the joined call
// ("Listening to Maya Chen and Amelia Hart"), and how an agent is told of a supervisor in its call.
import { QUALITY_THRESHOLDS } from '../shared/call-quality';
import type { CallMonitor } from '../shared/call-state';
import { assertNever } from '../shared/result';
import type { LiveCall, LiveCallState, MonitorMode } from '../shared/supervision';
import { mosText, peerNumberText } from './call-display';
import { intlLocale, t } from './i18n/i18n';
import type { CallParties } from './store/supervision';

/** "Ringing", "Talking", "On hold", "Transferring". */
export function liveStateText(state: LiveCallState): string {
  switch (state) {
    case 'ringing':
      return t('common:team.live.ringing');
    case 'talking':
      return t('common:team.live.talking');
    case 'on_hold':
      return t('common:team.live.onHold');
    case 'transferring':
      return t('common:team.live.transferring');
    default:
      return assertNever(state, 'live call state');
  }
}

/** From this MOS a call sounds good (the E-model's "satisfied" band). */
export const GOOD_MOS = 4;

export type QualityBand = 'good' | 'fair' | 'poor';

/** Good from GOOD_MOS; poor under the score that raises a call's own "Poor call quality" (QUALITY_THRESHOLDS.mos); fair between. */
export const qualityBand = (mos: number): QualityBand => (mos >= GOOD_MOS ? 'good' : mos >= QUALITY_THRESHOLDS.mos ? 'fair' : 'poor');

const BAND_KEY = { good: 'common:team.live.good', fair: 'common:team.live.fair', poor: 'common:team.live.poor' } as const;

/** "Good", and for the accessible text "Quality: Good, MOS 4.3". */
export function qualityText(mos: number, locale = intlLocale()): { band: QualityBand; word: string; full: string } {
  const band = qualityBand(mos);
  const word = t(BAND_KEY[band]);
  return { band, word, full: t('common:team.live.quality', { quality: word, mos: mosText(mos, locale) }) };
}

/** The customer as the row shows them: the name (when the service gave one) and the number, formatted. */
export function customerParts(customer: LiveCall['customer']): { name: string | undefined; number: string } {
  const name = customer.name?.trim() || undefined;
  return { name, number: customer.number ? peerNumberText({ number: customer.number }) : '' };
}

/** The customer in a sentence: the name, else the number, else "Unknown caller". */
export function customerText(customer: LiveCall['customer']): string {
  const { name, number } = customerParts(customer);
  return name ?? (number || t('calls:peer.unknown'));
}

/** "Maya Chen", "Maya Chen and Jonas Berg": the agents in the language's list. */
export const agentsText = (agents: readonly string[], locale = intlLocale()): string => new Intl.ListFormat(locale, { type: 'conjunction' }).format(agents);

/** The same list in parts, so that each name can be isolated from the language's words around it ("Zoë Tran وBen Okafor"). */
export const agentsParts = (agents: readonly string[], locale = intlLocale()): { type: 'element' | 'literal'; value: string }[] =>
  new Intl.ListFormat(locale, { type: 'conjunction' }).formatToParts(agents);

/** The call a button acts on, for its description: "Call between Maya Chen and Amelia Hart". */
export const callDescription = (parties: CallParties): string => t('common:team.live.callOf', { agents: agentsText(parties.agents), customer: customerText(parties.customer) });

/** The joined call in the supervisor's words: "Listening to …", "Whispering to …", "In the call with …". */
export function joinedText(mode: MonitorMode, parties: CallParties): string {
  const words = { agents: agentsText(parties.agents), customer: customerText(parties.customer) };
  switch (mode) {
    case 'listen':
      return t('common:monitor.listening', words);
    case 'whisper':
      return t('common:monitor.whispering', words);
    case 'barge':
      return t('common:monitor.barging', words);
    default:
      return assertNever(mode, 'monitor mode');
  }
}

/** A mode's button: "Listen", "Whisper", "Barge". */
export function modeButtonText(mode: MonitorMode): string {
  switch (mode) {
    case 'listen':
      return t('common:team.live.listen');
    case 'whisper':
      return t('common:team.live.whisper');
    case 'barge':
      return t('common:team.live.barge');
    default:
      return assertNever(mode, 'monitor mode');
  }
}

/** A supervisor in a call, as its agents (and other supervisors) are told: "NAME is whispering", "NAME joined the call", "NAME is listening". */
export function monitorText(monitor: Pick<CallMonitor, 'name' | 'mode'>): string {
  switch (monitor.mode) {
    case 'listen':
      return t('calls:monitors.listening', { name: monitor.name });
    case 'whisper':
      return t('calls:monitors.whispering', { name: monitor.name });
    case 'barge':
      return t('calls:monitors.barged', { name: monitor.name });
    default:
      return assertNever(monitor.mode, 'monitor mode');
  }
}

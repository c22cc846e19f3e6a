// How calls read on screen: names, numbers, phase words, clocks. Pure, so it is tested without a DOM.
// Every function words its result in the UI's language at the time it is called (renderer/i18n), so
// a component that re-renders after a language change shows the new words.
import type { ConnectionState } from '../shared/api';
import { isCustomerLegKind, type CustomerLegWarningKind } from '../shared/bridged-quality';
import type { QualitySummary, QualityWarningKind } from '../shared/call-quality';
import { isRejoining, type CallState, type Peer } from '../shared/call-state';
import { formatPhoneNumber } from '../shared/phone';
import type { CustomerBehaviour } from '../shared/sandbox';
import type { SecretStorageKind } from '../shared/settings';
import type { HostLinkState } from './bridge/host-link';
import { directionOf } from '../shared/i18n/languages';
import { currentLanguage, i18n, intlLocale } from './i18n/i18n';
import { formatClock, formatNumber, isolateLtr } from './i18n/format';
import { sayEither } from './i18n/texts';

/** The calls namespace in the language of the moment of each call. */
const t = i18n.getFixedT(null, 'calls');

// Clocks and call times are Intl's, in the UI's language; these names stay for their callers.
export { formatCallTime, formatClock } from './i18n/format';

/** The number as people read it, or the business-scoped user id when the payload had no number (protocol.md). */
export function peerNumberText(peer: Pick<Peer, 'number' | 'userId'>): string {
  if (peer.number) return formatPhoneNumber(peer.number);
  if (peer.userId) return t('peer.userId', { id: peer.userId });
  return '';
}

export function peerTitle(peer: Peer): string {
  if (peer.name && peer.name.trim() !== '') return peer.name;
  return peerNumberText(peer) || t('peer.unknown');
}

export function phaseText(call: CallState, reconnecting = false): string {
  // A leg being replaced says so over its old leg's "Reconnecting…": the media that stopped is gone for good.
  if (isRejoining(call)) return t('phase.rejoining');
  if (reconnecting && call.phase === 'active') return t('phase.reconnecting');
  switch (call.phase) {
    case 'ringing':
      return t('phase.ringing');
    case 'dialing':
    case 'calling':
      return t('phase.calling');
    case 'remote_ringing':
      return t('phase.remoteRinging');
    case 'answering':
    case 'connecting':
      return t('phase.connecting');
    case 'active':
      return t('phase.active');
    case 'ended':
      return t('phase.ended');
  }
}

/**
 * A phone number, code or clock inside a sentence, kept left to right when the UI's language is
 * right to left (Unicode isolates: the spaces of "+44 20 7946 0958" would otherwise reorder its
 * groups). Left-to-right languages get the text as it is. On screen, outside a sentence, use <Ltr>.
 */
export const ltrInText = (text: string): string => (directionOf(currentLanguage()) === 'rtl' ? isolateLtr(text) : text);

/** Whole seconds left until `until`, never negative; rounds up so "1" shows until the very end. */
export const secondsUntil = (until: number, now: number): number => Math.max(0, Math.ceil((until - now) / 1000));

/** Talk time in the recent-calls list; unanswered calls have none. */
export const formatTalkTime = (durationSec: number, locale = intlLocale()): string => (durationSec > 0 ? formatClock(durationSec, locale) : '—');

export type IndicatorTone = 'ok' | 'pending' | 'down';

/** The header's connection indicator: the link to the host first, then the host's link to the event relay. */
export function connectionIndicator(host: HostLinkState, service: ConnectionState | null): { text: string; tone: IndicatorTone; detail: string } {
  switch (host.status) {
    case 'connecting':
      return { text: t('connection.connecting'), tone: 'pending', detail: t('connection.toService') };
    case 'reconnecting':
      return { text: t('connection.reconnecting'), tone: 'down', detail: host.lastError };
    case 'unavailable':
      return { text: t('connection.notConnected'), tone: 'down', detail: host.message };
    case 'open':
      break;
  }
  if (!service) return { text: t('connection.connecting'), tone: 'pending', detail: t('connection.loading') };
  switch (service.status) {
    case 'connected':
      return { text: t('connection.connected'), tone: 'ok', detail: t('connection.receiving') };
    case 'connecting':
      return { text: t('connection.connecting'), tone: 'pending', detail: t('connection.toRelay') };
    case 'reconnecting':
      return { text: t('connection.reconnecting'), tone: 'down', detail: sayEither(service.lastErrorText, service.lastError) };
  }
}

// Read at the time of use (getters), so each read is in the UI's language of that moment.
export const BEHAVIOUR_TEXT: Readonly<Record<CustomerBehaviour, string>> = {
  get answers() {
    return t('behaviour.answers');
  },
  get rejects() {
    return t('behaviour.rejects');
  },
  get no_answer() {
    return t('behaviour.noAnswer');
  },
  get no_permission() {
    return t('behaviour.noPermission');
  },
  get busy() {
    return t('behaviour.busy');
  },
};

export const SECRET_STORAGE_TEXT: Readonly<Record<SecretStorageKind, string>> = {
  get 'os-keychain'() {
    return t('secretStorage.osKeychain');
  },
  get 'owner-only-file'() {
    return t('secretStorage.ownerOnlyFile');
  },
  get memory() {
    return t('secretStorage.memory');
  },
};

// ---- call quality ----

/** Loss as it is shown: one decimal under 10 % ("1.4", "6"), whole percents above (shared/call-quality.ts formatLossPercent). */
const shownLoss = (percent: number): number => {
  const p = Math.max(0, percent);
  return p >= 10 ? Math.round(p) : Math.round(p * 10) / 10;
};
/** Round trips to the nearest 10 ms from 100 ms: a precise figure would only flicker. */
const shownRtt = (ms: number): number => {
  const v = Math.max(0, ms);
  return v >= 100 ? Math.round(v / 10) * 10 : Math.round(v);
};
/** MOS to one decimal, rounded down, so that a score under 3.5 never reads "3.5". */
const shownMos = (score: number): number => Math.floor(score * 10 + 1e-9) / 10;

/**
 * A warning's figure rounded as the words show it, so that a view keeping it changes only when
 * the words would (loss in %, round trip and jitter in ms, MOS).
 */
export function warningFigure(kind: QualityWarningKind, value: number): number {
  switch (kind) {
    case 'high-packet-loss':
      return shownLoss(value);
    case 'high-rtt':
      return shownRtt(value);
    case 'high-jitter':
      return Math.round(Math.max(0, value));
    case 'low-mos':
      return shownMos(value);
    default:
      return value;
  }
}

const figure = (value: number, locale: string): string => formatNumber(value, { maximumFractionDigits: 1, useGrouping: false }, locale);

/** A MOS in words: "3.9" (one decimal, rounded down). */
export const mosText = (score: number, locale = intlLocale()): string =>
  formatNumber(shownMos(score), { minimumFractionDigits: 1, maximumFractionDigits: 1 }, locale);

/** A live warning in words, from its kind and figure: "Poor connection: 6 % packet loss". */
export function qualityWarningWords(kind: QualityWarningKind, value?: number, locale = intlLocale()): string {
  switch (kind) {
    case 'no-inbound-media':
      return t('quality.warning.noInboundMedia');
    case 'mic-silent':
      return t('quality.warning.micSilent');
    case 'no-customer-audio':
      return t('quality.warning.noCustomerAudio');
    case 'high-packet-loss':
      return value === undefined ? t('quality.warning.highPacketLoss') : t('quality.warning.highPacketLossValue', { loss: figure(shownLoss(value), locale) });
    case 'high-rtt':
      return value === undefined ? t('quality.warning.highRtt') : t('quality.warning.highRttValue', { ms: figure(shownRtt(value), locale) });
    case 'high-jitter':
      return value === undefined ? t('quality.warning.highJitter') : t('quality.warning.highJitterValue', { ms: figure(Math.round(Math.max(0, value)), locale) });
    case 'low-mos':
      return value === undefined ? t('quality.warning.lowMos') : t('quality.warning.lowMosValue', { mos: mosText(value, locale) });
  }
}

/** A bridged call's customer-leg warning in words: "The customer’s connection is poor: 6 % packet loss". */
export function customerLegWarningWords(kind: CustomerLegWarningKind, value?: number, locale = intlLocale()): string {
  switch (kind) {
    case 'high-packet-loss':
      return value === undefined ? t('quality.customerWarning.highPacketLoss') : t('quality.customerWarning.highPacketLossValue', { loss: figure(shownLoss(value), locale) });
    case 'high-rtt':
      return value === undefined ? t('quality.customerWarning.highRtt') : t('quality.customerWarning.highRttValue', { ms: figure(shownRtt(value), locale) });
    case 'high-jitter':
      return value === undefined ? t('quality.customerWarning.highJitter') : t('quality.customerWarning.highJitterValue', { ms: figure(Math.round(Math.max(0, value)), locale) });
  }
}

/** A warning on the call panel in words, whichever leg it is about. */
export function legWarningWords(warning: { kind: QualityWarningKind; value?: number; leg?: 'customer' }, locale = intlLocale()): string {
  return warning.leg === 'customer' && isCustomerLegKind(warning.kind) ? customerLegWarningWords(warning.kind, warning.value, locale) : qualityWarningWords(warning.kind, warning.value, locale);
}

/** A customer-leg warning's short name, as the recent calls list a bridged call's. */
function customerLegWarningName(kind: CustomerLegWarningKind): string {
  switch (kind) {
    case 'high-packet-loss':
      return t('quality.customerNames.highPacketLoss');
    case 'high-rtt':
      return t('quality.customerNames.highRtt');
    case 'high-jitter':
      return t('quality.customerNames.highJitter');
  }
}

/** A warning's short name, as the recent calls list it after "warned:". */
export function qualityWarningName(kind: QualityWarningKind): string {
  switch (kind) {
    case 'high-rtt':
      return t('quality.names.highRtt');
    case 'high-jitter':
      return t('quality.names.highJitter');
    case 'high-packet-loss':
      return t('quality.names.highPacketLoss');
    case 'low-mos':
      return t('quality.names.lowMos');
    case 'no-inbound-media':
      return t('quality.names.noInboundMedia');
    case 'no-customer-audio':
      return t('quality.names.noCustomerAudio');
    case 'mic-silent':
      return t('quality.names.micSilent');
  }
}

const list = (items: readonly string[], locale: string): string => new Intl.ListFormat(locale, { type: 'unit', style: 'short' }).format(items);

/** A call's quality in the recent-calls list: "MOS 4.3 (worst 3.1), loss up to 6 %; warned: packet loss". */
export function qualitySummaryText(quality: QualitySummary, locale = intlLocale()): string | undefined {
  const figures: string[] = [];
  if (quality.avgMos !== null) {
    const mos = mosText(quality.avgMos, locale);
    figures.push(
      quality.worstMos !== null && quality.worstMos < quality.avgMos - 0.05
        ? t('summary.mosWorst', { mos, worst: mosText(quality.worstMos, locale) })
        : t('summary.mos', { mos }),
    );
  }
  if (quality.worstLossPercent !== null && quality.worstLossPercent >= 0.5) figures.push(t('summary.loss', { loss: figure(shownLoss(quality.worstLossPercent), locale) }));
  // The media stopping is the most pressing: it goes first.
  const kinds = [...quality.warningsSeen.filter((k) => k === 'no-inbound-media'), ...quality.warningsSeen.filter((k) => k !== 'no-inbound-media')];
  const warned = quality.legs === undefined ? kinds.map(qualityWarningName) : kinds.flatMap((k) => legWarningNames(k, quality.legs!));
  if (figures.length === 0 && warned.length === 0) return undefined;
  if (warned.length === 0) return list(figures, locale);
  if (figures.length === 0) return t('summary.warned', { kinds: list(warned, locale) });
  return t('summary.figuresWarned', { figures: list(figures, locale), kinds: list(warned, locale) });
}

/**
 * A bridged call's warning of one kind, named for each leg that raised it: the agent's own leg (and
 * the call's MOS) by the usual name, the customer's as the customer's ("customer’s packet loss").
 */
function legWarningNames(kind: QualityWarningKind, legs: NonNullable<QualitySummary['legs']>): string[] {
  const names: string[] = [];
  const customer = isCustomerLegKind(kind) && legs.customer.warningsSeen.includes(kind);
  if (legs.agent.warningsSeen.includes(kind) || !customer) names.push(qualityWarningName(kind));
  if (customer) names.push(customerLegWarningName(kind));
  return names;
}

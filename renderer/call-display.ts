// How calls read on screen: names, numbers, phase words, clocks. Pure, so it is tested without a DOM.
import type { ConnectionState } from '../shared/api';
import { formatLossPercent, formatMos, type QualitySummary, type QualityWarningKind } from '../shared/call-quality';
import type { CallState, Peer } from '../shared/call-state';
import { formatPhoneNumber } from '../shared/phone';
import type { CustomerBehaviour } from '../shared/sandbox';
import type { SecretStorageKind } from '../shared/settings';
import type { HostLinkState } from './bridge/host-link';

/** The number as people read it, or the business-scoped user id when the payload had no number (protocol.md). */
export function peerNumberText(peer: Pick<Peer, 'number' | 'userId'>): string {
  if (peer.number) return formatPhoneNumber(peer.number);
  if (peer.userId) return `User ID ${peer.userId}`;
  return '';
}

export function peerTitle(peer: Peer): string {
  if (peer.name && peer.name.trim() !== '') return peer.name;
  return peerNumberText(peer) || 'Unknown caller';
}

export function phaseText(call: CallState, reconnecting = false): string {
  if (reconnecting && call.phase === 'active') return 'Reconnecting…';
  switch (call.phase) {
    case 'ringing':
      return 'Incoming call';
    case 'dialing':
    case 'calling':
      return 'Calling…';
    case 'remote_ringing':
      return 'Ringing…';
    case 'answering':
    case 'connecting':
      return 'Connecting…';
    case 'active':
      return 'Connected';
    case 'ended':
      return 'Ended';
  }
}

/** 0:07 → "00:07"; an hour and more → "1:02:03". */
export function formatClock(totalSeconds: number): string {
  const s = Math.max(0, Math.floor(totalSeconds));
  const hours = Math.floor(s / 3600);
  const minutes = Math.floor((s % 3600) / 60);
  const seconds = s % 60;
  const mm = String(minutes).padStart(2, '0');
  const ss = String(seconds).padStart(2, '0');
  return hours > 0 ? `${hours}:${mm}:${ss}` : `${mm}:${ss}`;
}

/** Whole seconds left until `until`, never negative; rounds up so "1" shows until the very end. */
export const secondsUntil = (until: number, now: number): number => Math.max(0, Math.ceil((until - now) / 1000));

/** Talk time in the recent-calls list; unanswered calls have none. */
export const formatTalkTime = (durationSec: number): string => (durationSec > 0 ? formatClock(durationSec) : '—');

/** "14:05" today, "Mon 14:05" this week, "3 Mar 14:05" before. */
export function formatCallTime(at: number, now: number, locale?: string): string {
  const date = new Date(at);
  const today = new Date(now);
  const time = date.toLocaleTimeString(locale, { hour: '2-digit', minute: '2-digit' });
  if (date.toDateString() === today.toDateString()) return time;
  const ageDays = (now - at) / 86_400_000;
  if (ageDays >= 0 && ageDays < 6) return `${date.toLocaleDateString(locale, { weekday: 'short' })} ${time}`;
  return `${date.toLocaleDateString(locale, { day: 'numeric', month: 'short' })} ${time}`;
}

export type IndicatorTone = 'ok' | 'pending' | 'down';

/** The header's connection indicator: the link to the host first, then the host's link to the event relay. */
export function connectionIndicator(host: HostLinkState, service: ConnectionState | null): { text: string; tone: IndicatorTone; detail: string } {
  switch (host.status) {
    case 'connecting':
      return { text: 'Connecting…', tone: 'pending', detail: 'Connecting to the softphone service' };
    case 'reconnecting':
      return { text: 'Reconnecting…', tone: 'down', detail: host.lastError };
    case 'unavailable':
      return { text: 'Not connected', tone: 'down', detail: host.message };
    case 'open':
      break;
  }
  if (!service) return { text: 'Connecting…', tone: 'pending', detail: 'Loading' };
  switch (service.status) {
    case 'connected':
      return { text: 'Connected', tone: 'ok', detail: 'Receiving calls' };
    case 'connecting':
      return { text: 'Connecting…', tone: 'pending', detail: 'Connecting to the call event relay' };
    case 'reconnecting':
      return { text: 'Reconnecting…', tone: 'down', detail: service.lastError };
  }
}

export const BEHAVIOUR_TEXT: Readonly<Record<CustomerBehaviour, string>> = {
  answers: 'answers',
  rejects: 'declines',
  no_answer: 'does not answer',
  no_permission: 'has not allowed calls',
  busy: 'is already on a call',
};

export const SECRET_STORAGE_TEXT: Readonly<Record<SecretStorageKind, string>> = {
  'os-keychain': 'The API key and agent token are encrypted with the system keychain.',
  'owner-only-file': 'No system keychain is available: the API key and agent token are kept in a file only your user account can read.',
  memory: 'The API key and agent token are kept in memory only and are forgotten when the app quits.',
};

/** A call's quality in the recent-calls list: "MOS 4.3 (worst 3.1), loss up to 6 %; warned: packet loss". */
export function qualitySummaryText(quality: QualitySummary): string | undefined {
  const parts: string[] = [];
  if (quality.avgMos !== null) parts.push(`MOS ${formatMos(quality.avgMos)}${quality.worstMos !== null && quality.worstMos < quality.avgMos - 0.05 ? ` (worst ${formatMos(quality.worstMos)})` : ''}`);
  if (quality.worstLossPercent !== null && quality.worstLossPercent >= 0.5) parts.push(`loss up to ${formatLossPercent(quality.worstLossPercent)}`);
  const warned = quality.warningsSeen.filter((k) => k !== 'no-inbound-media').map((k) => QUALITY_WARNING_NAMES[k]);
  if (quality.warningsSeen.includes('no-inbound-media')) warned.unshift('audio stopped');
  let text = parts.join(', ');
  if (warned.length > 0) text += `${text ? '; ' : ''}warned: ${warned.join(', ')}`;
  return text === '' ? undefined : text;
}

const QUALITY_WARNING_NAMES: Readonly<Record<QualityWarningKind, string>> = {
  'high-rtt': 'high delay',
  'high-jitter': 'unsteady audio',
  'high-packet-loss': 'packet loss',
  'low-mos': 'poor quality',
  'no-inbound-media': 'audio stopped',
  'no-customer-audio': 'no audio from the customer',
  'mic-silent': 'microphone silent',
};

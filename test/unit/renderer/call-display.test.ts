import { describe, expect, it } from 'vitest';
import { connectionIndicator, formatCallTime, formatClock, formatTalkTime, peerNumberText, peerTitle, phaseText, qualitySummaryText, secondsUntil } from '../../../renderer/call-display';
import { T0, active, dialing, ringing } from './fixtures';

describe('call display', () => {
  it('formats clocks', () => {
    expect(formatClock(0)).toBe('00:00');
    expect(formatClock(7.9)).toBe('00:07');
    expect(formatClock(83)).toBe('01:23');
    expect(formatClock(3723)).toBe('1:02:03');
    expect(formatClock(-5)).toBe('00:00');
    expect(formatTalkTime(0)).toBe('—');
    expect(formatTalkTime(61)).toBe('01:01');
  });

  it('counts down in whole seconds, never below zero', () => {
    expect(secondsUntil(T0 + 42_001, T0)).toBe(43);
    expect(secondsUntil(T0 + 1, T0)).toBe(1);
    expect(secondsUntil(T0, T0 + 5000)).toBe(0);
  });

  it('names the peer by name, number or user id', () => {
    expect(peerTitle({ name: 'Amelia Hart', number: '447700900123' })).toBe('Amelia Hart');
    expect(peerTitle({ number: '447700900123' })).toBe('+44 7700 900123');
    expect(peerTitle({ userId: 'US.123' })).toBe('User ID US.123');
    expect(peerTitle({ name: '  ' })).toBe('Unknown caller');
    expect(peerNumberText({ number: '14155550123' })).toBe('+1 415 555 0123');
  });

  it('words each phase', () => {
    expect(phaseText(ringing())).toBe('Incoming call');
    expect(phaseText(dialing())).toBe('Calling…');
    expect(phaseText({ ...dialing(), phase: 'remote_ringing', callId: 'c', dialsUntil: T0 } as never)).toBe('Ringing…');
    expect(phaseText(active())).toBe('Connected');
  });

  it('shows the host link first, then the relay link', () => {
    expect(connectionIndicator({ status: 'connecting' }, null).text).toBe('Connecting…');
    expect(connectionIndicator({ status: 'reconnecting', attempt: 2, retryAt: T0, lastError: 'closed' }, { status: 'connected', since: T0 }).text).toBe('Reconnecting…');
    expect(connectionIndicator({ status: 'open' }, null).text).toBe('Connecting…');
    expect(connectionIndicator({ status: 'open' }, { status: 'connected', since: T0 })).toEqual({ text: 'Connected', tone: 'ok', detail: 'Receiving calls' });
    expect(connectionIndicator({ status: 'open' }, { status: 'reconnecting', since: T0, lastError: 'HTTP 401' })).toEqual({
      text: 'Reconnecting…',
      tone: 'down',
      detail: 'HTTP 401',
    });
    expect(connectionIndicator({ status: 'unavailable', message: 'no token' }, null).text).toBe('Not connected');
  });

  it('shows the time of day for today and the date before', () => {
    const now = new Date(2026, 2, 10, 15, 0).getTime();
    expect(formatCallTime(new Date(2026, 2, 10, 9, 5).getTime(), now, 'en-GB')).toBe('09:05');
    expect(formatCallTime(new Date(2026, 2, 8, 9, 5).getTime(), now, 'en-GB')).toBe('Sun 09:05');
    expect(formatCallTime(new Date(2026, 0, 3, 9, 5).getTime(), now, 'en-GB')).toBe('3 Jan 09:05');
  });

  it('says "Reconnecting…" for an active call whose media is away, and nothing else changes', () => {
    const call = active('wacid.9');
    expect(phaseText(call)).toBe('Connected');
    expect(phaseText(call, true)).toBe('Reconnecting…');
    expect(phaseText(ringing('wacid.8'), true)).toBe('Incoming call');
  });

  it('sums a call\'s quality up in a few words for the recent calls', () => {
    expect(qualitySummaryText({ samples: 60, avgMos: 4.38, worstMos: 4.36, worstLossPercent: 0, warningsSeen: [] })).toBe('MOS 4.3');
    expect(qualitySummaryText({ samples: 60, avgMos: 3.9, worstMos: 3.1, worstLossPercent: 6.2, warningsSeen: ['high-packet-loss', 'low-mos'] })).toBe(
      'MOS 3.9 (worst 3.1), loss up to 6.2 %; warned: packet loss, poor quality',
    );
    expect(qualitySummaryText({ samples: 20, avgMos: 4.4, worstMos: 4.4, worstLossPercent: 0, warningsSeen: ['no-inbound-media'] })).toBe('MOS 4.4; warned: audio stopped');
    expect(qualitySummaryText({ samples: 0, avgMos: null, worstMos: null, worstLossPercent: null, warningsSeen: [] })).toBeUndefined();
  });
});

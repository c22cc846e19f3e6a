// The one voice_call payload codec (shared/voice-call-payload.ts): what the app writes is read back
// as ours; everything else — absent, too long, unversioned, another version, malformed, someone
// else's JSON — names no agent, so that the relay and the UI agree on it.
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { decodeVoiceCallPayload, encodeVoiceCallPayload, VOICE_CALL_PAYLOAD_MAX_CHARS, type ForeignPayloadReason } from '../../../shared/voice-call-payload';

const TO = '447700900123';
const FIELD = 'interactive.action.parameters.payload';

describe('encodeVoiceCallPayload', () => {
  test('writes {"v":1,"agentId":…,"contact":…}', () => {
    expect(encodeVoiceCallPayload({ agentId: 'agent-7', contact: TO })).toEqual({ ok: true, value: `{"v":1,"agentId":"agent-7","contact":"${TO}"}` });
  });

  test('refuses an empty agent id, naming the payload field', () => {
    for (const agentId of ['', ' ', '\t']) {
      const encoded = encodeVoiceCallPayload({ agentId, contact: TO });
      expect(encoded, JSON.stringify(agentId)).toMatchObject({ ok: false, error: { code: 'invalid_input', field: FIELD } });
    }
  });

  test('fits in 512 characters exactly, and refuses one character more', () => {
    const overhead = JSON.stringify({ v: 1, agentId: '', contact: TO }).length;
    const longest = 'a'.repeat(VOICE_CALL_PAYLOAD_MAX_CHARS - overhead);
    const fits = encodeVoiceCallPayload({ agentId: longest, contact: TO });
    expect(fits.ok).toBe(true);
    if (fits.ok) {
      expect(fits.value).toHaveLength(512);
      expect(decodeVoiceCallPayload(fits.value)).toEqual({ kind: 'ours', payload: { v: 1, agentId: longest, contact: TO } });
    }
    const over = encodeVoiceCallPayload({ agentId: `${longest}a`, contact: TO });
    expect(over).toMatchObject({ ok: false, error: { code: 'invalid_input', field: FIELD } });
    if (!over.ok) expect(over.error.message).toContain('at most 512 characters');
  });

  test('round-trips every agent id and contact that fits, whatever their characters', () => {
    fc.assert(
      fc.property(fc.string({ minLength: 1, maxLength: 300 }).filter((s) => s.trim() !== ''), fc.string({ maxLength: 200 }), (agentId, contact) => {
        const encoded = encodeVoiceCallPayload({ agentId, contact });
        if (!encoded.ok) {
          // Only refused when the JSON text (escapes included) is too long.
          expect(JSON.stringify({ v: 1, agentId, contact }).length).toBeGreaterThan(VOICE_CALL_PAYLOAD_MAX_CHARS);
          return;
        }
        expect(encoded.value.length).toBeLessThanOrEqual(VOICE_CALL_PAYLOAD_MAX_CHARS);
        expect(decodeVoiceCallPayload(encoded.value)).toEqual({ kind: 'ours', payload: { v: 1, agentId, contact } });
      }),
    );
  });
});

describe('decodeVoiceCallPayload', () => {
  test('reads a payload of this app, with or without the contact, ignoring fields it does not know', () => {
    expect(decodeVoiceCallPayload('{"v":1,"agentId":"alice"}')).toEqual({ kind: 'ours', payload: { v: 1, agentId: 'alice' } });
    expect(decodeVoiceCallPayload(`{"v":1,"agentId":"alice","contact":"${TO}","later":[1]}`)).toEqual({ kind: 'ours', payload: { v: 1, agentId: 'alice', contact: TO } });
  });

  test('says when there is no payload at all', () => {
    expect(decodeVoiceCallPayload(undefined)).toEqual({ kind: 'absent' });
  });

  test.each<[string, string, ForeignPayloadReason]>([
    ['an unversioned (older) payload', '{"agentId":"bob"}', 'unversioned'],
    ['an unversioned payload with more fields', '{"agentId":"bob","other":[1]}', 'unversioned'],
    ['a newer version', '{"v":2,"agentId":"bob"}', 'unknown_version'],
    ['a version as a string', '{"v":"1","agentId":"bob"}', 'unknown_version'],
    ['a version of null', '{"v":null,"agentId":"bob"}', 'unknown_version'],
    ['plain text', 'call me', 'not_json'],
    ['an empty payload', '', 'not_json'],
    ['truncated JSON', '{"v":1,"agentId":"bo', 'not_json'],
    ['a JSON array', '["bob"]', 'malformed'],
    ['JSON null', 'null', 'malformed'],
    ['a JSON string', '"bob"', 'malformed'],
    ['a number', '42', 'malformed'],
    ['no agent', '{"v":1}', 'malformed'],
    ['an empty agent', '{"v":1,"agentId":""}', 'malformed'],
    ['an agent that is not a string', '{"v":1,"agentId":7}', 'malformed'],
    ['a contact that is not a string', '{"v":1,"agentId":"bob","contact":7}', 'malformed'],
  ])('%s is not ours (%j)', (_, payload, reason) => {
    expect(decodeVoiceCallPayload(payload)).toEqual({ kind: 'foreign', reason });
  });

  test('a payload over 512 characters is not ours, even when it is well formed', () => {
    const agentId = 'a'.repeat(VOICE_CALL_PAYLOAD_MAX_CHARS);
    const payload = JSON.stringify({ v: 1, agentId });
    expect(payload.length).toBeGreaterThan(VOICE_CALL_PAYLOAD_MAX_CHARS);
    expect(decodeVoiceCallPayload(payload)).toEqual({ kind: 'foreign', reason: 'too_long' });
    // 1 024 characters, what the relay used to accept, is far beyond the gateway's limit.
    expect(decodeVoiceCallPayload(`{"v":1,"agentId":"${'b'.repeat(1000)}"}`)).toEqual({ kind: 'foreign', reason: 'too_long' });
  });

  test('never throws, and reads nothing as ours that does not carry version 1 and an agent', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.json()), (payload) => {
        const decoded = decodeVoiceCallPayload(payload);
        if (decoded.kind !== 'ours') return;
        const data = JSON.parse(payload) as { v?: unknown; agentId?: unknown };
        expect(data.v).toBe(1);
        expect(decoded.payload.agentId).toBe(data.agentId);
      }),
    );
  });
});

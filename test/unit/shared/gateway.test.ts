// gateway-spec.md 4.2 (call control bodies) and protocol.md (success bodies, Graph error envelope).
import { describe, expect, it } from 'vitest';
import {
  CALL_ACTIONS,
  callActionSuccessSchema,
  callRequestSchemas,
  DEFAULT_PRODUCT,
  GATEWAY_ERROR_TEXT,
  GATEWAY_NUMBER,
  gatewayNumberSchema,
  graphErrorSchema,
  initiateSuccessSchema,
  type CallAction,
} from '../../../shared/gateway';
import type { AppError } from '../../../shared/result';
import { fieldPath, parseWith } from '../../../shared/validation';
import { ANSWER_SDP, DIAL_OFFER_SDP } from '../../fixtures/sdp';

const CALL_ID = 'wacid.HBgLMTIwMjU1NTAxNDMVAgARGBI2Nw';
const schemas = callRequestSchemas();

const VALID: Record<CallAction, Record<string, unknown>> = {
  accept: { messaging_product: 'chatapp', call_id: CALL_ID, action: 'accept', session: { sdp_type: 'answer', sdp: ANSWER_SDP } },
  reject: { messaging_product: 'chatapp', call_id: CALL_ID, action: 'reject' },
  terminate: { messaging_product: 'chatapp', call_id: CALL_ID, action: 'terminate' },
  initiate: { messaging_product: 'chatapp', to: '12025550143', action: 'connect', session: { sdp_type: 'offer', sdp: DIAL_OFFER_SDP } },
};

/** A copy of `body` with `path` set to `value`; `undefined` removes the member. */
function withField(body: Record<string, unknown>, path: string, value: unknown): Record<string, unknown> {
  const copy = structuredClone(body);
  const keys = path.split('.');
  let target: Record<string, unknown> = copy;
  for (const k of keys.slice(0, -1)) target = target[k] as Record<string, unknown>;
  const last = keys[keys.length - 1]!;
  if (value === undefined) delete target[last];
  else target[last] = value;
  return copy;
}

function refusal(action: CallAction, body: unknown): AppError {
  const result = parseWith(schemas[action], body);
  if (result.ok) throw new Error(`expected ${action} to refuse ${JSON.stringify(body)}`);
  expect(result.error.code).toBe('invalid_input');
  return result.error;
}

describe('callRequestSchemas: valid bodies (gateway-spec.md 4.2)', () => {
  it.each(CALL_ACTIONS)('accepts the %s body exactly as the spec gives it', (action) => {
    const result = parseWith(schemas[action], VALID[action]);
    expect(result).toEqual({ ok: true, value: VALID[action] });
  });

  it('has one schema per call-control path', () => {
    expect([...CALL_ACTIONS]).toEqual(['accept', 'reject', 'terminate', 'initiate']);
    expect(Object.keys(schemas).sort()).toEqual([...CALL_ACTIONS].sort());
  });

  it('uses "chatapp" as the default product word', () => {
    expect(DEFAULT_PRODUCT).toBe('chatapp');
  });
});

describe('callRequestSchemas: every rule names its field', () => {
  // [action, field path, bad value (undefined = missing), words the message must contain]
  const cases: [CallAction, string, unknown, string][] = [
    // messaging_product: the constant product word
    ['accept', 'messaging_product', undefined, 'must be "chatapp"'],
    ['accept', 'messaging_product', 'whatsapp', 'must be "chatapp"'],
    ['accept', 'messaging_product', 1, 'must be "chatapp"'],
    ['reject', 'messaging_product', 'CHATAPP', 'must be "chatapp"'],
    ['terminate', 'messaging_product', null, 'must be "chatapp"'],
    ['initiate', 'messaging_product', '', 'must be "chatapp"'],
    // call_id: a non-empty string
    ['accept', 'call_id', undefined, 'is required and must be a string'],
    ['accept', 'call_id', 42, 'is required and must be a string'],
    ['accept', 'call_id', '', 'call_id must not be empty'],
    ['reject', 'call_id', undefined, 'is required and must be a string'],
    ['reject', 'call_id', '', 'call_id must not be empty'],
    ['terminate', 'call_id', ['wacid.1'], 'is required and must be a string'],
    ['terminate', 'call_id', '', 'call_id must not be empty'],
    // action: the literal of each path; initiate's body says "connect"
    ['accept', 'action', undefined, 'must be "accept"'],
    ['accept', 'action', 'reject', 'must be "accept"'],
    ['reject', 'action', 'decline', 'must be "reject"'],
    ['reject', 'action', 'Reject', 'must be "reject"'],
    ['terminate', 'action', 'hangup', 'must be "terminate"'],
    ['terminate', 'action', undefined, 'must be "terminate"'],
    ['initiate', 'action', 'initiate', 'must be "connect" (the path is initiate, the action is connect)'],
    ['initiate', 'action', undefined, 'must be "connect"'],
    ['initiate', 'action', 'CONNECT', 'must be "connect"'],
    // session: an object with sdp_type and sdp
    ['accept', 'session', undefined, 'expected object'],
    ['accept', 'session', ANSWER_SDP, 'expected object'],
    ['accept', 'session.sdp_type', 'offer', 'must be "answer" when accepting'],
    ['accept', 'session.sdp_type', undefined, 'must be "answer" when accepting'],
    ['accept', 'session.sdp_type', 'ANSWER', 'must be "answer" when accepting'],
    ['accept', 'session.sdp', undefined, 'is required and must be a string'],
    ['accept', 'session.sdp', '', 'sdp must not be empty'],
    ['accept', 'session.sdp', { type: 'answer' }, 'is required and must be a string'],
    ['initiate', 'session', null, 'expected object'],
    ['initiate', 'session.sdp_type', 'answer', 'must be "offer" when initiating'],
    ['initiate', 'session.sdp_type', 'pranswer', 'must be "offer" when initiating'],
    ['initiate', 'session.sdp', '', 'sdp must not be empty'],
    ['initiate', 'session.sdp', 7, 'is required and must be a string'],
    // to: digits only with the country code (gateway-spec.md 2.1)
    ['initiate', 'to', undefined, 'is required and must be a string'],
    ['initiate', 'to', 12025550143, 'is required and must be a string'],
    ['initiate', 'to', '+12025550143', 'must be digits only with the country code'],
    ['initiate', 'to', '+44 20 7946 0958', 'must be digits only with the country code'],
    ['initiate', 'to', '44 20 7946 0958', 'must be digits only with the country code'],
    ['initiate', 'to', '44-20-7946-0958', 'must be digits only with the country code'],
    ['initiate', 'to', '(202) 555-0143', 'must be digits only with the country code'],
    ['initiate', 'to', '02079460958', 'must be digits only with the country code'], // national, no country code
    ['initiate', 'to', '00442079460958', 'must be digits only with the country code'], // international prefix
    ['initiate', 'to', '123456', 'must be digits only with the country code'], // 6 digits
    ['initiate', 'to', '1234567890123456', 'must be digits only with the country code'], // 16 digits
    ['initiate', 'to', '', 'must be digits only with the country code'],
    ['initiate', 'to', '4420794609５8', 'must be digits only with the country code'], // a full-width digit
  ];

  it.each(cases)('%s: %s = %j is refused', (action, path, value, rule) => {
    const error = refusal(action, withField(VALID[action], path, value));
    expect(error.field).toBe(path);
    expect(error.message).toContain(`${path}: `);
    expect(error.message).toContain(rule);
  });

  it.each([
    ['accept', 'extra', '(root)'],
    ['accept', 'session.ice', 'session'],
    ['reject', 'session', '(root)'], // reject carries no session
    ['reject', 'to', '(root)'],
    ['terminate', 'reason', '(root)'],
    ['terminate', 'session', '(root)'],
    ['initiate', 'call_id', '(root)'], // the gateway assigns the id
    ['initiate', 'session.candidates', 'session'],
  ] as [CallAction, string, string][])('%s: an extra member %s is refused at %s', (action, path, field) => {
    const error = refusal(action, withField(VALID[action], path, 'x'));
    expect(error.field).toBe(field);
    expect(error.message).toContain(`Unrecognized key: "${path.split('.').pop()}"`);
  });

  it.each(CALL_ACTIONS)('%s: anything but an object is refused at the root', (action) => {
    for (const body of [null, undefined, 'accept', 42, [VALID[action]]]) {
      expect(refusal(action, body).field).toBe('(root)');
    }
  });

  it('names the first broken rule as the field and lists the others in the message', () => {
    const error = refusal('initiate', { messaging_product: 'chatapp', to: '+447911123456', action: 'initiate', session: { sdp_type: 'answer', sdp: '' } });
    expect(error.field).toBe('to');
    expect(error.message).toContain('to: must be digits only');
    expect(error.message).toContain('action: must be "connect"');
    expect(error.message).toContain('session.sdp_type: must be "offer" when initiating');
    expect(error.message).toContain('session.sdp: sdp must not be empty');
  });

  it('accepts the shortest and the longest gateway numbers (7 and 15 digits)', () => {
    for (const to of ['1234567', '123456789012345', '447911123456', '919876543210']) {
      expect(parseWith(schemas.initiate, { ...VALID.initiate, to }).ok).toBe(true);
    }
  });
});

describe('callRequestSchemas: a non-default product word', () => {
  const acme = callRequestSchemas('acmechat');

  it.each(CALL_ACTIONS)('%s requires the account\'s word and refuses "chatapp"', (action) => {
    const body = { ...VALID[action], messaging_product: 'acmechat' };
    expect(parseWith(acme[action], body)).toEqual({ ok: true, value: body });
    const refused = parseWith(acme[action], VALID[action]);
    expect(refused.ok).toBe(false);
    if (!refused.ok) {
      expect(refused.error.field).toBe('messaging_product');
      expect(refused.error.message).toContain('must be "acmechat"');
    }
  });

  it('leaves the default schemas alone', () => {
    expect(parseWith(schemas.accept, { ...VALID.accept, messaging_product: 'acmechat' }).ok).toBe(false);
  });
});

describe('gatewayNumberSchema', () => {
  it('is the gateway form: 7 to 15 digits, no leading zero, no "+"', () => {
    expect(GATEWAY_NUMBER.test('442079460958')).toBe(true);
    expect(GATEWAY_NUMBER.test('0442079460958')).toBe(false);
    expect(gatewayNumberSchema.safeParse('12025550143').success).toBe(true);
    expect(gatewayNumberSchema.safeParse('+12025550143').success).toBe(false);
    expect(gatewayNumberSchema.safeParse('12025550143\n').success).toBe(false);
  });
});

describe('success bodies (protocol.md)', () => {
  it('accepts accept/reject/terminate success, whatever the product word', () => {
    expect(parseWith(callActionSuccessSchema, { messaging_product: 'chatapp', success: true }).ok).toBe(true);
    expect(parseWith(callActionSuccessSchema, { messaging_product: 'acmechat', success: true }).ok).toBe(true);
  });

  it('refuses a success body that does not say success', () => {
    const cases: [unknown, string][] = [
      [{ messaging_product: 'chatapp', success: false }, 'success'],
      [{ messaging_product: 'chatapp', success: 'true' }, 'success'],
      [{ messaging_product: 'chatapp' }, 'success'],
      [{ success: true }, 'messaging_product'],
      [{ error: { message: 'x', code: 1 } }, 'messaging_product'],
      ['OK', '(root)'],
    ];
    for (const [body, field] of cases) {
      const result = parseWith(callActionSuccessSchema, body);
      expect(result.ok).toBe(false);
      if (!result.ok) expect(result.error.field).toBe(field);
    }
  });

  it("accepts initiate's success and keeps the new call's id", () => {
    const result = parseWith(initiateSuccessSchema, { messaging_product: 'chatapp', calls: [{ id: CALL_ID }] });
    expect(result).toEqual({ ok: true, value: { messaging_product: 'chatapp', calls: [{ id: CALL_ID }] } });
  });

  it('refuses an initiate success without a usable call id', () => {
    const cases: [unknown, string][] = [
      [{ messaging_product: 'chatapp', calls: [] }, 'calls'],
      [{ messaging_product: 'chatapp', calls: [{ id: '' }] }, 'calls[0].id'],
      [{ messaging_product: 'chatapp', calls: [{}] }, 'calls[0].id'],
      [{ messaging_product: 'chatapp', calls: [{ id: 5 }] }, 'calls[0].id'],
      [{ messaging_product: 'chatapp', calls: { id: CALL_ID } }, 'calls'],
      [{ messaging_product: 'chatapp', success: true }, 'calls'],
    ];
    for (const [body, field] of cases) {
      const result = parseWith(initiateSuccessSchema, body);
      expect(result.ok).toBe(false);
      if (!result.ok) expect(result.error.field).toBe(field);
    }
  });
});

describe('graphErrorSchema (protocol.md)', () => {
  const full = {
    error: {
      message: '(#138006) No approved call permission from the recipient',
      type: 'OAuthException',
      code: 138006,
      error_subcode: 2494000,
      error_data: { messaging_product: 'chatapp', details: 'No approved call permission' },
      fbtrace_id: 'AbCdEf123',
    },
  };

  it('accepts the full envelope and one with only message and code', () => {
    expect(parseWith(graphErrorSchema, full)).toEqual({ ok: true, value: full });
    expect(parseWith(graphErrorSchema, { error: { message: 'Invalid parameter', code: 100 } }).ok).toBe(true);
  });

  it('refuses what is not the envelope, so that it is kept as an opaque error', () => {
    const cases: [unknown, string][] = [
      [{ error: { message: 'x', code: '138006' } }, 'error.code'],
      [{ error: { code: 138006 } }, 'error.message'],
      [{ error: 'Bad Gateway' }, 'error'],
      [{ message: 'x', code: 100 }, 'error'],
      ['<html>502 Bad Gateway</html>', '(root)'],
      [{ error: { message: 'x', code: 100, fbtrace_id: 7 } }, 'error.fbtrace_id'],
    ];
    for (const [body, field] of cases) {
      const result = parseWith(graphErrorSchema, body);
      expect(result.ok).toBe(false);
      if (!result.ok) expect(result.error.field).toBe(field);
    }
  });
});

describe('GATEWAY_ERROR_TEXT', () => {
  it('has a clear message for every code protocol.md lists', () => {
    const listed = [
      100, 131047, 131009, 138000, 138001, 138002, 138003, 138004, 138005, 138006, 138007, 138009, 138012, 138013, 138014, 138019, 138020,
      138021, 138022, 138023,
    ];
    for (const code of listed) expect(GATEWAY_ERROR_TEXT[code], String(code)).toMatch(/\S{3,}/);
    expect(GATEWAY_ERROR_TEXT[138006]).toContain('call-permission request');
    expect(GATEWAY_ERROR_TEXT[131047]).toContain('template');
    expect(GATEWAY_ERROR_TEXT[999999]).toBeUndefined();
  });
});

describe('fieldPath', () => {
  it('joins zod paths the way the rest of the app names fields', () => {
    expect(fieldPath([])).toBe('(root)');
    expect(fieldPath(['session', 'sdp'])).toBe('session.sdp');
    expect(fieldPath(['calls', 0, 'id'])).toBe('calls[0].id');
    expect(fieldPath([0, 'id'])).toBe('[0].id');
  });
});

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { relayEventSchema } from '../../../shared/events';
import { normaliseWebhook, normaliseWebhookDetailed, type WebhookValue } from '../../../shared/webhook';
import {
  ANSWER_SDP,
  BUSINESS,
  CUSTOMER,
  OFFER_SDP,
  answeredCall,
  callStatus,
  envelope,
  inboundText,
  incomingCall,
  incomingCallItem,
  messageStatus,
  terminatedCall,
} from './webhook-fixtures';

const T = '1718000000';
const T_MS = 1_718_000_000_000;

describe('normaliseWebhook: calls', () => {
  it('turns a USER_INITIATED connect with an offer into call.incoming, with the contact name', () => {
    const events = normaliseWebhook(incomingCall('wacid.A', { timestamp: T, cta_payload: 'agent-7', deeplink_payload: 'dl' }));
    expect(events).toEqual([
      {
        type: 'call.incoming',
        callId: 'wacid.A',
        from: CUSTOMER,
        name: 'Ada Customer',
        to: BUSINESS,
        sdp: OFFER_SDP,
        timestamp: T_MS,
        ctaPayload: 'agent-7',
        deeplinkPayload: 'dl',
      },
    ]);
  });

  it('accepts the bare value object and a single forwarded change as well as the envelope', () => {
    const full = incomingCall('wacid.B', { timestamp: T });
    const change = full.entry[0]!.changes[0]!;
    const expected = normaliseWebhook(full);
    expect(expected).toHaveLength(1);
    expect(normaliseWebhook(change.value)).toEqual(expected);
    expect(normaliseWebhook(change)).toEqual(expected);
    // The `object` string is not relied upon (protocol.md).
    expect(normaliseWebhook({ ...full, object: 'somebrand_business_account' })).toEqual(expected);
    expect(normaliseWebhook({ entry: full.entry })).toEqual(expected);
  });

  it('uses from_user_id when the number is missing, and finds the name by user_id', () => {
    const value: WebhookValue = {
      contacts: [{ profile: { name: 'Scoped User' }, user_id: 'US.13491208655302741918' }],
      calls: [{ ...incomingCallItem('wacid.C', { timestamp: T }), from: undefined, from_user_id: 'US.13491208655302741918' }],
    };
    const [event] = normaliseWebhook(envelope('calls', value));
    expect(event).toMatchObject({ type: 'call.incoming', callId: 'wacid.C', fromUserId: 'US.13491208655302741918', name: 'Scoped User' });
    expect(event).not.toHaveProperty('from');
  });

  it('does not crash on a connect with neither from nor from_user_id', () => {
    const item = { ...incomingCallItem('wacid.D', { timestamp: T }), from: undefined };
    const [event] = normaliseWebhook({ calls: [item] });
    expect(event).toMatchObject({ type: 'call.incoming', callId: 'wacid.D' });
    expect(event).not.toHaveProperty('from');
    expect(event).not.toHaveProperty('name');
  });

  it('turns a BUSINESS_INITIATED connect with an answer into call.answered', () => {
    expect(normaliseWebhook(answeredCall('wacid.E', { timestamp: T }))).toEqual([{ type: 'call.answered', callId: 'wacid.E', sdp: ANSWER_SDP, timestamp: T_MS }]);
  });

  it('reads the legacy connection.webrtc.sdp of an answer', () => {
    const body = answeredCall('wacid.F', { timestamp: T, session: undefined, connection: { webrtc: { sdp: ANSWER_SDP } } });
    expect(normaliseWebhook(body)).toEqual([{ type: 'call.answered', callId: 'wacid.F', sdp: ANSWER_SDP, timestamp: T_MS }]);
  });

  it('skips a connect whose SDP type contradicts its direction, or that has no SDP', () => {
    const wrongType = normaliseWebhookDetailed(incomingCall('wacid.G', { session: { sdp_type: 'answer', sdp: ANSWER_SDP } }));
    expect(wrongType.events).toEqual([]);
    expect(wrongType.skipped[0]?.path).toBe('entry[0].changes[0].value.calls[0].session.sdp_type');
    const noSdp = normaliseWebhookDetailed(incomingCall('wacid.H', { session: undefined }));
    expect(noSdp.events).toEqual([]);
    expect(noSdp.skipped[0]?.reason).toMatch(/SDP/);
  });

  it('turns call statuses into call.status', () => {
    expect(normaliseWebhook(callStatus('wacid.I', 'RINGING'))[0]).toMatchObject({ type: 'call.status', callId: 'wacid.I', status: 'RINGING', recipientId: CUSTOMER });
    const accepted = { statuses: [{ id: 'wacid.I', type: 'call', status: 'ACCEPTED', timestamp: T }] };
    expect(normaliseWebhook(accepted)).toEqual([{ type: 'call.status', callId: 'wacid.I', status: 'ACCEPTED', timestamp: T_MS }]);
    const rejected = { statuses: [{ id: 'wacid.I', type: 'call', status: 'REJECTED', timestamp: T }] };
    expect(normaliseWebhook(rejected)[0]).toMatchObject({ status: 'REJECTED' });
  });

  it('turns a completed terminate into call.terminated with times in ms and the duration', () => {
    const body = terminatedCall('wacid.J', { timestamp: T, start_time: '1718000010', end_time: '1718000070', duration: 60 });
    expect(normaliseWebhook(body)).toEqual([
      { type: 'call.terminated', callId: 'wacid.J', status: 'COMPLETED', timestamp: T_MS, startTime: 1_718_000_010_000, endTime: 1_718_000_070_000, durationSec: 60 },
    ]);
  });

  it('carries the errors of a failed terminate (message or title, and details)', () => {
    const body = terminatedCall('wacid.K', {
      timestamp: T,
      status: 'FAILED',
      errors: [
        { code: 138021, message: 'Media receive timeout', error_data: { details: 'no media from the business for 20 s' } },
        { code: 138004, title: 'Connection error' },
      ],
    });
    expect(normaliseWebhook(body)).toEqual([
      {
        type: 'call.terminated',
        callId: 'wacid.K',
        status: 'FAILED',
        timestamp: T_MS,
        errors: [
          { code: 138021, message: 'Media receive timeout', details: 'no media from the business for 20 s' },
          { code: 138004, message: 'Connection error' },
        ],
      },
    ]);
  });

  it('never loses a terminate over a missing status or timestamp', () => {
    const noStatus = { calls: [{ id: 'wacid.L', event: 'terminate', timestamp: T }] };
    expect(normaliseWebhook(noStatus)[0]).toMatchObject({ type: 'call.terminated', status: 'COMPLETED' });
    const failedNoStatus = { calls: [{ id: 'wacid.L', event: 'terminate', timestamp: T, errors: [{ code: 138007, message: 'timeout' }] }] };
    expect(normaliseWebhook(failedNoStatus)[0]).toMatchObject({ status: 'FAILED' });
    const noTimestamp = { calls: [{ id: 'wacid.L', event: 'terminate', status: 'COMPLETED', end_time: '1718000070' }] };
    expect(normaliseWebhook(noTimestamp)[0]).toMatchObject({ timestamp: 1_718_000_070_000 });
  });
});

describe('normaliseWebhook: messages', () => {
  it('turns a text message into message.inbound with the text and contact name', () => {
    const body = inboundText('wamid.1', 'Please call me', { timestamp: T });
    expect(normaliseWebhook(body)).toEqual([
      { type: 'message.inbound', messageId: 'wamid.1', from: CUSTOMER, name: 'Ada Customer', timestamp: T_MS, messageType: 'text', text: 'Please call me' },
    ]);
  });

  it('reads a call-permission reply', () => {
    const body = inboundText('wamid.2', '', {
      timestamp: T,
      type: 'interactive',
      text: undefined,
      interactive: { type: 'call_permission_reply', call_permission_reply: { response: 'accept', is_permanent: false, expiration_timestamp: 1718604800 } },
    });
    expect(normaliseWebhook(body)[0]).toEqual({
      type: 'message.inbound',
      messageId: 'wamid.2',
      from: CUSTOMER,
      name: 'Ada Customer',
      timestamp: T_MS,
      messageType: 'interactive',
      permissionReply: { response: 'accept', isPermanent: false, expiresAt: 1_718_604_800_000 },
    });
  });

  it('turns message statuses into message.status, errors included', () => {
    expect(normaliseWebhook(messageStatus('wamid.3', 'read', { timestamp: T }))).toEqual([
      { type: 'message.status', messageId: 'wamid.3', status: 'read', timestamp: T_MS, recipientId: CUSTOMER },
    ]);
    const failed = messageStatus('wamid.4', 'failed', { timestamp: T, errors: [{ code: 131047, title: 'Re-engagement message' }] });
    expect(normaliseWebhook(failed)[0]).toMatchObject({ status: 'failed', errors: [{ code: 131047, message: 'Re-engagement message' }] });
  });
});

describe('normaliseWebhook: robustness', () => {
  it('reads timestamps given as strings or numbers, and milliseconds as milliseconds', () => {
    const at = (timestamp: unknown) => normaliseWebhook({ statuses: [{ id: 'wamid.ts', status: 'sent', timestamp }] })[0]?.timestamp;
    expect(at('1718000000')).toBe(T_MS);
    expect(at(1718000000)).toBe(T_MS);
    expect(at(' 1718000000 ')).toBe(T_MS);
    expect(at('1718000000.5')).toBe(T_MS + 500);
    expect(at('1718000000123')).toBe(T_MS + 123);
    expect(at('-1')).toBeUndefined();
    expect(at('2024-06-10T06:13:20Z')).toBeUndefined();
  });

  it('keeps every event of a webhook that mixes calls, statuses and messages in several entries', () => {
    const a = incomingCall('wacid.M1');
    const b = messageStatus('wamid.M2', 'delivered');
    const body = { object: 'x', entry: [...a.entry, ...b.entry] };
    expect(normaliseWebhook(body).map((e) => e.type)).toEqual(['call.incoming', 'message.status']);
  });

  it('ignores unknown events, fields and statuses without reporting them as malformed', () => {
    const body = {
      object: 'chatapp_business_account',
      entry: [
        {
          id: '1',
          changes: [
            { field: 'account_update', value: { event: 'VERIFIED_ACCOUNT', ban_info: {} } },
            {
              field: 'calls',
              value: {
                calls: [{ id: 'wacid.N', event: 'pre_accept_started', timestamp: T }],
                statuses: [
                  { id: 'wacid.N', type: 'call', status: 'RINGING_SOMEWHERE_ELSE', timestamp: T },
                  { id: 'wamid.N', status: 'deleted', timestamp: T },
                ],
                something_new: [1, 2, 3],
              },
            },
          ],
        },
      ],
    };
    expect(normaliseWebhookDetailed(body)).toEqual({ events: [], skipped: [] });
  });

  it('skips malformed items one by one and keeps the good ones', () => {
    const value = {
      calls: [{ id: 42, event: 'connect' }, incomingCallItem('wacid.O', { timestamp: T }), { ...incomingCallItem('wacid.P'), timestamp: 'yesterday' }, null, 'text'],
      statuses: [{ id: 'wamid.Q', status: 'read' }, { id: 'wamid.R', status: 'sent', timestamp: T }],
      messages: [{ from: CUSTOMER, timestamp: T, type: 'text' }, { from: CUSTOMER, id: 'wamid.S', timestamp: T, type: 'text', text: { body: 'hi' } }],
    };
    const result = normaliseWebhookDetailed(value);
    expect(result.events.map((e) => ('callId' in e ? e.callId : e.messageId))).toEqual(['wacid.O', 'wamid.R', 'wamid.S']);
    expect(result.skipped.map((s) => s.path)).toEqual(['calls[0].id', 'calls[2].timestamp', 'calls[3]', 'calls[4]', 'statuses[0].timestamp', 'messages[0].id']);
  });

  it('drops optional members of the wrong type instead of the whole item', () => {
    const item = { ...incomingCallItem('wacid.T', { timestamp: T }), to: { nested: true }, cta_payload: 7, from: 447700900123 };
    const [event] = normaliseWebhook({ calls: [item] });
    expect(event).toMatchObject({ type: 'call.incoming', callId: 'wacid.T', ctaPayload: '7', from: '447700900123' });
    expect(event).not.toHaveProperty('to');
  });

  it('never throws on garbage, and whatever it returns satisfies the event schema', () => {
    fc.assert(
      fc.property(fc.anything({ withNullPrototype: true, withBigInt: true, withDate: true, withMap: true, withSet: true, withTypedArray: true }), (junk) => {
        const events = normaliseWebhook(junk);
        for (const e of events) expect(relayEventSchema.safeParse(e).success).toBe(true);
      }),
      { numRuns: 500 },
    );
  });

  it('never throws on valid webhooks with members replaced by random values', () => {
    const samples = [incomingCall('wacid.U'), answeredCall('wacid.V'), terminatedCall('wacid.W', { status: 'FAILED', errors: [{ code: 1, message: 'x' }] }), inboundText('wamid.X', 'hello'), messageStatus('wamid.Y', 'sent')];
    const item = (sample: (typeof samples)[number]) => sample.entry[0]!.changes[0]!.value;
    fc.assert(
      fc.property(fc.constantFrom(...samples), fc.string(), fc.anything(), (sample, key, junk) => {
        const value = structuredClone(item(sample)) as Record<string, unknown>;
        for (const list of ['calls', 'statuses', 'messages'] as const) {
          const first = (value[list] as Record<string, unknown>[] | undefined)?.[0];
          if (first) {
            const keys = Object.keys(first);
            first[keys[key.length % keys.length]!] = junk;
          }
        }
        const events = normaliseWebhook({ entry: [{ changes: [{ field: 'calls', value }] }] });
        for (const e of events) expect(relayEventSchema.safeParse(e).success).toBe(true);
      }),
      { numRuns: 500 },
    );
  });
});

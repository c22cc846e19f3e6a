import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { relayEventSchema } from '../../../shared/events';
import { normaliseWebhook, normaliseWebhookDetailed, type CallPermissionReply, type CallWebhookItem, type WebhookValue } from '../../../shared/webhook';
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

// ---------------------------------------------------------------------------------------------
// protocol.md "What real payloads show": one test per difference, on payloads shaped like the
// published samples and live captures (the envelope and items of webhook-fixtures.ts, with the
// members real payloads add or leave out).

/** A live incoming offer: port 3480, ptime/maxptime 20, the live Opus fmtp, IPv4 and IPv6 host candidates, no end-of-candidates. */
const LIVE_OFFER_SDP = [
  'v=0',
  'o=- 1763880000 2 IN IP4 127.0.0.1',
  's=-',
  't=0 0',
  'a=group:BUNDLE audio',
  'a=msid-semantic: WMS',
  'a=ice-lite',
  'm=audio 3480 UDP/TLS/RTP/SAVPF 111 126',
  'c=IN IP4 192.0.2.10',
  'a=rtcp:3480 IN IP4 192.0.2.10',
  'a=candidate:1 1 udp 2122260223 192.0.2.10 3480 typ host generation 0 network-cost 50',
  'a=candidate:2 1 udp 2122262783 2001:db8:f23d:1c3::699c 3480 typ host generation 0 network-cost 50',
  'a=ice-ufrag:Xk3o',
  'a=ice-pwd:7nLqZ1tq9c0Yh7yLw2C4rB',
  'a=fingerprint:sha-256 2E:4B:11:0C:5D:90:A1:3F:77:6E:08:BC:52:19:D4:AA:31:0F:E2:6C:8B:47:95:13:C8:70:2D:E6:9A:44:1B:F3',
  'a=setup:actpass',
  'a=mid:audio',
  'a=sendrecv',
  'a=rtcp-mux',
  'a=rtpmap:111 opus/48000/2',
  'a=rtcp-fb:111 transport-cc',
  'a=fmtp:111 maxaveragebitrate=20000;maxplaybackrate=16000;minptime=20;sprop-maxcapturerate=16000;useinbandfec=1',
  'a=rtpmap:126 telephone-event/8000',
  'a=ptime:20',
  'a=maxptime:20',
  '',
].join('\r\n');

/** The service's answer to a business offer: ice-lite, trickle announced, and the DTLS client. */
const LIVE_ANSWER_SDP = [
  'v=0',
  'o=- 1763880001 2 IN IP4 127.0.0.1',
  's=-',
  't=0 0',
  'a=group:BUNDLE 0',
  'a=ice-lite',
  'm=audio 3484 UDP/TLS/RTP/SAVPF 111 126',
  'c=IN IP4 192.0.2.11',
  'a=candidate:1 1 udp 2122260223 192.0.2.11 3484 typ host generation 0',
  'a=ice-ufrag:Pq8s',
  'a=ice-pwd:Vb1p0Qh7mN3xR2kT9wY5zA',
  'a=ice-options:trickle',
  'a=fingerprint:sha-256 7A:0D:E2:41:9C:33:58:B6:01:FF:2C:84:9E:63:D7:15:A8:40:CB:72:06:1E:95:3B:F4:58:C1:2A:6D:80:E7:09',
  'a=setup:active',
  'a=mid:0',
  'a=sendrecv',
  'a=rtcp-mux',
  'a=rtpmap:111 opus/48000/2',
  'a=rtpmap:126 telephone-event/8000',
  '',
].join('\r\n');

/** The legacy member as the service writes it: a JSON string, not an SDP. */
const legacyConnection = (sdp: string, type: 'offer' | 'answer' = 'answer') => ({ webrtc: { sdp: JSON.stringify({ sdp, type }) } });

const SCOPED_USER = 'US.13491208655302741918';
const PARENT_USER = 'US.ENT.11815799212886844830';

describe('normaliseWebhook: what real payloads show (protocol.md)', () => {
  it('reads the legacy connection.webrtc.sdp as the JSON string it is and takes its sdp', () => {
    const legacyOnly = answeredCall('wacid.L1', { timestamp: T, session: undefined, connection: legacyConnection(LIVE_ANSWER_SDP) });
    expect(normaliseWebhook(legacyOnly)).toEqual([{ type: 'call.answered', callId: 'wacid.L1', sdp: LIVE_ANSWER_SDP, timestamp: T_MS }]);
    // Beside session.sdp it holds the same SDP; the event is the same either way.
    const both = answeredCall('wacid.L1', { timestamp: T, session: { sdp_type: 'answer', sdp: LIVE_ANSWER_SDP }, connection: legacyConnection(LIVE_ANSWER_SDP) });
    expect(normaliseWebhook(both)).toEqual(normaliseWebhook(legacyOnly));
    // Its "type" says the direction when nothing else does.
    const undirected = { ...incomingCallItem('wacid.L2', { timestamp: T, session: undefined, connection: legacyConnection(OFFER_SDP, 'offer') }), direction: undefined };
    expect(normaliseWebhook({ calls: [undirected] })).toEqual([{ type: 'call.incoming', callId: 'wacid.L2', from: CUSTOMER, to: BUSINESS, sdp: OFFER_SDP, timestamp: T_MS }]);
  });

  it('ignores a legacy connection.webrtc.sdp that holds no SDP, and normalises from session.sdp', () => {
    for (const junk of [JSON.stringify({ type: 'answer' }), JSON.stringify({ sdp: '', type: 'answer' }), JSON.stringify({ sdp: 42 }), JSON.stringify(['v=0']), '42', 'null']) {
      const withSession = answeredCall('wacid.L3', { timestamp: T, connection: { webrtc: { sdp: junk } } });
      expect(normaliseWebhook(withSession)).toEqual([{ type: 'call.answered', callId: 'wacid.L3', sdp: ANSWER_SDP, timestamp: T_MS }]);
      const alone = normaliseWebhookDetailed(answeredCall('wacid.L3', { timestamp: T, session: undefined, connection: { webrtc: { sdp: junk } } }));
      expect(alone.events).toEqual([]);
      expect(alone.skipped).toEqual([{ path: 'entry[0].changes[0].value.calls[0].session.sdp', reason: 'a connect must carry an SDP' }]);
    }
  });

  it('passes a live incoming offer on byte for byte, whatever else the connect carries', () => {
    const item = {
      ...incomingCallItem('wacid.L4', { timestamp: T, session: { sdp_type: 'offer', sdp: LIVE_OFFER_SDP } }),
      biz_opaque_callback_data: 'crm-ticket-8812',
      recording: { status: 'enabled', purpose: 'Quality assurance', announcement_language: 'en_US' },
      transcription: { status: 'enabled', purpose: 'Quality assurance', announcement_language: 'en_US' },
    };
    const [event] = normaliseWebhook(envelope('calls', { contacts: [{ profile: { name: 'Ada Customer' }, wa_id: CUSTOMER }], calls: [item] }));
    expect(event).toEqual({ type: 'call.incoming', callId: 'wacid.L4', from: CUSTOMER, name: 'Ada Customer', to: BUSINESS, sdp: LIVE_OFFER_SDP, timestamp: T_MS });
  });

  it('passes the service\'s ice-lite, trickle, setup:active answer on unchanged', () => {
    const [event] = normaliseWebhook(answeredCall('wacid.L5', { timestamp: T, session: { sdp_type: 'answer', sdp: LIVE_ANSWER_SDP } }));
    expect(event).toEqual({ type: 'call.answered', callId: 'wacid.L5', sdp: LIVE_ANSWER_SDP, timestamp: T_MS });
    expect(event?.type === 'call.answered' && event.sdp).toContain('a=ice-options:trickle\r\n');
  });

  it('finds a failed terminate\'s errors in calls[0].errors, in value.errors, or both, each error once', () => {
    const timeout = { code: 138021, message: 'Media receive timeout', error_data: { details: 'No media received from the business for 20 seconds' } };
    const relayError = { code: 138020, title: 'Relay timeout' };
    const failed = (where: { item?: (typeof timeout | typeof relayError)[]; value?: (typeof timeout | typeof relayError)[] }) => {
      const body = terminatedCall('wacid.L6', { timestamp: T, status: 'FAILED', errors: where.item });
      if (where.value) body.entry[0]!.changes[0]!.value.errors = where.value;
      return normaliseWebhook(body)[0];
    };
    const expected = { code: 138021, message: 'Media receive timeout', details: 'No media received from the business for 20 seconds' };
    expect(failed({ item: [timeout] })).toMatchObject({ status: 'FAILED', errors: [expected] });
    expect(failed({ value: [timeout] })).toMatchObject({ status: 'FAILED', errors: [expected] });
    expect(failed({ item: [timeout], value: [timeout] })).toMatchObject({ status: 'FAILED', errors: [expected] });
    expect(failed({ item: [timeout], value: [relayError] })).toMatchObject({ errors: [expected, { code: 138020, message: 'Relay timeout' }] });
    // A terminate without a status is failed by errors found in either place.
    const noStatus = { calls: [{ id: 'wacid.L6', event: 'terminate', timestamp: T }], errors: [timeout] };
    expect(normaliseWebhook(noStatus)[0]).toMatchObject({ status: 'FAILED', errors: [expected] });
    // A completed call is not made to carry the value's errors.
    const completed = { calls: [{ id: 'wacid.L6', event: 'terminate', status: 'COMPLETED', timestamp: T }], errors: [timeout] };
    expect(normaliseWebhook(completed)).toEqual([{ type: 'call.terminated', callId: 'wacid.L6', status: 'COMPLETED', timestamp: T_MS }]);
  });

  it('keeps start_time, end_time and duration of a failed call that was answered', () => {
    const body = terminatedCall('wacid.L7', {
      timestamp: T,
      status: 'FAILED',
      start_time: '1718000010',
      end_time: '1718000052',
      duration: 42,
      errors: [{ code: 138022, message: 'Media transmit timeout' }],
    });
    expect(normaliseWebhook(body)).toEqual([
      {
        type: 'call.terminated',
        callId: 'wacid.L7',
        status: 'FAILED',
        timestamp: T_MS,
        startTime: 1_718_000_010_000,
        endTime: 1_718_000_052_000,
        durationSec: 42,
        errors: [{ code: 138022, message: 'Media transmit timeout' }],
      },
    ]);
  });

  it('reads statuses in any case: live upper-case ones and the samples\' mixed case', () => {
    const terminated = (status: string) => normaliseWebhook({ calls: [{ id: 'wacid.L8', event: 'terminate', status, timestamp: T }] })[0];
    expect(terminated('COMPLETED')).toMatchObject({ status: 'COMPLETED' });
    expect(terminated('Completed')).toMatchObject({ status: 'COMPLETED' });
    expect(terminated('FAILED')).toMatchObject({ status: 'FAILED' });
    expect(terminated('failed')).toMatchObject({ status: 'FAILED' });
    const callStatusOf = (status: string, type?: string) => normaliseWebhook({ statuses: [{ id: 'wacid.L8', type, status, timestamp: T }] })[0];
    expect(callStatusOf('RINGING', 'call')).toEqual({ type: 'call.status', callId: 'wacid.L8', status: 'RINGING', timestamp: T_MS });
    expect(callStatusOf('accepted', 'CALL')).toMatchObject({ type: 'call.status', status: 'ACCEPTED' });
    expect(callStatusOf('REJECTED')).toMatchObject({ type: 'call.status', status: 'REJECTED' });
    const messageStatusOf = (status: string) => normaliseWebhook({ statuses: [{ id: 'wamid.L8', status, timestamp: T, recipient_id: CUSTOMER }] })[0];
    expect(messageStatusOf('DELIVERED')).toEqual({ type: 'message.status', messageId: 'wamid.L8', status: 'delivered', timestamp: T_MS, recipientId: CUSTOMER });
    expect(messageStatusOf('READ')).toMatchObject({ type: 'message.status', status: 'read' });
    expect(messageStatusOf('FAILED')).toMatchObject({ type: 'message.status', status: 'failed' });
  });

  it('infers an incoming call without direction or contacts from session.sdp_type "offer"', () => {
    const item = { ...incomingCallItem('wacid.L9', { timestamp: T, session: { sdp_type: 'offer', sdp: LIVE_OFFER_SDP } }), direction: undefined };
    const body = envelope('calls', { calls: [item] });
    expect(body.entry[0]!.changes[0]!.value).not.toHaveProperty('contacts');
    expect(normaliseWebhookDetailed(body)).toEqual({
      events: [{ type: 'call.incoming', callId: 'wacid.L9', from: CUSTOMER, to: BUSINESS, sdp: LIVE_OFFER_SDP, timestamp: T_MS }],
      skipped: [],
    });
    const answer = { id: 'wacid.L9b', from: BUSINESS, to: CUSTOMER, event: 'connect', timestamp: T, session: { sdp_type: 'answer', sdp: ANSWER_SDP } };
    expect(normaliseWebhook({ calls: [answer] })).toEqual([{ type: 'call.answered', callId: 'wacid.L9b', sdp: ANSWER_SDP, timestamp: T_MS }]);
  });

  it('reads every item whose phone fields are absent behind a username, by its user ids', () => {
    const contacts = [{ profile: { name: 'Scoped User' }, user_id: SCOPED_USER, parent_user_id: PARENT_USER }];
    const call = { id: 'wacid.L10', event: 'connect', timestamp: T, direction: 'USER_INITIATED', from_user_id: SCOPED_USER, to_user_id: PARENT_USER, session: { sdp_type: 'offer', sdp: OFFER_SDP } };
    const callStatus = { id: 'wacid.L10', type: 'call', status: 'RINGING', timestamp: T, recipient_user_id: SCOPED_USER, recipient_parent_user_id: PARENT_USER };
    const messageStatus = { id: 'wamid.L10', status: 'delivered', timestamp: T, parent_recipient_user_id: PARENT_USER };
    const message = { from_user_id: SCOPED_USER, id: 'wamid.L10in', timestamp: T, type: 'text', text: { body: 'It is me' } };
    const result = normaliseWebhookDetailed({ entry: [{ id: '1', changes: [{ field: 'calls', value: { contacts, calls: [call], statuses: [callStatus] } }, { field: 'messages', value: { contacts, statuses: [messageStatus], messages: [message] } }] }] });
    expect(result.skipped).toEqual([]);
    expect(result.events).toEqual([
      { type: 'call.incoming', callId: 'wacid.L10', fromUserId: SCOPED_USER, name: 'Scoped User', sdp: OFFER_SDP, timestamp: T_MS },
      { type: 'call.status', callId: 'wacid.L10', status: 'RINGING', timestamp: T_MS, recipientUserId: SCOPED_USER },
      { type: 'message.status', messageId: 'wamid.L10', status: 'delivered', timestamp: T_MS },
      { type: 'message.inbound', messageId: 'wamid.L10in', fromUserId: SCOPED_USER, name: 'Scoped User', timestamp: T_MS, messageType: 'text', text: 'It is me' },
    ]);
  });

  it('takes message ids as they come: call ids (voicemail) and ids without "wamid."', () => {
    const voicemail = inboundText('wacid.L11', '', { timestamp: T, type: 'audio', text: undefined });
    expect(normaliseWebhook(voicemail)).toEqual([{ type: 'message.inbound', messageId: 'wacid.L11', from: CUSTOMER, name: 'Ada Customer', timestamp: T_MS, messageType: 'audio' }]);
    const unprefixed = inboundText('ABGGFlA5Fpa1AgkxNHWrmvl-SHgo', 'Hello', { timestamp: T });
    expect(normaliseWebhook(unprefixed)[0]).toMatchObject({ type: 'message.inbound', messageId: 'ABGGFlA5Fpa1AgkxNHWrmvl-SHgo', text: 'Hello' });
    const status = messageStatus('ABGGFlA5Fpa1AgkxNHWrmvl-SHgo', 'read', { timestamp: T });
    expect(normaliseWebhook(status)).toEqual([{ type: 'message.status', messageId: 'ABGGFlA5Fpa1AgkxNHWrmvl-SHgo', status: 'read', timestamp: T_MS, recipientId: CUSTOMER }]);
  });

  it('never rings for call_created, call_recording_available or call_transcription_available', () => {
    const expiry = String(Number(T) + 300);
    const created = { id: 'wacid.L12', from: CUSTOMER, to: BUSINESS, event: 'call_created', timestamp: T };
    // The items in the service's shape (protocol.md "What the service added in 2026"): the file under call_recording.audio / call_transcript.document.
    const available = [
      { id: 'wacid.L12', from: CUSTOMER, to: BUSINESS, event: 'call_recording_available', timestamp: T, call_recording: { type: 'audio', audio: { id: 'rec-L12', url: 'https://media.example.com/rec/L12.ogg' } } },
      { id: 'wacid.L12', from: CUSTOMER, to: BUSINESS, event: 'call_transcription_available', timestamp: T, call_transcript: { document: { id: 'tr-L12', url: 'https://media.example.com/tr/L12.json' } } },
    ];
    // Without the file where the service puts it: no event, and said as a malformed item.
    const elsewhere = [
      { id: 'wacid.L12', from: CUSTOMER, to: BUSINESS, event: 'call_recording_available', timestamp: T, recording: { url: 'https://media.example.com/rec/L12.ogg', expiration_timestamp: expiry } },
      { id: 'wacid.L12', from: CUSTOMER, to: BUSINESS, event: 'call_transcription_available', timestamp: T, transcription: { url: 'https://media.example.com/tr/L12.json', expiration_timestamp: expiry } },
    ];
    const terminate = terminatedCall('wacid.L12', { timestamp: T, start_time: T, end_time: String(Number(T) + 30), duration: 30 }).entry[0]!.changes[0]!.value.calls!;
    const later = [created, ...available, ...elsewhere] as unknown as CallWebhookItem[];
    const result = normaliseWebhookDetailed(envelope('calls', { contacts: [{ profile: { name: 'Ada Customer' }, wa_id: CUSTOMER }], calls: [...terminate, ...later] }));
    expect(result.events.map((e) => e.type)).toEqual(['call.terminated', 'call.capture_available', 'call.capture_available']);
    expect(result.skipped.map((s) => s.path)).toEqual(['entry[0].changes[0].value.calls[4].call_recording.audio', 'entry[0].changes[0].value.calls[5].call_transcript.document']);
    expect(normaliseWebhookDetailed({ calls: [created] })).toEqual({ events: [], skipped: [] });
    for (const item of [...available, ...elsewhere]) {
      const alone = normaliseWebhookDetailed({ calls: [item] });
      expect(alone.events.every((e) => e.type === 'call.capture_available' && e.callId === 'wacid.L12')).toBe(true);
      expect(alone.events.length + alone.skipped.length).toBe(1);
    }
  });

  it('reads permission replies: expiry as an integer or a string, none when permanent, automatic revocations', () => {
    const reply = (callPermissionReply: CallPermissionReply) =>
      normaliseWebhook(inboundText('wamid.L13', '', { timestamp: T, type: 'interactive', text: undefined, interactive: { type: 'call_permission_reply', call_permission_reply: callPermissionReply } }))[0];
    expect(reply({ response: 'accept', is_permanent: false, expiration_timestamp: 1718604800 })).toMatchObject({ permissionReply: { response: 'accept', isPermanent: false, expiresAt: 1_718_604_800_000 } });
    expect(reply({ response: 'accept', is_permanent: false, expiration_timestamp: '1718604800' })).toMatchObject({ permissionReply: { response: 'accept', isPermanent: false, expiresAt: 1_718_604_800_000 } });
    expect(reply({ response: 'accept', is_permanent: true })).toMatchObject({ permissionReply: { response: 'accept', isPermanent: true } });
    expect(reply({ response: 'accept', is_permanent: true })).not.toHaveProperty('permissionReply.expiresAt');
    expect(reply({ response: 'reject', is_permanent: false, response_source: 'automatic' })).toEqual({
      type: 'message.inbound',
      messageId: 'wamid.L13',
      from: CUSTOMER,
      name: 'Ada Customer',
      timestamp: T_MS,
      messageType: 'interactive',
      permissionReply: { response: 'reject', isPermanent: false, source: 'automatic' },
    });
  });
});

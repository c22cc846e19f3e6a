// Callback requests and permission replies in the relay's events (protocol.md "Callback requests",
// "Permission replies"): the item's `context.id` becomes `contextId`, the reply's `response_source`
// becomes `permissionReply.source`, lower-cased; an expiry is an integer or a string, a permanent
// grant has none. Payloads are written as the service sends them, as plain JSON.
import { describe, expect, it } from 'vitest';
import { normaliseWebhook, normaliseWebhookDetailed } from '../../../shared/webhook';

const CUSTOMER = '447700900123';
const CALL_ID = 'wacid.HBgLMTY1MDM4Nzk0MzkVAgARGBIyRkQwMjc0OTQ3Mjk4MTA1RDQA';
const T = '1764000000';
const T_MS = 1_764_000_000_000;
const EXPIRES = 1_764_604_800;

/** A `messages` webhook as the service sends it, with one message item and the customer's contact. */
function messagesWebhook(message: Record<string, unknown>, contact: Record<string, unknown> = { profile: { name: 'Ada Customer' }, wa_id: CUSTOMER }): unknown {
  return {
    object: 'chatapp_business_account',
    entry: [
      {
        id: '102290129340398',
        changes: [
          {
            field: 'messages',
            value: {
              messaging_product: 'chatapp',
              metadata: { display_phone_number: '15550001111', phone_number_id: '106540352242922' },
              contacts: [contact],
              messages: [message],
            },
          },
        ],
      },
    ],
  };
}

/** An automatic permission reply about `callId`, as protocol.md describes a callback request. */
function permissionReply(reply: Record<string, unknown>, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    from: CUSTOMER,
    id: 'wamid.HBgLMTY1MDM4Nzk0MzkVAgASGBQzQTRCRDcwNzgzMTRGNTRDNTk2RQA=',
    timestamp: T,
    type: 'interactive',
    context: { id: CALL_ID },
    interactive: { type: 'call_permission_reply', call_permission_reply: reply },
    ...extra,
  };
}

describe('a callback request in the relay’s events', () => {
  it('carries the call’s id from context.id and the reply’s source, with its expiry as an integer', () => {
    const body = messagesWebhook(permissionReply({ response: 'accept', is_permanent: false, expiration_timestamp: EXPIRES, response_source: 'automatic' }));
    expect(normaliseWebhookDetailed(body)).toEqual({
      events: [
        {
          type: 'message.inbound',
          messageId: 'wamid.HBgLMTY1MDM4Nzk0MzkVAgASGBQzQTRCRDcwNzgzMTRGNTRDNTk2RQA=',
          from: CUSTOMER,
          name: 'Ada Customer',
          timestamp: T_MS,
          messageType: 'interactive',
          contextId: CALL_ID,
          permissionReply: { response: 'accept', isPermanent: false, expiresAt: EXPIRES * 1000, source: 'automatic' },
        },
      ],
      skipped: [],
    });
  });

  it('reads the expiry as a string too, and none from a permanent grant', () => {
    const asString = normaliseWebhook(messagesWebhook(permissionReply({ response: 'accept', is_permanent: false, expiration_timestamp: String(EXPIRES), response_source: 'automatic' })));
    expect(asString[0]).toMatchObject({ contextId: CALL_ID, permissionReply: { response: 'accept', isPermanent: false, expiresAt: EXPIRES * 1000, source: 'automatic' } });
    const permanent = normaliseWebhook(messagesWebhook(permissionReply({ response: 'accept', is_permanent: true, response_source: 'automatic' })));
    expect(permanent[0]).toMatchObject({ contextId: CALL_ID, permissionReply: { response: 'accept', isPermanent: true, source: 'automatic' } });
    expect(permanent[0]).not.toHaveProperty('permissionReply.expiresAt');
  });

  it('lower-cases the source and leaves out one that is not a word', () => {
    const upper = normaliseWebhook(messagesWebhook(permissionReply({ response: 'ACCEPT', is_permanent: false, expiration_timestamp: EXPIRES, response_source: ' Automatic ' })));
    expect(upper[0]).toMatchObject({ permissionReply: { response: 'accept', source: 'automatic' } });
    const user = normaliseWebhook(messagesWebhook(permissionReply({ response: 'accept', is_permanent: false, expiration_timestamp: EXPIRES, response_source: 'user_action' })));
    expect(user[0]).toMatchObject({ permissionReply: { source: 'user_action' } });
    for (const source of [42, null, '', '  ', { kind: 'automatic' }]) {
      const event = normaliseWebhook(messagesWebhook(permissionReply({ response: 'accept', is_permanent: false, expiration_timestamp: EXPIRES, response_source: source })))[0];
      expect(event).toMatchObject({ permissionReply: { response: 'accept' } });
      expect(event).not.toHaveProperty('permissionReply.source');
    }
  });

  it('reads the service’s automatic revocation: a reject with its source and no expiry', () => {
    const body = messagesWebhook(permissionReply({ response: 'reject', is_permanent: false, response_source: 'automatic' }, { context: undefined }));
    expect(normaliseWebhook(body)).toEqual([
      {
        type: 'message.inbound',
        messageId: 'wamid.HBgLMTY1MDM4Nzk0MzkVAgASGBQzQTRCRDcwNzgzMTRGNTRDNTk2RQA=',
        from: CUSTOMER,
        name: 'Ada Customer',
        timestamp: T_MS,
        messageType: 'interactive',
        permissionReply: { response: 'reject', isPermanent: false, source: 'automatic' },
      },
    ]);
  });

  it('reads a user-id-only customer’s request: no number, the user id and its contact’s name', () => {
    const body = messagesWebhook(
      { ...permissionReply({ response: 'accept', is_permanent: false, expiration_timestamp: EXPIRES, response_source: 'automatic' }), from: undefined, from_user_id: 'US.13491208655302741918' },
      { profile: { name: 'Hidden Number' }, user_id: 'US.13491208655302741918' },
    );
    const [event] = normaliseWebhook(body);
    expect(event).toMatchObject({ type: 'message.inbound', fromUserId: 'US.13491208655302741918', name: 'Hidden Number', contextId: CALL_ID });
    expect(event).not.toHaveProperty('from');
  });
});

describe('context.id on any message', () => {
  it('is carried on a reply to a message, trimmed; a context without a string id is none', () => {
    const text = (context: unknown) => ({ from: CUSTOMER, id: 'wamid.reply', timestamp: T, type: 'text', text: { body: 'Yes' }, context });
    expect(normaliseWebhook(messagesWebhook(text({ from: '15550001111', id: ' wamid.original ' })))[0]).toMatchObject({ text: 'Yes', contextId: 'wamid.original' });
    for (const context of [undefined, null, 'wamid.original', { id: 7 }, { id: '' }, { id: '   ' }, ['wamid.original']]) {
      const { events, skipped } = normaliseWebhookDetailed(messagesWebhook(text(context)));
      // A stray context never costs the message.
      expect(skipped).toEqual([]);
      expect(events).toHaveLength(1);
      expect(events[0]).not.toHaveProperty('contextId');
    }
  });
});

describe('an outgoing call’s status', () => {
  it('carries the recipient’s user id when the service gives one', () => {
    const status = (item: Record<string, unknown>) =>
      normaliseWebhook({ statuses: [{ id: 'wacid.out-1', type: 'call', status: 'ACCEPTED', timestamp: T, ...item }] })[0];
    expect(status({ recipient_id: CUSTOMER })).toEqual({ type: 'call.status', callId: 'wacid.out-1', status: 'ACCEPTED', timestamp: T_MS, recipientId: CUSTOMER });
    expect(status({ recipient_user_id: 'US.13491208655302741918' })).toEqual({
      type: 'call.status',
      callId: 'wacid.out-1',
      status: 'ACCEPTED',
      timestamp: T_MS,
      recipientUserId: 'US.13491208655302741918',
    });
  });
});

// Fuzzed webhook bodies against a real relay: whatever arrives, the relay answers, stays up, and
// the next genuine webhook still reaches the agents (protocol.md: unknown fields and events are
// ignored, never errors; malformed items are skipped one by one).
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { configureLogging } from '../../../shared/log';
import { startRelay, type RelayServer } from '../../../relay/server';
import { hasMessage, team } from '../relay/agent-fixtures';
import { openSse, type TestSseStream } from '../relay/sse-test-client';
import { APP_SECRET, OFFER_SDP, inboundText, postWebhook, unixSeconds } from '../relay/webhook-fixtures';

configureLogging({ level: 'error' });

const { agents, tokens } = team('alice');
let relay: RelayServer;
let alice: TestSseStream;
let markers = 0;

beforeAll(async () => {
  relay = await startRelay({ port: 0, appSecret: APP_SECRET, agents, heartbeatMs: 60_000 });
  alice = await openSse(relay.url, { token: tokens.alice });
});
afterAll(async () => {
  alice.close();
  await relay.close();
});

/** Posts a signed fuzzed body, then proves the relay still serves: a genuine webhook reaches the agent. */
async function survives(body: string | Buffer): Promise<void> {
  const answer = await postWebhook(relay.url, body);
  expect([200, 400, 413]).toContain(answer.status);
  markers += 1;
  const id = `wamid.fuzz-marker-${markers}`;
  expect((await postWebhook(relay.url, inboundText(id, 'still here'))).status).toBe(200);
  await alice.waitFor(hasMessage(id), `marker ${id}`);
}

// Values that are sometimes right and often the wrong type.
const loose = <T>(right: fc.Arbitrary<T>) => fc.oneof({ weight: 3, arbitrary: right }, { weight: 1, arbitrary: fc.anything({ maxDepth: 2 }) });
const digits = fc.stringMatching(/^[0-9]{1,12}$/);
const timestamp = loose(fc.oneof(fc.constant(unixSeconds()), digits, fc.integer()));
const callItem = fc.record(
  {
    id: loose(fc.stringMatching(/^wacid\.[A-Za-z0-9]{1,12}$/)),
    from: loose(digits),
    from_user_id: loose(fc.string()),
    to: loose(digits),
    event: loose(fc.constantFrom('connect', 'terminate', 'ringing', '')),
    direction: loose(fc.constantFrom('USER_INITIATED', 'BUSINESS_INITIATED')),
    timestamp,
    status: loose(fc.constantFrom('COMPLETED', 'FAILED', 'RINGING')),
    duration: loose(fc.integer()),
    start_time: timestamp,
    end_time: timestamp,
    session: loose(fc.record({ sdp_type: loose(fc.constantFrom('offer', 'answer')), sdp: loose(fc.constantFrom(OFFER_SDP, '', 'v=0')) })),
    connection: loose(fc.record({ webrtc: loose(fc.record({ sdp: loose(fc.string()) })) })),
    errors: loose(fc.array(fc.record({ code: loose(fc.integer()), message: loose(fc.string()), title: loose(fc.string()), error_data: loose(fc.record({ details: loose(fc.string()) })) }))),
    cta_payload: loose(fc.oneof(fc.string(), fc.constant('{"v":1,"agentId":"alice"}'))),
    deeplink_payload: loose(fc.string()),
  },
  { requiredKeys: [] },
);
const statusItem = fc.record(
  {
    id: loose(fc.oneof(fc.stringMatching(/^wacid\.[a-z0-9]{1,8}$/), fc.stringMatching(/^wamid\.[a-z0-9]{1,8}$/))),
    type: loose(fc.constantFrom('call', 'message')),
    status: loose(fc.constantFrom('RINGING', 'ACCEPTED', 'REJECTED', 'sent', 'delivered', 'read', 'failed')),
    timestamp,
    recipient_id: loose(digits),
    errors: loose(fc.array(fc.anything({ maxDepth: 2 }))),
  },
  { requiredKeys: [] },
);
const messageItem = fc.record(
  {
    id: loose(fc.stringMatching(/^wamid\.[a-z0-9]{1,8}$/)),
    from: loose(digits),
    timestamp,
    type: loose(fc.constantFrom('text', 'interactive', 'image', 'unknown')),
    text: loose(fc.record({ body: loose(fc.string()) })),
    interactive: loose(
      fc.record({
        type: loose(fc.constantFrom('call_permission_reply', 'button_reply')),
        call_permission_reply: loose(fc.record({ response: loose(fc.constantFrom('accept', 'reject')), is_permanent: loose(fc.boolean()), expiration_timestamp: timestamp })),
      }),
    ),
  },
  { requiredKeys: [] },
);
const value = fc.record(
  {
    messaging_product: loose(fc.constant('chatapp')),
    metadata: loose(fc.record({ phone_number_id: loose(digits) })),
    contacts: loose(fc.array(fc.record({ wa_id: loose(digits), user_id: loose(fc.string()), profile: loose(fc.record({ name: loose(fc.string()) })) }, { requiredKeys: [] }))),
    calls: loose(fc.array(callItem, { maxLength: 4 })),
    statuses: loose(fc.array(statusItem, { maxLength: 4 })),
    messages: loose(fc.array(messageItem, { maxLength: 4 })),
  },
  { requiredKeys: [] },
);
const envelopeShape = fc.oneof(
  value,
  fc.record(
    {
      object: loose(fc.constantFrom('chatapp_business_account', 'whatsapp_business_account', '')),
      entry: loose(fc.array(fc.record({ id: loose(digits), changes: loose(fc.array(fc.record({ field: loose(fc.constantFrom('calls', 'messages')), value: loose(value) }), { maxLength: 3 })) }), { maxLength: 3 })),
    },
    { requiredKeys: [] },
  ),
);

describe('relay: fuzzed webhooks', () => {
  it('survives random JSON', async () => {
    await fc.assert(fc.asyncProperty(fc.jsonValue(), (json) => survives(JSON.stringify(json) ?? 'null')), { numRuns: 300 });
  });

  it('survives random bytes', async () => {
    await fc.assert(fc.asyncProperty(fc.uint8Array({ maxLength: 2048 }), (bytes) => survives(Buffer.from(bytes))), { numRuns: 200 });
  });

  it('survives envelopes of the right shape with wrong types anywhere', async () => {
    const before = alice.envelopes.length;
    await fc.assert(fc.asyncProperty(envelopeShape, (body) => survives(JSON.stringify(body))), { numRuns: 500 });
    // The shapes are close enough to real webhooks that some become events: the fuzz reaches past the parser.
    const fuzzed = alice.envelopes.slice(before).filter((e) => !(e.event.type === 'message.inbound' && e.event.messageId.startsWith('wamid.fuzz-marker-')));
    expect(fuzzed.length).toBeGreaterThan(0);
  });

  it('survives deep nesting, balanced or not', async () => {
    const nested = fc.record({ depth: fc.integer({ min: 1, max: 200_000 }), kind: fc.constantFrom('array', 'object', 'calls', 'unbalanced') });
    await fc.assert(
      fc.asyncProperty(nested, ({ depth, kind }) => {
        switch (kind) {
          case 'array':
            return survives(`${'['.repeat(depth)}${']'.repeat(depth)}`);
          case 'object':
            return survives(`${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`);
          case 'calls':
            // Deep nesting where the normaliser looks: inside a call item.
            return survives(`{"calls":[{"id":"wacid.deep","event":"connect","session":${'{"sdp":'.repeat(depth)}"x"${'}'.repeat(depth)}}]}`);
          default:
            return survives(`${'[{"calls":'.repeat(depth)}`);
        }
      }),
      { numRuns: 40 },
    );
  });

  it('survives huge strings up to the 3 MB limit, and refuses more', async () => {
    const sizes = fc.integer({ min: 1_000_000, max: 3 * 1024 * 1024 - 1_000 });
    await fc.assert(
      fc.asyncProperty(sizes, fc.constantFrom('sdp', 'name', 'id', 'text', 'key'), async (size, where) => {
        const huge = 'x'.repeat(size);
        const call = { id: `wacid.huge${size}`, from: '447700900123', event: 'connect', direction: 'USER_INITIATED', timestamp: unixSeconds(), session: { sdp_type: 'offer', sdp: OFFER_SDP } };
        const body =
          where === 'sdp'
            ? { calls: [{ ...call, session: { sdp_type: 'offer', sdp: `${OFFER_SDP}a=x:${huge}\r\n` } }] }
            : where === 'name'
              ? { contacts: [{ wa_id: '447700900123', profile: { name: huge } }], calls: [call] }
              : where === 'id'
                ? { calls: [{ ...call, id: huge }] }
                : where === 'text'
                  ? { messages: [{ id: `wamid.huge${size}`, from: '447700900123', timestamp: unixSeconds(), type: 'text', text: { body: huge } }] }
                  : { [huge]: 1 };
        const raw = JSON.stringify(body);
        fc.pre(raw.length <= 3 * 1024 * 1024);
        await survives(raw);
      }),
      { numRuns: 8 },
    );
    await survives('x'.repeat(3 * 1024 * 1024 + 1));
  });

  it('refuses random signature headers', async () => {
    const raw = JSON.stringify(inboundText('wamid.never', 'forged'));
    await fc.assert(
      fc.asyncProperty(fc.oneof(fc.string(), fc.stringMatching(/^sha256=[0-9a-f]{0,70}$/), fc.stringMatching(/^[a-z0-9]{1,8}=[0-9a-fA-F]{64}$/)), async (header) => {
        // Header values cannot hold control characters; fetch refuses them before the relay sees them.
        fc.pre(/^[\x20-\x7e]*$/.test(header));
        expect((await postWebhook(relay.url, raw, { signatureHeader: header })).status).toBe(401);
      }),
      { numRuns: 200 },
    );
    await survives('{}');
    expect(alice.envelopes.some((e) => e.event.type === 'message.inbound' && e.event.messageId === 'wamid.never')).toBe(false);
    expect((await fetch(`${relay.url}/healthz`)).status).toBe(200);
  });
});

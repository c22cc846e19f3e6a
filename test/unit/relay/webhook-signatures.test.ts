// protocol.md "Webhook security": the handshake, and every way of forging a webhook, refused.
import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { configureLogging } from '../../../shared/log';
import { isValidSignature } from '../../../relay/webhook-security';
import { startRelay, type RelayServer } from '../../../relay/server';
import { hasMessage, team } from './agent-fixtures';
import { openSse, type TestSseStream } from './sse-test-client';
import { APP_SECRET, VERIFY_TOKEN, inboundText, incomingCall, postWebhook, signature } from './webhook-fixtures';

configureLogging({ level: 'error' });

const { agents, tokens } = team('alice');
let relay: RelayServer;
let alice: TestSseStream;

beforeAll(async () => {
  relay = await startRelay({ port: 0, appSecret: APP_SECRET, verifyToken: VERIFY_TOKEN, agents, heartbeatMs: 60_000 });
  alice = await openSse(relay.url, { token: tokens.alice });
});
afterAll(async () => {
  alice.close();
  await relay.close();
});

const body = JSON.stringify(incomingCall('wacid.forged'));
const hmac = (algorithm: string, raw: string | Buffer, secret = APP_SECRET) => createHmac(algorithm, secret).update(raw).digest('hex');

describe('relay: forged webhooks', () => {
  const attacks: Array<[string, string | Buffer, string | null]> = [
    ['no signature header', body, null],
    ['an empty signature header', body, ''],
    ['an empty sha256 signature', body, 'sha256='],
    ['a signature made with another secret', body, signature(body, 'another-secret')],
    ['a signature of another body', body, signature(JSON.stringify(incomingCall('wacid.other')))],
    ['the signature of the original after the body was changed', body.replace('wacid.forged', 'wacid.forgee'), signature(body)],
    ['the signature of the original on whitespace-reformatted JSON', JSON.stringify(JSON.parse(body), null, 2), signature(body)],
    ['the signature of the original with a trailing newline added', `${body}\n`, signature(body)],
    ['another algorithm: a correct HMAC-SHA1 as sha1=', body, `sha1=${hmac('sha1', body)}`],
    ['another algorithm: a correct HMAC-SHA512 as sha512=', body, `sha512=${hmac('sha512', body)}`],
    ['another algorithm: an HMAC-SHA1 under the sha256= label', body, `sha256=${hmac('sha1', body)}`],
    ['a plain SHA-256 of the body, no secret', body, `sha256=${createHmac('sha256', '').update(body).digest('hex')}`],
    ['the bare hex without sha256=', body, hmac('sha256', body)],
    ['a truncated signature', body, signature(body).slice(0, -2)],
    ['a signature with extra hex', body, `${signature(body)}00`],
    ['non-hex characters', body, `sha256=${'z'.repeat(64)}`],
    ['two signatures in one header', body, `${signature(body)}, ${signature(body)}`],
    ['an empty body without a signature', '', null],
    ['an empty body with the signature of another', '', signature(body)],
  ];

  it.each(attacks)('refuses %s with 401 and stores nothing', async (_, raw, header) => {
    const res = await postWebhook(relay.url, raw, { signatureHeader: header });
    expect(res.status).toBe(401);
    expect(JSON.parse(res.text)).toEqual({ error: { code: 'invalid_signature', message: 'missing or invalid X-Hub-Signature-256' } });
  });

  it('stored none of them, and still takes a genuine webhook', async () => {
    await postWebhook(relay.url, inboundText('wamid.genuine', 'hello'));
    await alice.waitFor(hasMessage('wamid.genuine'), 'the genuine webhook');
    expect(alice.envelopes.map((e) => e.event.type)).toEqual(['message.inbound']);
    expect(relay.stats()).toMatchObject({ webhooksRejected: attacks.length, webhooksReceived: 1 });
  });

  it('accepts the signature in upper-case hex and with a space around it (the HMAC is what counts)', async () => {
    const raw = JSON.stringify(inboundText('wamid.upper', 'x'));
    expect((await postWebhook(relay.url, raw, { signatureHeader: `sha256=${hmac('sha256', raw).toUpperCase()}` })).status).toBe(200);
    expect((await postWebhook(relay.url, raw, { signatureHeader: ` ${signature(raw)} ` })).status).toBe(200);
  });

  it('compares over the raw bytes, not over decoded text', () => {
    // The same text in two encodings: only the bytes that were signed pass.
    const utf8 = Buffer.from('{"text":"café"}', 'utf8');
    const latin1 = Buffer.from('{"text":"café"}', 'latin1');
    expect(isValidSignature(utf8, signature(utf8), APP_SECRET)).toBe(true);
    expect(isValidSignature(latin1, signature(utf8), APP_SECRET)).toBe(false);
  });
});

describe('relay: subscription handshake', () => {
  it('echoes the challenge only for the verify token and mode subscribe', async () => {
    const base = `${relay.url}/webhook`;
    const ok = await fetch(`${base}?hub.mode=subscribe&hub.verify_token=${VERIFY_TOKEN}&hub.challenge=8675309`);
    expect(ok.status).toBe(200);
    expect(await ok.text()).toBe('8675309');
    for (const query of [
      `hub.mode=subscribe&hub.verify_token=wrong&hub.challenge=1`,
      `hub.mode=subscribe&hub.verify_token=${VERIFY_TOKEN}x&hub.challenge=1`,
      `hub.mode=subscribe&hub.verify_token=&hub.challenge=1`,
      `hub.mode=unsubscribe&hub.verify_token=${VERIFY_TOKEN}&hub.challenge=1`,
      `hub.verify_token=${VERIFY_TOKEN}&hub.challenge=1`,
      `hub.mode=subscribe&hub.challenge=1`,
      `hub.mode=subscribe&hub.verify_token=${VERIFY_TOKEN}`,
    ]) {
      const res = await fetch(`${base}?${query}`);
      expect(res.status, query).toBe(403);
      expect(await res.json()).toEqual({ error: { code: 'verification_failed', message: 'verification failed' } });
    }
  });
});

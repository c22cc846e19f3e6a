import { afterEach, describe, expect, it } from 'vitest';
import { configureLogging } from '../../../shared/log';
import { startRelay } from '../../../relay/server';
import { claimCall, getMe, hasMessage, putPresence, team } from './agent-fixtures';
import { openSse } from './sse-test-client';
import { APP_SECRET, CUSTOMER, VERIFY_TOKEN, inboundText, incomingCall, postWebhook, signature } from './webhook-fixtures';

afterEach(() => {
  configureLogging({ level: 'error', sink: (line, level) => (level === 'error' || level === 'warn' ? console.error(line) : console.log(line)) });
});

describe('relay: logs', () => {
  it('are JSON lines that never carry a token, a secret, a signature or a full phone number', async () => {
    const lines: string[] = [];
    configureLogging({ level: 'debug', sink: (line) => lines.push(line) });
    const { agents, tokens } = team('alice');
    const relay = await startRelay({ port: 0, appSecret: APP_SECRET, verifyToken: VERIFY_TOKEN, agents, agentTokens: ['legacy-token-secret-1-0123456789ab'] });
    try {
      const alice = await openSse(relay.url, { token: tokens.alice });
      await getMe(relay.url, 'wrong-token-secret-2');
      await getMe(relay.url, 'legacy-token-secret-1-0123456789ab');
      await putPresence(relay.url, tokens.alice!, { status: 'available' });
      const body = JSON.stringify(incomingCall('wacid.log'));
      await postWebhook(relay.url, body, { secret: 'forged-secret-3' });
      await postWebhook(relay.url, body);
      await fetch(`${relay.url}/webhook?hub.mode=subscribe&hub.verify_token=${VERIFY_TOKEN}&hub.challenge=1`);
      await claimCall(relay.url, tokens.alice!, 'wacid.log');
      await postWebhook(relay.url, inboundText('wamid.log', 'hello'));
      await alice.waitFor(hasMessage('wamid.log'), 'the message');
      alice.close();
    } finally {
      await relay.close();
    }
    expect(lines.length).toBeGreaterThan(5);
    const all = lines.join('\n');
    for (const line of lines) expect(() => JSON.parse(line) as unknown).not.toThrow();
    for (const secret of [tokens.alice!, 'wrong-token-secret-2', 'legacy-token-secret-1-0123456789ab', APP_SECRET, VERIFY_TOKEN, 'forged-secret-3', signature(JSON.stringify(incomingCall('wacid.log'))).slice(7), CUSTOMER]) {
      expect(all).not.toContain(secret);
    }
  });
});

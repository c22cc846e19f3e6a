// The embedded default (ARCHITECTURE.md): with no account configured, the app runs an in-process
// relay and sandbox on 127.0.0.1 and talks to them exactly as it would to a real gateway and relay.
import { randomBytes } from 'node:crypto';
import { startRelay } from '../relay/server';
import { startSandbox } from '../sandbox/server';
import type { EmbeddedEnvironment } from './core/embedded-environment';
import { DEFAULT_PRODUCT } from '../shared/gateway';
import type { Logger } from '../shared/log';

const secret = () => randomBytes(24).toString('base64url');

export async function startEmbeddedEnvironment(options: { logger?: Logger } = {}): Promise<EmbeddedEnvironment> {
  const appSecret = secret();
  const agentToken = secret();
  const apiKey = secret();
  const relay = await startRelay({ port: 0, appSecret, verifyToken: secret(), agentTokens: [agentToken], ...(options.logger ? { logger: options.logger } : {}) });
  try {
    const sandbox = await startSandbox({ port: 0, relayUrl: relay.url, appSecret, apiKey, ...(options.logger ? { logger: options.logger } : {}) });
    return {
      account: { gatewayUrl: `${sandbox.url}/restapi/v1`, apiKey, productSegment: DEFAULT_PRODUCT, relayUrl: relay.url, agentToken },
      sandboxControlUrl: sandbox.url,
      async close() {
        await sandbox.close();
        await relay.close();
      },
    };
  } catch (e) {
    await relay.close();
    throw e;
  }
}

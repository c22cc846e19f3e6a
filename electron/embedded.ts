// The embedded default (ARCHITECTURE.md): with no account configured, the app runs an in-process
// relay and sandbox on 127.0.0.1 and talks to them exactly as it would to a real gateway and relay.
// The relay runs a bridge node in its process, as `npm run relay -- --bridge` does: calls are
// bridged (bridge/README.md), so a newcomer sees the team's call path from one window, and two
// simulated colleagues (sandbox/colleagues.ts) take transfers and consults.
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { BridgeNode } from '../bridge/bridge-node';
import { hashAgentToken, type AgentConfig } from '../relay/agent-directory';
import { localBridge, LocalNodeEvents } from '../relay/bridged-calls';
import type { RelayRecords } from '../relay/records/relay-records';
import { bundledNoticePath, loadRecordNotice } from '../relay/record-notice';
import { RecordingsStore } from '../relay/recordings-store';
import { startRelay } from '../relay/server';
import { mediaDirIn } from '../sandbox/media-library';
import { startSandbox } from '../sandbox/server';
import { SimulatedColleague } from '../sandbox/colleagues';
import { COLLEAGUE_VOICE_FILE, defaultVoicePath, loadCustomerVoice } from '../sandbox/customer-voice';
import type { EmbeddedEnvironment } from './core/embedded-environment';
import { DEFAULT_PRODUCT } from '../shared/gateway';
import { createLogger, type Logger } from '../shared/log';

const secret = () => randomBytes(24).toString('base64url');

/**
 * The embedded team: this window's agent and two simulated colleagues. The one who tries the sandbox
 * leads its team: its Team view lists the colleagues' live calls, to listen, whisper or barge.
 */
const SELF = { id: 'agent-1', name: 'You', role: 'supervisor' as const };
export const EMBEDDED_COLLEAGUES = [
  { id: 'maya', name: 'Maya Chen' },
  { id: 'leo', name: 'Leo Santos' },
] as const;

export interface EmbeddedOptions {
  logger?: Logger;
  /**
   * The folder holding the sandbox's files (the customers' voice, the media library): the Electron
   * app's assets/, inside app.asar when packaged. Without it the sandbox finds the project's assets/
   * next to its source, which works only when it runs from source (npm run start:browser): a bundle
   * has no import.meta.url, and its working directory is anywhere.
   */
  assetsDir?: string;
  /**
   * The embedded relay's call records (relay/records, e.g. an embedded database in the host's data
   * folder): the wrap-ups the agent saves, the states it was in, the team's figures. Opened by the
   * host, closed here with the relay. Absent: it keeps none, and a wrap-up stays in the app's
   * recent calls only. (The desktop bundle leaves them out: the database's drivers stay out of it.)
   */
  records?: () => RelayRecords & { close(): Promise<void> };
  /**
   * Where the embedded team's recordings are kept (the host's data folder): the team records on
   * demand ("Record" in a call), with the bundled English notice. Absent: it never records.
   */
  recordingsDir?: string;
}

export async function startEmbeddedEnvironment(options: EmbeddedOptions = {}): Promise<EmbeddedEnvironment> {
  const appSecret = secret();
  const agentToken = secret();
  const apiKey = secret();
  const colleagueTokens = EMBEDDED_COLLEAGUES.map(() => secret());
  const agents: AgentConfig[] = [
    { ...SELF, tokenSha256: hashAgentToken(agentToken) },
    ...EMBEDDED_COLLEAGUES.map((colleague, i) => ({ ...colleague, tokenSha256: hashAgentToken(colleagueTokens[i]!) })),
  ];
  const nodeEvents = new LocalNodeEvents();
  const recordings = await embeddedRecordings(options);
  const bridge = new BridgeNode({
    bindAddress: '127.0.0.1',
    publicAddress: '127.0.0.1',
    onEvent: nodeEvents.emit,
    ...(options.logger ? { logger: options.logger } : {}),
    ...(recordings !== undefined ? { recordings: recordings.store } : {}),
  });
  // The relay ends at the gateway the calls no agent can end any more; the sandbox starts after it.
  let gatewayUrl: string | undefined;
  // Opened in the background, as the relay's own command does: calls do not wait for the database.
  const records = options.records?.();
  const closeRecords = async (): Promise<void> => {
    await records?.close();
  };
  let relay;
  try {
    relay = await startRelay({
      ...(records !== undefined ? { records } : {}),
      port: 0,
      appSecret,
      verifyToken: secret(),
      agents,
      bridgeNodes: localBridge(bridge, 'local', nodeEvents),
      ...(recordings !== undefined ? { recordings: { mode: 'on-demand' as const, ...recordings } } : {}),
      gateway: () => (gatewayUrl === undefined ? undefined : { url: gatewayUrl, apiKey, product: DEFAULT_PRODUCT }),
      ...(options.logger ? { logger: options.logger } : {}),
    });
  } catch (e) {
    await bridge.close();
    await recordings?.store.close();
    await closeRecords();
    throw e;
  }
  try {
    const sandbox = await startSandbox({
      port: 0,
      relayUrl: relay.url,
      appSecret,
      apiKey,
      ...(options.logger ? { logger: options.logger } : {}),
      ...(options.assetsDir !== undefined ? { voicePath: join(options.assetsDir, 'customer-voice.wav'), media: { dir: mediaDirIn(options.assetsDir) } } : {}),
    });
    gatewayUrl = `${sandbox.url}/restapi/v1`;
    const logger = options.logger ?? createLogger('colleagues');
    const { voice, problem } = loadCustomerVoice(options.assetsDir !== undefined ? join(options.assetsDir, COLLEAGUE_VOICE_FILE) : defaultVoicePath(COLLEAGUE_VOICE_FILE));
    if (problem !== undefined) logger.warn('the simulated colleagues speak a tone: their voice could not be read', { problem });
    const colleagues = EMBEDDED_COLLEAGUES.map((colleague, i) => new SimulatedColleague({ relayUrl: relay.url, agentToken: colleagueTokens[i]!, name: colleague.name, voice, logger }));
    for (const colleague of colleagues) colleague.start();
    return {
      account: { gatewayUrl: `${sandbox.url}/restapi/v1`, apiKey, productSegment: DEFAULT_PRODUCT, relayUrl: relay.url, agentToken },
      sandboxControlUrl: sandbox.url,
      async close() {
        await Promise.all(colleagues.map((colleague) => colleague.close()));
        await sandbox.close();
        await relay.close();
        await bridge.close();
        await recordings?.store.close();
        await closeRecords();
      },
    };
  } catch (e) {
    await relay.close();
    await bridge.close();
    await recordings?.store.close();
    await closeRecords();
    throw e;
  }
}

/** The embedded team's recordings: its store, open, and the bundled notice; none (logged) when either cannot be had. */
async function embeddedRecordings(options: EmbeddedOptions): Promise<{ store: RecordingsStore; notice: Int16Array } | undefined> {
  if (options.recordingsDir === undefined) return undefined;
  const logger = options.logger ?? createLogger('embedded');
  const noticePath = bundledNoticePath('en_US', options.assetsDir);
  const notice = await loadRecordNotice(noticePath);
  if (!notice.ok) {
    logger.warn('the embedded team does not record: its notice could not be read', { path: noticePath, problem: notice.error.message });
    return undefined;
  }
  const store = new RecordingsStore({ dir: options.recordingsDir, logger });
  try {
    await store.open();
  } catch (error) {
    logger.warn('the embedded team does not record: its recordings folder cannot be used', { dir: options.recordingsDir, error });
    return undefined;
  }
  return { store, notice: notice.value };
}

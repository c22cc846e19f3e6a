// `npm run start:browser -- --port P --gateway-url URL --api-key KEY --relay-url URL --relay-token T
//  --ice-servers '<JSON array of RTCIceServer>' --ice-transport-policy all|relay`
// Every flag may also come from the environment (SOFTPHONE_PORT, SOFTPHONE_GATEWAY_URL,
// SOFTPHONE_API_KEY, SOFTPHONE_PRODUCT, SOFTPHONE_RELAY_URL, SOFTPHONE_RELAY_TOKEN,
// SOFTPHONE_DATA_DIR, SOFTPHONE_ICE_SERVERS, SOFTPHONE_ICE_TRANSPORT_POLICY). Without account
// flags: the saved account, else the embedded sandbox. The ICE flags stand in for the saved Network
// settings until the agent saves new ones.
// Its data lives apart from the Electron host's (~/.config/softphone/browser-host): the two keep
// secrets differently (an owner-only file here, safeStorage there).
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { iceServersSchema, iceTransportPolicySchema } from '../../shared/ice-servers';
import { accountSettingsInputSchema, type AccountConfig } from '../../shared/settings';
import { createLogger } from '../../shared/log';
import { parseWith } from '../../shared/validation';
import type { NetworkFlags } from '../core/network-settings';
import { startFileLogging } from '../core/log-files';
import { createSoftphoneService } from '../core/softphone-service';
import { FileSecretStore } from '../core/secret-store';
import { startEmbeddedEnvironment } from '../embedded';
import { CallRecords } from '../../relay/records/call-records';
import { startBrowserHost } from './browser-host';

const FLAG_FOR_FIELD: Record<string, string> = {
  gatewayUrl: '--gateway-url',
  apiKey: '--api-key',
  productSegment: '--product',
  relayUrl: '--relay-url',
  agentToken: '--relay-token',
};

export class UsageError extends Error {}

export interface BrowserHostConfig {
  port: number;
  dataDir: string;
  account?: AccountConfig;
  network?: NetworkFlags;
}

export function parseBrowserHostArgs(argv: string[], env: NodeJS.ProcessEnv): BrowserHostConfig {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        port: { type: 'string' },
        'gateway-url': { type: 'string' },
        'api-key': { type: 'string' },
        product: { type: 'string' },
        'relay-url': { type: 'string' },
        'relay-token': { type: 'string' },
        'data-dir': { type: 'string' },
        'ice-servers': { type: 'string' },
        'ice-transport-policy': { type: 'string' },
      },
      strict: true,
      allowPositionals: false,
    }));
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
  const portText = values.port ?? env.SOFTPHONE_PORT ?? '0';
  const port = Number(portText);
  if (!/^\d+$/.test(portText) || port > 65535) throw new UsageError(`--port: must be a whole number from 0 to 65535, got "${portText}"`);
  const dataDir = resolve(values['data-dir'] ?? env.SOFTPHONE_DATA_DIR ?? join(env.XDG_CONFIG_HOME ?? join(homedir(), '.config'), 'softphone', 'browser-host'));

  const network = parseNetworkFlags(values['ice-servers'] ?? env.SOFTPHONE_ICE_SERVERS, values['ice-transport-policy'] ?? env.SOFTPHONE_ICE_TRANSPORT_POLICY);
  const withNetwork = network ? { network } : {};

  const raw = {
    gatewayUrl: values['gateway-url'] ?? env.SOFTPHONE_GATEWAY_URL,
    apiKey: values['api-key'] ?? env.SOFTPHONE_API_KEY,
    productSegment: values.product ?? env.SOFTPHONE_PRODUCT,
    relayUrl: values['relay-url'] ?? env.SOFTPHONE_RELAY_URL,
    agentToken: values['relay-token'] ?? env.SOFTPHONE_RELAY_TOKEN,
  };
  const given = Object.entries(raw).filter(([, v]) => v !== undefined);
  if (given.length === 0 || (given.length === 1 && raw.productSegment !== undefined && given[0]![0] === 'productSegment')) {
    return { port, dataDir, ...withNetwork };
  }
  for (const field of ['gatewayUrl', 'apiKey', 'relayUrl', 'agentToken'] as const) {
    if (!raw[field]) throw new UsageError(`${FLAG_FOR_FIELD[field]}: is required when any account flag is given`);
  }
  const parsed = parseWith(accountSettingsInputSchema, Object.fromEntries(given));
  if (!parsed.ok) {
    const field = parsed.error.field ?? '';
    const flag = FLAG_FOR_FIELD[field] ?? field;
    throw new UsageError(`${flag}: ${parsed.error.message.replace(/^[^:]+: /, '')}`);
  }
  const v = parsed.value;
  return {
    port,
    dataDir,
    ...withNetwork,
    account: { gatewayUrl: v.gatewayUrl, apiKey: v.apiKey ?? '', productSegment: v.productSegment, relayUrl: v.relayUrl, agentToken: v.agentToken ?? '' },
  };
}

function parseNetworkFlags(serversText: string | undefined, policyText: string | undefined): NetworkFlags | undefined {
  const flags: NetworkFlags = {};
  if (serversText !== undefined) {
    let json: unknown;
    try {
      json = JSON.parse(serversText);
    } catch {
      throw new UsageError('--ice-servers: must be a JSON array of ICE servers, e.g. \'[{"urls":"turn:turn.example.com:443?transport=tcp","username":"u","credential":"p"}]\'');
    }
    const parsed = parseWith(iceServersSchema, json);
    if (!parsed.ok) throw new UsageError(`--ice-servers: ${parsed.error.message}`);
    flags.iceServers = parsed.value;
  }
  if (policyText !== undefined) {
    const parsed = iceTransportPolicySchema.safeParse(policyText);
    if (!parsed.success) throw new UsageError(`--ice-transport-policy: must be all or relay, got "${policyText.slice(0, 40)}"`);
    flags.iceTransportPolicy = parsed.data;
  }
  return serversText === undefined && policyText === undefined ? undefined : flags;
}

export interface RunningBrowserHost {
  url: string;
  mode: 'sandbox' | 'account';
  close(): Promise<void>;
}

/** The embedded relay's records: an embedded database in the host's data folder, opened in the background. */
const embeddedRecords = (dir: string): CallRecords => new CallRecords({ database: { kind: 'embedded', dataDir: dir }, dataDir: dir, logger: createLogger('records') });

export async function runBrowserHost(config: BrowserHostConfig, staticDir = resolve('dist/renderer')): Promise<RunningBrowserHost> {
  const logger = createLogger('browser-host');
  // Rotating files in <dataDir>/logs, for "Export diagnostics"; the console alone when they cannot be written.
  const logFiles = await startFileLogging({ dir: join(config.dataDir, 'logs') }).catch((e: unknown) => {
    logger.error('log files unavailable: logging to the console only', { error: e });
    return undefined;
  });
  const service = await createSoftphoneService({
    ...(logFiles ? { logFiles } : {}),
    // npm sets it for `npm run start:browser`; started otherwise, the export says "unknown".
    ...(process.env.npm_package_version ? { appVersion: process.env.npm_package_version } : {}),
    dataDir: config.dataDir,
    secrets: new FileSecretStore(join(config.dataDir, 'secrets.json')),
    embedded: () => startEmbeddedEnvironment({ records: () => embeddedRecords(join(config.dataDir, 'relay-data')), recordingsDir: join(config.dataDir, 'relay-data', 'recordings') }),
    logger,
    ...(config.account ? { account: config.account } : {}),
    ...(config.network ? { network: config.network } : {}),
  });
  const host = await startBrowserHost({ backend: service, staticDir, port: config.port, logger });
  const snapshot = await service.handle('getSnapshot', {});
  const mode = snapshot.ok ? snapshot.value.mode : 'sandbox';
  return {
    url: host.url,
    mode,
    async close() {
      await host.close();
      await service.close();
    },
  };
}

/** Runs until SIGINT/SIGTERM; prints the URL to open on one line. */
export async function main(argv: string[]): Promise<void> {
  let config: BrowserHostConfig;
  try {
    config = parseBrowserHostArgs(argv, process.env);
  } catch (e) {
    if (e instanceof UsageError) {
      console.error(`start:browser: ${e.message}`);
      process.exit(2);
    }
    throw e;
  }
  const running = await runBrowserHost(config);
  console.log(`Softphone (${running.mode === 'sandbox' ? 'Sandbox' : 'account'}) — open ${running.url}`);
  let closing = false;
  const stop = () => {
    if (closing) return;
    closing = true;
    void running.close().finally(() => process.exit(0));
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}

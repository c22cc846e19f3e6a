// Command-line and environment configuration of a bridge node (`npm run bridge`). Flags win over
// environment variables; every problem is one line naming the flag and its rule, as the relay's.
import { isIP } from 'node:net';
import { parseArgs } from 'node:util';
import { BRIDGE_NODE_ID_PATTERN, bridgeTokenProblem, MAX_BRIDGE_NODE_CALLS, MIN_BRIDGE_TOKEN_CHARS } from '../shared/bridge-nodes';
import type { LogLevel } from '../shared/log';
import { err, errorText, ok, type Result } from '../shared/result';
import { isHttpUrl } from '../shared/validation';

export interface BridgeCliConfig {
  /** Where the relay takes registrations (`POST /bridge/nodes`). */
  relayUrl: string;
  bridgeToken: string;
  /** The IP address in the node's candidates; absent: the node's own addresses. */
  publicAddress?: string;
  /** The UDP ports of the node's media, both ends included. */
  rtpPorts?: { from: number; to: number };
  controlPort: number;
  /** The address the control API listens on. */
  controlAddress: string;
  /** Absent: made from the host name and the control port. */
  nodeId?: string;
  /** Calls the node takes at most; absent: no limit of its own. */
  capacity?: number;
  logLevel: LogLevel;
}

export const DEFAULT_CONTROL_PORT = 8790;
const LOG_LEVELS: readonly LogLevel[] = ['debug', 'info', 'warn', 'error'];
/** Below are the system's ports; media needs room for a few calls. */
const MIN_RTP_PORT = 1024;

export const BRIDGE_USAGE = `Usage: npm run bridge -- --relay-url URL --bridge-token T [--public-address A] [--rtp-ports FROM-TO]
                         [--control-port P] [--control-address H] [--node-id ID] [--capacity N] [--log-level L]

  --relay-url URL        the relay the node registers with (http:// or https://)      env BRIDGE_RELAY_URL
  --bridge-token T       the relay's --bridge-token (at least ${MIN_BRIDGE_TOKEN_CHARS} characters)        env RELAY_BRIDGE_TOKEN
  --public-address A     the IP address customers and agents reach the media at      env BRIDGE_PUBLIC_ADDRESS
                         (default: the node's own addresses)
  --rtp-ports FROM-TO    the UDP ports of the media, ${MIN_RTP_PORT}–65535 (default: any)          env BRIDGE_RTP_PORTS
  --control-port P       the port of the control API the relay drives (default ${DEFAULT_CONTROL_PORT}; 0 any)  env BRIDGE_CONTROL_PORT
  --control-address H    the IP address it listens on (default 127.0.0.1)            env BRIDGE_CONTROL_ADDRESS
  --node-id ID           the node's name at the relay (default: host name and port)  env BRIDGE_NODE_ID
  --capacity N           calls the node takes at most, 1–${MAX_BRIDGE_NODE_CALLS} (default: no limit)   env BRIDGE_CAPACITY
  --log-level L          debug, info, warn or error (default info)                   env BRIDGE_LOG_LEVEL

SIGINT or SIGTERM: the node leaves the relay, ends its calls and exits.`;

const bad = (flag: string, message: string): Result<never> => err('invalid_input', message, { field: flag });

/** `help` when --help was asked for; otherwise the checked configuration or one error line. */
export function parseBridgeCli(argv: readonly string[], env: Readonly<Record<string, string | undefined>>): Result<BridgeCliConfig | 'help'> {
  let values: Record<string, string | boolean | undefined>;
  try {
    ({ values } = parseArgs({
      args: [...argv],
      strict: true,
      allowPositionals: false,
      options: {
        'relay-url': { type: 'string' },
        'bridge-token': { type: 'string' },
        'public-address': { type: 'string' },
        'rtp-ports': { type: 'string' },
        'control-port': { type: 'string' },
        'control-address': { type: 'string' },
        'node-id': { type: 'string' },
        capacity: { type: 'string' },
        'log-level': { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    }));
  } catch (e) {
    const refused = describeParseError(e);
    return err('invalid_input', refused.message, refused.flag !== undefined ? { field: refused.flag } : {});
  }
  if (values.help === true) return ok('help');

  /** The flag's value, else its environment variable's; empty counts as absent. */
  const flag = (name: string, envName: string): string | undefined => {
    const v = values[name];
    if (typeof v === 'string') return v === '' ? undefined : v;
    const fromEnv = env[envName];
    return fromEnv === undefined || fromEnv === '' ? undefined : fromEnv;
  };

  const relayUrl = flag('relay-url', 'BRIDGE_RELAY_URL')?.trim();
  if (relayUrl === undefined) return bad('--relay-url', '--relay-url is required (or BRIDGE_RELAY_URL): the relay the node registers with');
  // The URL may hold a password: it is not echoed.
  if (!isHttpUrl(relayUrl)) return bad('--relay-url', '--relay-url must be an http:// or https:// URL');

  const tokenSource = typeof values['bridge-token'] === 'string' && values['bridge-token'] !== '' ? '--bridge-token' : 'RELAY_BRIDGE_TOKEN';
  const bridgeToken = flag('bridge-token', 'RELAY_BRIDGE_TOKEN');
  if (bridgeToken === undefined) return bad('--bridge-token', "--bridge-token is required (or RELAY_BRIDGE_TOKEN): the relay's --bridge-token");
  const problem = bridgeTokenProblem(bridgeToken);
  if (problem === 'has_spaces') return bad('--bridge-token', `${tokenSource}: must not contain spaces`);
  if (problem === 'too_short') return bad('--bridge-token', `${tokenSource}: must be at least ${MIN_BRIDGE_TOKEN_CHARS} characters`);

  const media = parseMediaFlags(flag('public-address', 'BRIDGE_PUBLIC_ADDRESS'), flag('rtp-ports', 'BRIDGE_RTP_PORTS'));
  if (!media.ok) return media;
  const { publicAddress, rtpPorts } = media.value;

  const portText = (flag('control-port', 'BRIDGE_CONTROL_PORT') ?? String(DEFAULT_CONTROL_PORT)).trim();
  if (!/^\d{1,5}$/.test(portText) || Number(portText) > 65535) return bad('--control-port', `--control-port must be a whole number from 0 to 65535 (got "${portText}")`);

  const controlAddress = (flag('control-address', 'BRIDGE_CONTROL_ADDRESS') ?? '127.0.0.1').trim();
  if (isIP(controlAddress) === 0) return bad('--control-address', `--control-address must be an IP address such as 127.0.0.1 or 0.0.0.0 (got "${controlAddress}")`);

  const nodeId = flag('node-id', 'BRIDGE_NODE_ID')?.trim();
  if (nodeId !== undefined && !BRIDGE_NODE_ID_PATTERN.test(nodeId)) {
    return bad('--node-id', `--node-id must be 1 to 64 letters, digits, ".", "_" or "-", starting with a letter or digit (got "${nodeId}")`);
  }

  const capacityText = flag('capacity', 'BRIDGE_CAPACITY')?.trim();
  if (capacityText !== undefined && (!/^\d{1,6}$/.test(capacityText) || Number(capacityText) < 1 || Number(capacityText) > MAX_BRIDGE_NODE_CALLS)) {
    return bad('--capacity', `--capacity must be a whole number from 1 to ${MAX_BRIDGE_NODE_CALLS} (got "${capacityText}")`);
  }

  const logLevel = (flag('log-level', 'BRIDGE_LOG_LEVEL') ?? 'info').trim() as LogLevel;
  if (!LOG_LEVELS.includes(logLevel)) return bad('--log-level', `--log-level must be one of ${LOG_LEVELS.join(', ')}`);

  return ok({
    relayUrl,
    bridgeToken,
    controlPort: Number(portText),
    controlAddress,
    logLevel,
    ...(publicAddress !== undefined ? { publicAddress } : {}),
    ...(rtpPorts !== undefined ? { rtpPorts } : {}),
    ...(nodeId !== undefined ? { nodeId } : {}),
    ...(capacityText !== undefined ? { capacity: Number(capacityText) } : {}),
  });
}

/**
 * A node's media flags, the same for `npm run bridge` and the relay's `--bridge`: `--public-address`
 * an IP address, `--rtp-ports` FROM-TO within the unprivileged ports. Each problem names its flag.
 */
export function parseMediaFlags(
  publicAddressText: string | undefined,
  rtpPortsText: string | undefined,
): Result<{ publicAddress?: string; rtpPorts?: { from: number; to: number } }> {
  const publicAddress = publicAddressText?.trim();
  if (publicAddress !== undefined && isIP(publicAddress) === 0) return bad('--public-address', `--public-address must be an IP address (got "${publicAddress}")`);
  const rtpText = rtpPortsText?.trim();
  let rtpPorts: { from: number; to: number } | undefined;
  if (rtpText !== undefined) {
    const match = /^(\d{1,5})-(\d{1,5})$/.exec(rtpText);
    const from = Number(match?.[1]);
    const to = Number(match?.[2]);
    if (match === null || from < MIN_RTP_PORT || to > 65535 || from > to) {
      return bad('--rtp-ports', `--rtp-ports must be FROM-TO, two whole numbers from ${MIN_RTP_PORT} to 65535, FROM not above TO (got "${rtpText}")`);
    }
    rtpPorts = { from, to };
  }
  return ok({ ...(publicAddress !== undefined ? { publicAddress } : {}), ...(rtpPorts !== undefined ? { rtpPorts } : {}) });
}

/** A node id from the host name and the control port, within the id's rule: two nodes of one host differ by their port. */
export function defaultNodeId(hostname: string, controlPort: number): string {
  const suffix = `-${controlPort}`;
  const host = hostname
    .split('.')[0]!
    .replace(/[^A-Za-z0-9._-]/g, '-')
    .replace(/^[^A-Za-z0-9]+/, '')
    .slice(0, 64 - suffix.length);
  return `${host === '' ? 'bridge' : host}${suffix}`;
}

function describeParseError(e: unknown): { message: string; flag?: string } {
  const message = errorText(e);
  const unknown = /Unknown option '([^']+)'/.exec(message);
  if (unknown) return { message: `${unknown[1]} is not a known flag (see --help)`, flag: unknown[1]! };
  const option = /Option '(--[a-z-]+)/.exec(message)?.[1];
  if (option && /argument missing/.test(message)) return { message: `${option} needs a value`, flag: option };
  if (option && /does not take an argument/.test(message)) return { message: `${option} takes no value`, flag: option };
  if (option && /ambiguous/.test(message)) return { message: `${option}: the value looks like a flag; write ${option}=VALUE`, flag: option };
  const positional = /Unexpected argument '([^']+)'/.exec(message);
  if (positional) return { message: `unexpected argument "${positional[1]}": every setting is a --flag (see --help)` };
  return { message: message.split('\n')[0] ?? message };
}

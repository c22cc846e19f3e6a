// The network a call's media takes (Settings → Network; `start:browser --ice-servers`): STUN and
// TURN servers and whether only relayed paths may be used. The service's side is ice-lite with
// public candidates (protocol.md): with no server at all, host candidates and peer-reflexive
// discovery suffice on an open network, and a firewall that blocks outbound UDP needs TURN over
// TCP or TLS (`turn:HOST:443?transport=tcp`, `turns:HOST:443`).
import { z } from 'zod';
import { english, rule, term, type TextValue } from './i18n/text';
import { ruleMessage } from './validation';

// RFC 7064 (stun/stuns) and RFC 7065 (turn/turns): scheme ":" host [ ":" port ], and for TURN
// an optional "?transport=udp|tcp". STUN URIs have no query.
const ICE_URL = /^(stuns?|turns?):(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+)(?::(\d{1,5}))?(\?transport=(?:udp|tcp))?$/;
const HOST_NAME = /^(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/;

/** The rules in English, for the relay's command line and configuration refusals. */
export const ICE_URL_RULE = rule('network.iceUrl');
export const TURN_URL_RULE = rule('network.turnUrl');


/** The most servers a configuration may list: each one costs gathering time on every call. */
export const MAX_ICE_SERVERS = 10;
const MAX_CREDENTIAL = 512;

export type IceUrlKind = 'stun' | 'turn';

/** `stun` or `turn` for an ICE server URL an RTCPeerConnection accepts; undefined for anything else. */
export function iceUrlKind(url: string): IceUrlKind | undefined {
  const match = ICE_URL.exec(url);
  if (!match) return undefined;
  const scheme = match[1]!;
  const host = match[2]!;
  const port = match[3];
  if (scheme.startsWith('stun') && match[4] !== undefined) return undefined;
  if (port !== undefined && (Number(port) < 1 || Number(port) > 65535)) return undefined;
  if (host.startsWith('[')) {
    if (!URL.canParse(`http://${host}/`)) return undefined;
  } else if (!HOST_NAME.test(host)) {
    return undefined;
  }
  return scheme.startsWith('turn') ? 'turn' : 'stun';
}

export const isTurnUrl = (url: string): boolean => iceUrlKind(url) === 'turn';

/** A rejected URL as an error may quote it: one with a user name or password in it is not echoed. */
export function iceUrlShown(url: string): TextValue {
  return url.includes('@') ? term('urlWithCredentials') : `"${url.length > 80 ? `${url.slice(0, 80)}…` : url}"`;
}

/** The same in English. */
export const describeIceUrl = (url: string): string => english(iceUrlShown(url));

const iceUrlSchema = z
  .string({ error: ruleMessage('common.mustBeString') })
  .trim()
  .refine((url) => iceUrlKind(url) !== undefined, { error: (issue) => ruleMessage('network.iceUrlGot', { url: iceUrlShown(String(issue.input)) }) });

const credentialText = (what: TextValue) =>
  z
    .string({ error: ruleMessage('network.credentialString', { what }) })
    .min(1, ruleMessage('network.credentialEmpty', { what }))
    .max(MAX_CREDENTIAL, ruleMessage('network.credentialTooLong', { what, count: MAX_CREDENTIAL }));

const blankOr = (what: TextValue) =>
  z
    .string({ error: ruleMessage('network.credentialString', { what }) })
    .max(MAX_CREDENTIAL, ruleMessage('network.credentialTooLong', { what, count: MAX_CREDENTIAL }));

/** One RTCIceServer as `--ice-servers` gives it; a TURN server needs its username and credential. */
export const iceServerSchema = z
  .strictObject({
    urls: z.union([iceUrlSchema, z.array(iceUrlSchema).min(1, ruleMessage('network.atLeastOneUrl')).max(MAX_ICE_SERVERS, ruleMessage('network.atMostUrls', { count: MAX_ICE_SERVERS }))], {
      error: ruleMessage('network.urlOrList'),
    }),
    username: credentialText(term('username')).optional(),
    credential: credentialText(term('credential')).optional(),
  })
  .refine((server) => !toList(server.urls).some(isTurnUrl) || (server.username !== undefined && server.credential !== undefined), {
    error: ruleMessage('network.turnNeedsCredentials'),
    path: ['credential'],
  });
export type IceServer = z.infer<typeof iceServerSchema>;

export const iceServersSchema = z
  .array(iceServerSchema, { error: ruleMessage('network.serverArray') })
  .max(MAX_ICE_SERVERS, ruleMessage('network.atMostServers', { count: MAX_ICE_SERVERS }));

export const ICE_TRANSPORT_POLICIES = ['all', 'relay'] as const;
export type IceTransportPolicy = (typeof ICE_TRANSPORT_POLICIES)[number];
export const iceTransportPolicySchema = z.enum(ICE_TRANSPORT_POLICIES, ruleMessage('network.allOrRelay'));

/** What the settings' Network section submits. A blank TURN password keeps the stored one. */
export const networkSettingsInputSchema = z.strictObject({
  servers: z.array(iceUrlSchema, { error: ruleMessage('network.serverList') }).max(MAX_ICE_SERVERS, ruleMessage('network.atMostServers', { count: MAX_ICE_SERVERS })),
  // Blank: no username; for the password, keep the stored one.
  turnUsername: blankOr(term('turnUsername')).optional(),
  turnPassword: blankOr(term('turnPassword')).optional(),
  relayOnly: z.boolean({ error: ruleMessage('common.mustBeBoolean') }),
});
export type NetworkSettingsInput = z.input<typeof networkSettingsInputSchema>;

/** Kept on disk (the TURN password lives behind the SecretStore). */
export const storedNetworkSchema = z.object({
  servers: z.array(iceUrlSchema).max(MAX_ICE_SERVERS),
  turnUsername: credentialText(term('turnUsername')).optional(),
  relayOnly: z.boolean(),
});
export type StoredNetwork = z.infer<typeof storedNetworkSchema>;

/** Where the relay's short-lived TURN credentials stand (GET /turn-credentials). */
export type RelayTurnStatus = 'available' | 'not_offered' | 'unreachable' | 'unknown';

/** What the window may see of the network settings: everything but the TURN password. */
export interface PublicNetworkSettings {
  servers: string[];
  turnUsername?: string;
  hasTurnPassword: boolean;
  relayOnly: boolean;
  /** The servers and policy come from `--ice-servers` / `--ice-transport-policy` until a save replaces them. */
  fromCommandLine: boolean;
  relayTurn: RelayTurnStatus;
}

/**
 * What a call's peer connection is built with (getIceConfig). The one place where TURN credentials
 * reach the window: RTCPeerConnection takes them from nowhere else. They never enter the store.
 */
export interface IceConfig {
  iceServers: IceServer[];
  iceTransportPolicy: IceTransportPolicy;
  /** Unix ms after which the relay's TURN credentials in it are no longer valid; absent when none. */
  expiresAt?: number;
}

export const iceConfigSchema = z.strictObject({
  iceServers: iceServersSchema,
  iceTransportPolicy: iceTransportPolicySchema,
  expiresAt: z.number().int().nonnegative().optional(),
});

const toList = (urls: string | string[]): string[] => (Array.isArray(urls) ? urls : [urls]);
export const iceServerUrls = (server: IceServer): string[] => toList(server.urls);

/** The saved Network section as RTCIceServers: STUN URLs alone, TURN URLs with the TURN credentials. */
export function iceServersFromSettings(stored: StoredNetwork, turnPassword: string | undefined): IceServer[] {
  const stun = stored.servers.filter((url) => iceUrlKind(url) === 'stun');
  const turn = stored.servers.filter(isTurnUrl);
  const servers: IceServer[] = [];
  if (stun.length > 0) servers.push({ urls: stun });
  if (turn.length > 0 && stored.turnUsername !== undefined && turnPassword !== undefined) servers.push({ urls: turn, username: stored.turnUsername, credential: turnPassword });
  return servers;
}

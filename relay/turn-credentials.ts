// Short-lived TURN credentials for agents (relay/REFERENCE.md "TURN credentials"), in the shared-secret
// scheme of coturn's --use-auth-secret (the "TURN REST API" draft, draft-uberti-behave-turn-rest-00):
// the username is `<expiry unix seconds>:<agent id>` and the password is base64(HMAC-SHA1(secret,
// username)). The TURN server knows the secret too, so it checks the password and the expiry without
// asking the relay; nobody types a TURN password and a leaked one stops working by itself.
import { createHmac } from 'node:crypto';
import { describeIceUrl as describeTurnUrl, isTurnUrl, TURN_URL_RULE } from '../shared/ice-servers';

export { describeTurnUrl, isTurnUrl, TURN_URL_RULE };

export interface TurnConfig {
  /** The TURN server's `static-auth-secret`. Never logged, never part of an answer. */
  secret: string;
  /** `turn:` / `turns:` URLs handed to agents as they are (RFC 7065). */
  urls: string[];
  /** How long a credential is valid. Default DEFAULT_TURN_TTL_SEC. */
  ttlSec?: number;
}

/** The body of `GET /turn-credentials`: an RTCConfiguration's `iceServers`, and how long they last. */
export interface TurnCredentialsAnswer {
  iceServers: { urls: string[]; username: string; credential: string }[];
  ttlSec: number;
}

/** One hour: a leaked credential soon stops working, and an agent that fetched one has ample time to set up a call with it. */
export const DEFAULT_TURN_TTL_SEC = 3600;
export const MIN_TURN_TTL_SEC = 60;
export const MAX_TURN_TTL_SEC = 86_400;

export const TURN_SECRET_RULE = 'must not be empty or contain spaces';
export const TURN_TTL_RULE = `must be a whole number of seconds from ${MIN_TURN_TTL_SEC} to ${MAX_TURN_TTL_SEC}`;

/** The first problem of a TURN configuration given in code, as one line that never holds the secret; undefined when it is sound. */
export function turnConfigProblem(config: TurnConfig): string | undefined {
  if (config.secret === '' || /\s/.test(config.secret)) return `turn.secret ${TURN_SECRET_RULE}`;
  if (config.urls.length === 0) return 'turn.urls must list at least one TURN URL';
  const bad = config.urls.find((url) => !isTurnUrl(url));
  if (bad !== undefined) return `turn.urls: each URL ${TURN_URL_RULE} (got ${describeTurnUrl(bad)})`;
  const ttl = config.ttlSec;
  if (ttl !== undefined && !(Number.isInteger(ttl) && ttl >= MIN_TURN_TTL_SEC && ttl <= MAX_TURN_TTL_SEC)) return `turn.ttlSec ${TURN_TTL_RULE}`;
  return undefined;
}

/** The credentials of `agentId`, valid from `nowMs` for the configured time. */
export function turnCredentialsFor(config: TurnConfig, agentId: string, nowMs: number): TurnCredentialsAnswer {
  const ttlSec = config.ttlSec ?? DEFAULT_TURN_TTL_SEC;
  const username = `${Math.floor(nowMs / 1000) + ttlSec}:${agentId}`;
  const credential = createHmac('sha1', config.secret).update(username).digest('base64');
  return { iceServers: [{ urls: [...config.urls], username, credential }], ttlSec };
}

// What a bridge node and the relay say to each other (relay/REFERENCE.md "Bridge nodes"): a node
// registers, then reports its load every heartbeat, and the relay hands new calls to the least
// loaded live node. The relay checks these bodies where they enter; the bridge builds them.
import { z } from 'zod';
import { legIdSchema } from './bridge';
import { list } from './i18n/text';
import { httpUrlString, requiredString, ruleMessage } from './validation';

/** The relay's endpoints for bridge nodes, all with `Authorization: Bearer <bridge token>`. */
export const BRIDGE_NODE_PATHS = {
  /** POST: register (or replace) a node. */
  nodes: '/bridge/nodes',
  /** DELETE: the node leaves. */
  node: (nodeId: string): string => `/bridge/nodes/${encodeURIComponent(nodeId)}`,
  /** PUT: the node's load, which is its heartbeat too. */
  load: (nodeId: string): string => `/bridge/nodes/${encodeURIComponent(nodeId)}/load`,
  /** POST: something happened on the node that the relay must know (`BridgeNodeEvent`). */
  events: (nodeId: string): string => `/bridge/nodes/${encodeURIComponent(nodeId)}/events`,
} as const;

/**
 * The bridge token lets its holder decide where the team's media goes, so it is as long as an
 * agent's and has no development shortcut. Each side words the problem in its own refusal.
 */
export const MIN_BRIDGE_TOKEN_CHARS = 32;
export type BridgeTokenProblem = 'has_spaces' | 'too_short';

/** What is wrong with a bridge token, if anything: a bearer token cannot hold whitespace. */
export function bridgeTokenProblem(token: string): BridgeTokenProblem | undefined {
  if (/\s/.test(token)) return 'has_spaces';
  if (token.length < MIN_BRIDGE_TOKEN_CHARS) return 'too_short';
  return undefined;
}

export const BRIDGE_NODE_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
/** More calls than any one machine carries: a larger number is a mistake, not a big node. */
export const MAX_BRIDGE_NODE_CALLS = 100_000;

const NUMBER_REQUIRED = ruleMessage('common.requiredNumber');
const wholeNumber = (min: number, max: number) => {
  const rule = ruleMessage('bridgeNodes.wholeNumber', { min, max });
  return z.number({ error: NUMBER_REQUIRED }).int(rule).min(min, rule).max(max, rule);
};

export const bridgeNodeIdSchema = requiredString().regex(BRIDGE_NODE_ID_PATTERN, ruleMessage('bridgeNodes.nodeId'));

/**
 * An IP address or a host name, no port: where customers' and agents' media reach the node.
 * Labels of letters, digits and "-", or an IPv6 address (which holds ":").
 */
const HOST_NAME = /^(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*\.?$/;
const IPV6 = /^[0-9A-Fa-f:.]{2,45}$/;
const isPublicAddress = (value: string): boolean => HOST_NAME.test(value) || (value.includes(':') && IPV6.test(value) && URL.canParse(`http://[${value}]/`));

/** `POST /bridge/nodes`. Members the relay does not know are ignored: a newer bridge may say more. */
export const bridgeNodeRegistrationSchema = z.object(
  {
    nodeId: bridgeNodeIdSchema,
    /** Where the relay reaches the node's control API. */
    controlUrl: httpUrlString().max(2048, ruleMessage('common.tooLongAtMost', { count: 2048 })),
    publicAddress: requiredString().refine(isPublicAddress, ruleMessage('bridgeNodes.publicAddress')),
    /** Calls the node takes at most; absent: no limit of its own. */
    capacity: wholeNumber(1, MAX_BRIDGE_NODE_CALLS).optional(),
  },
  { error: ruleMessage('common.requiredObject') },
);
export type BridgeNodeRegistration = z.infer<typeof bridgeNodeRegistrationSchema>;

/** `PUT /bridge/nodes/{nodeId}/load`: the calls the node holds now, and how busy its processor is. */
export const bridgeNodeLoadSchema = z.object(
  {
    calls: wholeNumber(0, MAX_BRIDGE_NODE_CALLS),
    cpuPercent: z.number({ error: NUMBER_REQUIRED }).min(0, ruleMessage('bridgeNodes.percent')).max(100, ruleMessage('bridgeNodes.percent')).optional(),
  },
  { error: ruleMessage('common.requiredObject') },
);
export type BridgeNodeLoad = z.infer<typeof bridgeNodeLoadSchema>;

/** The relay's answer to a registration: report the load every `heartbeatMs`; three missed and the node is gone. */
export const bridgeNodeRegisteredSchema = z.object({ nodeId: z.string(), heartbeatMs: z.number().int().positive() });
export type BridgeNodeRegistered = z.infer<typeof bridgeNodeRegisteredSchema>;

/** What happened to one agent's leg of a call, or to the customer's. */
export const BRIDGE_LEG_EVENT_KINDS = ['leg_connected', 'leg_failed', 'leg_closed'] as const;
export const BRIDGE_CUSTOMER_EVENT_KINDS = ['customer_connected', 'customer_failed'] as const;
const EVENT_KINDS = [...BRIDGE_LEG_EVENT_KINDS, ...BRIDGE_CUSTOMER_EVENT_KINDS];
/** The node's limit on a call id (the service's ids are far shorter). */
const MAX_EVENT_CALL_ID = 256;

const eventCallId = requiredString().min(1, ruleMessage('common.notEmpty')).max(MAX_EVENT_CALL_ID, ruleMessage('common.tooLongAtMost', { count: MAX_EVENT_CALL_ID }));

/**
 * `POST /bridge/nodes/{nodeId}/events`: what a node tells the relay of its calls' legs, as it
 * happens. The relay decides what it means for the call (a failed leg, a customer gone).
 */
export const bridgeNodeEventSchema = z.discriminatedUnion(
  'kind',
  [
    z.object({
      kind: z.enum(BRIDGE_LEG_EVENT_KINDS),
      callId: eventCallId,
      legId: legIdSchema,
      /** A failed or closed leg: when its last packet came (unix ms), which is when its agent went. */
      lastPacketAt: wholeNumber(0, Number.MAX_SAFE_INTEGER).optional(),
    }),
    z.object({ kind: z.enum(BRIDGE_CUSTOMER_EVENT_KINDS), callId: eventCallId }),
  ],
  { error: ruleMessage('common.oneOf', { values: list(EVENT_KINDS) }) },
);
export type BridgeNodeEventBody = z.infer<typeof bridgeNodeEventSchema>;


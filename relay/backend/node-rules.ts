// The bridge node rules both backends apply alike (relay/REFERENCE.md "Bridge nodes"): which nodes
// are live, in which order they are listed, which one takes the next call, and how long the relay
// remembers which node holds a call.
import type { BridgeNodeLoad, BridgeNodeRegistration } from '../../shared/bridge-nodes';
import { CLAIM_TTL_MS } from './delivery-rules';
import type { BridgeNode } from './types';

/** Keys of the Redis hashes are removed this long after the last write at the least, whatever the heartbeat. */
export const NODE_KEYS_TTL_MS = 60 * 60_000;

/** Which node holds a call is kept as long as its claim; a longer call is placed again to keep it. */
export const CALL_NODE_TTL_MS = CLAIM_TTL_MS;

export const isLive = (node: Pick<BridgeNode, 'expiresAt'>, now: number): boolean => node.expiresAt > now;

/** A node as it registers: no calls yet, alive for `ttlMs`. */
export function registeredNode(registration: BridgeNodeRegistration, now: number, ttlMs: number): BridgeNode {
  const { nodeId, controlUrl, publicAddress, capacity } = registration;
  return { nodeId, controlUrl, publicAddress, ...(capacity !== undefined ? { capacity } : {}), calls: 0, registeredAt: now, lastSeenAt: now, expiresAt: now + ttlMs };
}

/** The same node after a load report: the report replaces the last one whole (a cpuPercent left out is unknown now). */
export function withLoad(node: BridgeNode, load: BridgeNodeLoad, now: number, ttlMs: number): BridgeNode {
  const { cpuPercent: _previous, ...rest } = node;
  return { ...rest, calls: load.calls, ...(load.cpuPercent !== undefined ? { cpuPercent: load.cpuPercent } : {}), lastSeenAt: now, expiresAt: now + ttlMs };
}

export const byNodeId = (a: BridgeNode, b: BridgeNode): number => (a.nodeId < b.nodeId ? -1 : a.nodeId > b.nodeId ? 1 : 0);

/**
 * The calls a node holds as far as the team knows: what it reported, or more when the relay placed
 * more on it since (a burst of calls between two heartbeats must not all land on one node).
 */
const callsOf = (node: BridgeNode, placed: number): number => Math.max(node.calls, placed);

/** A node without a capacity of its own has room for any number of calls. */
const shareOfCapacity = (calls: number, node: BridgeNode): number => (node.capacity === undefined ? 0 : calls / node.capacity);

/**
 * The node that takes the next call: among the nodes with room for one more, the one with the fewest
 * calls; among equals the one with the lowest share of its capacity, then the lowest id. `placed`
 * says how many calls the relay holds on each node now.
 */
export function leastLoaded(nodes: readonly BridgeNode[], placed: (nodeId: string) => number): BridgeNode | undefined {
  let best: { node: BridgeNode; calls: number } | undefined;
  for (const node of nodes) {
    const calls = callsOf(node, placed(node.nodeId));
    if (node.capacity !== undefined && calls >= node.capacity) continue;
    if (best === undefined || compareLoad({ node, calls }, best) < 0) best = { node, calls };
  }
  return best?.node;
}

function compareLoad(a: { node: BridgeNode; calls: number }, b: { node: BridgeNode; calls: number }): number {
  if (a.calls !== b.calls) return a.calls - b.calls;
  const share = shareOfCapacity(a.calls, a.node) - shareOfCapacity(b.calls, b.node);
  return share !== 0 ? share : byNodeId(a.node, b.node);
}

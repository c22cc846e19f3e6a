// The team's bridge nodes as the relay sees them (relay/REFERENCE.md "Bridge nodes"): they present
// the bridge token, register, report their load every heartbeat, and are gone after three missed
// ones. The registry itself is the backend's, so that every relay instance sees the same nodes.
import { bridgeTokenProblem, type BridgeNodeEventBody, type BridgeNodeLoad, type BridgeNodeRegistration } from '../shared/bridge-nodes';
import type { BridgeControl } from '../shared/bridge';
import type { Logger } from '../shared/log';
import { assertNever } from '../shared/result';
import { BridgeControlClient } from '../bridge/control-client';
import { bearerToken, hashAgentToken, type AgentConfig } from './agent-directory';
import type { BridgeNode, RelayBackend } from './backend/types';
import type { BridgeNodeSource } from './bridged-calls';
import { secretsEqual } from './webhook-security';

/** How often a node reports its load by default. */
export const DEFAULT_BRIDGE_HEARTBEAT_MS = 5_000;
/** A node that misses this many heartbeats in a row is gone. */
export const MISSED_HEARTBEATS = 3;
/** The heartbeat a relay may ask for: a node that reports more often than this is a load of its own. */
export const MIN_BRIDGE_HEARTBEAT_MS = 50;
export const MAX_BRIDGE_HEARTBEAT_MS = 600_000;

/** One token for two roles would let a node act as an agent and an agent as a node. */
export const BRIDGE_TOKEN_SHARED_RULE = 'must differ from every agent token';

/** The bridge token's rule it breaks, in the words of the relay's refusals; undefined when it is good. */
export function bridgeTokenRule(token: string): string | undefined {
  const problem = bridgeTokenProblem(token);
  switch (problem) {
    case undefined:
      return undefined;
    case 'has_spaces':
      return 'must not contain spaces';
    case 'too_short':
      return 'must be at least 32 characters';
    default:
      return assertNever(problem, 'bridge token problem');
  }
}

/** Whether the bridge token is also an agent's (a plain token, or one whose hash the agents file holds). */
export function isAgentToken(bridgeToken: string, agents: readonly AgentConfig[], agentTokens: readonly string[]): boolean {
  const hash = hashAgentToken(bridgeToken);
  let shared = false;
  for (const agent of agents) shared = secretsEqual(agent.tokenSha256.toLowerCase(), hash) || shared;
  for (const token of agentTokens) shared = secretsEqual(token, bridgeToken) || shared;
  return shared;
}

/** Whether an `Authorization` header carries the bridge token; compared in constant time. */
export function presentsBridgeToken(authorization: string | undefined, bridgeToken: string): boolean {
  const token = bearerToken(authorization);
  return secretsEqual(token ?? '', bridgeToken) && token !== undefined;
}

/** A node's event as the instance that received it hands it on. */
export interface BridgeEventReport {
  nodeId: string;
  event: BridgeNodeEventBody;
  /** When this instance received it (unix ms). */
  receivedAt: number;
}

/** A node that is no longer live: it missed its heartbeats (or left through another instance), or it left through this one. */
export interface GoneNode {
  nodeId: string;
  why: 'expired' | 'left';
}

/** The relay's side of the bridge nodes: the heartbeat it asks for, the backend's registry, the nodes' events. */
export class BridgeNodeRegistry {
  /** A node is gone after this long without a report. */
  readonly ttlMs: number;
  private readonly listeners = new Set<(report: BridgeEventReport) => void>();
  private readonly goneListeners = new Set<(gone: GoneNode) => void>();
  /** The live nodes at the last look; undefined before the first. */
  private seen: Set<string> | undefined;
  private watcher: NodeJS.Timeout | undefined;
  private looking = false;
  private lookFailed = false;

  constructor(
    private readonly backend: RelayBackend,
    readonly heartbeatMs: number,
    private readonly log: Logger,
  ) {
    this.ttlMs = MISSED_HEARTBEATS * heartbeatMs;
  }

  async register(registration: BridgeNodeRegistration): Promise<BridgeNode> {
    const node = await this.backend.registerNode(registration, this.ttlMs);
    this.log.info('a bridge node registered', { nodeId: node.nodeId, controlUrl: node.controlUrl, publicAddress: node.publicAddress, capacity: node.capacity });
    this.seen?.add(node.nodeId);
    return node;
  }

  /** Undefined when no live node has that id: it must register again. */
  async reportLoad(nodeId: string, load: BridgeNodeLoad): Promise<BridgeNode | undefined> {
    const node = await this.backend.reportNodeLoad(nodeId, load, this.ttlMs);
    if (node === undefined) this.log.warn('a load report from a bridge node that is not registered', { nodeId });
    else this.log.debug('bridge node load', { nodeId, calls: load.calls, cpuPercent: load.cpuPercent });
    // Live now as this instance saw it: should it go before the next look, it is still seen going.
    if (node !== undefined) this.seen?.add(nodeId);
    return node;
  }

  async remove(nodeId: string): Promise<void> {
    await this.backend.removeNode(nodeId);
    this.log.info('a bridge node left', { nodeId });
    this.seen?.delete(nodeId);
    this.tellGone({ nodeId, why: 'left' });
  }

  /** Every node that stops being live from now on, once watching (`watch`). */
  onNodeGone(listener: (gone: GoneNode) => void): () => void {
    this.goneListeners.add(listener);
    return () => this.goneListeners.delete(listener);
  }

  /**
   * Looks at the live nodes every heartbeat: a node seen live (at a look, or registering or
   * reporting through this instance) and missing at the next look is gone. A node lives three
   * heartbeats at the least, so none comes and goes unseen. Every instance watches (the backend is
   * shared); the calls of a node gone are ended once all the same.
   */
  watch(): void {
    if (this.watcher !== undefined) return;
    this.watcher = setInterval(() => void this.look(), this.heartbeatMs);
    this.watcher.unref();
    void this.look();
  }

  stopWatching(): void {
    clearInterval(this.watcher);
    this.watcher = undefined;
  }

  private async look(): Promise<void> {
    if (this.looking) return;
    this.looking = true;
    try {
      const live = new Set((await this.backend.nodes()).map((node) => node.nodeId));
      if (this.lookFailed) this.log.info('the bridge nodes can be read again');
      this.lookFailed = false;
      const before = this.seen;
      this.seen = live;
      for (const nodeId of before ?? []) {
        if (live.has(nodeId)) continue;
        this.log.warn('a bridge node missed its heartbeats and is gone', { nodeId, missedMs: this.ttlMs });
        this.tellGone({ nodeId, why: 'expired' });
      }
    } catch (error) {
      // Once per outage: a backend that is down is logged where it fails for everyone.
      if (!this.lookFailed) this.log.warn('could not read the live bridge nodes', { error });
      this.lookFailed = true;
    } finally {
      this.looking = false;
    }
  }

  private tellGone(gone: GoneNode): void {
    for (const listener of [...this.goneListeners]) {
      try {
        listener(gone);
      } catch (error) {
        this.log.error('a bridge node listener failed', { nodeId: gone.nodeId, error });
      }
    }
  }

  /** Every event a node posts to this instance, from now on. */
  onEvent(listener: (report: BridgeEventReport) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  deliver(report: BridgeEventReport): void {
    const { nodeId, event } = report;
    this.log.info('a bridge node event', { nodeId, kind: event.kind, callId: event.callId, legId: 'legId' in event ? event.legId : undefined });
    for (const listener of [...this.listeners]) {
      try {
        listener(report);
      } catch (error) {
        // One listener's failure must not keep the event from the others, nor fail the node's request.
        this.log.error('a bridge event listener failed', { nodeId, kind: event.kind, error });
      }
    }
  }

  /** Live nodes, across every instance. */
  async liveCount(): Promise<number> {
    return (await this.backend.nodes()).length;
  }
}

/**
 * The team's registered nodes as the place of bridged calls' media: a new call goes to the node the
 * backend picks (least loaded, with room), and each node is driven through a client of its control
 * API, made when it is first picked and made again when it registers at another address.
 */
export class RegisteredBridgeNodes implements BridgeNodeSource {
  private readonly clients = new Map<string, { controlUrl: string; client: BridgeControlClient }>();

  constructor(
    private readonly backend: RelayBackend,
    private readonly bridgeToken: string,
    private readonly log: Logger,
  ) {}

  async pick(): Promise<{ nodeId: string; control: BridgeControl } | undefined> {
    const node = await this.backend.pickNode();
    return node === undefined ? undefined : { nodeId: node.nodeId, control: this.clientOf(node) };
  }

  /** The client of a node this relay has handed calls to; undefined for one it never picked. */
  control(nodeId: string): BridgeControl | undefined {
    return this.clients.get(nodeId)?.client;
  }

  /** A node whose control API could not be reached leaves the registry; alive, it registers again at its next heartbeat. */
  async lost(nodeId: string): Promise<void> {
    await this.backend.removeNode(nodeId);
    const known = this.clients.get(nodeId);
    this.clients.delete(nodeId);
    if (known !== undefined) void known.client.close();
    this.log.warn('a bridge node’s control API cannot be reached: it no longer takes calls', { nodeId });
  }

  /** Closes every node's connections, once the requests under way are answered. */
  async close(): Promise<void> {
    const clients = [...this.clients.values()];
    this.clients.clear();
    await Promise.all(clients.map(({ client }) => client.close()));
  }

  private clientOf(node: BridgeNode): BridgeControlClient {
    const known = this.clients.get(node.nodeId);
    if (known !== undefined && known.controlUrl === node.controlUrl) return known.client;
    // A node that came back at another address: its old connections go once they are idle.
    if (known !== undefined) void known.client.close();
    const client = new BridgeControlClient({ controlUrl: node.controlUrl, bridgeToken: this.bridgeToken, logger: this.log });
    this.clients.set(node.nodeId, { controlUrl: node.controlUrl, client });
    return client;
  }
}


// Who may use the relay: the team's agents, each with a token of their own. The relay keeps only the
// sha-256 of each token (the agents file never holds a usable secret), hashes what an agent presents
// and compares hashes in constant time, over every agent, so timing tells nothing.
import { createHash } from 'node:crypto';
import { z } from 'zod';
import { AGENT_ROLES, type AgentRole } from '../shared/api';

/** One agent as the agents file (relay/REFERENCE.md "Agents") lists it. */
export interface AgentConfig {
  id: string;
  name: string;
  /** Hex sha-256 of the agent's token. */
  tokenSha256: string;
  /** Absent: `agent`. A supervisor also sees and steps into the team's calls. */
  role?: AgentRole;
}

export interface Agent {
  id: string;
  name: string;
  role: AgentRole;
}

/** The role of an agent the file names without one. */
export const DEFAULT_AGENT_ROLE: AgentRole = 'agent';

export const AGENT_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
export const AGENT_ID_RULE = 'must be 1 to 64 letters, digits, ".", "_" or "-", starting with a letter or digit';

export const agentConfigSchema = z.object({
  id: z.string().regex(AGENT_ID_PATTERN, AGENT_ID_RULE),
  name: z.string().trim().min(1, 'must not be empty').max(200, 'must be at most 200 characters'),
  tokenSha256: z
    .string()
    .regex(/^[0-9a-fA-F]{64}$/, 'must be 64 hex digits (the sha-256 of the token, never the token itself)')
    .transform((hex) => hex.toLowerCase()),
  role: z.enum(AGENT_ROLES, { error: `must be one of ${AGENT_ROLES.join(', ')}` }).optional(),
});

export const agentsFileSchema = z.object({ agents: z.array(agentConfigSchema) }).superRefine((file, ctx) => {
  const ids = new Set<string>();
  const hashes = new Set<string>();
  file.agents.forEach((agent, i) => {
    if (ids.has(agent.id)) ctx.addIssue({ code: 'custom', path: ['agents', i, 'id'], message: `"${agent.id}" is listed twice` });
    // Two agents with one token could not be told apart.
    if (hashes.has(agent.tokenSha256)) ctx.addIssue({ code: 'custom', path: ['agents', i, 'tokenSha256'], message: 'is the same token as another agent' });
    ids.add(agent.id);
    hashes.add(agent.tokenSha256);
  });
});
export type AgentsFile = z.infer<typeof agentsFileSchema>;

export function hashAgentToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

/**
 * Plain agent tokens must be long enough that guessing is hopeless even before the per-address limit
 * of failed attempts: add-agent's are 43 characters (32 random bytes). The agents file holds only
 * hashes, whose tokens' length cannot be known; add-agent is how its tokens are made.
 */
const MIN_AGENT_TOKEN_CHARS = 32;
/** Development tokens too: the rule of the agent token in the app's settings (shared/settings.ts). */
const MIN_DEV_AGENT_TOKEN_CHARS = 8;

/**
 * What is wrong with a plain agent token: `malformed` whatever the mode (a bearer token cannot hold
 * whitespace, so such an agent could never authenticate), `needs_dev` when only `dev` would accept it.
 */
export type AgentTokenProblem = { kind: 'malformed' | 'needs_dev'; message: string };

/** The one rule of plain agent tokens, for startRelay and the command line alike; `dev` accepts short development tokens. */
export function agentTokenProblem(token: string, dev: boolean): AgentTokenProblem | undefined {
  if (token.length < MIN_DEV_AGENT_TOKEN_CHARS || /\s/.test(token)) {
    return { kind: 'malformed', message: `must be at least ${MIN_DEV_AGENT_TOKEN_CHARS} characters without spaces` };
  }
  if (!dev && token.length < MIN_AGENT_TOKEN_CHARS) return { kind: 'needs_dev', message: `must be at least ${MIN_AGENT_TOKEN_CHARS} characters` };
  return undefined;
}

/** `--agent-token` (development and older set-ups): plain tokens become agents `agent-1`, `agent-2`, … in order. */
export function legacyAgents(tokens: readonly string[]): AgentConfig[] {
  return tokens
    .filter((t) => typeof t === 'string' && t.length > 0)
    .map((token, i) => ({ id: `agent-${i + 1}`, name: `Agent ${i + 1}`, tokenSha256: hashAgentToken(token) }));
}

/** The bearer token of an `Authorization` header, or undefined. */
export function bearerToken(authorization: string | undefined): string | undefined {
  return /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '')?.[1];
}

export class AgentDirectory {
  /**
   * Agents by the SHA-256 of their token (hex). A lookup's time can only tell about the digest of
   * what was presented, never about a token: finding a token whose digest shares a prefix with a
   * real one's is as hard as finding the token. A scan comparing every hash in constant time cost a
   * 10 000-agent team 10 000 comparisons per request.
   */
  private byTokenHash = new Map<string, Agent>();
  private byId = new Map<string, Agent>();

  constructor(agents: readonly AgentConfig[]) {
    this.replace(agents);
  }

  get size(): number {
    return this.byId.size;
  }

  /** Swaps the whole list (a reloaded agents file). Throws on duplicate ids: a configuration error at start-up. */
  replace(agents: readonly AgentConfig[]): void {
    const byId = new Map<string, Agent>();
    const byTokenHash = new Map<string, Agent>();
    for (const config of agents) {
      if (byId.has(config.id)) throw new Error(`agent id "${config.id}" is configured twice`);
      const agent = { id: config.id, name: config.name, role: config.role ?? DEFAULT_AGENT_ROLE };
      byId.set(config.id, agent);
      // Two agents given one token: the first listed is the one it signs in, as before.
      const hash = config.tokenSha256.toLowerCase();
      if (!byTokenHash.has(hash)) byTokenHash.set(hash, agent);
    }
    this.byTokenHash = byTokenHash;
    this.byId = byId;
  }

  /** Every configured agent's id. */
  ids(): string[] {
    return [...this.byId.keys()];
  }

  get(id: string): Agent | undefined {
    return this.byId.get(id);
  }

  /** The agent whose token the `Authorization: Bearer …` header carries. */
  authenticate(authorization: string | undefined): Agent | undefined {
    const token = bearerToken(authorization);
    if (token === undefined) return undefined;
    return this.byTokenHash.get(createHash('sha256').update(token, 'utf8').digest('hex'));
  }
}

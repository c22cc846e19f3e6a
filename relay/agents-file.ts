// The agents file (relay/REFERENCE.md "Agents"): `{ "agents": [ { "id", "name", "tokenSha256", "role"? } ] }`.
// `add-agent` creates a token, prints it once and stores only its hash; the file is written
// atomically with mode 0600, since even hashes are nobody else's business.
import { randomBytes } from 'node:crypto';
import { chmod, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { err, ok, type Result } from '../shared/result';
import { parseWith } from '../shared/validation';
import type { AgentRole } from '../shared/api';
import { AGENT_ID_PATTERN, AGENT_ID_RULE, agentsFileSchema, DEFAULT_AGENT_ROLE, hashAgentToken, type AgentConfig } from './agent-directory';

/** Reads and validates the agents file. Errors name the file and the offending field. */
export async function readAgentsFile(path: string): Promise<Result<AgentConfig[]>> {
  const text = await readTextFile(path);
  if (!text.ok) return text;
  if (text.value === undefined) return err('invalid_input', `cannot read ${path}: no such file`, { field: path });
  return parseAgentsFile(path, text.value);
}

export function parseAgentsFile(path: string, text: string): Result<AgentConfig[]> {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (e) {
    return err('invalid_input', `${path} is not valid JSON: ${(e as Error).message}`, { field: path });
  }
  const parsed = parseWith(agentsFileSchema, json);
  if (!parsed.ok) return err('invalid_input', `${path}: ${parsed.error.message}`, { field: parsed.error.field ?? path });
  return ok(parsed.value.agents);
}

export interface AddedAgent {
  agent: AgentConfig;
  /** The only copy of the token: it is not stored anywhere. */
  token: string;
}

/**
 * Adds an agent with a fresh random token, creating the file when it does not exist yet. The role
 * is written only when it is not the default, as a file written by hand would leave it out.
 */
export async function addAgentToFile(path: string, id: string, name: string, role: AgentRole = DEFAULT_AGENT_ROLE): Promise<Result<AddedAgent>> {
  if (!AGENT_ID_PATTERN.test(id)) return err('invalid_input', `--id ${AGENT_ID_RULE} (got "${id}")`, { field: '--id' });
  const trimmedName = name.trim();
  if (trimmedName === '' || trimmedName.length > 200) return err('invalid_input', '--name must be 1 to 200 characters', { field: '--name' });

  const text = await readTextFile(path);
  if (!text.ok) return text;
  let agents: AgentConfig[] = [];
  if (text.value !== undefined) {
    const existing = parseAgentsFile(path, text.value);
    if (!existing.ok) return existing;
    agents = existing.value;
  }
  if (agents.some((a) => a.id === id)) {
    return err('invalid_input', `--id "${id}" is already in ${path}; remove it from the file first to give it a new token`, { field: '--id' });
  }

  // 32 random bytes: far beyond guessing; base64url keeps it one word for settings and headers.
  const token = randomBytes(32).toString('base64url');
  const agent: AgentConfig = { id, name: trimmedName, tokenSha256: hashAgentToken(token), ...(role !== DEFAULT_AGENT_ROLE ? { role } : {}) };
  const next = `${JSON.stringify({ agents: [...agents, agent] }, null, 2)}\n`;
  const temporary = join(dirname(path), `.${basename(path)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
  try {
    await writeFile(temporary, next, { mode: 0o600, flag: 'wx' });
    await rename(temporary, path);
    await chmod(path, 0o600);
  } catch (e) {
    await rm(temporary, { force: true }).catch(() => undefined);
    return err('internal', `cannot write ${path}: ${(e as Error).message}`, { field: path });
  }
  return ok({ agent, token });
}

/** The file's text; `undefined` when it does not exist. */
async function readTextFile(path: string): Promise<Result<string | undefined>> {
  try {
    return ok(await readFile(path, 'utf8'));
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return ok(undefined);
    return err('invalid_input', `cannot read ${path}: ${(e as Error).message}`, { field: path });
  }
}

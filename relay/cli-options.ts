// Command-line and environment configuration of the standalone relay (relay/README.md).
// Flags win over environment variables. Every problem becomes one line naming the flag.
import { parseArgs } from 'node:util';
import type { LogLevel } from '../shared/log';
import { err, ok, type Result } from '../shared/result';

export interface RelayCliConfig {
  port: number;
  host: string;
  appSecret: string;
  verifyToken?: string;
  agentTokens: string[];
  logLevel: LogLevel;
}

export const DEFAULT_RELAY_PORT = 8787;

export const RELAY_USAGE = `Usage: npm run relay -- --app-secret S --agent-token T [--agent-token T2 …] [--verify-token V] [--port P] [--host H] [--log-level L]

  --port P          port to listen on (0 picks a free one; default ${DEFAULT_RELAY_PORT})      env RELAY_PORT
  --host H          address to listen on (default 127.0.0.1)                     env RELAY_HOST
  --app-secret S    the app secret that signs webhooks (X-Hub-Signature-256)     env RELAY_APP_SECRET
  --verify-token V  the token of the webhook subscription handshake              env RELAY_VERIFY_TOKEN
  --agent-token T   a token agents present on /events; repeat for more           env RELAY_AGENT_TOKENS (comma-separated)
  --log-level L     debug, info, warn or error (default info)                    env RELAY_LOG_LEVEL`;

const LOG_LEVELS: readonly LogLevel[] = ['debug', 'info', 'warn', 'error'];

/** `help` when --help was asked for; otherwise the validated configuration or one error line. */
export function parseRelayCli(argv: readonly string[], env: Readonly<Record<string, string | undefined>>): Result<RelayCliConfig | 'help'> {
  let values: Record<string, string | string[] | boolean | undefined>;
  try {
    ({ values } = parseArgs({
      args: [...argv],
      strict: true,
      allowPositionals: false,
      options: {
        port: { type: 'string' },
        host: { type: 'string' },
        'app-secret': { type: 'string' },
        'verify-token': { type: 'string' },
        'agent-token': { type: 'string', multiple: true },
        'log-level': { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    }));
  } catch (e) {
    return err('invalid_input', describeParseError(e));
  }
  if (values.help === true) return ok('help');

  const flag = (name: string, envName: string): string | undefined => {
    const v = values[name];
    if (typeof v === 'string') return v === '' ? undefined : v;
    const fromEnv = env[envName];
    return fromEnv === undefined || fromEnv === '' ? undefined : fromEnv;
  };

  const portText = flag('port', 'RELAY_PORT') ?? String(DEFAULT_RELAY_PORT);
  if (!/^\d{1,5}$/.test(portText.trim()) || Number(portText) > 65535) {
    return err('invalid_input', `--port must be a whole number from 0 to 65535 (got "${portText}")`, { field: '--port' });
  }

  const host = (flag('host', 'RELAY_HOST') ?? '127.0.0.1').trim();
  if (!/^[A-Za-z0-9.:[\]-]+$/.test(host)) return err('invalid_input', `--host must be an IP address or a host name (got "${host}")`, { field: '--host' });

  const appSecret = flag('app-secret', 'RELAY_APP_SECRET');
  if (appSecret === undefined) {
    return err('invalid_input', '--app-secret is required (or RELAY_APP_SECRET): without it anyone could post forged calls', { field: '--app-secret' });
  }
  if (/\s/.test(appSecret)) return err('invalid_input', '--app-secret must not contain spaces', { field: '--app-secret' });

  const verifyToken = flag('verify-token', 'RELAY_VERIFY_TOKEN');
  if (verifyToken !== undefined && /\s/.test(verifyToken)) return err('invalid_input', '--verify-token must not contain spaces', { field: '--verify-token' });

  const fromFlags = values['agent-token'];
  const agentTokens =
    Array.isArray(fromFlags) && fromFlags.length > 0
      ? fromFlags
      : (env.RELAY_AGENT_TOKENS ?? '')
          .split(',')
          .map((t) => t.trim())
          .filter((t) => t !== '');
  if (agentTokens.length === 0) return err('invalid_input', '--agent-token is required at least once (or RELAY_AGENT_TOKENS, comma-separated)', { field: '--agent-token' });
  for (const token of agentTokens) {
    // The same rule as the agent token in the app's settings (shared/settings.ts).
    if (token.length < 8 || /\s/.test(token)) {
      return err('invalid_input', '--agent-token must be at least 8 characters without spaces', { field: '--agent-token' });
    }
  }

  const logLevel = (flag('log-level', 'RELAY_LOG_LEVEL') ?? 'info').trim() as LogLevel;
  if (!LOG_LEVELS.includes(logLevel)) return err('invalid_input', `--log-level must be one of ${LOG_LEVELS.join(', ')}`, { field: '--log-level' });

  return ok({ port: Number(portText), host, appSecret, verifyToken, agentTokens, logLevel });
}

function describeParseError(e: unknown): string {
  const message = e instanceof Error ? e.message : String(e);
  const unknown = /Unknown option '([^']+)'/.exec(message);
  if (unknown) return `${unknown[1]} is not a known flag (see --help)`;
  const option = /Option '(--[a-z-]+)/.exec(message)?.[1];
  if (option && /argument missing/.test(message)) return `${option} needs a value`;
  if (option && /does not take an argument/.test(message)) return `${option} takes no value`;
  const positional = /Unexpected argument '([^']+)'/.exec(message);
  if (positional) return `unexpected argument "${positional[1]}": every setting is a --flag (see --help)`;
  return message.split('\n')[0] ?? message;
}

// Command-line flags of `npm run sandbox`, with environment fallbacks. Every problem is one line
// that names the flag.
import { parseArgs } from 'node:util';
import { err, ok, type Result } from '../shared/result';

export interface SandboxCliConfig {
  port: number;
  host: string;
  relayUrl: string;
  appSecret?: string;
  apiKey: string;
  product?: string;
  ringMs?: number;
}

export const SANDBOX_USAGE =
  'usage: npm run sandbox -- --relay-url URL --api-key KEY [--app-secret SECRET] [--port P] [--host H] [--product WORD] [--ring-ms MS]\n' +
  '       (env: SANDBOX_RELAY_URL, SANDBOX_API_KEY, SANDBOX_APP_SECRET, SANDBOX_PORT)';

const bad = (flag: string, rule: string) => err<never>('invalid_input', `--${flag}: ${rule}`, { field: flag });

function integer(flag: string, raw: string, min: number, max: number): Result<number> {
  const value = /^[0-9]+$/.test(raw) ? Number(raw) : NaN;
  if (!Number.isInteger(value) || value < min || value > max) return err('invalid_input', `--${flag}: must be a whole number from ${min} to ${max} (got "${raw}")`, { field: flag });
  return ok(value);
}

/** The configuration to run with, or 'help' when the usage was asked for. */
export function parseSandboxArgs(argv: string[], env: Record<string, string | undefined>): Result<SandboxCliConfig | 'help'> {
  let values: Record<string, string | boolean | undefined>;
  try {
    ({ values } = parseArgs({
      args: argv,
      strict: true,
      allowPositionals: false,
      options: {
        port: { type: 'string' },
        host: { type: 'string' },
        'relay-url': { type: 'string' },
        'app-secret': { type: 'string' },
        'api-key': { type: 'string' },
        product: { type: 'string' },
        'ring-ms': { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    }));
  } catch (e) {
    // node:util quotes the offending option in its message, e.g. "Unknown option '--prot'".
    const message = (e as Error).message.split('\n')[0] ?? '';
    const option = /'(-{1,2}[a-z][a-z0-9-]*)/i.exec(message)?.[1];
    if (!option) return err('invalid_input', `arguments: ${message || 'invalid'}`, { field: '(args)' });
    const flag = option.replace(/^-+/, '');
    const rule =
      (e as { code?: string }).code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION'
        ? 'unknown flag'
        : /ambiguous/.test(message)
          ? `the value looks like a flag; write ${option}=VALUE`
          : /argument missing/.test(message)
            ? 'needs a value'
            : message;
    return bad(flag, rule);
  }
  if (values.help === true) return ok('help');
  const flag = (name: string, envName?: string): string | undefined => {
    const v = values[name];
    return typeof v === 'string' ? v : envName ? env[envName] : undefined;
  };

  const port = integer('port', flag('port', 'SANDBOX_PORT') ?? '0', 0, 65535);
  if (!port.ok) return port;

  const relayUrl = flag('relay-url', 'SANDBOX_RELAY_URL');
  if (!relayUrl) return bad('relay-url', 'is required (or set SANDBOX_RELAY_URL)');
  if (!/^https?:\/\/[^\s/]+/i.test(relayUrl) || !URL.canParse(relayUrl)) return bad('relay-url', `must be an http:// or https:// URL (got "${relayUrl}")`);

  const apiKey = flag('api-key', 'SANDBOX_API_KEY');
  if (!apiKey) return bad('api-key', 'is required (or set SANDBOX_API_KEY)');

  const appSecret = flag('app-secret', 'SANDBOX_APP_SECRET');
  if (appSecret === '') return bad('app-secret', 'must not be empty when given');

  const host = flag('host') ?? '127.0.0.1';
  if (!/^[0-9a-zA-Z.:-]+$/.test(host)) return bad('host', `must be an address such as 127.0.0.1 (got "${host}")`);

  const product = flag('product');
  if (product !== undefined && !/^[a-z][a-z0-9_]*$/.test(product)) return bad('product', `must be a lower-case word such as "chatapp" (got "${product}")`);

  const ringRaw = flag('ring-ms');
  const ringMs = ringRaw === undefined ? undefined : integer('ring-ms', ringRaw, 0, 60_000);
  if (ringMs && !ringMs.ok) return ringMs;

  return ok({
    port: port.value,
    host,
    relayUrl,
    apiKey,
    ...(appSecret ? { appSecret } : {}),
    ...(product ? { product } : {}),
    ...(ringMs ? { ringMs: ringMs.value } : {}),
  });
}

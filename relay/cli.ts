// `npm run relay -- …`: the standalone webhook relay (relay/README.md).
import { configureLogging, createLogger } from '../shared/log';
import { parseRelayCli, RELAY_USAGE } from './cli-options';
import { startRelay } from './server';

async function main(): Promise<number> {
  const parsed = parseRelayCli(process.argv.slice(2), process.env);
  if (!parsed.ok) {
    console.error(`relay: ${parsed.error.message}`);
    return 2;
  }
  if (parsed.value === 'help') {
    console.log(RELAY_USAGE);
    return 0;
  }
  const config = parsed.value;
  configureLogging({ level: config.logLevel });
  const logger = createLogger('relay');

  let relay;
  try {
    relay = await startRelay({
      port: config.port,
      host: config.host,
      appSecret: config.appSecret,
      verifyToken: config.verifyToken,
      agentTokens: config.agentTokens,
      logger,
    });
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    const reason = code === 'EADDRINUSE' ? `port ${config.port} is already in use` : code === 'EACCES' ? `no permission to listen on port ${config.port}` : (e as Error).message;
    console.error(`relay: cannot listen on ${config.host}:${config.port}: ${reason}`);
    return 1;
  }
  console.log(`relay listening on ${relay.url}`);

  return new Promise<number>((resolve) => {
    let stopping = false;
    const stop = (signal: NodeJS.Signals) => {
      // A second signal while closing means "now".
      if (stopping) return resolve(130);
      stopping = true;
      logger.info('shutting down', { signal, ...relay.stats() });
      relay.close().then(
        () => resolve(0),
        () => resolve(1),
      );
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
}

main().then(
  (code) => process.exit(code),
  (e: unknown) => {
    console.error(`relay: ${e instanceof Error ? e.message : String(e)}`);
    process.exit(1);
  },
);

// `npm run sandbox -- --port P --relay-url URL --app-secret S --api-key K`
import { parseSandboxArgs, SANDBOX_USAGE } from './cli-args';
import { startSandbox } from './server';

const config = parseSandboxArgs(process.argv.slice(2), process.env);
if (!config.ok) {
  console.error(`sandbox: ${config.error.message} (see --help)`);
  process.exit(2);
}
if (config.value === 'help') {
  console.log(SANDBOX_USAGE);
  process.exit(0);
}
const settings = config.value;

try {
  const sandbox = await startSandbox(settings);
  console.log(sandbox.url);
  let stopping = false;
  const stop = () => {
    if (stopping) return;
    stopping = true;
    sandbox.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
} catch (e) {
  console.error(`sandbox: cannot start on port ${settings.port}: ${(e as Error).message}`);
  process.exit(1);
}

// `npm run bridge -- …`: one bridge node (bridge/README.md). It serves its control API, registers
// with the relay and keeps registered, posts its calls' events to the relay, and on SIGINT or SIGTERM
// leaves the relay, ends its calls and exits.
import { hostname, networkInterfaces } from 'node:os';
import { configureLogging, createLogger } from '../shared/log';
import { errorText } from '../shared/result';
import { BridgeNode } from './bridge-node';
import { BRIDGE_USAGE, defaultNodeId, parseBridgeCli, type BridgeCliConfig } from './cli-options';
import { startControlServer, type ControlServer } from './control-server';
import { RelayEventForwarder } from './event-forwarder';
import { NodeRegistration } from './registration';
import { RecordingUploader } from './recording-upload';
import { RelayLink } from './relay-link';

/** How long the node's last events may take to reach the relay on the way out. */
const EVENTS_FLUSH_MS = 2_000;
/** How long the recordings of the calls it ended on the way out may take to reach the relay. */
const RECORDINGS_FLUSH_MS = 8_000;

/** Exit code 2: the command line is wrong; 1: the node could not run. */
async function main(argv: string[]): Promise<number> {
  const parsed = parseBridgeCli(argv, process.env);
  if (!parsed.ok) {
    console.error(`bridge: ${parsed.error.message}`);
    return 2;
  }
  if (parsed.value === 'help') {
    console.log(BRIDGE_USAGE);
    return 0;
  }
  const config = parsed.value;
  configureLogging({ level: config.logLevel });
  const log = createLogger('bridge');

  // The events of a call can only come once the relay placed one here, which needs the registration
  // below: the forwarder, which needs the node's id and so its port, exists by then.
  const events: { forwarder?: RelayEventForwarder } = {};
  const recordings = new RecordingUploader({ relayUrl: config.relayUrl, bridgeToken: config.bridgeToken, logger: createLogger('bridge-recordings') });
  const node = new BridgeNode({
    ...(config.publicAddress !== undefined ? { publicAddress: config.publicAddress } : {}),
    // A loopback address is reached from this machine only: the media binds to it, so that answers
    // leave from the address the windows sent to (from all interfaces they would leave from another).
    ...(config.publicAddress !== undefined && isLoopback(config.publicAddress) ? { bindAddress: config.publicAddress } : {}),
    ...(config.rtpPorts !== undefined ? { rtpPorts: config.rtpPorts } : {}),
    logger: createLogger('bridge-node'),
    onEvent: (event) => events.forwarder?.send(event),
    recordings,
  });

  let server: ControlServer;
  try {
    server = await startControlServer({ control: node, bridgeToken: config.bridgeToken, host: config.controlAddress, port: config.controlPort, logger: createLogger('bridge-control') });
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    const reason = code === 'EADDRINUSE' ? `port ${config.controlPort} is already in use` : code === 'EACCES' ? `no permission to listen on port ${config.controlPort}` : errorText(e);
    console.error(`bridge: cannot listen on ${config.controlAddress}:${config.controlPort}: ${reason}`);
    await node.close();
    await recordings.close();
    return 1;
  }

  const nodeId = config.nodeId ?? defaultNodeId(hostname(), server.port);
  const where = addressesOf(config, server.port);
  const link = new RelayLink({ relayUrl: config.relayUrl, bridgeToken: config.bridgeToken });
  const forwarder = new RelayEventForwarder({ relay: link, nodeId, logger: createLogger('bridge-events') });
  events.forwarder = forwarder;
  const registration = new NodeRegistration({
    relay: link,
    registration: { nodeId, controlUrl: where.controlUrl, publicAddress: where.publicAddress, ...(config.capacity !== undefined ? { capacity: config.capacity } : {}) },
    load: () => node.load(),
    logger: createLogger('bridge-registration'),
  });
  registration.start();
  log.info('bridge node started', { nodeId, controlUrl: where.controlUrl, publicAddress: where.publicAddress, rtpPorts: config.rtpPorts, capacity: config.capacity });
  // The relay's URL may hold a password: only where it is goes to the terminal.
  console.log(`bridge node ${nodeId} listening on ${where.controlUrl}, registering with ${new URL(config.relayUrl).origin}`);

  return new Promise<number>((resolve) => {
    let stopping = false;
    const stop = (signal: NodeJS.Signals) => {
      // A second signal while stopping means "now".
      if (stopping) return resolve(130);
      stopping = true;
      log.info('stopping', { signal, nodeId });
      // Out of the relay's registry first, so that no new call comes; then the calls end and their
      // last events and recordings go out (what could not is said in the log); then the control API closes.
      (async () => {
        await registration.stop();
        await node.close();
        await Promise.all([forwarder.flush(EVENTS_FLUSH_MS), recordings.flush(RECORDINGS_FLUSH_MS)]);
        forwarder.close();
        await recordings.close();
        await server.close();
        await link.close();
      })().then(
        () => resolve(0),
        (error: unknown) => {
          log.error('stopping failed', { error });
          resolve(1);
        },
      );
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
}

/**
 * What the node registers: its control URL and the address of its media. A control API on every
 * interface is reached at the public address (or the machine's first outside address).
 */
function addressesOf(config: BridgeCliConfig, port: number): { controlUrl: string; publicAddress: string } {
  const wildcard = config.controlAddress === '0.0.0.0' || config.controlAddress === '::';
  const publicAddress = config.publicAddress ?? (wildcard ? firstOutsideAddress() : config.controlAddress);
  const host = wildcard ? publicAddress : config.controlAddress;
  return { controlUrl: `http://${host.includes(':') ? `[${host}]` : host}:${port}`, publicAddress };
}

function isLoopback(address: string): boolean {
  return address === '::1' || /^127\./.test(address);
}

/** The machine's first IPv4 address that is not its loopback, else the loopback. */
function firstOutsideAddress(): string {
  for (const addresses of Object.values(networkInterfaces())) {
    const outside = addresses?.find((a) => a.family === 'IPv4' && !a.internal);
    if (outside !== undefined) return outside.address;
  }
  return '127.0.0.1';
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (e: unknown) => {
    console.error(`bridge: ${errorText(e)}`);
    process.exit(1);
  },
);

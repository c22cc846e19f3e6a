// `npm run relay -- …`: the standalone webhook relay, and `npm run relay -- add-agent …` (relay/README.md).
import './heap-tuning';
import { configureLogging, createLogger } from '../shared/log';
import type { AgentConfig } from './agent-directory';
import { addAgentToFile, readAgentsFile } from './agents-file';
import { BridgeNode } from '../bridge/bridge-node';
import { BRIDGE_TOKEN_SHARED_RULE, isAgentToken } from './bridge-nodes';
import { localBridge, LocalNodeEvents } from './bridged-calls';
import { parseAddAgentCli, parseRelayCli, RELAY_USAGE, type RelayCliConfig } from './cli-options';
import { CallRecords } from './records/call-records';
import { bundledNoticePath, loadRecordNotice } from './record-notice';
import { RecordingsStore } from './recordings-store';
import { startRelay, type RelayServer } from './server';
import { readTeamSettingsFile, TeamSettingsSource } from './team-settings-source';
import { errorText } from '../shared/result';

/** Exit code 2: the command line (or a file it names) is wrong; 1: the relay could not run. */
async function main(argv: string[]): Promise<number> {
  if (argv[0] === 'add-agent') return addAgent(argv.slice(1));

  const parsed = parseRelayCli(argv, process.env);
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
  if (config.dev) logger.warn('--dev: plain agent tokens shorter than 32 characters are accepted; never run a relay reachable from the internet like this');

  let agents: AgentConfig[] = [];
  if (config.agentsPath !== undefined) {
    const read = await readAgentsFile(config.agentsPath);
    if (!read.ok) {
      console.error(`relay: --agents: ${read.error.message}`);
      return 2;
    }
    agents = read.value;
  }
  const teamSettings = new TeamSettingsSource();
  if (config.teamConfigPath !== undefined) {
    const read = await readTeamSettingsFile(config.teamConfigPath);
    if (!read.ok) {
      console.error(`relay: --team-config: ${read.error.message}`);
      return 2;
    }
    teamSettings.replace(read.value);
  }
  if (config.bridgeToken !== undefined && isAgentToken(config.bridgeToken, agents, [])) {
    console.error(`relay: --bridge-token: ${BRIDGE_TOKEN_SHARED_RULE} (an agent of ${config.agentsPath ?? 'the agents file'} has it)`);
    return 2;
  }

  // The recordings' notice is read once, and their folder made, before anything starts.
  const recordings = await openRecordings(config.recordings);
  if (!recordings.ok) {
    console.error(`relay: ${recordings.message}`);
    return 2;
  }
  const store = recordings.store;

  // --bridge: the node lives as long as the relay, on this machine's addresses unless told its public one.
  // Its events (a customer's or an agent's leg failing) reach the relay as a registered node's do, and
  // it hands each finished recording to the relay's store.
  const nodeEvents = new LocalNodeEvents();
  const bridge =
    config.bridge === undefined ? undefined : new BridgeNode({ ...config.bridge, logger: createLogger('bridge'), onEvent: nodeEvents.emit, ...(store !== undefined ? { recordings: store } : {}) });
  if (config.gateway === undefined && bridge !== undefined) logger.info('no --gateway-url/--api-key: a bridged call no agent can end is left for the service to end (its customer hears nothing)');
  // The records open in the background: the relay takes webhooks at once, their facts wait in memory.
  const records = new CallRecords({ ...config.records, logger: createLogger('records') });
  let relay: RelayServer;
  try {
    relay = await startRelay({
      records,
      ...(bridge !== undefined ? { bridgeNodes: localBridge(bridge, 'local', nodeEvents) } : {}),
      ...(config.gateway !== undefined ? { gateway: config.gateway } : {}),
      port: config.port,
      host: config.host,
      appSecret: config.appSecret,
      verifyToken: config.verifyToken,
      agents,
      agentTokens: config.agentTokens,
      teamSettings,
      dev: config.dev,
      trustProxy: config.trustProxy,
      maxStreamsPerAgent: config.maxStreamsPerAgent,
      retentionMs: config.retentionMs,
      ...(config.redisUrl !== undefined ? { redisUrl: config.redisUrl } : {}),
      ...(config.redisPrefix !== undefined ? { redisPrefix: config.redisPrefix } : {}),
      ...(config.turn !== undefined ? { turn: config.turn } : {}),
      ...(config.bridgeToken !== undefined ? { bridgeToken: config.bridgeToken } : {}),
      ...(config.recordings !== undefined ? { recordings: { mode: config.recordings.mode, ...(store !== undefined ? { store } : {}), ...(recordings.notice !== undefined ? { notice: recordings.notice } : {}) } } : {}),
      ...(config.tellAgentsWhenMonitored === true ? { tellAgentsWhenMonitored: true } : {}),
      logger,
    });
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    const reason = code === 'EADDRINUSE' ? `port ${config.port} is already in use` : code === 'EACCES' ? `no permission to listen on port ${config.port}` : undefined;
    if (reason !== undefined) console.error(`relay: cannot listen on ${config.host}:${config.port}: ${reason}`);
    else console.error(`relay: cannot start: ${(e as Error).message}`);
    await records.close();
    await bridge?.close();
    await store?.close();
    return 1;
  }
  console.log(`relay listening on ${relay.url}`);

  // add-agent writes the agents file, an editor the team's settings; SIGHUP picks both up without
  // dropping anyone's stream. A file that breaks a rule is logged and the one in force kept.
  const { agentsPath, teamConfigPath } = config;
  if (agentsPath !== undefined || teamConfigPath !== undefined) {
    process.on('SIGHUP', () => {
      if (agentsPath !== undefined) {
        readAgentsFile(agentsPath).then(
          (read) => {
            if (!read.ok) return logger.error('could not reload the agents file; keeping the previous agents', { reason: read.error.message });
            try {
              relay.setAgents(read.value, config.agentTokens);
            } catch (error) {
              // An agent given the bridge token: refused, as at the start.
              logger.error('could not reload the agents file; keeping the previous agents', { reason: errorText(error) });
            }
          },
          (error: unknown) => logger.error('could not reload the agents file', { error }),
        );
      }
      if (teamConfigPath !== undefined) {
        readTeamSettingsFile(teamConfigPath).then(
          (read) => {
            if (!read.ok) return logger.error('could not reload the team settings; keeping the settings in force', { reason: read.error.message, field: read.error.field });
            if (teamSettings.replace(read.value)) logger.info('team settings reloaded: every open stream is told', { file: teamConfigPath });
          },
          (error: unknown) => logger.error('could not reload the team settings', { error }),
        );
      }
    });
  }

  return new Promise<number>((resolve) => {
    let stopping = false;
    const stop = (signal: NodeJS.Signals) => {
      // A second signal while draining means "now".
      if (stopping) return resolve(130);
      stopping = true;
      logger.info('shutting down', { signal, ...relay.stats() });
      relay
        .close()
        .then(() => records.close())
        .then(() => bridge?.close())
        .then(() => store?.close())
        .then(
          () => resolve(0),
          () => resolve(1),
        );
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
}

/**
 * The recordings' store, open (its folder made, swept once) and, for a team that records, the notice
 * as the bridge plays it; or what is wrong, naming the flag.
 */
async function openRecordings(
  config: RelayCliConfig['recordings'],
): Promise<{ ok: true; store?: RecordingsStore; notice?: Int16Array } | { ok: false; message: string }> {
  if (config === undefined) return { ok: true };
  let notice: Int16Array | undefined;
  if (config.notice !== undefined) {
    const source = config.notice;
    const path = 'file' in source ? source.file : bundledNoticePath(source.language);
    const loaded = await loadRecordNotice(path);
    if (!loaded.ok) {
      const what = 'file' in source ? `--record-notice: ${path}` : `--record-notice-language ${source.language}: the bundled notice ${path}`;
      return { ok: false, message: `${what}: ${loaded.error.message}` };
    }
    notice = loaded.value;
  }
  const store = new RecordingsStore({ dir: config.dir, ...(config.retentionDays !== undefined ? { retentionDays: config.retentionDays } : {}), logger: createLogger('recordings') });
  try {
    await store.open();
  } catch (e) {
    return { ok: false, message: `--recordings-dir: cannot keep recordings in ${config.dir}: ${errorText(e)}` };
  }
  return { ok: true, store, ...(notice !== undefined ? { notice } : {}) };
}

async function addAgent(argv: string[]): Promise<number> {
  const parsed = parseAddAgentCli(argv, process.env);
  if (!parsed.ok) {
    console.error(`relay add-agent: ${parsed.error.message}`);
    return 2;
  }
  if (parsed.value === 'help') {
    console.log(RELAY_USAGE);
    return 0;
  }
  const { agentsPath, id, name, role } = parsed.value;
  const added = await addAgentToFile(agentsPath, id, name, role);
  if (!added.ok) {
    console.error(`relay add-agent: ${added.error.message}`);
    return added.error.code === 'internal' ? 1 : 2;
  }
  console.log(`added ${role === 'supervisor' ? 'supervisor' : 'agent'} "${id}" (${added.value.agent.name}) to ${agentsPath}`);
  console.log(`token: ${added.value.token}`);
  console.log('This token is shown only now: put it in the agent\'s app settings. The file keeps only its sha-256.');
  return 0;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (e: unknown) => {
    console.error(`relay: ${errorText(e)}`);
    process.exit(1);
  },
);

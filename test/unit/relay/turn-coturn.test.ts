// The credentials GET /turn-credentials hands out, used on a real coturn that shares the relay's
// secret (coturn-server.ts): they allocate relays; a tampered, borrowed, foreign or expired one does not.
import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { configureLogging } from '../../../shared/log';
import { startRelay, type RelayServer } from '../../../relay/server';
import { team } from './agent-fixtures';
import { startCoturn, runUclient, type CoturnHandle, type UclientRun } from '../../support/coturn-server';
import { APP_SECRET } from './webhook-fixtures';

configureLogging({ level: 'error' });

const TURN_SECRET = 'coturn-shared-secret-81d2e0';
const { agents, tokens } = team('alice', 'bob');

interface IceServer {
  urls: string[];
  username: string;
  credential: string;
}

let coturn: CoturnHandle;
let relay: RelayServer;

beforeAll(async () => {
  coturn = await startCoturn(TURN_SECRET);
  relay = await startRelay({ port: 0, appSecret: APP_SECRET, agents, heartbeatMs: 60_000, turn: { secret: TURN_SECRET, urls: [`turn:127.0.0.1:${coturn.port}?transport=udp`] } });
}, 30_000);

afterAll(async () => {
  await relay?.close();
  await coturn?.stop();
});

async function credentialsOf(token: string): Promise<IceServer> {
  const res = await fetch(`${relay.url}/turn-credentials`, { headers: { authorization: `Bearer ${token}` } });
  expect(res.status).toBe(200);
  const body = (await res.json()) as { iceServers: IceServer[] };
  return body.iceServers[0]!;
}

/** The host and port of a `turn:host:port?transport=udp` URL the relay handed out. */
function endpointOf(url: string): { host: string; port: number } {
  const match = /^turn:([^:?]+):(\d+)/.exec(url);
  expect(match, url).not.toBeNull();
  return { host: match![1]!, port: Number(match![2]) };
}

const allocate = (server: IceServer, username = server.username, credential = server.credential): Promise<UclientRun> => {
  const { host, port } = endpointOf(server.urls[0]!);
  return runUclient(host, port, username, credential);
};

function expectRefused(run: UclientRun): void {
  expect(run.code, run.output).not.toBe(0);
  expect(run.output).toContain('Cannot complete Allocation');
}

describe('TURN credentials on a real coturn (--use-auth-secret)', () => {
  it('allocate relays that carry data, for the agent they were handed to', async () => {
    const alice = await credentialsOf(tokens.alice!);
    const run = await allocate(alice);
    expect(run.code, run.output).toBe(0);
    expect(run.output).not.toContain('ERROR');
    // Every message went from one allocation to the other through the relays (the client's final tally).
    const sent = /start_mclient: tot_send_msgs=(\d+), tot_recv_msgs=(\d+)/.exec(run.output);
    expect(sent, run.output).not.toBeNull();
    expect(Number(sent![1])).toBeGreaterThan(0);
    expect(Number(sent![2])).toBe(Number(sent![1]));
    expect(run.output).toContain('Total lost packets 0');
    expect(coturn.log()).toContain(`realm <test> user <${alice.username}>: incoming packet ALLOCATE processed, success`);
  }, 30_000);

  it('refuse a tampered credential, another agent\'s credential, one signed with another secret, and an expired one', async () => {
    const alice = await credentialsOf(tokens.alice!);
    const bob = await credentialsOf(tokens.bob!);
    const flipped = Buffer.from(alice.credential, 'base64');
    flipped[0] = flipped[0]! ^ 0xff;
    expectRefused(await allocate(alice, alice.username, flipped.toString('base64')));
    expectRefused(await allocate(bob, bob.username, alice.credential));
    expectRefused(await allocate(alice, alice.username, createHmac('sha1', `${TURN_SECRET}-other`).update(alice.username).digest('base64')));
    // The same scheme with an expiry in the past: coturn reads the expiry from the username and refuses it once past.
    const expired = `${Math.floor(Date.now() / 1000) - 5}:alice`;
    expectRefused(await allocate(alice, expired, createHmac('sha1', TURN_SECRET).update(expired).digest('base64')));
    expect(coturn.log()).not.toContain(`user <${expired}>: incoming packet ALLOCATE processed, success`);
  }, 60_000);
});

// The relay's client of a node's control API (bridge/control-client.ts) against the real control
// server, and against servers that misbehave: every answer and every failure comes back as a
// Result, within the deadline, and the bridge token goes nowhere but the Authorization header.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { BridgeControlClient } from '../../../bridge/control-client';
import { startControlServer, type ControlServer } from '../../../bridge/control-server';
import { err, type Result } from '../../../shared/result';
import { BRIDGE_TOKEN, RecordingLogger, REPORT, ScriptedControl } from './control-fixtures';

const servers: Array<ControlServer | Server> = [];
const clients: BridgeControlClient[] = [];

afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
  for (const server of servers.splice(0)) {
    if ('url' in server) await server.close();
    else {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  }
});

async function nodeWith(control: ScriptedControl): Promise<ControlServer> {
  const server = await startControlServer({ control, bridgeToken: BRIDGE_TOKEN, logger: new RecordingLogger() });
  servers.push(server);
  return server;
}

function clientOf(controlUrl: string, options: { token?: string; timeoutMs?: number; logger?: RecordingLogger } = {}): BridgeControlClient {
  const client = new BridgeControlClient({ controlUrl, bridgeToken: options.token ?? BRIDGE_TOKEN, ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}), logger: options.logger ?? new RecordingLogger() });
  clients.push(client);
  return client;
}

/** A server of the test's own, answering as `answer` says. */
async function rawServer(answer: (req: IncomingMessage, res: ServerResponse) => void): Promise<string> {
  const server = createServer(answer);
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

describe('bridge control client: a round trip through the control API', () => {
  it('carries every method to the node and its value back', async () => {
    const control = new ScriptedControl();
    const client = clientOf((await nodeWith(control)).url);
    const routes = { customer: ['leg-1'], 'leg-1': ['customer'] };
    expect(await client.prepareIncoming('wacid.1', 'v=0 offer')).toEqual({ ok: true, value: { answer: 'answer to v=0 offer' } });
    expect(await client.connectCustomer('wacid.1')).toEqual({ ok: true, value: null });
    expect(await client.prepareOutgoing('ref-1')).toEqual({ ok: true, value: { offer: 'offer for ref-1' } });
    expect(await client.bindOutgoing('ref-1', 'wacid.2')).toEqual({ ok: true, value: null });
    expect(await client.applyCustomerAnswer('wacid.2', 'v=0 answer')).toEqual({ ok: true, value: null });
    expect(await client.offerAgentLeg('wacid.1', 'leg-1')).toEqual({ ok: true, value: { offer: 'offer for leg-1' } });
    expect(await client.applyAgentAnswer('wacid.1', 'leg-1', 'v=0 window')).toEqual({ ok: true, value: null });
    expect(await client.answerAgentLeg('wacid.2', 'leg-2', 'v=0 window offer')).toEqual({ ok: true, value: { answer: 'answer to v=0 window offer' } });
    expect(await client.setRoutes('wacid.1', routes)).toEqual({ ok: true, value: null });
    expect(await client.report('wacid.1')).toEqual({ ok: true, value: REPORT });
    expect(await client.closeAgentLeg('wacid.1', 'leg-1')).toEqual({ ok: true, value: null });
    expect(await client.releaseCustomer('wacid.1')).toEqual({ ok: true, value: null });
    expect(await client.endCall('wacid.1')).toEqual({ ok: true, value: null });
    expect(control.calls.map((c) => [c.method, ...c.args])).toEqual([
      ['prepareIncoming', 'wacid.1', 'v=0 offer'],
      ['connectCustomer', 'wacid.1'],
      ['prepareOutgoing', 'ref-1'],
      ['bindOutgoing', 'ref-1', 'wacid.2'],
      ['applyCustomerAnswer', 'wacid.2', 'v=0 answer'],
      ['offerAgentLeg', 'wacid.1', 'leg-1'],
      ['applyAgentAnswer', 'wacid.1', 'leg-1', 'v=0 window'],
      ['answerAgentLeg', 'wacid.2', 'leg-2', 'v=0 window offer'],
      ['setRoutes', 'wacid.1', routes],
      ['report', 'wacid.1'],
      ['closeAgentLeg', 'wacid.1', 'leg-1'],
      ['releaseCustomer', 'wacid.1'],
      ['endCall', 'wacid.1'],
    ]);
  });

  it('gives the node’s error back as the same Result, with the status it came with', async () => {
    const control = new ScriptedControl();
    const client = clientOf((await nodeWith(control)).url);
    control.answerNext('applyAgentAnswer', err('invalid_input', 'sdp: has no audio section', { field: 'sdp' }));
    expect(await client.applyAgentAnswer('wacid.1', 'leg-1', 'v=0')).toEqual({ ok: false, error: { code: 'invalid_input', message: 'sdp: has no audio section', field: 'sdp', httpStatus: 400 } });
    control.answerNext('report', err('not_found', 'no call wacid.9 on this node'));
    expect(await client.report('wacid.9')).toEqual({ ok: false, error: { code: 'not_found', message: 'no call wacid.9 on this node', httpStatus: 404 } });
    control.answerNext('connectCustomer', err('media_failed', 'the customer leg failed'));
    expect(await client.connectCustomer('wacid.1')).toMatchObject({ ok: false, error: { code: 'media_failed', httpStatus: 500 } });
    // The server's own refusals read the same way: an id that breaks its rule is refused by the node.
    expect(await client.offerAgentLeg('wacid.1', 'bad leg id')).toMatchObject({ ok: false, error: { code: 'invalid_input', field: 'legId', httpStatus: 400 } });
  });

  it('is refused with unauthorized for a wrong token, which appears in no log line and no error', async () => {
    const logger = new RecordingLogger();
    const control = new ScriptedControl();
    const wrong = 'wrong-bridge-token-0123456789abcdef-0123';
    const client = clientOf((await nodeWith(control)).url, { token: wrong, logger });
    const refused = await client.endCall('wacid.1');
    expect(refused).toMatchObject({ ok: false, error: { code: 'unauthorized', httpStatus: 401 } });
    expect(control.calls).toEqual([]);
    expect(JSON.stringify(refused)).not.toContain(wrong);
    expect(logger.text()).not.toContain(wrong);
  });
});

describe('bridge control client: recording', () => {
  it('carries a recording’s start, its notice sample for sample, and its stop', async () => {
    const control = new ScriptedControl();
    const client = clientOf((await nodeWith(control)).url);
    const notice = Int16Array.from({ length: 48_000 }, (_, i) => Math.round(30_000 * Math.sin(i / 7)) - (i % 3));
    expect(await client.startRecording('wacid.1', notice)).toEqual({ ok: true, value: null });
    expect(await client.startRecording('wacid.1')).toEqual({ ok: true, value: null });
    expect(await client.startRecording('wacid.1', new Int16Array(0))).toEqual({ ok: true, value: null });
    expect(await client.stopRecording('wacid.1')).toEqual({ ok: true, value: null });
    expect(control.calls).toEqual([
      { method: 'startRecording', args: ['wacid.1', notice] },
      { method: 'startRecording', args: ['wacid.1'] },
      { method: 'startRecording', args: ['wacid.1'] },
      { method: 'stopRecording', args: ['wacid.1'] },
    ]);
    control.answerNext('startRecording', err('invalid_state', 'call wacid.1: the customer’s leg is not connected'));
    expect(await client.startRecording('wacid.1')).toMatchObject({ ok: false, error: { code: 'invalid_state', httpStatus: 409 } });
    control.answerNext('startRecording', err('not_configured', 'this bridge node has nowhere to keep recordings'));
    expect(await client.startRecording('wacid.1')).toMatchObject({ ok: false, error: { code: 'not_configured', httpStatus: 501 } });
  });
});

describe('bridge control client: failures are values', () => {
  it('says a node it cannot reach is unreachable, without throwing', async () => {
    const node = await nodeWith(new ScriptedControl());
    const url = node.url;
    await node.close();
    const answer = await clientOf(url).prepareOutgoing('ref-1');
    expect(answer).toMatchObject({ ok: false, error: { code: 'gateway_unreachable' } });
    expect((answer as Extract<Result<unknown>, { ok: false }>).error.message).toBe(`the bridge node at ${url} could not be reached: connection refused`);
  });

  it('gives up at its deadline with a timeout', async () => {
    const control = new ScriptedControl();
    let release: () => void = () => undefined;
    control.answerNext('prepareIncoming', () => new Promise((resolve) => (release = () => resolve(err('internal', 'too late')))));
    const client = clientOf((await nodeWith(control)).url, { timeoutMs: 150 });
    const started = Date.now();
    const answer = await client.prepareIncoming('wacid.1', 'v=0');
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(answer).toMatchObject({ ok: false, error: { code: 'timeout' } });
    release();
  });

  it('refuses an answer it cannot read, and reads an unknown code by its status', async () => {
    const url = await rawServer((req, res) => {
      if (req.url?.endsWith('/offer')) {
        res.writeHead(200, { 'content-type': 'application/json' });
        return res.end('{"offer":');
      }
      if (req.url?.endsWith('/incoming')) {
        res.writeHead(200, { 'content-type': 'application/json' });
        return res.end('{"answer":""}');
      }
      if (req.method === 'GET') {
        res.writeHead(200, { 'content-type': 'application/json' });
        return res.end(JSON.stringify({ ...REPORT, customer: { state: 'dancing' } }));
      }
      res.writeHead(409, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { code: 'teapot', message: 'not a code of ours' } }));
    });
    const client = clientOf(url);
    expect(await client.offerAgentLeg('wacid.1', 'leg-1')).toMatchObject({ ok: false, error: { code: 'gateway_unreachable', httpStatus: 200 } });
    expect(await client.prepareIncoming('wacid.1', 'v=0')).toMatchObject({ ok: false, error: { code: 'gateway_unreachable', httpStatus: 200 } });
    expect(await client.report('wacid.1')).toMatchObject({ ok: false, error: { code: 'gateway_unreachable', httpStatus: 200 } });
    expect(await client.endCall('wacid.1')).toEqual({ ok: false, error: { code: 'invalid_state', message: 'not a code of ours', httpStatus: 409 } });
  });

  it('takes the token out of whatever a server echoes back', async () => {
    const url = await rawServer((req, res) => {
      res.writeHead(500, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { code: 'internal', message: `could not handle ${req.headers.authorization ?? ''}` } }));
    });
    const logger = new RecordingLogger();
    const answer = await clientOf(url, { logger }).endCall('wacid.1');
    expect(answer).toEqual({ ok: false, error: { code: 'internal', message: 'could not handle Bearer [redacted]', httpStatus: 500 } });
    expect(logger.text()).not.toContain(BRIDGE_TOKEN);
  });
});

import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { RelayClient } from '../../../electron/core/relay-client';
import { ANSWERED_ELSEWHERE_MESSAGE } from '../../../shared/call-state';
import { text } from '../../../shared/i18n/text';
import { configureLogging } from '../../../shared/log';
import { OGG_OPUS_MIME_TYPE } from '../../../shared/ogg-opus';
import { closingServer, resettingServer, selfSignedServer, UNRESOLVABLE_HOST, type FailingServer } from '../shared/network-failures';
import { ALICE, BOB, startTeamRelay, type RouteAnswer, type TeamRelay } from './team-relay';

const logLines: string[] = [];
configureLogging({ level: 'debug', sink: (line) => logLines.push(line) });

let relay: TeamRelay;
const clients: RelayClient[] = [];
const client = (token: string, options: { url?: string; claimTimeoutMs?: number; timeoutMs?: number } = {}): RelayClient => {
  const c = new RelayClient({ url: options.url ?? `${relay.url}/`, token, ...options });
  clients.push(c);
  return c;
};

beforeEach(async () => {
  relay = await startTeamRelay([ALICE, BOB]);
});
afterEach(async () => {
  for (const c of clients.splice(0)) await c.close();
  await relay.close();
});

describe('RelayClient', () => {
  it('asks who the token belongs to, with the token as a Bearer credential', async () => {
    const alice = client(ALICE.token);
    expect(alice.agentId).toBeUndefined();
    expect(await alice.me()).toEqual({ ok: true, value: { agentId: 'alice', name: 'Alice Agent', bridged: false } });
    expect(alice.agentId).toBe('alice');
    expect(relay.requests).toEqual([{ method: 'GET', path: '/me', agentId: 'alice', authorization: `Bearer ${ALICE.token}`, body: undefined }]);
  });

  it('reads the team’s recording mode from GET /me; a mode this app does not know offers nothing, and the agent is still known', async () => {
    const alice = client(ALICE.token);
    relay.me = { bridged: true, record: 'on-weekdays' };
    expect(await alice.me()).toEqual({ ok: true, value: { agentId: 'alice', name: 'Alice Agent', bridged: true } });
    relay.me = { bridged: true, record: 'on-demand' };
    expect(await alice.me()).toEqual({ ok: true, value: { agentId: 'alice', name: 'Alice Agent', bridged: true, record: 'on-demand' } });
  });

  it('claims first-wins: the first agent gets the call, the second "Answered by another agent"', async () => {
    const alice = client(ALICE.token);
    const bob = client(BOB.token);
    expect(await alice.claim('wacid.team/1')).toEqual({ ok: true, value: { agentId: 'alice' } });
    expect(alice.agentId).toBe('alice');
    const lost = await bob.claim('wacid.team/1');
    expect(lost).toEqual({
      ok: false,
      error: { code: 'answered_elsewhere', message: ANSWERED_ELSEWHERE_MESSAGE, text: text('calls.answeredElsewhere'), httpStatus: 409, detail: 'claimed by alice' },
    });
    expect(ANSWERED_ELSEWHERE_MESSAGE).toBe('Answered by another agent');
    // The winner claiming again still wins; the call id travels encoded in the path.
    expect((await alice.claim('wacid.team/1')).ok).toBe(true);
    expect(relay.requests.map((r) => [r.method, r.path, r.agentId])).toEqual([
      ['POST', '/calls/wacid.team%2F1/claim', 'alice'],
      ['POST', '/calls/wacid.team%2F1/claim', 'bob'],
      ['POST', '/calls/wacid.team%2F1/claim', 'alice'],
    ]);
  });

  it('reports presence', async () => {
    const bob = client(BOB.token);
    expect(await bob.setPresence({ status: 'dnd' })).toEqual({ ok: true, value: { agentId: 'bob', status: 'dnd' } });
    expect(await bob.setPresence({ status: 'on_call' })).toEqual({ ok: true, value: { agentId: 'bob', status: 'on_call' } });
    expect(relay.presence.get('bob')).toBe('on_call');
    expect(relay.requests.map((r) => r.body)).toEqual([{ status: 'dnd' }, { status: 'on_call' }]);
  });

  it('turns a refused token into "unauthorized" without repeating the token', async () => {
    const stranger = client('not-an-agent-token-42');
    for (const result of [await stranger.me(), await stranger.claim('wacid.1'), await stranger.setPresence({ status: 'available' })]) {
      expect(result.ok).toBe(false);
      if (result.ok) continue;
      expect(result.error).toMatchObject({ code: 'unauthorized', httpStatus: 401 });
      expect(JSON.stringify(result.error)).not.toContain('not-an-agent-token-42');
    }
  });

  it("keeps the relay's reason for a refused request", async () => {
    relay.onClaim = () => ({ status: 400, body: JSON.stringify({ error: { code: 'invalid_input', message: 'callId: must not be empty' } }) });
    const result = await client(ALICE.token).claim('x');
    expect(result).toEqual({
      ok: false,
      error: {
        code: 'invalid_input',
        message: 'The relay refused the claim request (HTTP 400: callId: must not be empty)',
        // The relay's own words are a value of the app's sentence around them.
        text: text('relay.refusedSaying', { what: 'claim', status: 400, reason: 'callId: must not be empty' }),
        httpStatus: 400,
        detail: 'callId: must not be empty',
      },
    });
  });

  it('says so when the relay has no such endpoint (an older relay), and when it is not a relay', async () => {
    relay.onClaim = () => ({ status: 404, body: 'Not Found' });
    const old = await client(ALICE.token).claim('wacid.1');
    expect(old.ok || old.error.code).toBe('not_available');
    relay.onClaim = () => ({ status: 200, body: '<html>welcome</html>' });
    const html = await client(ALICE.token).claim('wacid.1');
    expect(html.ok || html.error).toMatchObject({ code: 'gateway_unreachable', httpStatus: 200 });
    relay.onClaim = () => ({ status: 503, body: JSON.stringify({ error: { code: 'draining', message: 'shutting down' } }) });
    const draining = await client(ALICE.token).claim('wacid.1');
    expect(draining.ok || draining.error).toMatchObject({ code: 'gateway_unreachable', httpStatus: 503, detail: 'shutting down' });
  });

  it('gives up on a claim the relay does not answer', async () => {
    relay.onClaim = () => 'hang';
    const result = await client(ALICE.token, { claimTimeoutMs: 150 }).claim('wacid.slow');
    expect(result).toEqual({
      ok: false,
      error: { code: 'timeout', message: 'The relay did not answer POST /calls/wacid.slow/claim within 0.2 s', text: text('relay.timeout', { method: 'POST', path: '/calls/wacid.slow/claim', seconds: 0.2 }) },
    });
  });

  it('reports an unreachable relay as a value, without the token', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', () => resolve()));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const offline = client(ALICE.token, { url: `http://127.0.0.1:${port}` });
    for (const result of [await offline.claim('wacid.1'), await offline.setPresence({ status: 'available' }), await offline.me()]) {
      expect(result.ok || result.error).toMatchObject({ code: 'gateway_unreachable', message: 'The relay could not be reached (connection refused: is it running?)' });
    }
  });

  it('says each network failure in its words', async () => {
    const failing: FailingServer[] = [await closingServer(), await resettingServer(), await selfSignedServer()];
    try {
      const [closing, resetting, tls] = failing as [FailingServer, FailingServer, FailingServer];
      const reason = async (url: string) => {
        const result = await client(ALICE.token, { url }).me();
        return result.ok ? undefined : result.error;
      };
      const unreachable = (message: string, why: string | ReturnType<typeof text>) => ({ code: 'gateway_unreachable', message, text: text('relay.unreachable', { reason: why }) });
      expect(await reason(`http://${UNRESOLVABLE_HOST}`)).toEqual(unreachable('The relay could not be reached (the host name could not be resolved)', text('relay.hostNotFound')));
      expect(await reason(closing.url)).toEqual(unreachable('The relay could not be reached (the connection was reset)', text('relay.connectionReset')));
      expect(await reason(resetting.url)).toEqual(unreachable('The relay could not be reached (the connection was reset)', text('relay.connectionReset')));
      expect(await reason(`https://localhost:${tls.port}`)).toEqual(unreachable('The relay could not be reached (DEPTH_ZERO_SELF_SIGNED_CERT)', 'DEPTH_ZERO_SELF_SIGNED_CERT'));
    } finally {
      for (const server of failing) await server.close();
    }
  });

  it('never writes a token to the log', async () => {
    logLines.length = 0;
    const alice = client(ALICE.token);
    await alice.me();
    await alice.claim('wacid.log');
    await alice.setPresence({ status: 'available' });
    await client('not-an-agent-token-42').claim('wacid.log');
    expect(logLines.length).toBeGreaterThan(0);
    const all = logLines.join('\n');
    expect(all).not.toContain(ALICE.token);
    expect(all).not.toContain('not-an-agent-token-42');
  });
});

describe('RelayClient: the team’s recordings and the supervisors’ requests', () => {
  const answering = (answer: (req: { method: string; path: string }) => RouteAnswer | undefined) => relay.routes.push(async (req) => answer(req));
  const refusal = (status: number, code: string, message: string): RouteAnswer => ({ status, json: { error: { code, message } } });

  it('agentRequest: a 2xx as the schema reads it (an empty body as {}), a 409 invalid_state and a 404 the relay’s not_found not_found, both in its words; others as every refusal', async () => {
    answering(({ method, path }) => {
      if (path === '/team/calls/wacid.1/monitor' && method === 'PUT') return refusal(404, 'not_found', 'not joined to this call');
      if (path === '/team/calls/wacid.1/monitor' && method === 'POST') return refusal(409, 'invalid_state', 'a direct call cannot be joined');
      if (path === '/team/calls/wacid.1/monitor' && method === 'DELETE') return { status: 204, bytes: Buffer.alloc(0), headers: {} };
      if (path === '/team/calls') return refusal(403, 'forbidden', 'only supervisors may see the team’s live calls');
      return undefined;
    });
    const alice = client(ALICE.token);
    const mode = z.object({ mode: z.string() });
    expect(await alice.agentRequest('monitor', 'PUT', '/team/calls/wacid.1/monitor', { mode: 'listen' }, mode)).toEqual({
      ok: false,
      error: {
        code: 'not_found',
        message: 'The relay refused the monitor request (HTTP 404: not joined to this call)',
        text: text('relay.refusedSaying', { what: 'monitor', status: 404, reason: 'not joined to this call' }),
        httpStatus: 404,
        detail: 'not joined to this call',
      },
    });
    expect(await alice.agentRequest('monitor', 'POST', '/team/calls/wacid.1/monitor', { mode: 'listen' }, mode)).toMatchObject({
      ok: false,
      error: { code: 'invalid_state', httpStatus: 409, message: 'The relay refused the monitor request (HTTP 409: a direct call cannot be joined)' },
    });
    expect(await alice.agentRequest('leave monitor', 'DELETE', '/team/calls/wacid.1/monitor', undefined, z.object({}).passthrough())).toEqual({ ok: true, value: {} });
    expect(await alice.agentRequest('live calls', 'GET', '/team/calls', undefined, mode)).toMatchObject({
      ok: false,
      error: { code: 'unauthorized', httpStatus: 403, message: 'The relay refused the live calls request (HTTP 403: only supervisors may see the team’s live calls)' },
    });
    // An older relay with no such endpoint says so in its words (its fallback is not_found too).
    expect(await alice.agentRequest('recording', 'POST', '/calls/wacid.1/bridge/recording', { recording: true }, mode)).toMatchObject({
      ok: false,
      error: { code: 'not_found', message: 'The relay refused the recording request (HTTP 404: no POST /calls/wacid.1/bridge/recording)' },
    });
    expect(relay.requests.map((r) => [r.method, r.path, r.body])).toEqual([
      ['PUT', '/team/calls/wacid.1/monitor', { mode: 'listen' }],
      ['POST', '/team/calls/wacid.1/monitor', { mode: 'listen' }],
      ['DELETE', '/team/calls/wacid.1/monitor', undefined],
      ['GET', '/team/calls', undefined],
      ['POST', '/calls/wacid.1/bridge/recording', { recording: true }],
    ]);
  });

  it('recordingFile: the bytes and their type with the token; a file past the limit is not read; 404 and 403 in the relay’s words', async () => {
    const file = Buffer.from('OggS'.padEnd(4_096, '\u0001'));
    answering(({ path }) => {
      if (path === '/recordings/wacid.rec%2F1') return { status: 200, bytes: file, headers: { 'Content-Type': 'audio/ogg', 'Content-Length': String(file.length) } };
      if (path === '/recordings/wacid.long') return { status: 200, bytes: Buffer.alloc(1_536 * 1024, 1), headers: { 'Content-Type': 'audio/ogg' } };
      if (path === '/recordings/wacid.untyped') return { status: 200, bytes: file, headers: {} };
      if (path === '/recordings/wacid.opus') return { status: 200, bytes: file, headers: { 'Content-Type': OGG_OPUS_MIME_TYPE } };
      if (path === '/recordings/wacid.none') return refusal(404, 'not_found', 'the team has no recording of this call');
      if (path === '/recordings/wacid.theirs') return refusal(403, 'forbidden', 'only the agents of the call and supervisors may hear its recording');
      return undefined;
    });
    const alice = client(ALICE.token);
    expect(await alice.recordingFile('wacid.rec/1', 64 * 1024)).toEqual({ ok: true, value: { bytes: file, mimeType: 'audio/ogg' } });
    expect(await alice.recordingFile('wacid.untyped', 64 * 1024)).toEqual({ ok: true, value: { bytes: file, mimeType: 'audio/ogg' } });
    // The file's own type is kept.
    expect(await alice.recordingFile('wacid.opus', 64 * 1024)).toEqual({ ok: true, value: { bytes: file, mimeType: OGG_OPUS_MIME_TYPE } });
    expect(await alice.recordingFile('wacid.long', 1024 * 1024)).toMatchObject({
      ok: false,
      error: { code: 'not_available', message: 'The team’s recording is 2 MB, more than the 1 MB the app plays', text: { code: 'teamRecording.tooLarge', values: { megabytes: 2, limit: 1 } } },
    });
    expect(await alice.recordingFile('wacid.none', 1_024)).toMatchObject({
      ok: false,
      error: { code: 'not_found', httpStatus: 404, detail: 'the team has no recording of this call' },
    });
    expect(await alice.recordingFile('wacid.theirs', 1_024)).toMatchObject({
      ok: false,
      error: { code: 'unauthorized', httpStatus: 403, message: 'The relay refused the recording request (HTTP 403: only the agents of the call and supervisors may hear its recording)' },
    });
    expect(relay.requests.every((r) => r.authorization === `Bearer ${ALICE.token}`)).toBe(true);
    const stranger = await client('not-an-agent-token-42').recordingFile('wacid.rec/1', 64 * 1024);
    expect(stranger).toMatchObject({ ok: false, error: { code: 'unauthorized', httpStatus: 401, message: 'The relay refused the agent token: check it in Settings' } });
  });
});

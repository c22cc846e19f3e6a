// classifyNetworkError over errors the three HTTP clients really throw: undici's request (the app's
// gateway and relay clients), undici's fetch (the app's media link check) and Node's fetch (the
// sandbox's), against real failing servers on 127.0.0.1.
import { afterEach, describe, expect, it } from 'vitest';
import { Agent, errors as undiciErrors, fetch as undiciFetch, request } from 'undici';
import { classifyNetworkError } from '../../../shared/network-error';
import { closedPortUrl, closingServer, resettingServer, SELF_SIGNED_CERT, selfSignedServer, UNRESOLVABLE_HOST, type FailingServer } from './network-failures';

/** What each client throws for a URL it cannot get. */
const CLIENTS: Record<string, (url: string) => Promise<unknown>> = {
  "undici's request": (url) => request(url).then((res) => res.body.text()),
  "undici's fetch": (url) => undiciFetch(url).then((res) => res.text()),
  "Node's fetch": (url) => fetch(url).then((res) => res.text()),
};

async function thrownBy(attempt: Promise<unknown>): Promise<unknown> {
  try {
    await attempt;
  } catch (e) {
    return e;
  }
  throw new Error('the request succeeded');
}

const servers: FailingServer[] = [];
const serve = async (start: () => Promise<FailingServer>): Promise<FailingServer> => {
  const server = await start();
  servers.push(server);
  return server;
};
afterEach(async () => {
  for (const server of servers.splice(0)) await server.close();
});

describe.each(Object.entries(CLIENTS))('classifyNetworkError, %s', (_name, get) => {
  it('a closed port: refused', async () => {
    const url = await closedPortUrl();
    const port = new URL(url).port;
    expect(classifyNetworkError(await thrownBy(get(`${url}/x`)))).toEqual({ kind: 'refused', code: 'ECONNREFUSED', message: `connect ECONNREFUSED 127.0.0.1:${port}` });
  });

  it('a host name that does not resolve: host_not_found', async () => {
    const failure = classifyNetworkError(await thrownBy(get(`http://${UNRESOLVABLE_HOST}/x`)));
    expect(failure.kind).toBe('host_not_found');
    expect(['ENOTFOUND', 'EAI_AGAIN']).toContain(failure.code);
    expect(failure.message).toContain(UNRESOLVABLE_HOST);
  });

  it('a server that closes the connection before answering: reset, as undici says it', async () => {
    const server = await serve(closingServer);
    expect(classifyNetworkError(await thrownBy(get(`${server.url}/x`)))).toEqual({ kind: 'reset', code: 'UND_ERR_SOCKET', message: 'other side closed' });
  });

  it('a server that resets the connection: reset', async () => {
    const server = await serve(resettingServer);
    expect(classifyNetworkError(await thrownBy(get(`${server.url}/x`)))).toEqual({ kind: 'reset', code: 'ECONNRESET', message: 'read ECONNRESET' });
  });

  it('a certificate that signs itself: bad_certificate', async () => {
    const server = await serve(selfSignedServer);
    expect(classifyNetworkError(await thrownBy(get(`https://localhost:${server.port}/x`)))).toEqual({
      kind: 'bad_certificate',
      code: 'DEPTH_ZERO_SELF_SIGNED_CERT',
      message: 'self-signed certificate',
    });
  });
});

describe('classifyNetworkError, the rest', () => {
  it('a trusted certificate for another name: bad_certificate', async () => {
    const server = await serve(selfSignedServer);
    const trusting = new Agent({ connect: { ca: SELF_SIGNED_CERT } });
    try {
      // Trusted and valid for "localhost", so the only fault left is the name: 127.0.0.1 is not in it.
      expect(await request(`https://localhost:${server.port}/x`, { dispatcher: trusting }).then((res) => res.body.text())).toBe('ok');
      const failure = classifyNetworkError(await thrownBy(request(`https://127.0.0.1:${server.port}/x`, { dispatcher: trusting })));
      expect(failure).toMatchObject({ kind: 'bad_certificate', code: 'ERR_TLS_CERT_ALTNAME_INVALID' });
      expect(failure.message).toContain('127.0.0.1');
    } finally {
      await trusting.close();
    }
  });

  it("a connect timeout, as undici raises it and as fetch's cause", () => {
    const timeout = new undiciErrors.ConnectTimeoutError();
    expect(classifyNetworkError(timeout)).toEqual({ kind: 'connect_timeout', code: 'UND_ERR_CONNECT_TIMEOUT', message: 'Connect Timeout Error' });
    expect(classifyNetworkError(new TypeError('fetch failed', { cause: timeout }))).toEqual({
      kind: 'connect_timeout',
      code: 'UND_ERR_CONNECT_TIMEOUT',
      message: 'Connect Timeout Error',
    });
  });

  it('a code no kind covers is kept: a request on a closed connection pool', async () => {
    const closed = new Agent();
    await closed.close();
    const failure = classifyNetworkError(await thrownBy(request('http://127.0.0.1:9/x', { dispatcher: closed })));
    expect(failure).toEqual({ kind: 'other', code: 'UND_ERR_DESTROYED', message: 'The client is destroyed' });
  });

  it("without a code: the cause's words (fetch's own say nothing), else the error's, else its name, else the value", () => {
    expect(classifyNetworkError(new TypeError('fetch failed', { cause: new Error('the body stopped') }))).toEqual({ kind: 'other', message: 'the body stopped' });
    expect(classifyNetworkError(new Error('the event stream sent a line longer than 8 MiB'))).toEqual({
      kind: 'other',
      message: 'the event stream sent a line longer than 8 MiB',
    });
    const nameless = new RangeError('');
    expect(classifyNetworkError(nameless)).toEqual({ kind: 'other', message: 'RangeError' });
    expect(classifyNetworkError('gone')).toEqual({ kind: 'other', message: 'gone' });
    // A code that is not a string is no code (a DOMException's numeric one): the cause's is read.
    const aborted = Object.assign(new Error('aborted', { cause: Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }) }), { code: 20 });
    expect(classifyNetworkError(aborted)).toEqual({ kind: 'refused', code: 'ECONNREFUSED', message: 'connect ECONNREFUSED' });
  });
});

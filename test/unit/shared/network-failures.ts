// Real network failures on 127.0.0.1, for the tests of what each client says of them.
import { createServer as createHttpsServer } from 'node:https';
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';

/** A host name that never resolves (RFC 6761 reserves .invalid). */
export const UNRESOLVABLE_HOST = 'nowhere.invalid';

/** A certificate for "localhost" that signs itself, valid 2000–2100. */
export const SELF_SIGNED_CERT = `-----BEGIN CERTIFICATE-----
MIIBYTCCAQegAwIBAgIBATAKBggqhkjOPQQDAjAUMRIwEAYDVQQDDAlsb2NhbGhv
c3QwIBcNMDAwMTAxMDAwMDAwWhgPMjEwMDAxMDEwMDAwMDBaMBQxEjAQBgNVBAMM
CWxvY2FsaG9zdDBZMBMGByqGSM49AgEGCCqGSM49AwEHA0IABESovZXRVVXnSROT
eeXelnCS1Fn08yVd3cjVtehrPhdlHuWcLWs69oe/mnBRFXO7LukvYslVVU8ekuOG
7k3QBqajSDBGMBQGA1UdEQQNMAuCCWxvY2FsaG9zdDAPBgNVHRMBAf8EBTADAQH/
MB0GA1UdDgQWBBQlzebXEqKm9SYIn3XS2EDN34mTUzAKBggqhkjOPQQDAgNIADBF
AiAw06++7XhNNM3ZcM8DpAhQNz+3nnGZ87m8RwIIkERcAgIhAMPBwC7d2CtW6oPc
k2bHZzrvQy2uar+TTx1bbHkv71cr
-----END CERTIFICATE-----
`;
const SELF_SIGNED_KEY = `-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgd3Yyon9tdeLr89Yt
XClnuzL179jCFjSsIBd7MNyet8KhRANCAAREqL2V0VVV50kTk3nl3pZwktRZ9PMl
Xd3I1bXoaz4XZR7lnC1rOvaHv5pwURVzuy7pL2LJVVVPHpLjhu5N0Aam
-----END PRIVATE KEY-----
`;

export interface FailingServer {
  /** http://127.0.0.1:port (https:// for the TLS server). */
  url: string;
  port: number;
  /** How many connections it has taken. */
  connections(): number;
  close(): Promise<void>;
}

const listening = async (server: Server, scheme: 'http' | 'https'): Promise<FailingServer> => {
  const sockets = new Set<Socket>();
  let connections = 0;
  server.on('connection', (socket: Socket) => {
    connections += 1;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as AddressInfo;
  return {
    url: `${scheme}://127.0.0.1:${port}`,
    port,
    connections: () => connections,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
};

/** A port nothing listens on: connecting is refused. */
export async function closedPortUrl(): Promise<string> {
  const server = await listening(createServer(), 'http');
  await server.close();
  return server.url;
}

/** Accepts the connection and closes it at once: the request's answer never starts. */
export const closingServer = (): Promise<FailingServer> => listening(createServer((socket) => socket.destroy()), 'http');

/** Answers the request with a TCP reset. */
export const resettingServer = (): Promise<FailingServer> =>
  listening(
    createServer((socket) => socket.once('data', () => socket.resetAndDestroy())),
    'http',
  );

/** An HTTPS server whose certificate nobody vouches for. */
export const selfSignedServer = (): Promise<FailingServer> =>
  listening(
    createHttpsServer({ cert: SELF_SIGNED_CERT, key: SELF_SIGNED_KEY }, (_req, res) => res.end('ok')),
    'https',
  );

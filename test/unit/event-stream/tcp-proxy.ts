// A TCP proxy on 127.0.0.1 between the client and the relay, so tests can cut or freeze the
// connection while the relay itself stays up.
import { connect, createServer, type Socket } from 'node:net';

export interface TcpProxy {
  port: number;
  /** The first bytes of every accepted connection (the HTTP request head). */
  requests: string[];
  /** Destroys every open connection. */
  dropAll(): void;
  /** While blocked, new connections are closed at once. */
  setBlocked(blocked: boolean): void;
  /** Stops forwarding relay → client on open connections, leaving them open and silent. */
  freeze(): void;
  close(): Promise<void>;
}

export async function startTcpProxy(targetPort: number): Promise<TcpProxy> {
  const pairs = new Set<{ client: Socket; upstream: Socket }>();
  const requests: string[] = [];
  let blocked = false;
  const server = createServer((client) => {
    if (blocked) {
      client.destroy();
      return;
    }
    const upstream = connect(targetPort, '127.0.0.1');
    const pair = { client, upstream };
    pairs.add(pair);
    client.once('data', (head: Buffer) => requests.push(head.toString('latin1')));
    client.pipe(upstream);
    upstream.pipe(client);
    const end = () => {
      pairs.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    client.on('close', end);
    upstream.on('close', end);
    client.on('error', end);
    upstream.on('error', end);
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no proxy address');
  const dropAll = () => {
    for (const { client, upstream } of pairs) {
      client.destroy();
      upstream.destroy();
    }
    pairs.clear();
  };
  return {
    port: address.port,
    requests,
    dropAll,
    setBlocked(value) {
      blocked = value;
    },
    freeze() {
      for (const { client, upstream } of pairs) {
        upstream.unpipe(client);
        upstream.pause();
      }
    },
    close() {
      dropAll();
      return new Promise((done) => server.close(() => done()));
    },
  };
}

// A TCP proxy on 127.0.0.1 in front of a real Redis that can hold back the replies to some of its
// connections, told apart by the name their client gives them (CLIENT SETNAME): a test can keep one
// connection of a relay instance waiting (its stream reader, its commands) while the rest runs.
import { createConnection, createServer, type AddressInfo, type Socket } from 'node:net';

export interface RedisProxy {
  /** The Redis URL with the proxy's host and port. */
  url: string;
  /** Holds Redis's replies to the connections whose name matches, from now until `release`. */
  hold(matches: (connectionName: string) => boolean): void;
  /** Hands on everything held, in order, and stops holding. */
  release(): void;
  close(): Promise<void>;
}

interface Proxied {
  client: Socket;
  upstream: Socket;
  /** What the client sent until its name was found (the name may come in pieces). */
  sent: string;
  name: string | undefined;
  held: Buffer[] | undefined;
}

const SETNAME = /SETNAME\r\n\$\d+\r\n([^\r]*)\r\n/i;
/** The name comes with the first commands; a client that sent this much without one has none. */
const NAME_SEARCH_LIMIT = 4_096;

export async function startRedisProxy(redisUrl: string): Promise<RedisProxy> {
  const target = new URL(redisUrl);
  const connections = new Set<Proxied>();
  let matches: ((connectionName: string) => boolean) | undefined;
  const holds = (c: Proxied) => matches !== undefined && c.name !== undefined && matches(c.name);

  const server = createServer((client) => {
    const upstream = createConnection({ host: target.hostname, port: Number(target.port || 6379) });
    const c: Proxied = { client, upstream, sent: '', name: undefined, held: undefined };
    connections.add(c);
    client.on('data', (chunk) => {
      if (c.name === undefined && c.sent.length < NAME_SEARCH_LIMIT) {
        c.sent += chunk.toString('latin1');
        c.name = SETNAME.exec(c.sent)?.[1];
      }
      upstream.write(chunk);
    });
    upstream.on('data', (chunk) => {
      if (holds(c)) (c.held ??= []).push(chunk);
      else client.write(chunk);
    });
    const end = () => {
      connections.delete(c);
      client.destroy();
      upstream.destroy();
    };
    for (const socket of [client, upstream]) {
      socket.on('close', end);
      socket.on('error', end);
    }
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const url = new URL(redisUrl);
  url.hostname = '127.0.0.1';
  url.port = String((server.address() as AddressInfo).port);

  return {
    url: url.toString(),
    hold: (match) => {
      matches = match;
    },
    release: () => {
      matches = undefined;
      for (const c of connections) {
        for (const chunk of c.held ?? []) c.client.write(chunk);
        c.held = undefined;
      }
    },
    close: async () => {
      for (const c of connections) {
        c.client.destroy();
        c.upstream.destroy();
      }
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

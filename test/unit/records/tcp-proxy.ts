// A TCP proxy on 127.0.0.1 in front of a real server, to make the network between the relay and its
// database misbehave as networks do: `freeze()` keeps every connection open but carries nothing
// more either way (a cable cut, a host frozen: the peer waits for ever), `thaw()` carries on.
import { createServer, connect, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';

export interface TcpProxy {
  port: number;
  /** `url` with its host and port replaced by the proxy's. */
  via(url: string): string;
  freeze(): void;
  thaw(): void;
  close(): Promise<void>;
}

export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  const pairs = new Set<[Socket, Socket]>();
  let frozen = false;
  const server = createServer((client) => {
    const upstream = connect(target.port, target.host);
    const pair: [Socket, Socket] = [client, upstream];
    pairs.add(pair);
    const drop = () => {
      pairs.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    client.on('error', drop).on('close', drop);
    upstream.on('error', drop).on('close', drop);
    carry(client, upstream);
    carry(upstream, client);
    if (frozen) for (const socket of pair) socket.pause();
  });
  /** What `from` says goes to `to`, unless frozen: then it waits, and `from` is read no further. */
  const carry = (from: Socket, to: Socket) => {
    const held: Buffer[] = [];
    from.on('data', (chunk: Buffer) => {
      if (!frozen) return to.write(chunk);
      held.push(chunk);
      from.pause();
    });
    from.on('resume', () => {
      for (const chunk of held.splice(0)) to.write(chunk);
    });
  };
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    port,
    via: (url) => {
      const parsed = new URL(url);
      parsed.hostname = '127.0.0.1';
      parsed.port = String(port);
      return parsed.toString();
    },
    freeze: () => {
      frozen = true;
      // Paused, a socket reads nothing: what the peer sends stays in the kernel, and nothing comes back.
      for (const pair of pairs) for (const socket of pair) socket.pause();
    },
    thaw: () => {
      frozen = false;
      for (const pair of pairs) for (const socket of pair) socket.resume();
    },
    close: async () => {
      for (const [client, upstream] of pairs) {
        client.destroy();
        upstream.destroy();
      }
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

// An HTTP proxy on 127.0.0.1 in front of a real relay, for the core tests that pin what the app asks
// of it: every request is passed on as it came and answered with what the relay answered, and kept
// here (method, path, token, body), so that a test can say which requests the app made, in which
// order, with which bodies. The network between the app and the relay can also be slowed as a real
// one may be: a reply kept back until the test lets it go, an agent's event stream held (its bytes
// kept, in order) until it flows again.
import { createServer, request, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface TappedRequest {
  method: string;
  path: string;
  /** The agent whose token it carried; undefined for any other. */
  agentId: string | undefined;
  authorization: string | undefined;
  /** The JSON body; undefined when there is none. */
  body: unknown;
}

/** A reply the relay gave that waits here until `release()`. */
export interface HeldReply {
  /** Resolves once the relay has answered (its reply is held from then on). */
  answered: Promise<void>;
  release(): void;
}

export interface RelayTap {
  /** The relay's URL, through this proxy. */
  url: string;
  requests: TappedRequest[];
  /** "METHOD path" of every request whose path matches. */
  seen(pattern?: RegExp): string[];
  /** The event streams of `agentId` open now. */
  streams(agentId: string): number;
  /** The next request `method path` reaches the relay; its reply waits until released. */
  holdReply(method: string, path: string): HeldReply;
  /** What the relay streams to `agentId` from now on is kept here, in order, until `flow`. */
  holdStream(agentId: string): void;
  /** The kept bytes go on to the app, and what follows with them. */
  flow(agentId: string): void;
  close(): Promise<void>;
}

interface Stream {
  agentId: string;
  res: ServerResponse;
  kept: Buffer[];
}

export async function startRelayTap(relayUrl: string, tokens: Record<string, string>): Promise<RelayTap> {
  const target = new URL(relayUrl);
  const agentOf = (authorization: string | undefined): string | undefined => Object.keys(tokens).find((id) => authorization === `Bearer ${tokens[id]}`);
  const requests: TappedRequest[] = [];
  const streams = new Set<Stream>();
  const holding = new Set<string>();
  const holds: { method: string; path: string; answered: () => void; released: Promise<void> }[] = [];
  const upstreams = new Set<ReturnType<typeof request>>();

  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      const method = req.method ?? '';
      const path = req.url ?? '';
      const authorization = req.headers.authorization;
      const agentId = agentOf(authorization);
      let body: unknown;
      try {
        body = raw.length > 0 ? JSON.parse(raw.toString('utf8')) : undefined;
      } catch {
        body = raw.toString('utf8');
      }
      requests.push({ method, path, agentId, authorization, body });
      const hold = holds.findIndex((h) => h.method === method && h.path === path);
      const held = hold >= 0 ? holds.splice(hold, 1)[0] : undefined;
      const upstream = request({ host: target.hostname, port: target.port, method, path, headers: req.headers }, (answer) => {
        const reply = () => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          const stream: Stream | undefined = path.startsWith('/events') && agentId !== undefined ? { agentId, res, kept: [] } : undefined;
          if (stream === undefined) {
            answer.pipe(res);
            return;
          }
          res.flushHeaders();
          streams.add(stream);
          answer.on('data', (chunk: Buffer) => (holding.has(stream.agentId) ? stream.kept.push(chunk) : res.write(chunk)));
          answer.on('end', () => res.end());
          res.on('close', () => {
            streams.delete(stream);
            answer.destroy();
          });
        };
        if (held === undefined) return reply();
        held.answered();
        void held.released.then(reply);
      });
      upstreams.add(upstream);
      upstream.on('close', () => upstreams.delete(upstream));
      upstream.on('error', () => res.destroy());
      res.on('close', () => upstream.destroy());
      upstream.end(raw);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    seen: (pattern) => requests.filter((r) => pattern === undefined || pattern.test(r.path)).map((r) => `${r.method} ${r.path}`),
    streams: (agentId) => [...streams].filter((s) => s.agentId === agentId).length,
    holdReply(method, path) {
      let answered!: () => void;
      let release!: () => void;
      const answeredPromise = new Promise<void>((resolve) => (answered = resolve));
      const released = new Promise<void>((resolve) => (release = resolve));
      holds.push({ method, path, answered, released });
      return { answered: answeredPromise, release };
    },
    holdStream(agentId) {
      holding.add(agentId);
    },
    flow(agentId) {
      holding.delete(agentId);
      for (const stream of streams) {
        if (stream.agentId !== agentId) continue;
        for (const chunk of stream.kept.splice(0)) stream.res.write(chunk);
      }
    },
    async close() {
      holding.clear();
      for (const upstream of upstreams) upstream.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

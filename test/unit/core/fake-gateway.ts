// A real HTTP server on 127.0.0.1 playing the gateway's call-control endpoints (gateway-spec.md 4.2)
// for the core tests. Each test decides the answers; every request is recorded.
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  raw: string;
  body: unknown;
}

export interface GatewayAnswer {
  status: number;
  /** Text, or a file's bytes (sent with their Content-Length). */
  body: string | Buffer;
  contentType?: string;
  /** Sent in chunks, with no Content-Length. */
  chunked?: boolean;
}

/** Returns the answer, or 'hang' to never answer (for timeouts). */
export type GatewayHandler = (req: RecordedRequest) => GatewayAnswer | 'hang' | Promise<GatewayAnswer | 'hang'>;

export const json = (status: number, value: unknown): GatewayAnswer => ({ status, body: JSON.stringify(value) });
export const success = (product = 'chatapp'): GatewayAnswer => json(200, { messaging_product: product, success: true });
export const initiated = (callId: string, product = 'chatapp'): GatewayAnswer => json(200, { messaging_product: product, calls: [{ id: callId }] });
export const graphError = (status: number, code: number, message: string, extra: Record<string, unknown> = {}): GatewayAnswer =>
  json(status, { error: { message, type: 'OAuthException', code, fbtrace_id: 'Atrace', ...extra } });

/** Answers accept/reject/terminate with success and initiate with a fresh call id. */
export const happyGateway: GatewayHandler = (req) => {
  if (req.path.endsWith('/initiate')) return initiated(`wacid.out-${Math.random().toString(36).slice(2, 10)}`);
  return success();
};

export interface FakeGateway {
  /** Base URL ending in /v1, as in the settings. */
  baseUrl: string;
  requests: RecordedRequest[];
  /** The action of each recorded request, in order (accept, reject, terminate, initiate). */
  actions(): string[];
  handler: GatewayHandler;
  close(): Promise<void>;
}

export async function startFakeGateway(handler: GatewayHandler = happyGateway): Promise<FakeGateway> {
  const requests: RecordedRequest[] = [];
  const hanging = new Set<ServerResponse>();
  const gateway: FakeGateway = {
    baseUrl: '',
    requests,
    actions: () => requests.map((r) => r.path.split('/').pop() ?? ''),
    handler,
    async close() {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      let body: unknown;
      try {
        body = JSON.parse(raw);
      } catch {
        body = undefined;
      }
      const recorded: RecordedRequest = { method: req.method ?? '', path: req.url ?? '', headers: req.headers, raw, body };
      requests.push(recorded);
      void Promise.resolve(gateway.handler(recorded)).then((answer) => {
        if (answer === 'hang') {
          hanging.add(res);
          return;
        }
        res.writeHead(answer.status, { 'Content-Type': answer.contentType ?? 'application/json' });
        if (answer.chunked === true) res.write(answer.body);
        res.end(answer.chunked === true ? undefined : answer.body);
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  gateway.baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/restapi/v1`;
  return gateway;
}

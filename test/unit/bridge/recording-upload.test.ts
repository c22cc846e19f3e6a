// A remote node's recordings on their way to the relay (bridge/recording-upload.ts): PUT with the
// bridge token, the Ogg file as the body and its length in a header; tried again until the relay
// takes it; what the node could not hand over when it stops, or had to drop past its bound, is said
// in the log by call.
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { RecordingUploader } from '../../../bridge/recording-upload';
import { BRIDGE_RECORDING_UPLOAD_PATH } from '../../../shared/bridge-recording';
import { BRIDGE_TOKEN, RecordingLogger } from './control-fixtures';

interface Received {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: Buffer;
}

const servers: Server[] = [];
const uploaders: RecordingUploader[] = [];
afterEach(async () => {
  await Promise.all(uploaders.splice(0).map((u) => u.close()));
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

/** A relay of the test's own: each upload answered with the next status (200 once they run out). */
async function relayAnswering(statuses: number[]): Promise<{ url: string; received: Received[] }> {
  const received: Received[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      received.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks) });
      const status = statuses.shift() ?? 200;
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(status < 300 ? '{}' : JSON.stringify({ error: { code: 'unavailable', message: 'not now' } }));
    });
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, received };
}

/** A port nothing listens on. */
async function deadUrl(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return `http://127.0.0.1:${port}`;
}

function uploader(relayUrl: string, logger: RecordingLogger, maxWaitingBytes?: number): RecordingUploader {
  const made = new RecordingUploader({ relayUrl, bridgeToken: BRIDGE_TOKEN, logger, retry: { firstDelayMs: 20, maxDelayMs: 40 }, ...(maxWaitingBytes !== undefined ? { maxWaitingBytes } : {}) });
  uploaders.push(made);
  return made;
}

describe('a remote node\u2019s recordings', () => {
  it('are PUT to the relay with the bridge token, as audio/ogg with their length, and tried again until the relay takes them', async () => {
    const relay = await relayAnswering([503, 500]);
    const logger = new RecordingLogger();
    const uploads = uploader(relay.url, logger);
    const file = Buffer.from('OggS fake recording bytes');
    const callId = 'wacid.HBgLMTU1NTEyMzQ1NjcVAgARGBI/+=';
    expect(await uploads.store(callId, file, 61_234)).toEqual({ ok: true, value: null });
    expect(uploads.pending).toBe(0);
    expect(relay.received).toHaveLength(3);
    for (const request of relay.received) {
      expect(request).toMatchObject({ method: 'PUT', url: BRIDGE_RECORDING_UPLOAD_PATH(callId), body: file });
      expect(request.headers).toMatchObject({ authorization: `Bearer ${BRIDGE_TOKEN}`, 'content-type': 'audio/ogg', 'x-recording-duration-ms': '61234', 'content-length': String(file.length) });
    }
    expect(logger.messages('info')).toEqual(['recording handed to the relay']);
    expect(logger.text()).not.toContain(BRIDGE_TOKEN);
  });

  it('wait through a relay that cannot be reached, and go once it can', async () => {
    const url = await deadUrl();
    const logger = new RecordingLogger();
    const uploads = uploader(url, logger);
    const stored = uploads.store('wacid.1', Buffer.from('file'), 1_000);
    await new Promise((resolve) => setTimeout(resolve, 150));
    expect(uploads.pending).toBe(1);
    expect(logger.messages('warn')).toContain('could not hand a recording to the relay; trying again');
    // The relay is back, on the same port.
    const received: string[] = [];
    const server = createServer((req, res) => {
      received.push(req.url ?? '');
      req.resume();
      req.on('end', () => res.end('{}'));
    });
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(Number(new URL(url).port), '127.0.0.1', resolve));
    expect(await stored).toEqual({ ok: true, value: null });
    expect(received).toEqual([BRIDGE_RECORDING_UPLOAD_PATH('wacid.1')]);
  });

  it('not handed over when the node stops are lost, each said in the log', async () => {
    const logger = new RecordingLogger();
    const uploads = uploader(await deadUrl(), logger);
    const stored = uploads.store('wacid.1', Buffer.from('file'), 1_000);
    await new Promise((resolve) => setTimeout(resolve, 50));
    await uploads.close();
    expect(await stored).toMatchObject({ ok: false, error: { code: 'not_available' } });
    expect(logger.lines.filter((l) => l.level === 'error')).toEqual([
      { level: 'error', msg: 'the relay had not taken a recording when the node stopped: it is lost', fields: { callId: 'wacid.1', durationMs: 1_000, bytes: 4 } },
    ]);
    // One finished after the stop is lost at once, and said too.
    expect(await uploads.store('wacid.2', Buffer.from('late'), 10)).toMatchObject({ ok: false, error: { code: 'not_available' } });
    expect(logger.messages('error')).toHaveLength(2);
  });

  it('say a refusal loudly, and keep trying: the file is lost otherwise', async () => {
    const relay = await relayAnswering([403, 404]);
    const logger = new RecordingLogger();
    const uploads = uploader(relay.url, logger);
    expect(await uploads.store('wacid.1', Buffer.from('file'), 20)).toEqual({ ok: true, value: null });
    expect(logger.messages('error')).toEqual(['the relay refused a recording; trying again', 'the relay refused a recording; trying again']);
  });

  it('past their bound the oldest waiting goes, said in the log; flush waits for the rest', async () => {
    const dead = await deadUrl();
    const logger = new RecordingLogger();
    const uploads = uploader(dead, logger, 10);
    const first = uploads.store('wacid.1', Buffer.alloc(8), 20);
    const second = uploads.store('wacid.2', Buffer.alloc(8), 20);
    expect(await first).toMatchObject({ ok: false, error: { code: 'not_available' } });
    expect(logger.lines.find((l) => l.level === 'error')).toMatchObject({ msg: 'too many recordings waiting for the relay; the oldest is lost', fields: { callId: 'wacid.1' } });
    expect(uploads.pending).toBe(1);
    const started = Date.now();
    await uploads.flush(100);
    expect(Date.now() - started).toBeGreaterThanOrEqual(90);
    expect(uploads.pending).toBe(1);
    await uploads.close();
    expect(await second).toMatchObject({ ok: false, error: { code: 'not_available' } });
  });
});

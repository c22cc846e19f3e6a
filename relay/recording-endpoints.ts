// The endpoints of the team's recordings (relay/REFERENCE.md "Recordings", shared/bridge-recording.ts):
// an agent's "Record" / "Stop recording" (POST RECORDING_AGENT_PATHS.toggle), a recording played
// (GET RECORDING_AGENT_PATHS.file, with byte ranges for seeking, streamed from the disk), and a
// remote node handing over a finished file (PUT BRIDGE_RECORDING_UPLOAD_PATH, the bridge token's,
// streamed to the disk). The decisions are call-recordings.ts's; the files recordings-store.ts's.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { pipeline } from 'node:stream/promises';
import { recordingToggleBodySchema, type RecordingMeta } from '../shared/bridge-recording';
import type { Logger } from '../shared/log';
import type { Agent } from './agent-directory';
import { answerOutcome, parsedBody, type BridgeEndpointContext } from './bridge-endpoints';
import type { CallRecordings } from './call-recordings';
import { methodNotAllowed, sendError, sendJson } from './http-io';
import { MAX_RECORDING_BYTES, type RecordingAudio, type RecordingsStore } from './recordings-store';

const TOGGLE_PATH = /^\/calls\/([^/]+)\/bridge\/recording$/;
const FILE_PATH = /^\/recordings\/([^/]+)$/;
const UPLOAD_PATH = /^\/bridge\/recordings\/([^/]+)$/;

/** The type every recording is served as (the node writes Ogg Opus, shared/ogg-opus.ts). */
export const RECORDING_CONTENT_TYPE = 'audio/ogg';
export const DURATION_HEADER = 'x-recording-duration-ms';
/** The longest recording a node may say it made: a week, far past any call. */
const MAX_DURATION_MS = 7 * 24 * 60 * 60_000;

export interface RecordingEndpointContext extends Omit<BridgeEndpointContext, 'bridge'> {
  /** Absent: calls are not bridged, and "Record" answers 404. */
  recordings: CallRecordings | undefined;
  /** Absent: the relay keeps no recordings (it has no bridge), and every recording is 404. */
  store: RecordingsStore | undefined;
  /**
   * Whether a node's request carries the bridge token (BridgeNodeEndpoints.authenticate; answered
   * 401 or 429 when not). Absent without a bridge token: the upload path is no endpoint (404).
   */
  authenticateNode: ((req: IncomingMessage, res: ServerResponse) => boolean) | undefined;
  /** Largest upload; default MAX_RECORDING_BYTES. */
  maxUploadBytes?: number;
  log: Logger;
}

/** Whether the path is one of these endpoints (then it is answered). */
export function isRecordingPath(path: string): boolean {
  return TOGGLE_PATH.test(path) || FILE_PATH.test(path) || UPLOAD_PATH.test(path);
}

export async function handleRecordingRequest(ctx: RecordingEndpointContext, path: string, method: string, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const upload = UPLOAD_PATH.exec(path);
  if (upload) {
    if (ctx.authenticateNode === undefined) return sendError(res, 404, 'not_found', `no such endpoint: ${path}`);
    if (method !== 'PUT') return methodNotAllowed(res, 'PUT');
    if (!ctx.authenticateNode(req, res)) return;
    const callId = ctx.idFromPath(res, upload[1]!, 'callId');
    if (callId === undefined) return;
    return receive(ctx, callId, req, res);
  }
  const file = FILE_PATH.exec(path);
  if (file) {
    if (method !== 'GET' && method !== 'HEAD') return methodNotAllowed(res, 'GET, HEAD');
    const agent = ctx.authenticate(req, res);
    if (agent === undefined) return;
    const callId = ctx.idFromPath(res, file[1]!, 'callId');
    if (callId === undefined) return;
    return serve(ctx, agent, callId, method, req, res);
  }
  const toggle = TOGGLE_PATH.exec(path)!;
  if (method !== 'POST') return methodNotAllowed(res, 'POST');
  const agent = ctx.authenticate(req, res);
  if (agent === undefined) return;
  const body = await ctx.jsonBody(req, res);
  if (body === undefined) return;
  const callId = ctx.idFromPath(res, toggle[1]!, 'callId');
  if (callId === undefined) return;
  const parsed = parsedBody(res, recordingToggleBodySchema, body);
  if (parsed === undefined) return;
  if (ctx.recordings === undefined) return sendError(res, 404, 'not_found', 'calls are not bridged');
  return answerOutcome(res, await ctx.recordings.toggle(callId, agent.id, parsed.recording));
}

/** Who may hear a recording: a supervisor, or an agent who was in the call while it had one. */
export function mayHear(agent: Agent, meta: RecordingMeta): boolean {
  return agent.role === 'supervisor' || meta.agents.includes(agent.id);
}

async function serve(ctx: RecordingEndpointContext, agent: Agent, callId: string, method: string, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const meta = await ctx.store?.meta(callId);
  if (meta === undefined) return sendError(res, 404, 'not_found', `no recording of call ${callId}`);
  if (!mayHear(agent, meta)) return sendError(res, 403, 'forbidden', 'only the agents who were in the call and supervisors hear its recording');
  const audio = meta.storedAt === undefined ? undefined : await ctx.store?.openAudio(callId);
  if (audio === undefined) return sendError(res, 404, 'not_found', `no recording of call ${callId}`);
  let streaming = false;
  try {
    const headers: Record<string, string> = {
      'Content-Type': RECORDING_CONTENT_TYPE,
      'Accept-Ranges': 'bytes',
      ETag: audio.etag,
      'Last-Modified': new Date(audio.modifiedAt).toUTCString(),
      // A customer's voice: kept by no cache on the way, and by the browser no longer than it plays it.
      'Cache-Control': 'private, no-store',
      'X-Content-Type-Options': 'nosniff',
    };
    // RFC 9110 14.2: a range applies to GET alone, and only while If-Range still names these bytes.
    const range = method === 'GET' && ifRangeHolds(req.headers['if-range'], audio) ? rangeOf(req.headers.range, audio.size) : ({ kind: 'whole' } as const);
    if (range.kind === 'unsatisfiable') {
      return sendError(res, 416, 'range_not_satisfiable', `the range is not within the recording's ${audio.size} bytes`, { size: audio.size }, { 'Content-Range': `bytes */${audio.size}`, 'Accept-Ranges': 'bytes' });
    }
    const { start, end } = range.kind === 'partial' ? range : { start: 0, end: audio.size - 1 };
    if (range.kind === 'partial') headers['Content-Range'] = `bytes ${start}-${end}/${audio.size}`;
    headers['Content-Length'] = String(Math.max(0, end - start + 1));
    res.writeHead(range.kind === 'partial' ? 206 : 200, headers);
    if (method === 'HEAD' || audio.size === 0) {
      res.end();
      return;
    }
    // The handle goes with the stream: it is closed when the stream ends, fails or is cut.
    streaming = true;
    await pipeline(audio.handle.createReadStream({ start, end, autoClose: true }), res).catch((error: unknown) => {
      ctx.log.debug('a recording was not sent whole', { callId, error });
    });
  } finally {
    if (!streaming) await audio.handle.close().catch(() => undefined);
  }
}

/** What a request's Range header (RFC 9110 14.1.2, 14.2) asks of a representation of `size` bytes. */
export type RangeVerdict = { kind: 'whole' } | { kind: 'partial'; start: number; end: number } | { kind: 'unsatisfiable' };

const RANGE_SPECIFIER = /^([!#$%&'*+.^_`|~0-9A-Za-z-]+)=(.*)$/s;
const INT_RANGE = /^(\d+)-(\d*)$/;
const SUFFIX_RANGE = /^-(\d+)$/;

/**
 * The byte range a Range header asks for (RFC 9110 14): none, or another unit than bytes, is the whole
 * representation (a unit the server does not know is ignored); several ranges are answered whole too
 * (a server may ignore Range, and serves no multipart here). One range: `A-B`, `A-` or `-N`, its end
 * cut to the last byte; invalid (`B` before `A`, anything else) or unsatisfiable (`A` at or past the
 * end, `-0`) is 416. Positions of any length are read exactly.
 */
export function rangeOf(header: string | string[] | undefined, size: number): RangeVerdict {
  if (typeof header !== 'string') return { kind: 'whole' };
  const specifier = RANGE_SPECIFIER.exec(header.trim());
  if (specifier === null || specifier[1]!.toLowerCase() !== 'bytes') return { kind: 'whole' };
  // A list may hold empty elements, which a recipient ignores (RFC 9110 5.6.1).
  const specs = specifier[2]!.split(',').map((spec) => spec.trim()).filter((spec) => spec !== '');
  if (specs.length > 1) return { kind: 'whole' };
  const spec = specs[0];
  if (spec === undefined) return { kind: 'unsatisfiable' };
  const length = BigInt(size);
  const int = INT_RANGE.exec(spec);
  if (int) {
    const first = BigInt(int[1]!);
    const last = int[2] === '' ? undefined : BigInt(int[2]!);
    if (last !== undefined && last < first) return { kind: 'unsatisfiable' };
    if (first >= length) return { kind: 'unsatisfiable' };
    const end = last === undefined || last >= length ? length - 1n : last;
    return { kind: 'partial', start: Number(first), end: Number(end) };
  }
  const suffix = SUFFIX_RANGE.exec(spec);
  if (suffix) {
    const wanted = BigInt(suffix[1]!);
    if (wanted === 0n) return { kind: 'unsatisfiable' };
    // Nothing to send of an empty representation: it is sent whole.
    if (length === 0n) return { kind: 'whole' };
    const start = wanted >= length ? 0n : length - wanted;
    return { kind: 'partial', start: Number(start), end: Number(length - 1n) };
  }
  return { kind: 'unsatisfiable' };
}

/** RFC 9110 13.1.5: a range is served only if If-Range (when sent) names these very bytes, by ETag or by their date. */
function ifRangeHolds(header: string | string[] | undefined, audio: RecordingAudio): boolean {
  if (header === undefined) return true;
  if (typeof header !== 'string') return false;
  const value = header.trim();
  if (value.startsWith('"') || value.startsWith('W/')) return value === audio.etag;
  return value === new Date(audio.modifiedAt).toUTCString();
}

async function receive(ctx: RecordingEndpointContext, callId: string, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const type = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  if (type !== RECORDING_CONTENT_TYPE) {
    return sendError(res, 400, 'invalid_input', `Content-Type: must be ${RECORDING_CONTENT_TYPE} (an Ogg Opus file)`, { field: 'Content-Type' });
  }
  const durationText = req.headers[DURATION_HEADER];
  const durationMs = typeof durationText === 'string' && /^\d{1,10}$/.test(durationText.trim()) ? Number(durationText.trim()) : undefined;
  if (durationMs === undefined || durationMs > MAX_DURATION_MS) {
    return sendError(res, 400, 'invalid_input', `X-Recording-Duration-Ms: must be a whole number of milliseconds from 0 to ${MAX_DURATION_MS}`, { field: 'X-Recording-Duration-Ms' });
  }
  const limit = ctx.maxUploadBytes ?? MAX_RECORDING_BYTES;
  const declared = Number(req.headers['content-length'] ?? '0');
  if (declared > limit) return tooLarge(res, req, limit);
  if (ctx.store === undefined) return sendError(res, 404, 'not_configured', 'this relay keeps no recordings: it has no bridge');
  const received = await ctx.store.receive(callId, req, durationMs, limit);
  switch (received.kind) {
    case 'stored':
      return sendJson(res, 200, { callId, bytes: received.bytes });
    case 'too_large':
      return tooLarge(res, req, limit);
    case 'not_ogg':
      return sendError(res, 400, 'invalid_input', 'body: must be an Ogg stream (it starts with "OggS")', { field: 'body' });
    case 'aborted':
      return;
  }
}

/** 413 naming the limit; the rest of the body is not read, so the connection closes after the answer. */
function tooLarge(res: ServerResponse, req: IncomingMessage, limit: number): void {
  res.setHeader('Connection', 'close');
  res.on('finish', () => req.destroy());
  sendError(res, 413, 'payload_too_large', `the recording is larger than ${limit} bytes, the limit of a recording`, { limitBytes: limit });
}

// Media by link, checked before it is sent (gateway-spec.md 2.3): the gateway fetches the link
// itself and refuses what does not fit its table, but only after the message was sent and the
// customer waited. A HEAD request here finds the wrong type, the wrong extension, an oversize file
// or a dead link while the agent can still fix it.
//
// Decisions:
// - The server's Content-Type decides the format; the URL's extension, when the path has one, must
//   be one of the type's and agree with it. A path without an extension is allowed, with a warning.
// - A Content-Length above the limit is refused. A missing length is allowed and reported as an
//   unknown size (a warning): many servers omit it for HEAD, and refusing them would block links
//   that the gateway fetches without trouble.
// - A server that refuses HEAD (403, 405, 501 — signed storage links are often signed for GET only)
//   is asked again with GET and `Range: bytes=0-0`; the body is never read.
// - Redirects are followed by hand (at most 5), so a loop is named as one.
import { fetch as undiciFetch } from 'undici';
import { formatBytes, MEDIA_TABLE, mediaExtensions, mediaMimeTypes, type MediaType } from '../../shared/messages';
import { err, ok, type Result, errorText } from '../../shared/result';
import { isHttpUrl } from '../../shared/validation';

export interface MediaLinkInfo {
  /** The server's Content-Type without parameters, lower case. */
  contentType: string;
  /** Bytes, when the server said; undefined is an unknown size (allowed, see warnings). */
  contentLength: number | undefined;
  /** The address the file was found at, after redirects. */
  finalUrl: string;
  /** What does not block sending but the agent should know (unknown size, Opus-only ogg, …). */
  warnings: string[];
}

/** The part of fetch this check uses, so a test or another host can supply its own. */
export type FetchLike = (
  url: string,
  init: { method: 'HEAD' | 'GET'; redirect: 'manual'; signal: AbortSignal; headers: Record<string, string> },
) => Promise<{ status: number; statusText?: string; headers: { get(name: string): string | null }; body?: { cancel(): Promise<void> } | null }>;

export interface MediaLinkCheckOptions {
  /** For the whole check, redirects included. Default 8 s. */
  timeoutMs?: number;
  fetchImpl?: FetchLike;
  /** Default 5. */
  maxRedirects?: number;
  /** The field named in errors; default "link". */
  field?: string;
}

const DEFAULT_TIMEOUT_MS = 8_000;
const DEFAULT_MAX_REDIRECTS = 5;
const REDIRECTS = new Set([301, 302, 303, 307, 308]);
/** Answers to HEAD that say "not like this", not "not there". */
const HEAD_REFUSED = new Set([403, 405, 501]);

type Probe =
  | { kind: 'answer'; status: number; statusText: string; headers: { get(name: string): string | null }; url: string }
  | { kind: 'failed'; result: Result<never> };

export async function checkMediaLink(type: MediaType, url: string, options: MediaLinkCheckOptions = {}): Promise<Result<MediaLinkInfo>> {
  const field = options.field ?? 'link';
  const refuse = (message: string, extra: { httpStatus?: number; detail?: string } = {}): Result<never> => err('invalid_input', `${field}: ${message}`, { field, ...extra });
  if (!isHttpUrl(url)) return refuse('must be an http:// or https:// address');

  const warnings: string[] = [];
  const fromLink = extensionOf(url);
  if (fromLink !== undefined && !mediaExtensions(type).includes(fromLink)) {
    return refuse(`the link ends in "${fromLink}", which is not ${article(type)} ${type} file: use ${listOf(mediaExtensions(type))}`);
  }

  const controller = new AbortController();
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort();
  }, timeoutMs);
  const context: ProbeContext = {
    fetch: options.fetchImpl ?? (undiciFetch as unknown as FetchLike),
    signal: controller.signal,
    maxRedirects: options.maxRedirects ?? DEFAULT_MAX_REDIRECTS,
    refuse,
    timedOut: () => timedOut,
    timeoutResult: () => err('timeout', `${field}: the link did not answer within ${seconds(timeoutMs)}`, { field }),
  };
  let probe: Probe;
  try {
    probe = await follow('HEAD', url, context);
    if (probe.kind === 'answer' && HEAD_REFUSED.has(probe.status)) {
      const viaGet = await follow('GET', url, context);
      if (viaGet.kind === 'answer' && viaGet.status < 400) probe = viaGet;
    }
  } finally {
    clearTimeout(timer);
  }
  if (probe.kind === 'failed') return probe.result;

  const { status, headers, url: finalUrl } = probe;
  if (status >= 400) {
    const what = status === 404 || status === 410 ? 'there is no file at this address' : status >= 500 ? 'the server failed' : 'the server refused to give the file';
    return refuse(`the link answered HTTP ${status}${probe.statusText ? ` (${probe.statusText})` : ''}: ${what}, so the gateway could not fetch it either`, { httpStatus: status });
  }
  if (status < 200 || status >= 300) return refuse(`the link answered HTTP ${status}, not a file`, { httpStatus: status });

  const rawType = headers.get('content-type');
  const contentType = rawType?.split(';')[0]?.trim().toLowerCase() ?? '';
  const allowed = mediaMimeTypes(type);
  if (contentType === '') return refuse(`the server does not say what the file is (no Content-Type); ${article(type)} ${type} must be served as ${listOf(allowed)}`);
  if (!allowed.includes(contentType)) {
    return refuse(`the server says the file is ${contentType}, not ${article(type)} ${type}: ${article(type)} ${type} must be ${listOf(allowed)}`);
  }
  const format = MEDIA_TABLE[type].formats.find((f) => f.mimeType === contentType)!;
  const extension = fromLink ?? extensionOf(finalUrl);
  if (extension === undefined) {
    warnings.push(`The link has no file extension; the file is taken as ${contentType} from what the server says`);
  } else if (!format.extensions.includes(extension)) {
    return refuse(`the link ends in "${extension}" but the server says the file is ${contentType}: they must agree (${contentType} is ${listOf([...format.extensions])})`);
  }

  const contentLength = lengthOf(status, headers);
  const maxBytes = MEDIA_TABLE[type].maxBytes;
  if (contentLength === undefined) {
    warnings.push(`Unknown size: the server does not say how large the file is; ${article(type)} ${type} may be at most ${formatBytes(maxBytes)}`);
  } else if (contentLength === 0) {
    return refuse('the file is empty (0 bytes)');
  } else if (contentLength > maxBytes) {
    return refuse(`the file is ${formatBytes(contentLength)}, larger than the ${formatBytes(maxBytes)} allowed for ${article(type)} ${type}`);
  }

  if (contentType === 'audio/ogg') warnings.push('Ogg audio must be Opus and mono (gateway-spec.md 2.3); other ogg audio is refused by the gateway');
  if (type === 'video') warnings.push('Video must be H.264 with AAC audio (gateway-spec.md 2.3)');
  const host = new URL(finalUrl).host;
  if (isPrivateHost(host)) warnings.push('The link points to this computer or a private network: the gateway fetches links itself and cannot reach it (the sandbox can)');

  return ok({ contentType, contentLength, finalUrl, warnings });
}

interface ProbeContext {
  fetch: FetchLike;
  signal: AbortSignal;
  maxRedirects: number;
  refuse: (message: string, extra?: { httpStatus?: number; detail?: string }) => Result<never>;
  timedOut: () => boolean;
  timeoutResult: () => Result<never>;
}

/** One method, redirects followed by hand; the answer at the end of the chain. */
async function follow(method: 'HEAD' | 'GET', start: string, ctx: ProbeContext): Promise<Probe> {
  const seen = new Set<string>();
  let url = start;
  for (let hop = 0; ; hop++) {
    seen.add(url);
    let res: Awaited<ReturnType<FetchLike>>;
    try {
      res = await ctx.fetch(url, {
        method,
        redirect: 'manual',
        signal: ctx.signal,
        // Range keeps a GET to one byte; the body is cancelled unread either way.
        headers: method === 'GET' ? { Range: 'bytes=0-0', Accept: '*/*' } : { Accept: '*/*' },
      });
    } catch (e) {
      if (ctx.timedOut()) return { kind: 'failed', result: ctx.timeoutResult() };
      return { kind: 'failed', result: ctx.refuse(`the link could not be reached (${describeNetworkError(e)})`, { detail: errorText(e) }) };
    }
    await res.body?.cancel().catch(() => undefined);
    if (!REDIRECTS.has(res.status)) return { kind: 'answer', status: res.status, statusText: res.statusText ?? '', headers: res.headers, url };
    const location = res.headers.get('location');
    if (location === null || !URL.canParse(location, url)) {
      return { kind: 'failed', result: ctx.refuse(`the link answered HTTP ${res.status} (a redirect) without a usable Location`, { httpStatus: res.status }) };
    }
    const next = new URL(location, url).toString();
    if (!isHttpUrl(next)) return { kind: 'failed', result: ctx.refuse(`the link redirects to ${next}, which is not an http:// or https:// address`) };
    if (seen.has(next)) return { kind: 'failed', result: ctx.refuse(`the link redirects in a loop (back to ${next})`, { httpStatus: res.status }) };
    if (hop + 1 > ctx.maxRedirects) return { kind: 'failed', result: ctx.refuse(`the link redirects more than ${ctx.maxRedirects} times`, { httpStatus: res.status }) };
    url = next;
  }
}

/** Bytes of the whole file: Content-Length, or the total of a Content-Range for a 206. */
function lengthOf(status: number, headers: { get(name: string): string | null }): number | undefined {
  if (status === 206) {
    const total = /\/(\d+)\s*$/.exec(headers.get('content-range') ?? '');
    return total ? Number(total[1]) : undefined;
  }
  const raw = headers.get('content-length');
  return raw !== null && /^\d+$/.test(raw.trim()) ? Number(raw) : undefined;
}

/** ".png" for "…/photo.PNG?x=1"; undefined when the last path segment has no extension. */
export function extensionOf(url: string): string | undefined {
  const path = new URL(url).pathname;
  const segment = path.slice(path.lastIndexOf('/') + 1);
  let decoded = segment;
  try {
    decoded = decodeURIComponent(segment);
  } catch {
    // A malformed escape: look at the raw segment.
  }
  const match = /\.([A-Za-z0-9]{1,5})$/.exec(decoded);
  return match ? `.${match[1]!.toLowerCase()}` : undefined;
}

function isPrivateHost(host: string): boolean {
  const name = host.replace(/:\d+$/, '').replace(/^\[|\]$/g, '').toLowerCase();
  if (name === 'localhost' || name.endsWith('.localhost') || name.endsWith('.local') || name === '::1') return true;
  const v4 = /^(\d+)\.(\d+)\.\d+\.\d+$/.exec(name);
  if (!v4) return /^f[cd][0-9a-f]{2}:/.test(name) || name.startsWith('fe80:');
  const [a, b] = [Number(v4[1]), Number(v4[2])];
  return a === 127 || a === 10 || (a === 192 && b === 168) || (a === 172 && b >= 16 && b <= 31) || (a === 169 && b === 254) || a === 0;
}

function describeNetworkError(e: unknown): string {
  const cause = e instanceof Error && e.cause instanceof Error ? e.cause : undefined;
  const code = (cause as { code?: unknown } | undefined)?.code ?? (e as { code?: unknown }).code;
  switch (code) {
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return 'the host name was not found';
    case 'ECONNREFUSED':
      return 'the server refused the connection, ECONNREFUSED';
    case 'ECONNRESET':
    case 'UND_ERR_SOCKET':
      return 'the connection was closed';
    case 'CERT_HAS_EXPIRED':
    case 'DEPTH_ZERO_SELF_SIGNED_CERT':
    case 'SELF_SIGNED_CERT_IN_CHAIN':
    case 'UNABLE_TO_VERIFY_LEAF_SIGNATURE':
    case 'ERR_TLS_CERT_ALTNAME_INVALID':
      return `the server's certificate is not valid, ${String(code)}`;
    default:
      if (typeof code === 'string') return code;
      return cause?.message ?? errorText(e);
  }
}

const article = (type: MediaType) => (type === 'image' || type === 'audio' ? 'an' : 'a');
const listOf = (items: readonly string[]) => (items.length <= 1 ? (items[0] ?? '') : `${items.slice(0, -1).join(', ')} or ${items[items.length - 1]}`);
const seconds = (ms: number) => (ms < 1000 ? `${ms} ms` : `${Math.round(ms / 100) / 10} s`);

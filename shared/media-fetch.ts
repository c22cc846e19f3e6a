// A media file by link, fetched and judged the way the gateway judges it (gateway-spec.md 2.3): the
// gateway downloads the link itself and refuses what does not fit its table, but only after the
// message went out and the customer waited. Reading the file's bytes here finds a dead link, the
// wrong type, an oversize file or bytes that break a media rule while the agent can still fix it.
// The app runs it with undici (electron/core/media-link-check.ts), the sandbox on Node's fetch
// with the same rules to judge what the business sends (sandbox/media-judge.ts).
//
// Decisions:
// - GET only, never HEAD: signed storage links are often signed for GET alone, and the bytes are
//   needed anyway. Redirects are followed by hand (at most 5), so a loop is named as one.
// - The head is asked for with a Range (headBytesFor); a 206 with a Content-Range gives the size
//   and only what the format's reader needs is read: each further range moreBytesWanted names in
//   turn (an MP4's moov box up to its end, a PDF's last bytes, a ZIP's directory). A server that
//   ignores Range (200) is read in order and stopped once the reader has what it needs when it says
//   the size (Content-Length), read whole when it does not (the size must be learnt), and stopped at
//   the type's size limit: an oversize file is refused by its Content-Length or Content-Range before
//   its body is read, and a body without a stated size is cut off once it passes the limit.
// - One deadline for the whole check, redirects and every range included, that grows with what must
//   be read: 8 s, and 1 s more for each MB the check has to read (the range or Content-Length a
//   server states, or what arrives of a body of unsaid size), up to the type's size limit. A fixed
//   8 s would refuse a 20 MB document on any link slower than 20 Mbit/s. A body that stops sending
//   for the base time (8 s) is timed out there, however much time it had left. Every wait races the
//   deadline, so a fetch that ignores its signal cannot hold the check.
// - A signed link carries its secret in the query (or the fragment): messages name links by scheme,
//   host and path only, and any address in an error text from below is cut to the same.
// - The server's Content-Type must be one of the type's; the link's extension, when the path has
//   one, must be one of the type's and agree with the Content-Type; then the bytes must agree with
//   both (inspectMedia). A path without an extension is allowed, with a note.
// - Nothing throws: a refused file is err('invalid_input', `${field}: …`, { field }) naming the rule.
import type { RuleTerm } from './i18n/rules';
import { english, list, mapStrings, term, text, type RuleText, type TextValue } from './i18n/text';
import { bytesText, concatBytes, headBytesFor, inspectMedia, missingRange, moreBytesWanted, orList, withBytes, type ByteRange, type MediaInspection, type MediaSample } from './media-inspect';
import { formatBytes, MB, MEDIA_TABLE, mediaExtensions, mediaMimeTypes, type MediaType } from './messages';
import { classifyNetworkError } from './network-error';
import { errorText, ok, TextError, type AppError, type Result } from './result';
import { fieldError, isHttpUrl } from './validation';

export interface ByteResponse {
  status: number;
  statusText?: string;
  headers: { get(name: string): string | null };
  body: AsyncIterable<Uint8Array> | null;
  /** Stops the body; safe to call more than once and after the body was read. */
  cancel(): Promise<void>;
}

/** A GET that does not follow redirects (the check follows them itself). */
export type ByteFetch = (url: string, init: { headers: Record<string, string>; signal: AbortSignal }) => Promise<ByteResponse>;

/** The part of a WHATWG fetch (Node's own, undici's) a ByteFetch is made from. */
export type FetchFunction = (
  url: string,
  init: { method: 'GET'; redirect: 'manual'; headers: Record<string, string>; signal: AbortSignal },
) => Promise<{
  status: number;
  statusText: string;
  headers: { get(name: string): string | null };
  body: (AsyncIterable<Uint8Array> & { cancel(): Promise<void> }) | null;
}>;

/**
 * A fetch as a ByteFetch, for the app (undici's fetch) and the sandbox (Node's): `redirect: 'manual'`
 * hands redirects to the check, which follows them itself (a server-side fetch returns the 3xx with
 * its Location, unlike a browser's).
 *
 * Content codings (RFC 9110 8.4): the file is asked for as it is (Accept-Encoding: identity), but
 * some servers encode whatever is asked. The service downloads a link as any HTTP client does, and a
 * client decodes gzip, deflate and br (fetch does so itself), so the file judged is the decoded one:
 * - a coded answer's Content-Length counts coded bytes, not the file's: it is not passed on, so the
 *   size limit and the deadline go by the decoded bytes as they arrive (a small gzip of a huge file is
 *   cut off at the limit like any body of unsaid size);
 * - a coded 206's Content-Range counts coded bytes (RFC 9110 14.4; some servers mean the file's): it
 *   is not passed on either, and the check, given a 206 it cannot place, asks for the file whole;
 * - a coding fetch does not know is handed over undecoded: it fails at the first read, naming it.
 */
export function fetchByteFetch(fetchImpl: FetchFunction): ByteFetch {
  return async (url, init) => {
    const headers = { ...withoutHeader(init.headers, 'accept-encoding'), 'Accept-Encoding': 'identity' };
    const res = await fetchImpl(url, { method: 'GET', redirect: 'manual', headers, signal: init.signal });
    const body = res.body;
    const answer: ByteResponse = {
      status: res.status,
      statusText: res.statusText,
      headers: res.headers,
      body,
      async cancel() {
        // A body whose reader is still held (a read cut short by the deadline) refuses to cancel;
        // the check's signal has aborted it already.
        await body?.cancel().catch(() => undefined);
      },
    };
    const codings = contentCodings(res.headers.get('content-encoding'));
    if (codings.length === 0 || (answer.status !== 200 && answer.status !== 206)) return answer;
    const plain = { get: (name: string) => (['content-length', 'content-range'].includes(name.toLowerCase()) ? null : res.headers.get(name)) };
    const unknown = codings.find((c) => !DECODED_CODINGS.has(c));
    if (unknown !== undefined) return { ...answer, headers: plain, body: failing(text('mediaFetch.unknownCoding', { coding: unknown })) };
    return { ...answer, headers: plain, body: body === null ? null : withCodingErrors(body, codings) };
  };
}

/** The codings fetch decodes, by their Content-Encoding names (RFC 9110 8.4.1). */
const DECODED_CODINGS: ReadonlySet<string> = new Set(['gzip', 'x-gzip', 'deflate', 'br']);

/** The codings of a Content-Encoding, in the order they were applied; identity is none. */
const contentCodings = (value: string | null): string[] =>
  (value ?? '')
    .split(',')
    .map((c) => c.trim().toLowerCase())
    .filter((c) => c !== '' && c !== 'identity');

/**
 * A decoder's error (fetch gives it as the cause of "terminated") read as the file's coding being
 * broken, not as a network failure. The error is new, without a cause: the check names a network
 * error by its cause's code.
 */
async function* withCodingErrors(body: AsyncIterable<Uint8Array>, codings: readonly string[]): AsyncGenerator<Uint8Array> {
  try {
    yield* body;
  } catch (e) {
    const zlibError = [e, (e as { cause?: unknown } | null)?.cause].find((x) => /^(Z_|ERR_BROTLI|ERR__ERROR)/.test(String((x as { code?: unknown } | null)?.code)));
    // No cause: the check would name the error by its cause's code (see above).
    if (zlibError !== undefined) throw new TextError(text('mediaFetch.codingBroken', { codings: list(codings), reason: errorText(zlibError) }));
    throw e;
  }
}

/** A body whose first read fails with `said`. */
const failing = (said: RuleText): AsyncIterable<Uint8Array> => ({
  [Symbol.asyncIterator]: () => ({ next: () => Promise.reject(new TextError(said)) }),
});

const withoutHeader = (headers: Record<string, string>, name: string): Record<string, string> =>
  Object.fromEntries(Object.entries(headers).filter(([key]) => key.toLowerCase() !== name));

export interface MediaFileCheck extends MediaInspection {
  /** The server's Content-Type without parameters, lower case. */
  contentType: string;
  /** The whole file's size in bytes. */
  size: number;
  /** The address the file was found at, after redirects. */
  finalUrl: string;
  /** What needs no confirmation but is worth knowing (no extension, a private-network link), in English. */
  notes: string[];
  /** The same notes as codes and values, in the same order. */
  noteTexts: RuleText[];
}

export type MediaInspector = typeof inspectMedia;

export interface MediaFileCheckOptions {
  fetch: ByteFetch;
  /**
   * The time the check has before any byte is due: for answers, redirects and small files; also
   * the longest a body may pause. Default 8 s.
   */
  timeoutMs?: number;
  /** More time for each MB the check must read, up to the type's size limit. Default 1 s. */
  msPerMb?: number;
  /** The field named in errors; default "link". */
  field?: string;
  /** Default 5. */
  maxRedirects?: number;
  /** Judges the bytes; inspectMedia unless a test supplies its own. */
  inspect?: MediaInspector;
}

const DEFAULT_MEDIA_TIMEOUT_MS = 8_000;
const DEFAULT_MEDIA_MS_PER_MB = 1_000;
const DEFAULT_MAX_REDIRECTS = 5;
const REDIRECTS = new Set([301, 302, 303, 307, 308]);
const REQUEST_HEADERS = { Accept: '*/*', 'Accept-Encoding': 'identity' } as const;

type Refuse = (rule: TextValue, extra?: { httpStatus?: number; detail?: string }) => Result<never>;

/** Thrown inside the check only, when its deadline passed; turned into err('timeout') at the top. */
class DeadlinePassed extends Error {
  constructor(readonly why: 'late' | 'stalled') {
    super(why);
  }
}

/**
 * The check's deadline: `baseMs` from the start, and `msPerMb` more for each MB the check expects to
 * read (never more than `maxBytes`, the type's size limit); while a body is read, `baseMs` without a
 * byte passes it too. `passed` rejects with DeadlinePassed, once.
 */
class Deadline {
  readonly passed: Promise<never>;
  /** The bytes the deadline allows for so far. */
  allowedBytes = 0;
  /** Set once the deadline passed. */
  why: DeadlinePassed['why'] | undefined;
  private reject: (e: DeadlinePassed) => void = () => undefined;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private stallTimer: ReturnType<typeof setTimeout> | undefined;
  private readonly startedAt = Date.now();

  constructor(
    readonly baseMs: number,
    readonly msPerMb: number,
    private readonly maxBytes: number,
    private readonly onPass: () => void,
  ) {
    this.passed = new Promise<never>((_, reject) => {
      this.reject = reject;
    });
    this.passed.catch(() => undefined);
    this.arm();
  }

  get allowedMs(): number {
    return this.baseMs + Math.ceil((this.msPerMb * this.allowedBytes) / MB);
  }

  /** The check expects to have read `bytes` in all by the end. */
  allowFor(bytes: number): void {
    const capped = Math.min(bytes, this.maxBytes);
    if (capped <= this.allowedBytes) return;
    this.allowedBytes = capped;
    this.arm();
  }

  /** A body began, or bytes of it arrived: it has `baseMs` to send more. */
  heard(): void {
    clearTimeout(this.stallTimer);
    this.stallTimer = setTimeout(() => this.pass('stalled'), this.baseMs);
  }

  /** No body is being read: silence is the answer's wait, which the deadline itself bounds. */
  quiet(): void {
    clearTimeout(this.stallTimer);
  }

  stop(): void {
    clearTimeout(this.timer);
    clearTimeout(this.stallTimer);
  }

  private arm(): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.pass('late'), Math.max(0, this.startedAt + this.allowedMs - Date.now()));
  }

  private pass(why: DeadlinePassed['why']): void {
    this.stop();
    this.why = why;
    this.reject(new DeadlinePassed(why));
    this.onPass();
  }
}

interface Context {
  fetch: ByteFetch;
  signal: AbortSignal;
  deadline: Deadline;
  maxRedirects: number;
  refuse: Refuse;
  field: string;
  type: MediaType;
  maxBytes: number;
}

/** A response at the end of a redirect chain, body unread. */
interface Answer {
  res: ByteResponse;
  url: string;
}

export async function checkMediaFile(type: MediaType, url: string, options: MediaFileCheckOptions): Promise<Result<MediaFileCheck>> {
  const field = options.field ?? 'link';
  const refuse: Refuse = (said, extra = {}) => fieldError('invalid_input', field, said, extra);
  if (!isHttpUrl(url)) return refuse(text('common.httpAddress'));
  const fromLink = extensionOf(url);
  if (fromLink !== undefined && !mediaExtensions(type).includes(fromLink)) {
    return refuse(text('mediaFetch.linkExtension', { extension: fromLink, kind: term(KIND_FILE[type]), extensions: orList(mediaExtensions(type)) }));
  }

  const controller = new AbortController();
  const maxBytes = MEDIA_TABLE[type].maxBytes;
  const deadline = new Deadline(options.timeoutMs ?? DEFAULT_MEDIA_TIMEOUT_MS, options.msPerMb ?? DEFAULT_MEDIA_MS_PER_MB, maxBytes, () => controller.abort());
  const ctx: Context = {
    fetch: options.fetch,
    signal: controller.signal,
    deadline,
    maxRedirects: options.maxRedirects ?? DEFAULT_MAX_REDIRECTS,
    refuse,
    field,
    type,
    maxBytes,
  };
  const progress: Progress = { answered: false, read: 0 };
  try {
    return withoutSecrets(await fetchAndJudge(ctx, url, fromLink, options.inspect ?? inspectMedia, progress));
  } catch (e) {
    if (e instanceof DeadlinePassed || controller.signal.aborted) {
      return fieldError('timeout', field, lateness(deadline, progress, e instanceof DeadlinePassed ? e.why : (deadline.why ?? 'late')));
    }
    return withoutSecrets(fieldError('internal', field, text('mediaFetch.notChecked', { reason: errorText(e) }), { detail: errorText(e) }));
  } finally {
    deadline.stop();
    controller.abort();
  }
}

interface Progress {
  /** A response (not a redirect) arrived: a timeout from now on is a slow file, not a silent link. */
  answered: boolean;
  read: number;
}

/** Why the check ran out of time, with what it had read and what it allowed. */
function lateness(deadline: Deadline, progress: Progress, why: DeadlinePassed['why']): RuleText {
  if (why === 'stalled') return text('mediaFetch.stalled', { time: seconds(deadline.baseMs), read: bytesText(progress.read) });
  if (!progress.answered) return text('mediaFetch.silent', { time: seconds(deadline.allowedMs) });
  const time = seconds(deadline.allowedMs);
  const read = bytesText(progress.read);
  const expected = deadline.allowedBytes > progress.read ? bytesText(deadline.allowedBytes) : undefined;
  if (deadline.msPerMb <= 0) return expected === undefined ? text('mediaFetch.late', { time, read }) : text('mediaFetch.lateOf', { time, read, expected });
  const allowance = { base: seconds(deadline.baseMs), perMb: seconds(deadline.msPerMb) };
  return expected === undefined ? text('mediaFetch.lateAllowance', { time, read, ...allowance }) : text('mediaFetch.lateOfAllowance', { time, read, expected, ...allowance });
}

async function fetchAndJudge(ctx: Context, url: string, fromLink: string | undefined, inspect: MediaInspector, progress: Progress): Promise<Result<MediaFileCheck>> {
  const { refuse, type, maxBytes } = ctx;
  // Before the size is known the head may be the whole file (image, audio, document: up to the
  // type's limit); a 206 then says the size in its Content-Range, a 200 is read to one byte past
  // the limit, so that an oversize file is told apart either way.
  const firstHead = clamp(headBytesFor(type, undefined), 1, maxBytes);
  let answer = await follow(ctx, url, { start: 0, end: firstHead - 1 });
  if (!answer.ok) return answer;
  // 416: a range past the end, which for bytes=0-… means an empty file; ask again plainly to be sure.
  if (answer.value.res.status === 416) {
    await cancel(answer.value.res);
    answer = await follow(ctx, answer.value.url, undefined);
    if (!answer.ok) return answer;
  }
  const { res, url: finalUrl } = answer.value;
  progress.answered = true;

  const status = httpProblem(res, refuse);
  if (status) {
    await cancel(res);
    return status;
  }
  const declared = contentTypeProblem(ctx, res, fromLink, finalUrl);
  if (!declared.ok) {
    await cancel(res);
    return declared;
  }
  const { contentType, extension, notes } = declared.value;

  const sample = await readSample(ctx, res, finalUrl, progress);
  if (!sample.ok) return sample;

  let inspected: Result<MediaInspection>;
  try {
    inspected = await inspect(type, sample.value, { ...(extension !== undefined ? { extension } : {}), mimeType: contentType });
  } catch (e) {
    return fieldError('internal', ctx.field, text('mediaFetch.notInspected', { reason: errorText(e) }), { detail: errorText(e) });
  }
  if (!inspected.ok) {
    const { code, message, text: said, detail } = inspected.error;
    return fieldError(code, ctx.field, said ?? message, detail !== undefined ? { detail } : {});
  }
  if (isPrivateHost(new URL(finalUrl).host)) {
    notes.push(text('mediaFetch.privateNetwork'));
  }
  return ok({ ...inspected.value, contentType, size: sample.value.size, finalUrl, notes: notes.map(english), noteTexts: notes });
}

/** HTTP errors, and answers that are neither the file (200) nor a part of it (206). */
function httpProblem(res: ByteResponse, refuse: Refuse): Result<never> | undefined {
  const { status } = res;
  if (status >= 400) {
    const what = text(status === 404 || status === 410 ? 'mediaFetch.noFileThere' : status >= 500 ? 'mediaFetch.serverFailed' : 'mediaFetch.serverRefused');
    const said = res.statusText ? text('mediaFetch.httpError', { status, statusText: res.statusText, what }) : text('mediaFetch.httpErrorBare', { status, what });
    return refuse(said, { httpStatus: status });
  }
  if (status !== 200 && status !== 206) return refuse(text('mediaFetch.notAFile', { status }), { httpStatus: status });
  return undefined;
}

/** The server's Content-Type against the message type, and the link's extension against both. */
function contentTypeProblem(ctx: Context, res: ByteResponse, fromLink: string | undefined, finalUrl: string): Result<{ contentType: string; extension: string | undefined; notes: RuleText[] }> {
  const { refuse, type } = ctx;
  const contentType = res.headers.get('content-type')?.split(';')[0]?.trim().toLowerCase() ?? '';
  const allowed = mediaMimeTypes(type);
  const kind = term(KIND[type]);
  if (contentType === '') return refuse(text('mediaFetch.noContentType', { kind, allowed: orList(allowed) }));
  if (!allowed.includes(contentType)) return refuse(text('mediaFetch.wrongContentType', { contentType, kind, allowed: orList(allowed) }));
  const format = MEDIA_TABLE[type].formats.find((f) => f.mimeType === contentType)!;
  const extension = fromLink ?? extensionOf(finalUrl);
  const notes: RuleText[] = [];
  if (extension === undefined) {
    notes.push(text('mediaFetch.noExtension', { contentType }));
  } else if (!format.extensions.includes(extension)) {
    return refuse(text('mediaFetch.extensionContentType', { extension, contentType, extensions: orList(format.extensions) }));
  }
  return ok({ contentType, extension, notes });
}

/**
 * The most further ranges one check asks for after the head (moreBytesWanted asks one at a time): a
 * JPEG's long segments take a few, a ZIP's end, directory and entry three or four. A crafted file
 * cannot make the check ask without end; what the sample then lacks, the inspection names.
 */
const MAX_FURTHER_RANGES = 12;

/** The bytes the inspection needs, from the first answer (200: the whole file, or as much of it as needed; 206: its head) on. */
async function readSample(ctx: Context, res: ByteResponse, url: string, progress: Progress): Promise<Result<MediaSample>> {
  const { refuse, type } = ctx;
  if (res.status === 200) return readWhole(ctx, res, progress);

  const range = contentRangeOf(res);
  if (range === undefined || range.start !== 0) {
    // A 206 this check cannot place: read the file plainly instead.
    await cancel(res);
    const plain = await follow(ctx, url, undefined);
    if (!plain.ok) return plain;
    const problem = httpProblem(plain.value.res, refuse);
    if (problem) {
      await cancel(plain.value.res);
      return problem;
    }
    if (plain.value.res.status !== 200) {
      await cancel(plain.value.res);
      const said = text('mediaFetch.plainRequestRange', { status: plain.value.res.status, range: res.headers.get('content-range') ?? '' });
      return refuse(said, { httpStatus: plain.value.res.status });
    }
    return readWhole(ctx, plain.value.res, progress);
  }
  const size = range.total;
  const limited = sizeProblem(ctx, size);
  if (limited) {
    await cancel(res);
    return limited;
  }
  const first = await readExactly(ctx, res, range.end - range.start + 1, progress);
  if (!first.ok) return first;
  let sample: MediaSample = { head: first.value, size };

  // Now that the size is known the inspection may want a longer head (headBytesFor: more than a
  // server that sends shorter ranges than asked gave), then further ranges (moreBytesWanted), each
  // read by range: only the bytes the format's reader needs.
  const further = (): ByteRange | undefined => {
    const wanted = moreBytesWanted(type, sample);
    return wanted === undefined ? undefined : missingRange(sample, wanted.start, wanted.end);
  };
  let wanted = missingRange(sample, 0, headBytesFor(type, size)) ?? further();
  for (let round = 0; wanted !== undefined && round <= MAX_FURTHER_RANGES; round++) {
    const more = await readRange(ctx, url, wanted.start, wanted.end - 1, size, progress);
    if (!more.ok) return more;
    if (more.value.kind === 'whole') return ok(more.value.sample);
    sample = withBytes(sample, wanted.start, more.value.bytes);
    wanted = further();
  }
  return ok(sample);
}

/**
 * A server that ignores Range: the body read in order. With its size said (Content-Length), it is
 * read as far as the inspection needs (headBytesFor, then each range moreBytesWanted names, reading
 * through what lies before it) and stopped there; an oversize file is refused by that size before
 * its body is read. A body of unsaid size is read whole, to learn the size, and cut off once it
 * passes the type's limit.
 */
async function readWhole(ctx: Context, res: ByteResponse, progress: Progress): Promise<Result<MediaSample>> {
  const stated = contentLengthOf(res);
  if (stated !== undefined) {
    const limited = sizeProblem(ctx, stated);
    if (limited) {
      await cancel(res);
      return limited;
    }
  }
  const body = bodyOf(ctx, res, progress, stated);
  if (stated === undefined) {
    const filled = await body.fill(ctx.maxBytes + 1);
    await body.stop();
    if (!filled.ok) return filled;
    if (body.total > ctx.maxBytes) {
      return ctx.refuse(text('mediaFetch.tooLargeUnsaid', { limit: formatBytes(ctx.maxBytes), kind: term(KIND[ctx.type]) }));
    }
    if (body.total === 0) return ctx.refuse(text('media.empty'));
    return ok({ head: body.bytes(body.total), size: body.total });
  }
  let target = headBytesFor(ctx.type, stated);
  for (let round = 0; ; round++) {
    const filled = await body.fill(target);
    if (!filled.ok) {
      await body.stop();
      return filled;
    }
    if (body.total < target) {
      await body.stop();
      return ctx.refuse(text('mediaFetch.lengthShort', { count: stated, sent: body.total }));
    }
    const sample: MediaSample = { head: body.bytes(target), size: stated };
    const wanted = round < MAX_FURTHER_RANGES ? moreBytesWanted(ctx.type, sample) : undefined;
    if (target >= stated || wanted === undefined || wanted.end <= target) {
      await body.stop();
      return ok(sample);
    }
    target = Math.min(stated, wanted.end);
  }
}

/**
 * Bytes [start, end] of a file of `size` bytes; a 200 answer is the file instead (as far as
 * readWhole reads it). A server may send less of a range than asked (RFC 9110 14.4 lets it): the
 * rest is asked for in turn.
 */
async function readRange(ctx: Context, url: string, start: number, end: number, size: number, progress: Progress): Promise<Result<{ kind: 'range'; bytes: Uint8Array } | { kind: 'whole'; sample: MediaSample }>> {
  const parts: Uint8Array[] = [];
  for (let at = start; at <= end; ) {
    const answer = await follow(ctx, url, { start: at, end });
    if (!answer.ok) return answer;
    const { res } = answer.value;
    const problem = httpProblem(res, ctx.refuse);
    if (problem) {
      await cancel(res);
      return problem;
    }
    if (res.status === 200) {
      const whole = await readWhole(ctx, res, progress);
      return whole.ok ? ok({ kind: 'whole', sample: whole.value }) : whole;
    }
    const range = contentRangeOf(res);
    if (range === undefined || range.start !== at || range.end > end) {
      await cancel(res);
      return ctx.refuse(text('mediaFetch.differentRange', { start: at, end, range: res.headers.get('content-range') ?? '' }), { httpStatus: res.status });
    }
    if (range.total !== size) {
      await cancel(res);
      return ctx.refuse(text('mediaFetch.changed', { before: size, after: range.total }), { httpStatus: res.status });
    }
    const bytes = await readExactly(ctx, res, range.end - at + 1, progress);
    if (!bytes.ok) return bytes;
    parts.push(bytes.value);
    at = range.end + 1;
  }
  return ok({ kind: 'range', bytes: concatBytes(...parts) });
}

async function readExactly(ctx: Context, res: ByteResponse, count: number, progress: Progress): Promise<Result<Uint8Array>> {
  const body = bodyOf(ctx, res, progress, count);
  const filled = await body.fill(count);
  await body.stop();
  if (!filled.ok) return filled;
  if (body.total < count) return ctx.refuse(text('mediaFetch.rangeShort', { sent: body.total, promised: count }));
  return ok(body.bytes(count));
}

/** A response body read in steps, each up to a number of bytes in all; `stop` cancels the rest. */
interface Body {
  /** The bytes read so far. */
  readonly total: number;
  /** Reads until `limit` bytes in all arrived or the body ended. A passed deadline is thrown on (a timeout for the whole check); a broken connection is a refusal. */
  fill(limit: number): Promise<Result<void>>;
  /** The first `length` bytes read (fewer when fewer arrived). */
  bytes(length: number): Uint8Array;
  stop(): Promise<void>;
}

/**
 * `expected` is what the server said the body holds: the deadline allows for it at once, and for a
 * body of unsaid size grows with what arrives. While a step reads, the body has the base time to
 * send more (a stall); between steps nothing is awaited from it.
 */
function bodyOf(ctx: Context, res: ByteResponse, progress: Progress, expected: number | undefined): Body {
  const { deadline } = ctx;
  const chunks: Uint8Array[] = [];
  const iterator = res.body?.[Symbol.asyncIterator]();
  let total = 0;
  let ended = iterator === undefined;
  deadline.allowFor(progress.read + (expected ?? 0));
  return {
    get total() {
      return total;
    },
    async fill(limit) {
      if (ended || total >= limit || iterator === undefined) return ok(undefined);
      deadline.heard();
      try {
        while (total < limit) {
          const next = await Promise.race([iterator.next(), deadline.passed]);
          if (next.done) {
            ended = true;
            break;
          }
          chunks.push(next.value);
          total += next.value.byteLength;
          progress.read += next.value.byteLength;
          deadline.allowFor(progress.read);
          deadline.heard();
        }
      } catch (e) {
        ended = true;
        await cancel(res);
        if (e instanceof DeadlinePassed || ctx.signal.aborted) throw passed(ctx, e);
        // A failure the check made itself (a coding that does not decode) says its own text.
        const reason = e instanceof TextError ? e.text : describeNetworkError(e);
        return ctx.refuse(text('mediaFetch.readBroken', { reason, read: bytesText(total) }), { detail: errorText(e) });
      } finally {
        deadline.quiet();
      }
      return ok(undefined);
    },
    bytes(length) {
      const all = concatBytes(...chunks);
      chunks.splice(0, chunks.length, all);
      return all.byteLength > length ? all.subarray(0, length) : all;
    },
    async stop() {
      if (!ended) {
        ended = true;
        await iterator?.return?.().catch(() => undefined);
      }
      await cancel(res);
    },
  };
}

/** What a wait that ended with the deadline throws: the deadline's own reason. */
const passed = (ctx: Context, e: unknown): DeadlinePassed => (e instanceof DeadlinePassed ? e : new DeadlinePassed(ctx.deadline.why ?? 'late'));

/** One GET, redirects followed by hand; the answer at the end of the chain, its body unread. */
async function follow(ctx: Context, start: string, range: { start: number; end: number } | undefined): Promise<Result<Answer>> {
  const { refuse } = ctx;
  // Fragments are never sent: a link and the same link with another fragment are one address.
  const unfragmented = (u: string) => u.split('#', 1)[0]!;
  const seen = new Set<string>();
  let url = start;
  for (let hop = 0; ; hop++) {
    seen.add(unfragmented(url));
    let res: ByteResponse;
    try {
      const headers: Record<string, string> = range ? { ...REQUEST_HEADERS, Range: `bytes=${range.start}-${range.end}` } : { ...REQUEST_HEADERS };
      res = await Promise.race([ctx.fetch(url, { headers, signal: ctx.signal }), ctx.deadline.passed]);
    } catch (e) {
      if (e instanceof DeadlinePassed || ctx.signal.aborted) throw passed(ctx, e);
      return refuse(text('mediaFetch.unreachable', { reason: describeNetworkError(e) }), { detail: errorText(e) });
    }
    if (!REDIRECTS.has(res.status)) return ok({ res, url });
    await cancel(res);
    const location = res.headers.get('location');
    if (location === null || !URL.canParse(location, url)) return refuse(text('mediaFetch.redirectNoLocation', { status: res.status }), { httpStatus: res.status });
    const next = new URL(location, url).toString();
    if (!isHttpUrl(next)) return refuse(text('mediaFetch.redirectScheme', { protocol: new URL(next).protocol }));
    if (seen.has(unfragmented(next))) return refuse(text('mediaFetch.redirectLoop', { url: withoutQuery(next) }), { httpStatus: res.status });
    if (hop + 1 > ctx.maxRedirects) return refuse(text('mediaFetch.tooManyRedirects', { count: ctx.maxRedirects }), { httpStatus: res.status });
    url = next;
  }
}

function sizeProblem(ctx: Context, size: number): Result<never> | undefined {
  if (size === 0) return ctx.refuse(text('media.empty'));
  if (size > ctx.maxBytes) return ctx.refuse(text('mediaFetch.tooLarge', { size: formatBytes(size), bytes: size, limit: formatBytes(ctx.maxBytes), kind: term(KIND[ctx.type]) }));
  return undefined;
}

/** "bytes 0-99/1234" → its numbers; undefined for anything else (an unknown total "*" included). */
function contentRangeOf(res: ByteResponse): { start: number; end: number; total: number } | undefined {
  const match = /^\s*bytes\s+(\d+)-(\d+)\/(\d+)\s*$/i.exec(res.headers.get('content-range') ?? '');
  if (!match) return undefined;
  const [start, end, total] = [Number(match[1]), Number(match[2]), Number(match[3])];
  return start <= end && end < total ? { start, end, total } : undefined;
}

function contentLengthOf(res: ByteResponse): number | undefined {
  const raw = res.headers.get('content-length');
  return raw !== null && /^\s*\d+\s*$/.test(raw) ? Number(raw) : undefined;
}

async function cancel(res: ByteResponse): Promise<void> {
  try {
    await res.cancel();
  } catch {
    // The body is gone either way.
  }
}


const clamp = (n: number, low: number, high: number) => Math.min(Math.max(Number.isFinite(n) ? Math.floor(n) : high, low), high);

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


/**
 * A text with each link in it cut to its origin and path: no query, fragment, user name or password
 * (a signed link's query holds its credentials). Error texts from below may quote a link whole.
 */
export function withoutQuery(text: string): string {
  // A backslash ends an address too: in a JSON-escaped detail it starts the closing quote's escape.
  // Punctuation that ends the address ends the sentence it sits in, and stays with it.
  return text.replace(/\b[a-z][a-z0-9+.-]*:\/\/[^\s"'<>\\]+/gi, (found) => {
    const trail = /[.,;:!?)]+$/.exec(found)?.[0] ?? '';
    const address = found.slice(0, found.length - trail.length);
    if (URL.canParse(address)) {
      const url = new URL(address);
      if (url.origin !== 'null') return `${url.origin}${url.pathname}${trail}`;
    }
    return `${address.replace(/[?#].*$/, '')}${trail}`;
  });
}

/** An error whose message, texts and detail keep no link's query (withoutQuery). */
export function errorWithoutQueries(error: AppError): AppError {
  const { message, detail, text: said, issues } = error;
  return {
    ...error,
    message: withoutQuery(message),
    ...(detail !== undefined ? { detail: withoutQuery(detail) } : {}),
    ...(said !== undefined ? { text: mapStrings(said, withoutQuery) } : {}),
    ...(issues !== undefined ? { issues: issues.map((issue) => ({ field: issue.field, text: mapStrings(issue.text, withoutQuery) })) } : {}),
  };
}

const withoutSecrets = <T>(result: Result<T>): Result<T> => (result.ok ? result : { ok: false, error: errorWithoutQueries(result.error) });

/** This computer, a private network or a link-local address: places the gateway cannot reach. */
export function isPrivateHost(host: string): boolean {
  const name = host.replace(/:\d+$/, '').replace(/^\[|\]$/g, '').toLowerCase();
  if (name === 'localhost' || name.endsWith('.localhost') || name.endsWith('.local') || name === '::1') return true;
  const v4 = /^(\d+)\.(\d+)\.\d+\.\d+$/.exec(name);
  if (!v4) return /^f[cd][0-9a-f]{2}:/.test(name) || name.startsWith('fe80:');
  const [a, b] = [Number(v4[1]), Number(v4[2])];
  return a === 127 || a === 10 || (a === 192 && b === 168) || (a === 172 && b >= 16 && b <= 31) || (a === 169 && b === 254) || a === 0;
}

/** A network failure in the check's words, from the rule catalogue where it has them. */
/** Why a link could not be read, as the catalogue says it (the code of a failure it has no words for). */
function describeNetworkError(e: unknown): TextValue {
  const failure = classifyNetworkError(e);
  switch (failure.kind) {
    case 'host_not_found':
      return text('mediaFetch.hostNotFound');
    case 'refused':
      return text('mediaFetch.connectionRefused');
    case 'reset':
      return text('mediaFetch.connectionClosed');
    case 'bad_certificate':
      return text('mediaFetch.badCertificate', { code: failure.code });
    case 'connect_timeout':
    case 'other':
      return failure.code ?? failure.message;
  }
}

/** A message type as the refusals name it ("not an image"), and its files ("not an image file"). */
const KIND: Readonly<Record<MediaType, RuleTerm>> = { image: 'mediaImage', video: 'mediaVideo', audio: 'mediaAudio', document: 'mediaDocument' };
const KIND_FILE: Readonly<Record<MediaType, RuleTerm>> = { image: 'mediaImageFile', video: 'mediaVideoFile', audio: 'mediaAudioFile', document: 'mediaDocumentFile' };

const seconds = (ms: number) => (ms < 1000 ? `${ms} ms` : `${Math.round(ms / 100) / 10} s`);

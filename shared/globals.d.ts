// shared/ is compiled without DOM and Node types so that nothing environment-specific slips in.
// These few globals exist alike in Node, Chromium and Electron; they are declared here, narrowly.
declare const console: {
  log(...args: unknown[]): void;
  error(...args: unknown[]): void;
};
declare class URL {
  constructor(url: string, base?: string);
  static canParse(url: string, base?: string): boolean;
  readonly pathname: string;
  readonly protocol: string;
  readonly host: string;
  readonly origin: string;
  toString(): string;
}
// The media file check (media-fetch.ts) bounds its requests in time: abort signals and timers.
interface AbortSignal {
  readonly aborted: boolean;
  addEventListener(type: 'abort', listener: () => void, options?: { once?: boolean }): void;
  removeEventListener(type: 'abort', listener: () => void): void;
}
declare class AbortController {
  readonly signal: AbortSignal;
  abort(reason?: unknown): void;
}
declare function setTimeout(callback: () => void, ms: number): unknown;
declare function clearTimeout(handle: unknown): void;

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

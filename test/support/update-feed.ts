// An update feed on 127.0.0.1 as electron-builder publishes one for the generic provider
// (latest-linux.yml, beta-linux.yml and the files they name), and electron-updater's real
// AppImageUpdater pointed at it from a plain Node process: only what needs Electron is replaced —
// the app adapter (electron-updater takes one instead of Electron's `app`), the HTTP executor
// (Electron's `net` becomes Node's http), and the one `require('electron')` its quitAndInstall makes.
import { createHash } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { createServer, request as httpRequest, type ClientRequest, type IncomingMessage, type RequestOptions } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { configureRequestOptions, configureRequestUrl, HttpExecutor, type DownloadOptions } from 'builder-util-runtime';
import { AppImageUpdater } from 'electron-updater';
import type { AppAdapter } from 'electron-updater/out/AppAdapter';

export interface FeedFile {
  body: Buffer;
  contentType?: string;
  /** The answer waits for this (a slow download the test can interrupt). */
  gate?: Promise<void>;
}

export interface UpdateFeed {
  /** The feed's base address, ending in '/'. */
  url: string;
  files: Map<string, FeedFile>;
  /** Every path asked for, without the query (electron-updater adds ?noCache=…). */
  requested: string[];
  close(): Promise<void>;
}

export async function startUpdateFeed(): Promise<UpdateFeed> {
  const files = new Map<string, FeedFile>();
  const requested: string[] = [];
  const server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://127.0.0.1').pathname;
    requested.push(path);
    const file = files.get(path);
    if (!file || (req.method !== 'GET' && req.method !== 'HEAD')) {
      res.writeHead(404, { 'Content-Type': 'text/plain' }).end('Not found');
      return;
    }
    const answer = () => {
      if (res.destroyed) return;
      res.writeHead(200, { 'Content-Type': file.contentType ?? 'application/octet-stream', 'Content-Length': file.body.length });
      res.end(req.method === 'HEAD' ? undefined : file.body);
    };
    if (file.gate) void file.gate.then(answer);
    else answer();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
    files,
    requested,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

export const sha512 = (bytes: Buffer): string => createHash('sha512').update(bytes).digest('base64');

/**
 * A release as electron-builder writes it: the AppImage under its versioned name and the channel
 * file that describes it. `claimedSha512` stands in for a feed whose checksum does not match.
 */
export function publishRelease(feed: UpdateFeed, options: { channelFile: string; version: string; body: Buffer; claimedSha512?: string }): string {
  const fileName = `Softphone-${options.version}.AppImage`;
  const checksum = options.claimedSha512 ?? sha512(options.body);
  const yml = [
    `version: ${options.version}`,
    'files:',
    `  - url: ${fileName}`,
    `    sha512: ${checksum}`,
    `    size: ${options.body.length}`,
    `path: ${fileName}`,
    `sha512: ${checksum}`,
    "releaseDate: '2025-06-01T10:00:00.000Z'",
    '',
  ].join('\n');
  feed.files.set(`/${options.channelFile}`, { body: Buffer.from(yml), contentType: 'text/yaml' });
  feed.files.set(`/${fileName}`, { body: options.body });
  return fileName;
}

/**
 * A new "AppImage": a shell script, so that installing it for real (electron-updater moves it over
 * the old one and runs it with APPIMAGE_EXIT_AFTER_INSTALL) leaves a trace in `$SOFTPHONE_TEST_MARKER`.
 * The padding gives the download some progress to report.
 */
export const appImageScript = (version: string): Buffer =>
  Buffer.from(`#!/bin/sh\necho "${version} installed, exit after install: $APPIMAGE_EXIT_AFTER_INSTALL" > "$SOFTPHONE_TEST_MARKER"\n# ${'x'.repeat(200_000)}\n`);

/** electron-updater's view of the app: what Electron's `app` would tell it. */
export class TestApp implements AppAdapter {
  readonly name = 'Softphone';
  readonly isPackaged = true;
  quits = 0;
  readonly quitHandlers: Array<(exitCode: number) => void> = [];

  constructor(
    readonly version: string,
    private readonly dir: string,
  ) {}

  get appUpdateConfigPath(): string {
    return join(this.dir, 'resources', 'app-update.yml');
  }
  get userDataPath(): string {
    return join(this.dir, 'userData');
  }
  get baseCachePath(): string {
    return join(this.dir, 'cache');
  }
  whenReady(): Promise<void> {
    return Promise.resolve();
  }
  relaunch(): void {
    throw new Error('relaunch is the update service’s to call, through its own option');
  }
  quit(): void {
    this.quits += 1;
  }
  onQuit(handler: (exitCode: number) => void): void {
    this.quitHandlers.push(handler);
  }

  /** resources/app-update.yml as electron-builder writes it for `publish: generic` (its URL is never used: the settings set the feed). */
  async writeUpdateConfig(): Promise<void> {
    await mkdir(join(this.dir, 'resources'), { recursive: true });
    await writeFile(this.appUpdateConfigPath, 'provider: generic\nurl: https://updates.invalid/softphone\nupdaterCacheDirName: softphone-updater\n');
  }

  /** Where electron-updater keeps a downloaded update until it is installed. */
  pendingDir(): string {
    return join(this.baseCachePath, 'softphone-updater', 'pending');
  }
}

/** electron-updater's ElectronHttpExecutor with Node's http in place of Electron's net: same requests, same checks of the bytes. */
class NodeHttpExecutor extends HttpExecutor<ClientRequest> {
  createRequest(options: RequestOptions, callback: (response: IncomingMessage) => void): ClientRequest {
    return httpRequest(options, callback);
  }

  download(url: URL, destination: string, options: DownloadOptions): Promise<string> {
    return options.cancellationToken.createPromise<string>((resolve, reject, onCancel) => {
      const requestOptions: RequestOptions = { headers: options.headers ?? undefined };
      configureRequestUrl(url, requestOptions);
      configureRequestOptions(requestOptions);
      this.doDownload(
        requestOptions,
        { destination, options, onCancel, callback: (error) => (error === null || error === undefined ? resolve(destination) : reject(error)), responseHandler: null },
        0,
      );
    });
  }
}

/** The real AppImageUpdater, downloading through Node's http instead of Electron's net module. */
export function feedUpdater(app: TestApp): AppImageUpdater {
  const updater = new AppImageUpdater(null, app);
  Object.assign(updater, { httpExecutor: new NodeHttpExecutor() });
  return updater;
}

/**
 * quitAndInstall announces `before-quit-for-update` on `require('electron').autoUpdater` before it
 * quits: that one module is put in Node's require cache for electron-updater to find.
 */
export function installElectronAutoUpdaterStandIn(): EventEmitter {
  const require = createRequire(import.meta.url);
  const id = require.resolve('electron');
  const autoUpdater = new EventEmitter();
  require.cache[id] = { id, filename: id, loaded: true, exports: { autoUpdater }, children: [], paths: [], path: id } as unknown as NodeJS.Module;
  return autoUpdater;
}

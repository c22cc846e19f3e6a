// Typed IPC (style.md 2–4): one wrapper registers a handler per command. Before any business code
// runs it checks who is calling (our window, showing our page) and parses the payload with the
// command's schema from shared/api.ts. Every outcome, failures included, is a Result value: nothing
// thrown here reaches the renderer as an exception.
import type { z } from 'zod';
import { ipcMain, type IpcMainInvokeEvent, type WebContents } from 'electron';
import { COMMAND_NAMES, commandSchemas, type CommandName, type SoftphoneBackend, type Unsubscribe } from '../../shared/api';
import { createLogger, type Logger } from '../../shared/log';
import { err, type Result } from '../../shared/result';
import { parseWith } from '../../shared/validation';
import { commandChannel, pushChannel } from './ipc-channels';
import { isAppUrl } from './renderer-location';

export interface SoftphoneIpcOptions {
  backend: SoftphoneBackend;
  /** Our renderer page (renderer-location.ts); calls from any other document are refused. */
  appUrl: string;
  /** Our window's web contents, or undefined while there is no window. */
  getWebContents: () => WebContents | undefined;
  logger?: Logger;
}

/** Refuses calls that do not come from our window's main document showing our own page. */
export function checkSender(event: Pick<IpcMainInvokeEvent, 'sender' | 'senderFrame'>, appUrl: string, ours: WebContents | undefined): Result<never> | undefined {
  if (ours === undefined || event.sender !== ours) {
    return err('unauthorized', 'This command is accepted only from the softphone window.');
  }
  if (!isAppUrl(event.senderFrame?.url, appUrl)) {
    return err('unauthorized', 'This command is accepted only from the softphone page.');
  }
  return undefined;
}

/** Registers every command handler and forwards pushes to our window. Returns a function that undoes both. */
export function registerSoftphoneIpc(options: SoftphoneIpcOptions): Unsubscribe {
  const { backend, appUrl, getWebContents } = options;
  const logger = options.logger ?? createLogger('desktop-ipc');

  async function handleCommand<N extends CommandName>(name: N, event: IpcMainInvokeEvent, params: unknown): Promise<Result<unknown>> {
    const refusal = checkSender(event, appUrl, getWebContents());
    if (refusal) {
      logger.warn('IPC call refused', { command: name, url: event.senderFrame?.url, reason: refusal.ok ? undefined : refusal.error.message });
      return refusal;
    }
    const parsed = parseWith(commandSchemas[name], params);
    if (!parsed.ok) return parsed;
    try {
      // TypeScript cannot follow the generic index through zod's inference; the value was parsed
      // with exactly commandSchemas[name] just above.
      return await backend.handle(name, parsed.value as z.output<(typeof commandSchemas)[N]>);
    } catch (e) {
      // The backend reports failures as values; an exception here is a bug, and still must not
      // cross the process boundary as one.
      logger.error('command failed unexpectedly', { command: name, error: e });
      return err('internal', `The ${name} command failed unexpectedly.`);
    }
  }

  for (const name of COMMAND_NAMES) {
    ipcMain.handle(commandChannel(name), (event, params: unknown) => handleCommand(name, event, params));
  }

  const unsubscribe = backend.subscribe((push) => {
    const contents = getWebContents();
    if (contents === undefined || contents.isDestroyed()) return;
    contents.send(pushChannel(push.name), push.payload);
  });

  return () => {
    unsubscribe();
    for (const name of COMMAND_NAMES) ipcMain.removeHandler(commandChannel(name));
  };
}

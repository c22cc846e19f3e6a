// An in-memory SoftphoneApi for the renderer's domains: it answers commands like the main process
// does (or `not_available` for a command a test did not expect), records them, and lets a test push.
import type { CommandName, CommandParams, CommandResults, PushName, SoftphoneApi } from '../../../shared/api';
import { err, type Result } from '../../../shared/result';

/** A command's answer, at once or when a test lets it come. */
export type Answers = { [N in CommandName]?: (params: CommandParams<N>) => Result<CommandResults[N]> | Promise<Result<CommandResults[N]>> };

export interface FakeApi {
  api: SoftphoneApi;
  /** Every command, in order. */
  calls: { name: string; params: unknown }[];
  /** Delivers a push as the host would, unchecked: the renderer must check it. */
  push(name: PushName, payload: unknown): void;
  /** How many listeners a push has now. */
  listeners(name: PushName): number;
}

export function fakeApi(answers: Answers): FakeApi {
  const calls: { name: string; params: unknown }[] = [];
  const pushListeners = new Map<string, Set<(payload: unknown) => void>>();
  const listenersOf = (listener: string) => {
    let set = pushListeners.get(listener);
    if (!set) pushListeners.set(listener, (set = new Set()));
    return set;
  };
  const listenerName = (name: PushName) => `on${name[0]!.toUpperCase()}${name.slice(1)}`;
  const api = new Proxy({} as SoftphoneApi, {
    get(_target, key: string) {
      if (key.startsWith('on')) {
        return (cb: (payload: unknown) => void) => {
          listenersOf(key).add(cb);
          return () => listenersOf(key).delete(cb);
        };
      }
      return async (params: unknown) => {
        calls.push({ name: key, params });
        const answer = (answers as Record<string, ((p: unknown) => Result<unknown> | Promise<Result<unknown>>) | undefined>)[key];
        return answer ? answer(params) : err('not_available', `${key} is not part of this test`);
      };
    },
  });
  return {
    api,
    calls,
    push: (name, payload) => {
      for (const cb of [...listenersOf(listenerName(name))]) cb(payload);
    },
    listeners: (name) => listenersOf(listenerName(name)).size,
  };
}

// The embedded default (ARCHITECTURE.md): with no account, the app runs an in-process relay and
// sandbox and talks to them like to a real gateway. The host supplies the function that starts them.
import type { AccountConfig } from '../../shared/settings';

export interface EmbeddedEnvironment {
  /** Gateway and relay of the embedded sandbox, with their key and token. */
  account: AccountConfig;
  /** Base URL of the sandbox's control API (shared/sandbox.ts SANDBOX_PATHS). */
  sandboxControlUrl: string;
  close(): Promise<void>;
}

export type StartEmbeddedEnvironment = () => Promise<EmbeddedEnvironment>;

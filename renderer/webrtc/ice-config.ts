// The ICE servers and transport policy calls are built with (shared/ice-servers.ts), asked of the
// main process once and kept until the settings change or the relay's TURN credentials in them near
// their end. Fetched ahead, so that a call never waits for it. The credentials stay here, in the
// media layer: nothing of them enters the store.
import type { SoftphoneApi } from '../../shared/api';
import { text } from '../../shared/i18n/text';
import { iceConfigSchema, type IceConfig } from '../../shared/ice-servers';
import { createLogger } from '../../shared/log';
import { err, errText, errorText, ok, type Result } from '../../shared/result';
import { parseWith } from '../../shared/validation';

const log = createLogger('ice-config');

/** Credentials with less life left than this are fetched again before a call uses them. */
const RENEW_BEFORE_MS = 60_000;

export class IceConfigSource {
  private cached: IceConfig | undefined;
  private pending: Promise<Result<IceConfig>> | undefined;
  /** Bumped on every invalidation, so that an answer fetched before it is not kept. */
  private epoch = 0;

  constructor(
    private readonly api: Pick<SoftphoneApi, 'getIceConfig'>,
    private readonly now: () => number = Date.now,
  ) {}

  /** Settings changed: the next call asks again (and the question goes out now). */
  invalidate(): void {
    this.epoch++;
    this.cached = undefined;
    this.pending = undefined;
    void this.get();
  }

  /** The configuration for a call starting now. */
  async get(): Promise<Result<IceConfig>> {
    const cached = this.cached;
    if (cached && (cached.expiresAt === undefined || cached.expiresAt - this.now() > RENEW_BEFORE_MS)) return ok(cached);
    this.pending ??= this.fetch();
    return this.pending;
  }

  private async fetch(): Promise<Result<IceConfig>> {
    const epoch = this.epoch;
    // Commands resolve to a Result and never reject (guardApi); a rejection is turned into one all the same, so that it is not kept as `pending`.
    const answer = await this.api.getIceConfig({}).catch((e: unknown) => err('internal', errorText(e)));
    const parsed = answer.ok ? parseWith(iceConfigSchema, answer.value) : answer;
    if (epoch !== this.epoch) return parsed;
    this.pending = undefined;
    if (!parsed.ok) {
      log.warn('the network settings could not be read', { code: parsed.error.code, problem: parsed.error.message });
      // The last good configuration still says what the agent chose ("Relay only" stays relay only).
      const last = this.cached;
      // As a text of the catalogue: the call's notice and the reason reported say it in the agent's language.
      const { code, text: said, message } = parsed.error;
      return last ? ok(last) : errText(code, text('callMedia.networkSettingsUnread', { problem: said ?? message }));
    }
    this.cached = parsed.value;
    return ok(parsed.value);
  }
}

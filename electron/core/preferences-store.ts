// The desk preferences file (`preferences.json` in the data directory). Changes are applied one
// after another and written atomically; a file that does not parse is kept aside and the defaults
// apply, so a damaged file never stops the softphone.
import { join } from 'node:path';
import { isLanguageSetting } from '../../shared/i18n/languages';
import { createLogger, type Logger } from '../../shared/log';
import {
  applyPreferencesPatch,
  AUDIO_ROLES,
  DEFAULT_PREFERENCES,
  parseShortcut,
  preferencesPatchSchema,
  preferencesSchema,
  SHORTCUT_ACTIONS,
  type Preferences,
  type PreferencesPatch,
} from '../../shared/preferences';
import { text } from '../../shared/i18n/text';
import { errorText, ok, errText, type Result } from '../../shared/result';
import { fieldError, issueText } from '../../shared/validation';
import { readJsonFile, setAsideCorruptFile, writeJsonFileAtomic } from './json-file';

export const PREFERENCES_FILE = 'preferences.json';

/**
 * What the host checks before a change is saved, beyond the shared rules (the Electron host: that
 * global shortcuts are free). Its refusal names the field, like the rules'.
 */
export type PreferencesGuard = (next: Preferences) => Result<void>;

export class PreferencesStore {
  private readonly path: string;
  private readonly log: Logger;
  private current: Preferences = structuredClone(DEFAULT_PREFERENCES);
  private writing: Promise<unknown> = Promise.resolve();
  private readonly listeners = new Set<(preferences: Preferences) => void>();

  private readonly guard: PreferencesGuard | undefined;

  constructor(options: { dataDir: string; logger?: Logger; guard?: PreferencesGuard | undefined }) {
    this.path = join(options.dataDir, PREFERENCES_FILE);
    this.log = options.logger ?? createLogger('preferences');
    this.guard = options.guard;
  }

  async load(): Promise<Preferences> {
    const read = await readJsonFile(this.path).catch((e: unknown) => ({ kind: 'unparsable' as const, reason: errorText(e) }));
    if (read.kind === 'missing') return this.get();
    // Part by part: a part written by another version, or broken, falls back to its default alone.
    if (read.kind === 'json' && typeof read.value === 'object' && read.value !== null && !Array.isArray(read.value)) {
      this.current = mergeOverDefaults(read.value as Record<string, unknown>);
      return this.get();
    }
    const keptAs = await setAsideCorruptFile(this.path).catch(() => undefined);
    this.log.warn('the preferences file could not be read; kept aside, using the defaults', { keptAs, problem: read.kind === 'unparsable' ? read.reason : 'not an object' });
    return this.get();
  }

  get(): Preferences {
    return structuredClone(this.current);
  }

  /** Checks and applies a patch, saves it, and tells the listeners; the error names the field. */
  update(patch: PreferencesPatch): Promise<Result<Preferences>> {
    const run = this.writing.then(async (): Promise<Result<Preferences>> => {
      const input = preferencesPatchSchema.safeParse(patch);
      if (!input.success) {
        const issue = input.error.issues[0];
        const field = issue?.path.join('.') ?? 'preferences';
        return fieldError('invalid_input', field, issue === undefined ? 'is not valid' : issueText(issue));
      }
      const next = applyPreferencesPatch(this.current, input.data);
      if (!next.ok) return next;
      const allowed = this.guard?.(next.value) ?? ok(undefined);
      if (!allowed.ok) return allowed;
      try {
        await writeJsonFileAtomic(this.path, next.value);
      } catch (e) {
        this.log.error('the preferences could not be saved', { error: e });
        return errText('internal', text('service.preferencesNotSaved', { reason: errorText(e) }));
      }
      this.current = next.value;
      for (const listener of this.listeners) {
        try {
          listener(this.get());
        } catch (e) {
          this.log.error('a preferences listener failed', { error: e });
        }
      }
      return ok(this.get());
    });
    this.writing = run.catch(() => undefined);
    return run;
  }

  onChanged(listener: (preferences: Preferences) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  async flush(): Promise<void> {
    await this.writing;
  }
}

function mergeOverDefaults(stored: Record<string, unknown>): Preferences {
  const merged = structuredClone(DEFAULT_PREFERENCES);
  const shape = preferencesSchema.shape;
  const audio = shape.audio.shape;
  const storedAudio = (stored.audio ?? {}) as Record<string, unknown>;
  for (const role of AUDIO_ROLES) {
    const parsed = audio[role].safeParse(storedAudio[role]);
    if (parsed.success) merged.audio[role] = parsed.data;
  }
  const storedShortcuts = (stored.shortcuts ?? {}) as Record<string, unknown>;
  for (const action of SHORTCUT_ACTIONS) {
    const value = storedShortcuts[action];
    const parsed = typeof value === 'string' ? parseShortcut(value) : undefined;
    if (parsed?.ok) merged.shortcuts[action] = parsed.value;
  }
  for (const flag of ['quitOnClose', 'startAtLogin', 'dialLinksAtOnce', 'ringDuringCall', 'globalShortcuts'] as const) {
    if (typeof stored[flag] === 'boolean') merged[flag] = stored[flag];
  }
  if (typeof stored.missedSeenAt === 'number' && stored.missedSeenAt >= 0) merged.missedSeenAt = stored.missedSeenAt;
  if (isLanguageSetting(stored.language)) merged.language = stored.language;
  return merged;
}

// The update feed and channel (`updates.json` in the data directory), kept apart from the account
// settings and the desk preferences. Saves run one after another and are atomic; a file that does
// not read is kept aside and updates stay off, so a damaged file neither stops the softphone nor
// sends it to a feed nobody chose.
import { join } from 'node:path';
import { z } from 'zod';
import { createLogger, type Logger } from '../../shared/log';
import { text } from '../../shared/i18n/text';
import { errorText, errText, ok, type Result } from '../../shared/result';
import { DEFAULT_UPDATE_SETTINGS, updateSettingsSchema, type UpdateSettings } from '../../shared/updates';
import { issueEnglish, parseWith } from '../../shared/validation';
import { readJsonFile, setAsideCorruptFile, writeJsonFileAtomic } from './json-file';

export const UPDATE_SETTINGS_FILE = 'updates.json';

const fileSchema = z.object({ version: z.literal(1), settings: updateSettingsSchema });

export class UpdateSettingsStore {
  private readonly path: string;
  private readonly log: Logger;
  private current: UpdateSettings = { ...DEFAULT_UPDATE_SETTINGS };
  private writing: Promise<unknown> = Promise.resolve();

  constructor(options: { dataDir: string; logger?: Logger }) {
    this.path = join(options.dataDir, UPDATE_SETTINGS_FILE);
    this.log = options.logger ?? createLogger('updates');
  }

  async load(): Promise<UpdateSettings> {
    const read = await readJsonFile(this.path).catch((e: unknown) => ({ kind: 'unparsable' as const, reason: errorText(e) }));
    if (read.kind === 'missing') return this.get();
    const parsed = read.kind === 'json' ? fileSchema.safeParse(read.value) : undefined;
    if (parsed?.success) {
      this.current = parsed.data.settings;
      return this.get();
    }
    const keptAs = await setAsideCorruptFile(this.path).catch(() => undefined);
    this.log.warn('the update settings could not be read; kept aside, updates are off', {
      keptAs,
      problem: read.kind === 'unparsable' ? read.reason : (parsed?.error.issues[0] === undefined ? 'unexpected shape' : issueEnglish(parsed.error.issues[0])),
    });
    return this.get();
  }

  get(): UpdateSettings {
    return { ...this.current };
  }

  /** Checks and saves; a refusal names the field (`feedUrl`, `channel`) and the rule. */
  save(input: unknown): Promise<Result<UpdateSettings>> {
    const run = this.writing.then(async (): Promise<Result<UpdateSettings>> => {
      const parsed = parseWith(updateSettingsSchema, input);
      if (!parsed.ok) return parsed;
      try {
        await writeJsonFileAtomic(this.path, { version: 1, settings: parsed.value });
      } catch (e) {
        this.log.error('the update settings could not be saved', { error: e });
        return errText('internal', text('service.updateSettingsNotSaved', { reason: errorText(e) }));
      }
      this.current = parsed.value;
      return ok(this.get());
    });
    this.writing = run;
    return run;
  }
}

// Settings → the service's own recording and transcription of calls (shared/service-capture.ts), in
// `<dataDir>/service-capture.json` beside the account's and the network's files. Read once at start
// and kept in memory: accept and initiate read it on the path a ringing customer waits on, so no
// file is read there. A file that does not parse is kept aside and nothing is asked of the service.
import { join } from 'node:path';
import { z } from 'zod';
import { createLogger, type Logger } from '../../shared/log';
import { ok, type Result } from '../../shared/result';
import { DEFAULT_SERVICE_CAPTURE, serviceCaptureSettingsSchema, type ServiceCaptureSettings } from '../../shared/service-capture';
import { parseWith } from '../../shared/validation';
import { readJsonFile, setAsideCorruptFile, writeJsonFileAtomic } from './json-file';

export const SERVICE_CAPTURE_FILE = 'service-capture.json';

/** As the command carries it: a refusal names `serviceCapture.purpose` and so on. */
const saveSchema = z.strictObject({ serviceCapture: serviceCaptureSettingsSchema });

export class ServiceCaptureStore {
  private readonly path: string;
  private readonly log: Logger;
  private settings: ServiceCaptureSettings = { ...DEFAULT_SERVICE_CAPTURE };
  /** Saves one after another: the file always holds the last one. */
  private writing: Promise<unknown> = Promise.resolve();

  constructor(options: { dataDir: string; logger?: Logger }) {
    this.path = join(options.dataDir, SERVICE_CAPTURE_FILE);
    this.log = options.logger ?? createLogger('service-capture');
  }

  async load(): Promise<ServiceCaptureSettings> {
    const read = await readJsonFile(this.path);
    if (read.kind === 'missing') return this.current();
    if (read.kind === 'json') {
      const parsed = parseWith(serviceCaptureSettingsSchema, read.value);
      if (parsed.ok) {
        this.settings = parsed.value;
        return this.current();
      }
      this.log.warn('service capture settings file invalid', { field: parsed.error.field, reason: parsed.error.message });
    }
    const aside = await setAsideCorruptFile(this.path);
    this.log.warn('service capture settings unreadable; kept aside, the service is asked for nothing', { keptAs: aside });
    this.settings = { ...DEFAULT_SERVICE_CAPTURE };
    return this.current();
  }

  /** The settings in force (the defaults until a load or a save). */
  current(): ServiceCaptureSettings {
    return { ...this.settings };
  }

  /** Validates, then stores; the next accept or initiate carries them. */
  async save(input: ServiceCaptureSettings): Promise<Result<ServiceCaptureSettings>> {
    const parsed = parseWith(saveSchema, { serviceCapture: input });
    if (!parsed.ok) return parsed;
    const next = parsed.value.serviceCapture;
    const write = this.writing.then(() => writeJsonFileAtomic(this.path, next));
    this.writing = write.catch(() => undefined);
    await write;
    this.settings = next;
    this.log.info('service capture settings saved', { record: next.record, transcribe: next.transcribe, language: next.language });
    return ok(this.current());
  }
}

// Support's view of the app: the last calls' quality samples and SDP summaries
// (`<dataDir>/call-diagnostics.json`), and "Export diagnostics", one JSON file with those, the
// recent logs, versions, the OS, the settings without secrets and the relay connection history.
// Nothing in it may be a key, a token, an ICE password or a full phone number: the logs are
// redacted as they are written (shared/log.ts) and scrubbed again here, the rest is built from
// fields that cannot hold one.
import { arch, platform, release } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import type { ConnectionState } from '../../shared/api';
import { CALL_DIAGNOSTICS_KEPT, callQualityReportSchema, windowCallTimingsSchema, type CallDiagnostics, type CallQualityReport, type MainCallTimings } from '../../shared/diagnostics';
import { createLogger, scrubText, shortenPhone, type Logger } from '../../shared/log';
import { iceUrlKind } from '../../shared/ice-servers';
import type { PublicSettings } from '../../shared/settings';
import { CoalescingWriter, readJsonFile, writeJsonFileAtomic } from './json-file';

const FILE = 'call-diagnostics.json';
/** The logs an export carries: the recent ones, enough for a day of calls, small enough to mail. */
export const EXPORT_LOG_BYTES = 2 * 1024 * 1024;
/** Relay connection changes kept for the export. */
const CONNECTION_HISTORY_KEPT = 100;

const MAIN_MOMENTS = ['commandAt', 'claimSentAt', 'claimDoneAt', 'gatewaySentAt', 'gatewayDoneAt'] as const satisfies readonly (keyof MainCallTimings)[];

const storedSchema = z.object({
  version: z.literal(1),
  calls: z.array(
    callQualityReportSchema.extend({
      timings: z
        .object({ ...windowCallTimingsSchema.shape, ...Object.fromEntries(MAIN_MOMENTS.map((m) => [m, z.number().finite().positive().optional()])) })
        .strict()
        .optional(),
      callId: z.string().max(200).optional(),
      direction: z.enum(['incoming', 'outgoing']).optional(),
      at: z.number(),
    }),
  ),
});

export class CallDiagnosticsStore {
  private calls: CallDiagnostics[] = [];
  private readonly path: string;
  private readonly writer: CoalescingWriter;
  private readonly log: Logger;

  private constructor(dataDir: string, logger: Logger | undefined) {
    this.path = join(dataDir, FILE);
    this.log = logger ?? createLogger('diagnostics');
    this.writer = new CoalescingWriter(
      () => writeJsonFileAtomic(this.path, { version: 1, calls: this.calls }),
      (e) => this.log.error('could not save the call diagnostics', { error: e }),
    );
  }

  static async open(options: { dataDir: string; logger?: Logger }): Promise<CallDiagnosticsStore> {
    const store = new CallDiagnosticsStore(options.dataDir, options.logger);
    const read = await readJsonFile(store.path);
    if (read.kind === 'json') {
      const parsed = storedSchema.safeParse(read.value);
      if (parsed.success) store.calls = parsed.data.calls.slice(-CALL_DIAGNOSTICS_KEPT) as CallDiagnostics[];
      else store.log.warn('call diagnostics file invalid: starting empty');
    }
    return store;
  }

  /** A call's report from the window, with what the main process knows of it (its id, direction, its own set-up moments). */
  record(report: CallQualityReport, call: { callId?: string; direction?: 'incoming' | 'outgoing'; timings?: MainCallTimings }, at: number): void {
    const timings = { ...report.timings, ...call.timings };
    const entry: CallDiagnostics = {
      ...report,
      at,
      ...(Object.keys(timings).length > 0 ? { timings } : {}),
      ...(call.callId !== undefined ? { callId: call.callId } : {}),
      ...(call.direction ? { direction: call.direction } : {}),
    };
    this.calls = [...this.calls.filter((c) => c.localId !== report.localId), entry].slice(-CALL_DIAGNOSTICS_KEPT);
    this.writer.request();
  }

  recent(): CallDiagnostics[] {
    return [...this.calls];
  }

  flush(): Promise<void> {
    return this.writer.flush();
  }
}

/** The relay connection's changes, newest last, for the export. */
export class ConnectionHistory {
  private readonly entries: ConnectionState[] = [];

  note(state: ConnectionState): void {
    const last = this.entries.at(-1);
    if (last && last.status === state.status && ('lastError' in last ? last.lastError : undefined) === ('lastError' in state ? state.lastError : undefined)) return;
    this.entries.push(state);
    if (this.entries.length > CONNECTION_HISTORY_KEPT) this.entries.shift();
  }

  /** The English `lastError` only: its code and values are for a window, the export is read as it is. */
  list(): ConnectionState[] {
    return this.entries.map((e) => {
      if (e.status !== 'reconnecting') return { ...e };
      const { lastErrorText: _forWindows, ...rest } = e;
      return { ...rest, lastError: scrubText(e.lastError) };
    });
  }
}

export interface DiagnosticsSources {
  appVersion: string;
  settings: PublicSettings;
  calls: CallDiagnostics[];
  connections: ConnectionState[];
  logs: string | undefined;
  window?: { userAgent: string; language: string; hostKind: 'electron' | 'browser' };
  now: number;
}

/** The export file's content (JSON, pretty), and a name for it with the date. */
export function buildDiagnostics(sources: DiagnosticsSources): { fileName: string; content: string } {
  const { settings } = sources;
  const file = {
    kind: 'softphone-diagnostics',
    version: 1,
    createdAt: new Date(sources.now).toISOString(),
    app: { version: sources.appVersion, node: process.versions.node, electron: process.versions.electron ?? null, chrome: process.versions.chrome ?? null },
    os: { platform: platform(), release: release(), arch: arch() },
    window: sources.window ?? null,
    settings: {
      mode: settings.mode,
      gatewayUrl: settings.gatewayUrl !== undefined ? withoutSecrets(settings.gatewayUrl) : null,
      productSegment: settings.productSegment,
      relayUrl: settings.relayUrl !== undefined ? withoutSecrets(settings.relayUrl) : null,
      defaultCountry: settings.defaultCountry ?? null,
      hasApiKey: settings.hasApiKey,
      hasAgentToken: settings.hasAgentToken,
      secretStorage: settings.secretStorage,
      network: {
        servers: settings.network.servers.map(withoutSecrets),
        hasTurnUsername: settings.network.turnUsername !== undefined,
        hasTurnPassword: settings.network.hasTurnPassword,
        relayOnly: settings.network.relayOnly,
        fromCommandLine: settings.network.fromCommandLine,
        relayTurn: settings.network.relayTurn,
      },
      // What accept and initiate ask of the service; the purpose is the business's words, not support's.
      serviceCapture: { record: settings.serviceCapture.record, transcribe: settings.serviceCapture.transcribe, language: settings.serviceCapture.language },
    },
    relayConnection: sources.connections,
    calls: sources.calls.map((c) => ({ ...c, localId: shortenIds(c.localId), ...(c.callId !== undefined ? { callId: shortenIds(c.callId) } : {}) })),
    logs: (sources.logs ?? '').split('\n').filter((line) => line !== '').map((line) => shortenDigitRuns(scrubText(line))),
  };
  const stamp = new Date(sources.now).toISOString().replace(/[:.]/g, '-');
  return { fileName: `softphone-diagnostics-${stamp}.json`, content: JSON.stringify(file, null, 2) };
}

/** A URL as support may see it: no user name, password, query or fragment (a STUN/TURN URL, checked to hold none, as it is). */
function withoutSecrets(url: string): string {
  if (iceUrlKind(url) !== undefined) return url;
  if (!URL.canParse(url)) return scrubText(url);
  if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(url)) return url.replace(/\?.*$/, '');
  const u = new URL(url);
  u.username = '';
  u.password = '';
  u.search = '';
  u.hash = '';
  return u.toString();
}

/**
 * A number written without "+" (a wa_id, a gateway body quoted in a log line) is a run of 10 to 15
 * digits: shortened in the export, like the numbers the loggers know by their field's name.
 */
function shortenDigitRuns(text: string): string {
  return text.replace(/(?<![\d.])\d{10,15}(?![\d.])/g, (digits) => shortenPhone(digits));
}

/** Call ids can carry the customer's number (wacid.<digits>…): long digit runs are shortened. */
function shortenIds(id: string): string {
  return id.replace(/\d{7,}/g, (digits) => shortenPhone(digits));
}

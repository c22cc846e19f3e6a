// Diagnostics: a call's quality (to its history entry and to call-diagnostics.json), "Export
// diagnostics", the window's log records, and "Test my setup"'s relay check.
import type { RelayCheck } from '../../../shared/api';
import { createLogger, type Logger } from '../../../shared/log';
import { english, text } from '../../../shared/i18n/text';
import { ok, type Result } from '../../../shared/result';
import { buildDiagnostics, EXPORT_LOG_BYTES, type CallDiagnosticsStore, type ConnectionHistory } from '../diagnostics';
import type { HistoryStore } from '../history-store';
import type { FileLogging } from '../log-files';
import type { CommandHandlers } from './handlers';
import type { ModeMachine } from './mode';
import type { SettingsView } from './settings-commands';

export interface DiagnosticsCommandsOptions {
  mode: ModeMachine;
  history: HistoryStore;
  diagnostics: CallDiagnosticsStore;
  connections: ConnectionHistory;
  settings: SettingsView;
  logFiles: FileLogging | undefined;
  appVersion: string | undefined;
  log: Logger;
  now: () => number;
}

export function diagnosticsCommands(o: DiagnosticsCommandsOptions) {
  const windowLog = createLogger('window');
  return {
    reportQuality: async (report) => {
      const coordinator = o.mode.current()?.coordinator;
      const call = coordinator?.call(report.localId);
      o.history.attachQuality(report.localId, report.summary);
      const known = { ...(call?.callId !== undefined ? { callId: call.callId } : {}), ...(call ? { direction: call.direction } : {}) };
      o.diagnostics.record(report, { ...known, ...(coordinator ? { timings: coordinator.timingsOf(report.localId) } : {}) }, o.now());
      return ok(null);
    },
    exportDiagnostics: async ({ window }) => {
      const logs = await o.logFiles?.recentLines(EXPORT_LOG_BYTES).catch((e: unknown) => {
        o.log.warn('the log files could not be read for the export', { error: e });
        return undefined;
      });
      const file = buildDiagnostics({
        appVersion: o.appVersion ?? 'unknown',
        settings: await o.settings.current(),
        calls: o.diagnostics.recent(),
        connections: o.connections.list(),
        logs,
        ...(window ? { window } : {}),
        now: o.now(),
      });
      o.log.info('diagnostics exported', { bytes: file.content.length });
      return ok(file);
    },
    /** The window's records join main's log (files included), redacted once more on the way. */
    writeLogs: async ({ records }) => {
      for (const { level, logger, msg, t, fields } of records) windowLog[level](msg, { ...fields, source: logger, at: t });
      return ok(null);
    },
    checkRelay: async (): Promise<Result<RelayCheck>> => {
      const runtime = o.mode.current();
      if (!runtime) {
        const problem = text('service.noAccount');
        return ok({ reachable: false, problem: english(problem), problemText: problem, relayTurn: 'unknown' });
      }
      const started = performance.now();
      const me = await runtime.relay.me();
      const roundTripMs = Math.round(performance.now() - started);
      await runtime.turn.current();
      if (me.ok) return ok({ reachable: true, roundTripMs, relayTurn: runtime.turn.state });
      return ok({ reachable: false, problem: me.error.message, ...(me.error.text !== undefined ? { problemText: me.error.text } : {}), relayTurn: runtime.turn.state });
    },
  } satisfies Partial<CommandHandlers>;
}

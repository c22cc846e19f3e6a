// The diagnostics domain (Settings → Diagnostics): "Export diagnostics", the support file the main
// process puts together (electron/core/diagnostics.ts), saved through the browser's own download;
// and "Test my setup" (setup-check.ts) on the devices the agent chose in Audio and the ICE servers
// calls use. Holds no DOM object itself: the file saver, the microphone and the candidate gathering
// are handed in, so it runs under test with fakes.
import type { SoftphoneApi } from '../../shared/api';
import type { IceConfig } from '../../shared/ice-servers';
import { errorText, type Result } from '../../shared/result';
import { errorMessage } from '../error-texts';
import { i18n } from '../i18n/i18n';
import type { SoundCheck } from '../sound/device-check';
import type { MicrophoneReading } from '../sound/microphone-level';
import { words, type SettingsText, type SettingsWords } from '../store/settings-form';
import { ROLE_KIND, deviceIdOf, systemDefaultLabel, type AudioDevices } from '../webrtc/audio-devices';
import type { GatherOptions, GatheredCandidate, ProbeConfig } from '../webrtc/candidate-probe';
import type { RingerSink } from './device-actions';
import { runSetupCheck, type AudioOutputRole, type SetupCheckParts, type SetupCheckResult, type SetupCheckTimings, type SetupReport } from './setup-check';

/** A failure's words are worded when shown (store/settings-form.ts settingsText), as the setup report's. */
export type ExportStatus = { kind: 'idle' } | { kind: 'exporting' } | { kind: 'saved'; fileName: string } | { kind: 'failed'; text: SettingsText };

export type SetupCheckView = { kind: 'idle' } | { kind: 'running'; results: readonly SetupCheckResult[] } | { kind: 'done'; report: SetupReport };

export interface DiagnosticsView {
  exportStatus: ExportStatus;
  setup: SetupCheckView;
}

export interface DiagnosticsActionsDeps {
  api: Pick<SoftphoneApi, 'exportDiagnostics' | 'checkRelay' | 'getIceConfig'>;
  hostKind: 'electron' | 'browser';
  /** What calls are built with (webrtc/ice-config.ts, its cache and renewal); main is asked directly without it. */
  iceConfig?: (() => Promise<Result<IceConfig>>) | undefined;
  /** The agent's choices in Audio; without devices the checks use the system defaults. */
  devices?: Pick<AudioDevices, 'resolve' | 'devices'> | undefined;
  soundCheck?: Pick<SoundCheck, 'playTone'> | undefined;
  ringer?: Pick<RingerSink, 'playTest'> | undefined;
  measureMicrophone?: ((deviceId: string, ms: number, signal: AbortSignal) => Promise<MicrophoneReading>) | undefined;
  gather?: ((config: ProbeConfig, options: GatherOptions) => Promise<GatheredCandidate[]>) | undefined;
  /** Hands the file to the browser's downloads; throws when it cannot. */
  saveFile?: ((fileName: string, content: string) => void | Promise<void>) | undefined;
  /** What only the window knows, for the export. */
  windowInfo?: (() => { userAgent: string; language: string }) | undefined;
  timings?: Partial<SetupCheckTimings> | undefined;
}

/** The export command's bounds (shared/api.ts): longer values are cut rather than refused. */
const USER_AGENT_MAX = 512;
const LANGUAGE_MAX = 35;
const FALLBACK_FILE_NAME = 'softphone-diagnostics.json';

/** The name main gave, if it is a plain file name; the download must not be told a path. */
function fileNameOf(name: string): string {
  return /^[A-Za-z0-9._-]{1,120}\.json$/.test(name) ? name : FALLBACK_FILE_NAME;
}

/** A message set inside another sentence loses its full stop (a danda in Hindi). */
const withoutFullStop = (text: string): string => text.replace(/[.।]$/, '');

export class DiagnosticsActions {
  private readonly deps: DiagnosticsActionsDeps;
  private current: DiagnosticsView = { exportStatus: { kind: 'idle' }, setup: { kind: 'idle' } };
  private readonly listeners = new Set<() => void>();

  constructor(deps: DiagnosticsActionsDeps) {
    this.deps = deps;
  }

  /** For useSyncExternalStore: a new object after every change. */
  readonly view = (): DiagnosticsView => this.current;

  readonly subscribe = (listener: () => void): (() => void) => {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  };

  private update(patch: Partial<DiagnosticsView>): void {
    this.current = { ...this.current, ...patch };
    for (const listener of [...this.listeners]) listener();
  }

  /** "Export diagnostics": main builds the file (without secrets or full numbers), the browser saves it. */
  async exportDiagnostics(): Promise<void> {
    if (this.current.exportStatus.kind === 'exporting') return;
    this.update({ exportStatus: { kind: 'exporting' } });
    const info = this.deps.windowInfo?.();
    const window = info ? { userAgent: info.userAgent.slice(0, USER_AGENT_MAX), language: info.language.slice(0, LANGUAGE_MAX), hostKind: this.deps.hostKind } : undefined;
    const answer = await this.deps.api.exportDiagnostics(window ? { window } : {});
    if (!answer.ok) {
      this.update({ exportStatus: { kind: 'failed', text: words('diagnostics.notBuilt', { reason: withoutFullStop(errorMessage(answer.error)) }) } });
      return;
    }
    const save = this.deps.saveFile;
    if (!save) {
      this.update({ exportStatus: { kind: 'failed', text: words('diagnostics.cannotSave') } });
      return;
    }
    const fileName = fileNameOf(answer.value.fileName);
    try {
      await save(fileName, answer.value.content);
    } catch (e) {
      this.update({ exportStatus: { kind: 'failed', text: words('diagnostics.notSaved', { fileName, reason: errorText(e) }) } });
      return;
    }
    this.update({ exportStatus: { kind: 'saved', fileName } });
  }

  /** "Test my setup": every check at once, each line shown as it is known, then the verdict. */
  async testSetup(): Promise<SetupReport | undefined> {
    if (this.current.setup.kind === 'running') return undefined;
    this.update({ setup: { kind: 'running', results: [] } });
    const report = await runSetupCheck(this.parts(), {
      ...(this.deps.timings ? { timings: this.deps.timings } : {}),
      onResult: (result) => {
        const setup = this.current.setup;
        if (setup.kind === 'running') this.update({ setup: { kind: 'running', results: [...setup.results, result] } });
      },
    });
    this.update({ setup: { kind: 'done', report } });
    return report;
  }

  private parts(): SetupCheckParts {
    const { api, devices, soundCheck, ringer, measureMicrophone, gather } = this.deps;
    const sinkOf = (role: 'microphone' | AudioOutputRole): string => (devices ? deviceIdOf(devices.resolve(role)) : '');
    const ringerTest = ringer?.playTest?.bind(ringer);
    return {
      deviceNames: () => ({ microphone: this.deviceName('microphone'), speaker: this.deviceName('speaker'), ringer: this.deviceName('ringer') }),
      ...(measureMicrophone ? { measureMicrophone: (ms: number, signal: AbortSignal) => measureMicrophone(sinkOf('microphone'), ms, signal) } : {}),
      ...(soundCheck || ringerTest
        ? {
            // The ringer plays through the ringtone itself where it can, as "Test ringer" does: the path a real ring takes.
            playTone: (role: AudioOutputRole) => {
              if (role === 'ringer' && ringerTest) return ringerTest();
              if (!soundCheck) return Promise.reject(new Error(i18n.t(`soundCheck.${role}.noCheck`, { ns: 'settings' })));
              return soundCheck.playTone(sinkOf(role));
            },
          }
        : {}),
      checkRelay: () => api.checkRelay({}),
      iceConfig: this.deps.iceConfig ?? (() => api.getIceConfig({})),
      ...(gather ? { gather } : {}),
    };
  }

  /** A chosen device as the agent knows it, or the system default with what it is. */
  private deviceName(role: 'microphone' | AudioOutputRole): SettingsWords {
    const devices = this.deps.devices;
    if (!devices) return words('audio.systemDefault');
    const defaultLabel = devices.devices()[ROLE_KIND[role]].defaultLabel;
    // A default the system does not name reads as the system default, worded when shown.
    const systemDefault = defaultLabel === systemDefaultLabel() ? words('audio.systemDefault') : words('setup.device.systemDefaultNamed', { device: defaultLabel });
    const resolution = devices.resolve(role);
    switch (resolution.via) {
      case 'id':
      case 'label':
        return resolution.device.label;
      case 'default':
        return systemDefault;
      case 'missing':
        return words('setup.device.defaultInstead', { fallback: systemDefault, device: resolution.choice.label });
    }
  }
}

/** Saves a text file through the browser's downloads: a Blob behind an <a download>, in Chromium and in Electron alike. */
export function browserFileSaver(doc: Document): (fileName: string, content: string) => void {
  return (fileName, content) => {
    const url = URL.createObjectURL(new Blob([content], { type: 'application/json' }));
    const link = doc.createElement('a');
    link.href = url;
    link.download = fileName;
    link.rel = 'noopener';
    link.hidden = true;
    doc.body.append(link);
    try {
      link.click();
    } finally {
      link.remove();
      // Revoked later, not at once: the download reads the Blob after click() returns.
      setTimeout(() => URL.revokeObjectURL(url), 60_000);
    }
  };
}

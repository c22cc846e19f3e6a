// "Test my setup" (Settings → Diagnostics): whether this desk can take calls, found out in a few
// seconds: the microphone's level, a tone on the speaker and on the ringer, the relay, the TURN
// server, and whether UDP gets out. Each check gives one plain-language line, and the lines one
// verdict. The checks run in four lanes at once (the microphone, the two tones, the relay, the
// network), each step with its own timeout, so that the whole ends well under 10 s. The browser
// parts come in as `SetupCheckParts` (sound/microphone-level.ts, webrtc/candidate-probe.ts), so the
// rules here run under test without a browser.
import type { RelayCheck } from '../../shared/api';
import { iceUrlKind, type IceConfig } from '../../shared/ice-servers';
import { errorText, type Result } from '../../shared/result';
import { errorMessage } from '../error-texts';
import { sayEither } from '../i18n/texts';
import { soundCheckFailure } from '../sound/device-check';
import { settingsText, words, type SettingsText, type SettingsWords } from '../store/settings-form';
import type { MicrophoneReading } from '../sound/microphone-level';
import type { GatheredCandidate, GatherOptions, ProbeConfig, RelayProtocol } from '../webrtc/candidate-probe';
import { deviceProblem } from '../webrtc/microphone';

export const SETUP_CHECK_IDS = ['microphone', 'speaker', 'ringer', 'relay', 'turn', 'udp'] as const;
export type SetupCheckId = (typeof SETUP_CHECK_IDS)[number];

/**
 * How a line counts in the verdict. `played`: a tone the app cannot hear, the agent judges it;
 * `info`: nothing wrong, something to know; `warning`: calls may fail; `blocking`: calls will not work.
 */
export type SetupCheckResult =
  | { id: SetupCheckId; status: 'passed' | 'played' | 'info'; text: SettingsText }
  /** `problem` is the line's reason in the verdict ("the microphone is silent"). */
  | { id: SetupCheckId; status: 'warning' | 'blocking'; text: SettingsText; problem: SettingsText };
export type SetupCheckStatus = SetupCheckResult['status'];

export type SetupVerdict = { kind: 'ready' } | { kind: 'may_fail' | 'will_fail'; problems: SettingsText[] };

export interface SetupReport {
  /** In SETUP_CHECK_IDS order. */
  results: SetupCheckResult[];
  verdict: SetupVerdict;
  elapsedMs: number;
}

export type AudioOutputRole = 'speaker' | 'ringer';

/** What the checks need of the window; a part that is missing gives a line saying it could not run. */
export interface SetupCheckParts {
  /** The chosen devices as the agent knows them ("Jabra Evolve 40", "the system default (Speakers)"). */
  deviceNames(): Record<'microphone' | AudioOutputRole, SettingsWords>;
  /** The chosen microphone's peak level over `ms`, audio processing off; releases it when done or aborted. */
  measureMicrophone?(ms: number, signal: AbortSignal): Promise<MicrophoneReading>;
  /** The output's own test tone on the chosen device; resolves once it has played. */
  playTone?(output: AudioOutputRole): Promise<void>;
  checkRelay(): Promise<Result<RelayCheck>>;
  /** The ICE servers and policy calls use. */
  iceConfig(): Promise<Result<IceConfig>>;
  gather?(config: ProbeConfig, options: GatherOptions): Promise<GatheredCandidate[]>;
}

export interface SetupCheckTimings {
  /** How long the microphone's level is measured. */
  microphoneMs: number;
  /** How long opening the microphone may take (a permission prompt may hold it). */
  microphoneOpenMs: number;
  /** Each output's tone, start to end. */
  toneMs: number;
  relayMs: number;
  iceConfigMs: number;
  /** Each candidate gathering. */
  gatherMs: number;
}

/**
 * At worst (longestRunMs) 8 s: the network lane, the ICE configuration then the gatherings, 2 + 5 s
 * (+ 1 s grace); beside it the microphone (2.5 + 1.5 s), the two tones one after the other
 * (3 + 3 s) and the relay (4 s).
 */
export const SETUP_CHECK_TIMINGS: SetupCheckTimings = {
  microphoneMs: 1500,
  microphoneOpenMs: 2500,
  toneMs: 3000,
  relayMs: 4000,
  iceConfigMs: 2000,
  gatherMs: 5000,
};

/** A gathering caps itself; its step's timeout is a backstop this much later. */
const GATHER_GRACE_MS = 1000;

/** The longest a run can take with these timings, every step waiting for its timeout. */
export function longestRunMs(t: SetupCheckTimings): number {
  return Math.max(t.microphoneOpenMs + t.microphoneMs, 2 * t.toneMs, t.relayMs, t.iceConfigMs + t.gatherMs + GATHER_GRACE_MS);
}

/** Below this peak (−60 dBFS) a microphone delivers nothing but digital silence, whatever the room. */
export const SILENT_PEAK = 0.001;

/** How a step that has its own timeout ended. */
export type StepOutcome<T> = { kind: 'done'; value: T } | { kind: 'failed'; error: unknown } | { kind: 'timed_out'; ms: number };

/** Runs `run` with a signal that aborts after `ms`, so that the part releases what it opened. */
export async function within<T>(ms: number, run: (signal: AbortSignal) => Promise<T>): Promise<StepOutcome<T>> {
  const controller = new AbortController();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<StepOutcome<T>>((resolve) => {
    timer = setTimeout(() => {
      // The step ends as timed_out; this reason only reaches the part, never the screen.
      controller.abort(new Error(`no answer within ${ms} ms`));
      resolve({ kind: 'timed_out', ms });
    }, ms);
  });
  const work = Promise.resolve()
    .then(() => run(controller.signal))
    .then(
      (value): StepOutcome<T> => ({ kind: 'done', value }),
      (error: unknown): StepOutcome<T> => ({ kind: 'failed', error }),
    );
  try {
    return await Promise.race([work, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

const seconds = (ms: number): number => ms / 1000;

// ---- the lines ----

export function microphoneLine(outcome: StepOutcome<MicrophoneReading> | undefined, device: SettingsWords): SetupCheckResult {
  const id = 'microphone';
  const noAccess = (text: SettingsText): SetupCheckResult => ({ id, status: 'blocking', text, problem: words('setup.microphone.problemNoAccess') });
  if (!outcome) return noAccess(words('setup.microphone.noDevices'));
  switch (outcome.kind) {
    case 'timed_out':
      return noAccess(words('setup.microphone.timedOut', { device, seconds: seconds(outcome.ms) }));
    case 'failed':
      return noAccess(microphoneRefusal(outcome.error, device));
    case 'done': {
      const reading = outcome.value;
      const name = reading.label !== '' ? reading.label : device;
      if (reading.muted) return { id, status: 'warning', text: words('setup.microphone.muted', { device: name }), problem: words('setup.microphone.problemMuted') };
      if (reading.peak < SILENT_PEAK) return { id, status: 'warning', text: words('setup.microphone.silent', { device: name }), problem: words('setup.microphone.problemSilent') };
      return { id, status: 'passed', text: words('setup.microphone.works', { percent: Math.max(1, Math.round(reading.peak * 100)), device: name }) };
    }
  }
}

/** Why the microphone could not be opened, in the check's words. */
function microphoneRefusal(error: unknown, device: SettingsWords): SettingsText {
  const { kind, detail } = deviceProblem(error);
  switch (kind) {
    case 'denied':
      return words('setup.microphone.refused');
    case 'missing':
      return words('setup.microphone.notConnected', { device });
    case 'busy':
      return words('setup.microphone.busy', { device });
    case 'failed':
      return words('setup.microphone.failed', { device, detail });
  }
}

export function toneLine(role: AudioOutputRole, outcome: StepOutcome<void> | undefined, device: SettingsWords): SetupCheckResult {
  const id = role;
  if (!outcome) return { id, status: 'info', text: words(`setup.${role}.cannotPlay`) };
  switch (outcome.kind) {
    case 'done':
      // The app cannot hear its own output: the agent is the judge.
      return { id, status: 'played', text: words(`setup.${role}.played`, { device }) };
    case 'timed_out':
      return { id, status: 'warning', text: words(`setup.${role}.timedOut`, { seconds: seconds(outcome.ms), device }), problem: words(`setup.${role}.problem`) };
    case 'failed': {
      // The words of "Test speaker" / "Test ringer" (sound/device-check.ts), as a line.
      const { problem, detail } = soundCheckFailure(outcome.error);
      return { id, status: 'warning', text: words(`soundCheck.${role}.${problem}`, { detail }), problem: words(`setup.${role}.problem`) };
    }
  }
}

export function relayLine(outcome: StepOutcome<Result<RelayCheck>>): SetupCheckResult {
  const id = 'relay';
  const unchecked = (reason: string): SetupCheckResult => ({ id, status: 'warning', text: words('setup.relay.unchecked', { reason }), problem: words('setup.relay.problemUnchecked') });
  const notReachable = words('setup.relay.problemNotReachable');
  switch (outcome.kind) {
    case 'timed_out':
      return { id, status: 'blocking', text: words('setup.relay.timedOut', { seconds: seconds(outcome.ms) }), problem: notReachable };
    case 'failed':
      return unchecked(errorText(outcome.error));
    case 'done': {
      const answer = outcome.value;
      if (!answer.ok) return unchecked(errorMessage(answer.error));
      const check = answer.value;
      if (!check.reachable) {
        // The main process's own words for what went wrong, when it has them.
        const text = check.problem !== undefined ? words('setup.relay.notReachable', { reason: sayEither(check.problemText, check.problem) }) : words('setup.relay.notAnswering');
        return { id, status: 'blocking', text, problem: notReachable };
      }
      const ms = check.roundTripMs;
      if (check.relayTurn === 'unreachable') {
        const text = ms !== undefined ? words('setup.relay.noTurnIn', { ms }) : words('setup.relay.noTurn');
        return { id, status: 'warning', text, problem: words('setup.relay.problemNoTurn') };
      }
      return { id, status: 'passed', text: ms !== undefined ? words('setup.relay.reachableIn', { ms }) : words('setup.relay.reachable') };
    }
  }
}

/** What the network lane found: the configuration, and each gathering (undefined: not run, as nothing could be learnt from it). */
export type NetworkFindings =
  | { kind: 'no_config'; why: SettingsWords }
  | { kind: 'no_probe' }
  | { kind: 'gathered'; config: IceConfig; relay: StepOutcome<GatheredCandidate[]> | undefined; all: StepOutcome<GatheredCandidate[]> | undefined };

interface ServerUrls {
  stun: string[];
  turn: string[];
}

export function serverUrlsOf(config: IceConfig): ServerUrls {
  const urls = config.iceServers.flatMap((s) => (typeof s.urls === 'string' ? [s.urls] : s.urls));
  return { stun: urls.filter((u) => iceUrlKind(u) === 'stun'), turn: urls.filter((u) => iceUrlKind(u) === 'turn') };
}

/** A turn: URL without ?transport=tcp is reached over UDP; a STUN server always is. */
const triesUdp = (urls: ServerUrls): boolean => urls.stun.length > 0 || urls.turn.some((u) => /^turn:/i.test(u) && !/[?&]transport=tcp\b/i.test(u));

/** Protocol names, the same in every language. */
const PROTOCOL_NAMES: Readonly<Record<RelayProtocol, string>> = { udp: 'UDP', tcp: 'TCP', tls: 'TLS' };

/** The best relay path found: UDP, then TCP, then TLS (a relay candidate whose protocol is unknown counts as found). */
function bestRelay(candidates: readonly GatheredCandidate[]): { protocol: RelayProtocol | undefined } | undefined {
  const relays = candidates.filter((c) => c.type === 'relay');
  if (relays.length === 0) return undefined;
  const order: RelayProtocol[] = ['udp', 'tcp', 'tls'];
  return { protocol: order.find((p) => relays.some((c) => c.relayProtocol === p)) };
}

const doneCandidates = (outcome: StepOutcome<GatheredCandidate[]> | undefined): GatheredCandidate[] => (outcome?.kind === 'done' ? outcome.value : []);

export function turnLine(findings: NetworkFindings): SetupCheckResult {
  const id = 'turn';
  switch (findings.kind) {
    case 'no_config':
      return { id, status: 'warning', text: words('setup.turn.unchecked', { reason: findings.why }), problem: words('setup.turn.problemConfigUnread') };
    case 'no_probe':
      return { id, status: 'info', text: words('setup.turn.noProbe') };
    case 'gathered':
      break;
  }
  const relayOnly = findings.config.iceTransportPolicy === 'relay';
  const urls = serverUrlsOf(findings.config);
  if (urls.turn.length === 0) {
    if (relayOnly) return { id, status: 'blocking', text: words('setup.turn.relayOnlyNoTurn'), problem: words('setup.turn.problemRelayOnlyNoTurn') };
    return { id, status: 'info', text: words('setup.turn.none') };
  }
  const outcome = findings.relay;
  if (outcome?.kind === 'failed') {
    return { id, status: 'warning', text: words('setup.turn.checkFailed', { detail: errorText(outcome.error) }), problem: words('setup.turn.problemUnchecked') };
  }
  const best = bestRelay(doneCandidates(outcome));
  if (best) return { id, status: 'passed', text: best.protocol ? words('setup.turn.reachableOver', { protocol: PROTOCOL_NAMES[best.protocol] }) : words('setup.turn.reachable') };
  // With "Relay only" every call needs it; otherwise calls may still go direct.
  return {
    id,
    status: relayOnly ? 'blocking' : 'warning',
    text: words('setup.turn.unreachable'),
    problem: relayOnly ? words('setup.turn.problemRelayOnlyUnreachable') : words('setup.turn.problemUnreachable'),
  };
}

export function udpLine(findings: NetworkFindings): SetupCheckResult {
  const id = 'udp';
  switch (findings.kind) {
    case 'no_config':
      return { id, status: 'info', text: words('setup.udp.configUnread') };
    case 'no_probe':
      return { id, status: 'info', text: words('setup.udp.noProbe') };
    case 'gathered':
      break;
  }
  const urls = serverUrlsOf(findings.config);
  if (urls.stun.length === 0 && urls.turn.length === 0) return { id, status: 'info', text: words('setup.udp.unknown') };
  const found = [...doneCandidates(findings.relay), ...doneCandidates(findings.all)];
  // A server-reflexive address comes from a STUN answer over UDP; so does a relay allocated over UDP.
  if (found.some((c) => c.type === 'srflx' || (c.type === 'relay' && c.relayProtocol === 'udp'))) {
    return { id, status: 'passed', text: words('setup.udp.out') };
  }
  const tcpRelay = found.some((c) => c.type === 'relay' && (c.relayProtocol === 'tcp' || c.relayProtocol === 'tls'));
  if (!triesUdp(urls)) return { id, status: 'info', text: tcpRelay ? words('setup.udp.tcpNotTried') : words('setup.udp.notTried') };
  if (tcpRelay) return { id, status: 'info', text: words('setup.udp.onlyTcp') };
  const failure = [findings.relay, findings.all].find((o) => o?.kind === 'failed');
  if (failure?.kind === 'failed' && found.length === 0) {
    return { id, status: 'info', text: words('setup.udp.failed', { detail: errorText(failure.error) }) };
  }
  // Chromium learns its public address from a TURN server only with the allocation: a TURN server
  // that refused the credentials tells nothing about UDP (the TURN line says what is wrong).
  if (urls.stun.length === 0) return { id, status: 'info', text: words('setup.udp.noStun') };
  return {
    id,
    status: 'warning',
    text: words('setup.udp.blocked'),
    problem: urls.turn.length > 0 ? words('setup.udp.problemBlocked') : words('setup.udp.problemBlockedNoTurn'),
  };
}

/** What blocks calls, else what may make them fail (each reason once), else ready. */
export function verdictOf(results: readonly SetupCheckResult[]): SetupVerdict {
  const problems = (status: 'warning' | 'blocking'): SettingsText[] => {
    const seen = new Map<string, SettingsText>();
    for (const r of results) if (r.status === status) seen.set(JSON.stringify(r.problem), r.problem);
    return [...seen.values()];
  };
  const blocking = problems('blocking');
  if (blocking.length > 0) return { kind: 'will_fail', problems: blocking };
  const warnings = problems('warning');
  if (warnings.length > 0) return { kind: 'may_fail', problems: warnings };
  return { kind: 'ready' };
}

/** The verdict as one sentence, in the UI's language now. */
export function verdictText(verdict: SetupVerdict): string {
  if (verdict.kind === 'ready') return settingsText(words('setup.verdict.ready'));
  const problems = verdict.problems.map(settingsText).join(settingsText(words('setup.verdict.separator')));
  return settingsText(words(verdict.kind === 'will_fail' ? 'setup.verdict.willFail' : 'setup.verdict.mayFail', { problems }));
}

// ---- the run ----

export interface SetupCheckOptions {
  timings?: Partial<SetupCheckTimings>;
  /** Each line as soon as it is known. */
  onResult?(result: SetupCheckResult): void;
  now?(): number;
}

/** Runs every check and resolves with the lines and the verdict; never rejects. */
export async function runSetupCheck(parts: SetupCheckParts, options: SetupCheckOptions = {}): Promise<SetupReport> {
  const t = { ...SETUP_CHECK_TIMINGS, ...options.timings };
  const now = options.now ?? (() => performance.now());
  const started = now();
  const results = new Map<SetupCheckId, SetupCheckResult>();
  const emit = (result: SetupCheckResult): void => {
    results.set(result.id, result);
    options.onResult?.(result);
  };
  let names: Record<'microphone' | AudioOutputRole, SettingsWords>;
  try {
    names = parts.deviceNames();
  } catch {
    names = { microphone: words('setup.device.microphone'), speaker: words('audio.systemDefault'), ringer: words('audio.systemDefault') };
  }

  const microphone = async (): Promise<void> => {
    const measure = parts.measureMicrophone?.bind(parts);
    const outcome = measure ? await within(t.microphoneOpenMs + t.microphoneMs, (signal) => measure(t.microphoneMs, signal)) : undefined;
    emit(microphoneLine(outcome, names.microphone));
  };
  // One after the other: two tones at once could not be told apart, on one device or two.
  const tones = async (): Promise<void> => {
    for (const role of ['speaker', 'ringer'] as const) {
      const play = parts.playTone?.bind(parts);
      const outcome = play ? await within(t.toneMs, () => play(role)) : undefined;
      emit(toneLine(role, outcome, names[role]));
    }
  };
  const relay = async (): Promise<void> => {
    emit(relayLine(await within(t.relayMs, () => parts.checkRelay())));
  };
  const network = async (): Promise<void> => {
    const findings = await networkFindings(parts, t);
    emit(turnLine(findings));
    emit(udpLine(findings));
  };

  await Promise.all([microphone(), tones(), relay(), network()]);
  const ordered = SETUP_CHECK_IDS.flatMap((id) => {
    const result = results.get(id);
    return result ? [result] : [];
  });
  return { results: ordered, verdict: verdictOf(ordered), elapsedMs: Math.round(now() - started) };
}

async function networkFindings(parts: SetupCheckParts, t: SetupCheckTimings): Promise<NetworkFindings> {
  const asked = await within(t.iceConfigMs, () => parts.iceConfig());
  if (asked.kind === 'timed_out') return { kind: 'no_config', why: words('setup.turn.configLate', { seconds: seconds(asked.ms) }) };
  if (asked.kind === 'failed') return { kind: 'no_config', why: errorText(asked.error) };
  if (!asked.value.ok) return { kind: 'no_config', why: errorMessage(asked.value.error) };
  const config = asked.value.value;
  const urls = serverUrlsOf(config);
  const gather = parts.gather?.bind(parts);
  if (urls.stun.length + urls.turn.length === 0) return { kind: 'gathered', config, relay: undefined, all: undefined };
  if (!gather) return { kind: 'no_probe' };
  const run = (policy: 'relay' | 'all', enough: (found: readonly GatheredCandidate[]) => boolean) =>
    within(t.gatherMs + GATHER_GRACE_MS, (signal) => gather({ iceServers: config.iceServers, iceTransportPolicy: policy }, { capMs: t.gatherMs, signal, enough }));
  const [relay, all] = await Promise.all([
    // "Relay only" gathers TURN candidates alone: what a call with it would have.
    urls.turn.length > 0 ? run('relay', (found) => found.some((c) => c.type === 'relay' && c.relayProtocol === 'udp')) : undefined,
    // With every candidate allowed, a STUN answer (srflx) shows UDP gets out.
    urls.stun.length + urls.turn.length > 0 ? run('all', (found) => found.some((c) => c.type === 'srflx' || (c.type === 'relay' && c.relayProtocol === 'udp'))) : undefined,
  ]);
  return { kind: 'gathered', config, relay, all };
}

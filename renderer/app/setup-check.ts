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
import { soundCheckErrorText } from '../sound/device-check';
import type { MicrophoneReading } from '../sound/microphone-level';
import type { GatheredCandidate, GatherOptions, ProbeConfig, RelayProtocol } from '../webrtc/candidate-probe';

export const SETUP_CHECK_IDS = ['microphone', 'speaker', 'ringer', 'relay', 'turn', 'udp'] as const;
export type SetupCheckId = (typeof SETUP_CHECK_IDS)[number];

/**
 * How a line counts in the verdict. `played`: a tone the app cannot hear, the agent judges it;
 * `info`: nothing wrong, something to know; `warning`: calls may fail; `blocking`: calls will not work.
 */
export type SetupCheckResult =
  | { id: SetupCheckId; status: 'passed' | 'played' | 'info'; text: string }
  /** `problem` is the line's reason in the verdict ("the microphone is silent"). */
  | { id: SetupCheckId; status: 'warning' | 'blocking'; text: string; problem: string };
export type SetupCheckStatus = SetupCheckResult['status'];

export type SetupVerdict = { kind: 'ready' | 'may_fail' | 'will_fail'; text: string };

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
  deviceNames(): Record<'microphone' | AudioOutputRole, string>;
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

export const READY_TEXT = 'Your setup is ready for calls.';

export const NO_TURN_TEXT =
  'No TURN server is configured (fine on an open network; behind a firewall that blocks UDP calls need one: Settings → Network)';
export const TURN_UNREACHABLE_TEXT = 'TURN server not reachable: check its address, username and password';
export const UDP_UNKNOWN_TEXT = 'Whether UDP gets out cannot be told without a STUN or TURN server (Settings → Network)';
export const ONLY_TCP_TEXT = 'Only TCP gets through: calls will use TURN over TCP';

/** How a step that has its own timeout ended. */
export type StepOutcome<T> = { kind: 'done'; value: T } | { kind: 'failed'; error: unknown } | { kind: 'timed_out'; ms: number };

/** Runs `run` with a signal that aborts after `ms`, so that the part releases what it opened. */
export async function within<T>(ms: number, run: (signal: AbortSignal) => Promise<T>): Promise<StepOutcome<T>> {
  const controller = new AbortController();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<StepOutcome<T>>((resolve) => {
    timer = setTimeout(() => {
      controller.abort(new Error(`no answer within ${seconds(ms)}`));
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

const seconds = (ms: number): string => `${Number((ms / 1000).toFixed(1))} s`;

const errorName = (e: unknown): string => (typeof e === 'object' && e !== null && 'name' in e ? String(e.name) : '');

// ---- the lines ----

export function microphoneLine(outcome: StepOutcome<MicrophoneReading> | undefined, device: string): SetupCheckResult {
  const id = 'microphone';
  const noAccess = (why: string): SetupCheckResult => ({ id, status: 'blocking', text: `No microphone access: ${why}`, problem: 'no microphone access' });
  if (!outcome) return noAccess('this window has no audio devices (the page must come over HTTPS or from localhost)');
  switch (outcome.kind) {
    case 'timed_out':
      return noAccess(`${device} did not answer within ${seconds(outcome.ms)} (a permission prompt may be waiting)`);
    case 'failed': {
      const name = errorName(outcome.error);
      if (name === 'NotAllowedError') return noAccess('permission to use the microphone was refused (allow it in the browser\u2019s site settings or the system\u2019s privacy settings)');
      if (name === 'NotFoundError' || name === 'OverconstrainedError') return noAccess(`${device} is not connected`);
      if (name === 'NotReadableError') return noAccess(`${device} could not be opened: another application may hold it`);
      return noAccess(`${device} could not be opened (${errorText(outcome.error)})`);
    }
    case 'done': {
      const reading = outcome.value;
      const name = reading.label !== '' ? reading.label : device;
      if (reading.muted) return { id, status: 'warning', text: `Microphone is silent: check that it is not muted (the system reports ${name} muted)`, problem: 'the microphone is muted' };
      if (reading.peak < SILENT_PEAK) return { id, status: 'warning', text: `Microphone is silent: check that it is not muted (${name})`, problem: 'the microphone is silent' };
      return { id, status: 'passed', text: `Microphone works: level peaked at ${Math.max(1, Math.round(reading.peak * 100))} % (${name})` };
    }
  }
}

export function toneLine(role: AudioOutputRole, outcome: StepOutcome<void> | undefined, device: string): SetupCheckResult {
  const id = role;
  if (!outcome) return { id, status: 'info', text: `This window cannot play a test tone on the ${role}` };
  switch (outcome.kind) {
    case 'done':
      // The app cannot hear its own output: the agent is the judge.
      return { id, status: 'played', text: `Played a tone on the ${role}, ${device}: you should have heard it` };
    case 'timed_out':
      return { id, status: 'warning', text: `The ${role} tone did not finish within ${seconds(outcome.ms)} (${device})`, problem: `the ${role} did not play` };
    case 'failed':
      return { id, status: 'warning', text: soundCheckErrorText(role, outcome.error).replace(/\.$/, ''), problem: `the ${role} did not play` };
  }
}

export function relayLine(outcome: StepOutcome<Result<RelayCheck>>): SetupCheckResult {
  const id = 'relay';
  const unchecked = (why: string): SetupCheckResult => ({ id, status: 'warning', text: `The relay could not be checked: ${why}`, problem: 'the relay could not be checked' });
  switch (outcome.kind) {
    case 'timed_out':
      return { id, status: 'blocking', text: `Relay not reachable: no answer within ${seconds(outcome.ms)}`, problem: 'the relay is not reachable, so no call reaches this desk' };
    case 'failed':
      return unchecked(errorText(outcome.error));
    case 'done': {
      const answer = outcome.value;
      if (!answer.ok) return unchecked(errorMessage(answer.error));
      const check = answer.value;
      if (!check.reachable) {
        return { id, status: 'blocking', text: `Relay not reachable: ${check.problem ?? 'it did not answer'}`, problem: 'the relay is not reachable, so no call reaches this desk' };
      }
      const rtt = check.roundTripMs !== undefined ? ` (${check.roundTripMs} ms)` : '';
      if (check.relayTurn === 'unreachable') {
        return { id, status: 'warning', text: `Relay reachable${rtt}, but its TURN credentials could not be fetched`, problem: 'the relay\u2019s TURN credentials could not be fetched' };
      }
      return { id, status: 'passed', text: `Relay reachable${rtt}` };
    }
  }
}

/** What the network lane found: the configuration, and each gathering (undefined: not run, as nothing could be learnt from it). */
export type NetworkFindings =
  | { kind: 'no_config'; why: string }
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

const PROTOCOL_WORDS: Readonly<Record<RelayProtocol, string>> = { udp: 'UDP', tcp: 'TCP', tls: 'TLS' };

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
      return { id, status: 'warning', text: `The TURN server could not be checked: ${findings.why}`, problem: 'the network settings could not be read' };
    case 'no_probe':
      return { id, status: 'info', text: 'This window cannot check the TURN server (it has no WebRTC)' };
    case 'gathered':
      break;
  }
  const relayOnly = findings.config.iceTransportPolicy === 'relay';
  const urls = serverUrlsOf(findings.config);
  if (urls.turn.length === 0) {
    if (relayOnly) {
      return { id, status: 'blocking', text: 'Relay only is on, but no TURN server is configured: calls cannot connect (Settings → Network)', problem: 'Relay only is on without a TURN server' };
    }
    return { id, status: 'info', text: NO_TURN_TEXT };
  }
  const outcome = findings.relay;
  if (outcome?.kind === 'failed') {
    return { id, status: 'warning', text: `The TURN check could not run (${errorText(outcome.error)})`, problem: 'the TURN server could not be checked' };
  }
  const best = bestRelay(doneCandidates(outcome));
  if (best) return { id, status: 'passed', text: best.protocol ? `TURN server reachable (relay over ${PROTOCOL_WORDS[best.protocol]})` : 'TURN server reachable' };
  // With "Relay only" every call needs it; otherwise calls may still go direct.
  return { id, status: relayOnly ? 'blocking' : 'warning', text: TURN_UNREACHABLE_TEXT, problem: relayOnly ? 'Relay only is on and the TURN server is not reachable' : 'the TURN server is not reachable' };
}

export function udpLine(findings: NetworkFindings): SetupCheckResult {
  const id = 'udp';
  switch (findings.kind) {
    case 'no_config':
      return { id, status: 'info', text: 'Whether UDP gets out could not be told: the network settings could not be read' };
    case 'no_probe':
      return { id, status: 'info', text: 'This window cannot tell whether UDP gets out (it has no WebRTC)' };
    case 'gathered':
      break;
  }
  const urls = serverUrlsOf(findings.config);
  if (urls.stun.length === 0 && urls.turn.length === 0) return { id, status: 'info', text: UDP_UNKNOWN_TEXT };
  const found = [...doneCandidates(findings.relay), ...doneCandidates(findings.all)];
  // A server-reflexive address comes from a STUN answer over UDP; so does a relay allocated over UDP.
  if (found.some((c) => c.type === 'srflx' || (c.type === 'relay' && c.relayProtocol === 'udp'))) {
    return { id, status: 'passed', text: 'UDP gets out: calls can take the direct, fastest path' };
  }
  const tcpRelay = found.some((c) => c.type === 'relay' && (c.relayProtocol === 'tcp' || c.relayProtocol === 'tls'));
  if (!triesUdp(urls)) {
    return tcpRelay
      ? { id, status: 'info', text: 'TCP gets through to the TURN server; UDP was not tried: no server listed is reached over UDP (add a stun: server to find out)' }
      : { id, status: 'info', text: 'UDP was not tried: no server listed is reached over UDP (add a stun: server to find out)' };
  }
  if (tcpRelay) return { id, status: 'info', text: ONLY_TCP_TEXT };
  const failure = [findings.relay, findings.all].find((o) => o?.kind === 'failed');
  if (failure?.kind === 'failed' && found.length === 0) {
    return { id, status: 'info', text: `Whether UDP gets out could not be told (${errorText(failure.error)})` };
  }
  // Chromium learns its public address from a TURN server only with the allocation: a TURN server
  // that refused the credentials tells nothing about UDP (the TURN line says what is wrong).
  if (urls.stun.length === 0) return { id, status: 'info', text: 'Whether UDP gets out could not be told: the TURN server gave no answer to learn it from (a stun: server would tell)' };
  return {
    id,
    status: 'warning',
    text: 'The STUN server did not answer over UDP: the network may block UDP (calls then need a TURN server over TCP or TLS: Settings → Network), or the server address is wrong',
    problem: urls.turn.length > 0 ? 'UDP seems blocked' : 'UDP seems blocked and no TURN server is configured',
  };
}

/** One sentence for the whole: what blocks calls, else what may make them fail, else ready. */
export function verdictOf(results: readonly SetupCheckResult[]): SetupVerdict {
  const problems = (status: 'warning' | 'blocking'): string[] => [...new Set(results.flatMap((r) => (r.status === status ? [r.problem] : [])))];
  const blocking = problems('blocking');
  if (blocking.length > 0) return { kind: 'will_fail', text: `Calls will not work: ${blocking.join('; ')}.` };
  const warnings = problems('warning');
  if (warnings.length > 0) return { kind: 'may_fail', text: `Calls may fail: ${warnings.join('; ')}.` };
  return { kind: 'ready', text: READY_TEXT };
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
  let names: Record<'microphone' | AudioOutputRole, string>;
  try {
    names = parts.deviceNames();
  } catch {
    names = { microphone: 'the microphone', speaker: 'the system default', ringer: 'the system default' };
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
  if (asked.kind === 'timed_out') return { kind: 'no_config', why: `the network settings did not come within ${seconds(asked.ms)}` };
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

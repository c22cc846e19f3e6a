// "Test my setup": each check's line in words, the verdict they make, the run (lanes in parallel,
// each step with its own timeout that aborts what it opened), and the diagnostics domain around it
// (the export saved through the browser, the devices the agent chose).
import { afterEach, describe, expect, it } from 'vitest';
import type { RelayCheck } from '../../../shared/api';
import type { IceConfig } from '../../../shared/ice-servers';
import { err, ok, type Result } from '../../../shared/result';
import { DiagnosticsActions } from '../../../renderer/app/diagnostics-actions';
import {
  SETUP_CHECK_IDS,
  SETUP_CHECK_TIMINGS,
  longestRunMs,
  microphoneLine,
  relayLine,
  runSetupCheck,
  toneLine,
  turnLine,
  udpLine,
  verdictOf,
  verdictText,
  within,
  type NetworkFindings,
  type SetupCheckParts,
  type SetupCheckResult,
  type SetupVerdict,
} from '../../../renderer/app/setup-check';
import { setUiLanguage } from '../../../renderer/i18n/i18n';
import { settingsText, words, type SettingsText } from '../../../renderer/store/settings-form';
import { AudioDevices } from '../../../renderer/webrtc/audio-devices';
import { relayProtocolOf, type GatheredCandidate, type GatherOptions, type ProbeConfig } from '../../../renderer/webrtc/candidate-probe';
import { fakeApi } from './fake-api';
import { DESK, FakeMediaDevices, deskDevices } from './fake-media-devices';

const READY_TEXT = 'Your setup is ready for calls.';
const NO_TURN_TEXT = 'No TURN server is configured (fine on an open network; behind a firewall that blocks UDP calls need one: Settings → Network)';
const TURN_UNREACHABLE_TEXT = 'TURN server not reachable: check its address, username and password';
const UDP_UNKNOWN_TEXT = 'Whether UDP gets out cannot be told without a STUN or TURN server (Settings → Network)';
const ONLY_TCP_TEXT = 'Only TCP gets through: calls will use TURN over TCP';

/** A line as the agent reads it (in English, the default language). */
const said = (r: SetupCheckResult) => ({ ...r, text: settingsText(r.text), ...(r.status === 'warning' || r.status === 'blocking' ? { problem: settingsText(r.problem) } : {}) });
const verdict = (v: SetupVerdict) => ({ kind: v.kind, text: verdictText(v) });
const lineText = (r: SetupCheckResult | undefined): string | undefined => r && settingsText(r.text);
const exportText = (actions: DiagnosticsActions): string | undefined => {
  const status = actions.view().exportStatus;
  return status.kind === 'failed' ? settingsText(status.text) : undefined;
};

const STUN = 'stun:stun.example.com:3478';
const TURN_UDP = 'turn:turn.example.com:3478';
const TURN_TCP = 'turn:turn.example.com:443?transport=tcp';
const TURNS = 'turns:turn.example.com:443';

const config = (urls: string[], policy: 'all' | 'relay' = 'all'): IceConfig => ({
  iceServers: urls.map((u) => (u.startsWith('stun') ? { urls: u } : { urls: u, username: 'u', credential: 'c' })),
  iceTransportPolicy: policy,
});
const done = <T>(value: T) => ({ kind: 'done' as const, value });
const relay = (relayProtocol: 'udp' | 'tcp' | 'tls'): GatheredCandidate => ({ type: 'relay', relayProtocol });
const HOST: GatheredCandidate = { type: 'host' };
const SRFLX: GatheredCandidate = { type: 'srflx' };
const gathered = (c: IceConfig, relayFound?: GatheredCandidate[], allFound?: GatheredCandidate[]): NetworkFindings => ({
  kind: 'gathered',
  config: c,
  relay: relayFound ? done(relayFound) : undefined,
  all: allFound ? done(allFound) : undefined,
});
const domError = (name: string, message = name) => Object.assign(new Error(message), { name });
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('the microphone line', () => {
  it('gives the peak in percent and the device the system opened', () => {
    expect(said(microphoneLine(done({ peak: 0.42, muted: false, label: 'Headset Microphone (Jabra)' }), 'the system default'))).toEqual({
      id: 'microphone',
      status: 'passed',
      text: 'Microphone works: level peaked at 42 % (Headset Microphone (Jabra))',
    });
  });

  it('calls a microphone that delivers digital silence, or that the system mutes, silent', () => {
    const silent = said(microphoneLine(done({ peak: 0.0002, muted: false, label: '' }), 'Microphone Array (Realtek)'));
    expect(silent).toMatchObject({ status: 'warning', problem: 'the microphone is silent' });
    expect(silent.text).toBe('Microphone is silent: check that it is not muted (Microphone Array (Realtek))');
    const muted = said(microphoneLine(done({ peak: 0.3, muted: true, label: 'USB Mic' }), 'USB Mic'));
    expect(muted).toMatchObject({ status: 'warning', problem: 'the microphone is muted' });
    expect(muted.text).toMatch(/^Microphone is silent: check that it is not muted/);
  });

  it('says why there is no access: refused, not connected, held elsewhere, no answer', () => {
    const refused = said(microphoneLine({ kind: 'failed', error: domError('NotAllowedError') }, 'USB Mic'));
    expect(refused).toMatchObject({ status: 'blocking', problem: 'no microphone access' });
    expect(refused.text).toMatch(/^No microphone access: permission to use the microphone was refused/);
    expect(said(microphoneLine({ kind: 'failed', error: domError('OverconstrainedError') }, 'USB Mic')).text).toBe('No microphone access: USB Mic is not connected');
    expect(said(microphoneLine({ kind: 'failed', error: domError('NotReadableError') }, 'USB Mic')).text).toMatch(/another application may hold it/);
    expect(said(microphoneLine({ kind: 'timed_out', ms: 4000 }, 'USB Mic')).text).toBe('No microphone access: USB Mic did not answer within 4 s (a permission prompt may be waiting)');
    expect(said(microphoneLine(undefined, 'x'))).toMatchObject({ status: 'blocking' });
  });
});

describe('the speaker and ringer lines', () => {
  it('says where the tone played; the agent is the judge', () => {
    expect(said(toneLine('speaker', done(undefined), 'Headset Earphone (Jabra)'))).toEqual({
      id: 'speaker',
      status: 'played',
      text: 'Played a tone on the speaker, Headset Earphone (Jabra): you should have heard it',
    });
  });

  it('words a tone that could not play with the Audio settings\u2019 own words', () => {
    const missing = said(toneLine('ringer', { kind: 'failed', error: domError('NotFoundError') }, 'DELL U2720Q (HDMI)'));
    expect(missing).toMatchObject({ status: 'warning', text: 'The chosen ringer is not connected', problem: 'the ringer did not play' });
    expect(said(toneLine('speaker', { kind: 'timed_out', ms: 3000 }, 'Speakers')).text).toBe('The speaker tone did not finish within 3 s (Speakers)');
  });
});

describe('the relay line', () => {
  const answer = (check: RelayCheck) => done(ok(check));
  it('gives the round trip, or what is wrong', () => {
    expect(said(relayLine(answer({ reachable: true, roundTripMs: 35, relayTurn: 'available' })))).toEqual({ id: 'relay', status: 'passed', text: 'Relay reachable (35 ms)' });
    expect(said(relayLine(answer({ reachable: false, problem: 'The relay refused the agent token', relayTurn: 'unknown' })))).toMatchObject({
      status: 'blocking',
      text: 'Relay not reachable: The relay refused the agent token',
    });
    expect(said(relayLine({ kind: 'timed_out', ms: 4000 }))).toMatchObject({ status: 'blocking', text: 'Relay not reachable: no answer within 4 s' });
    expect(said(relayLine(answer({ reachable: true, roundTripMs: 12, relayTurn: 'unreachable' })))).toMatchObject({
      status: 'warning',
      text: 'Relay reachable (12 ms), but its TURN credentials could not be fetched',
    });
    expect(said(relayLine(done(err('gateway_unreachable', 'socket closed'))))).toMatchObject({ status: 'warning', text: expect.stringMatching(/^The relay could not be checked: Cannot reach/) });
  });
});

describe('the TURN and UDP lines', () => {
  it('with no server at all: nothing to reach, and UDP cannot be told', () => {
    const findings = gathered(config([]));
    expect(said(turnLine(findings))).toEqual({ id: 'turn', status: 'info', text: NO_TURN_TEXT });
    expect(said(udpLine(findings))).toEqual({ id: 'udp', status: 'info', text: UDP_UNKNOWN_TEXT });
  });

  it('a relay candidate over UDP: TURN reachable, and UDP gets out', () => {
    const findings = gathered(config([TURN_UDP, TURN_TCP]), [relay('tcp'), relay('udp')], [HOST, relay('udp')]);
    expect(said(turnLine(findings))).toEqual({ id: 'turn', status: 'passed', text: 'TURN server reachable (relay over UDP)' });
    expect(said(udpLine(findings))).toMatchObject({ status: 'passed', text: expect.stringMatching(/^UDP gets out/) });
  });

  it('only TCP and TLS relays while UDP was tried: only TCP gets through', () => {
    const findings = gathered(config([STUN, TURN_TCP, TURNS]), [relay('tls'), relay('tcp')], [HOST, relay('tcp')]);
    expect(said(turnLine(findings)).text).toBe('TURN server reachable (relay over TCP)');
    expect(said(udpLine(findings))).toEqual({ id: 'udp', status: 'info', text: ONLY_TCP_TEXT });
  });

  it('a TCP relay with no UDP server listed does not claim UDP is blocked', () => {
    const findings = gathered(config([TURN_TCP]), [relay('tcp')], [HOST, relay('tcp')]);
    expect(said(udpLine(findings)).text).toMatch(/^TCP gets through to the TURN server; UDP was not tried/);
  });

  it('a STUN answer shows UDP gets out', () => {
    expect(said(udpLine(gathered(config([STUN]), undefined, [HOST, SRFLX]))).status).toBe('passed');
  });

  it('a TURN server that gives no relay: a warning, and blocking with "Relay only"', () => {
    expect(said(turnLine(gathered(config([TURN_UDP]), [], [HOST])))).toMatchObject({ status: 'warning', text: TURN_UNREACHABLE_TEXT });
    expect(said(turnLine(gathered(config([TURN_UDP], 'relay'), [], [HOST])))).toMatchObject({
      status: 'blocking',
      problem: 'Relay only is on and the TURN server is not reachable',
    });
    expect(said(turnLine({ kind: 'gathered', config: config([TURN_UDP]), relay: { kind: 'timed_out', ms: 6000 }, all: undefined })).text).toBe(TURN_UNREACHABLE_TEXT);
    // A refused allocation gives no public address either: the TURN line tells, the UDP line cannot.
    expect(said(udpLine(gathered(config([TURN_UDP]), [], [HOST]))).status).toBe('info');
    expect(said(udpLine(gathered(config([STUN]), undefined, [HOST])))).toMatchObject({ status: 'warning', problem: 'UDP seems blocked and no TURN server is configured' });
    expect(said(udpLine(gathered(config([STUN, TURN_UDP]), [], [HOST])))).toMatchObject({ status: 'warning', problem: 'UDP seems blocked' });
  });

  it('"Relay only" with no TURN server at all will not work', () => {
    expect(said(turnLine(gathered(config([STUN], 'relay'))))).toMatchObject({ status: 'blocking', problem: 'Relay only is on without a TURN server' });
  });

  it('a configuration that could not be read, or a gathering that could not start', () => {
    expect(said(turnLine({ kind: 'no_config', why: 'no answer' }))).toMatchObject({ status: 'warning', text: 'The TURN server could not be checked: no answer' });
    const failed: NetworkFindings = { kind: 'gathered', config: config([TURN_UDP]), relay: { kind: 'failed', error: domError('InvalidAccessError', 'bad URL') }, all: undefined };
    expect(said(turnLine(failed))).toMatchObject({ status: 'warning', text: 'The TURN check could not run (bad URL)' });
  });

  it('reads a relay candidate\u2019s protocol from Chromium\u2019s field, else from its server URL', () => {
    expect(relayProtocolOf({ relayProtocol: 'tcp', url: 'turn:x:3478' })).toBe('tcp');
    expect(relayProtocolOf({ relayProtocol: null, url: 'turn:127.0.0.1:40419?transport=udp' })).toBe('udp');
    expect(relayProtocolOf({ relayProtocol: null, url: 'turn:127.0.0.1:40419' })).toBe('udp');
    expect(relayProtocolOf({ url: 'TURN:h:443?transport=tcp' })).toBe('tcp');
    expect(relayProtocolOf({ url: 'turns:h:443' })).toBe('tls');
    expect(relayProtocolOf({ url: 'stun:h' })).toBeUndefined();
    expect(relayProtocolOf({})).toBeUndefined();
  });
});

describe('the verdict', () => {
  const text = words('setup.relay.reachable');
  const line = (status: SetupCheckResult['status'], problem: SettingsText = words('setup.relay.problemUnchecked')): SetupCheckResult =>
    status === 'warning' || status === 'blocking' ? { id: 'relay', status, text, problem } : { id: 'relay', status, text };
  const silent = words('setup.microphone.problemSilent');

  it('is ready when nothing is wrong; tones played and notes do not count against it', () => {
    expect(verdict(verdictOf([line('passed'), line('played'), line('info')]))).toEqual({ kind: 'ready', text: READY_TEXT });
  });

  it('names what may make calls fail, once each', () => {
    expect(verdict(verdictOf([line('passed'), line('warning', silent), line('warning', words('setup.turn.problemUnreachable')), line('warning', silent)]))).toEqual({
      kind: 'may_fail',
      text: 'Calls may fail: the microphone is silent; the TURN server is not reachable.',
    });
  });

  it('names only what blocks calls when something does', () => {
    expect(verdict(verdictOf([line('warning', words('setup.speaker.problem')), line('blocking', words('setup.microphone.problemNoAccess'))]))).toEqual({
      kind: 'will_fail',
      text: 'Calls will not work: no microphone access.',
    });
  });
});

describe('in another language', () => {
  afterEach(async () => {
    await setUiLanguage('en', undefined);
  });

  it('a report made in English is worded in the language of the moment, its numbers written that language\u2019s way', async () => {
    const timedOut = relayLine({ kind: 'timed_out', ms: 200 });
    const works = microphoneLine(done({ peak: 0.42, muted: false, label: '' }), 'USB Mic');
    const played = toneLine('ringer', done(undefined), words('setup.device.defaultInstead', { fallback: words('audio.systemDefault'), device: 'Old USB speaker' }));
    const problems = verdictOf([microphoneLine(done({ peak: 0, muted: false, label: '' }), 'USB Mic'), turnLine(gathered(config([TURN_UDP]), [], [HOST]))]);
    expect(settingsText(timedOut.text)).toBe('Relay not reachable: no answer within 0.2 s');

    await setUiLanguage('es', undefined);
    expect(settingsText(timedOut.text)).toBe('No se puede llegar al relay: sin respuesta en 0,2 s');
    expect(settingsText(works.text)).toBe('El micrófono funciona: el nivel llegó al 42 % (USB Mic)');
    expect(settingsText(played.text)).toBe('Se reprodujo un tono en el timbre, el predeterminado del sistema, porque Old USB speaker no está conectado: deberías haberlo escuchado');
    expect(verdictText(problems)).toBe('Las llamadas pueden fallar: el micrófono está en silencio; no se puede llegar al servidor TURN.');

    await setUiLanguage('pt-BR', undefined);
    expect(settingsText(relayLine(done(ok({ reachable: true, roundTripMs: 1234, relayTurn: 'available' }))).text)).toBe('Relay acessível (1.234 ms)');

    // Arabic lists the reasons with its own semicolon, and keeps Latin digits.
    await setUiLanguage('ar', undefined);
    expect(verdictText(problems)).toBe('قد تفشل المكالمات: الميكروفون صامت؛ تعذّر الوصول إلى خادم TURN.');
    expect(settingsText(timedOut.text)).toBe('تعذّر الوصول إلى المرحّل: لا رد خلال 0.2 ثانية');
  });

  it('an export that failed says so in the language of the moment', async () => {
    const actions = new DiagnosticsActions({ api: fakeApi({ exportDiagnostics: () => ok({ fileName: 'softphone-diagnostics.json', content: '{}' }) }).api, hostKind: 'browser' });
    await actions.exportDiagnostics();
    await setUiLanguage('hi', undefined);
    const status = actions.view().exportStatus;
    expect(status.kind === 'failed' && settingsText(status.text)).toBe('एक्सपोर्ट नहीं हुआ: यह विंडो फ़ाइलें सेव नहीं कर सकती।');
  });
});

describe('within', () => {
  it('aborts the step\u2019s signal when its time is up, so the part releases what it opened', async () => {
    let released = false;
    const outcome = await within(30, (signal) => new Promise<never>(() => signal.addEventListener('abort', () => void (released = true))));
    expect(outcome).toEqual({ kind: 'timed_out', ms: 30 });
    expect(released).toBe(true);
  });

  it('passes a value or a thrown error through', async () => {
    await expect(within(1000, async () => 7)).resolves.toEqual({ kind: 'done', value: 7 });
    const boom = new Error('boom');
    await expect(within(1000, () => Promise.reject(boom))).resolves.toEqual({ kind: 'failed', error: boom });
    await expect(within(1000, () => { throw boom; })).resolves.toEqual({ kind: 'failed', error: boom });
  });
});

/** Parts that take `ms` each and record what they were asked and when. */
function timedParts(options: { stepMs: number; iceConfig?: IceConfig; found?: (config: ProbeConfig) => GatheredCandidate[]; hang?: 'microphone' | 'relay' | 'gather' }) {
  const log: string[] = [];
  const gathers: ProbeConfig[] = [];
  const aborted: string[] = [];
  const never = (what: string, signal?: AbortSignal) =>
    new Promise<never>(() => signal?.addEventListener('abort', () => void aborted.push(what)));
  const parts: SetupCheckParts = {
    deviceNames: () => ({ microphone: 'USB Mic', speaker: 'Speakers (Realtek)', ringer: 'DELL U2720Q (HDMI)' }),
    measureMicrophone: async (ms, signal) => {
      if (options.hang === 'microphone') return never('microphone', signal);
      await sleep(ms);
      return { peak: 0.5, muted: false, label: 'USB Mic' };
    },
    playTone: async (role) => {
      log.push(`${role} start`);
      await sleep(options.stepMs);
      log.push(`${role} end`);
    },
    checkRelay: async (): Promise<Result<RelayCheck>> => {
      if (options.hang === 'relay') return never('relay');
      await sleep(options.stepMs);
      return ok({ reachable: true, roundTripMs: 3, relayTurn: 'available' });
    },
    iceConfig: async () => ok(options.iceConfig ?? config([TURN_UDP], 'relay')),
    gather: async (probe: ProbeConfig, gatherOptions: GatherOptions) => {
      gathers.push(probe);
      if (options.hang === 'gather') return never(`gather ${probe.iceTransportPolicy}`, gatherOptions.signal);
      await sleep(options.stepMs);
      return options.found?.(probe) ?? [relay('udp')];
    },
  };
  return { parts, log, gathers, aborted };
}

describe('the run', () => {
  const timings = { microphoneMs: 60, microphoneOpenMs: 100, toneMs: 200, relayMs: 200, iceConfigMs: 200, gatherMs: 150 };

  it('ends in under 10 s even when every step waits for its timeout', () => {
    expect(longestRunMs(SETUP_CHECK_TIMINGS)).toBeLessThan(10_000);
    // The microphone is measured for about 1.5 s and each gathering is capped at about 5 s.
    expect(SETUP_CHECK_TIMINGS.microphoneMs).toBe(1500);
    expect(SETUP_CHECK_TIMINGS.gatherMs).toBe(5000);
  });

  it('runs the lanes at once, the two tones one after the other, and gives every line in order', async () => {
    const { parts, log, gathers } = timedParts({ stepMs: 60 });
    const seen: string[] = [];
    const report = await runSetupCheck(parts, { timings, onResult: (r) => seen.push(r.id) });
    expect(report.results.map((r) => r.id)).toEqual([...SETUP_CHECK_IDS]);
    expect([...seen].sort()).toEqual([...SETUP_CHECK_IDS].sort());
    // Serial, the steps would take 6 × 60 ms; the lanes overlap, the tones do not.
    expect(report.elapsedMs).toBeLessThan(300);
    expect(log).toEqual(['speaker start', 'speaker end', 'ringer start', 'ringer end']);
    // The TURN check gathers relay candidates only; the UDP check every kind.
    expect(gathers.map((g) => g.iceTransportPolicy).sort()).toEqual(['all', 'relay']);
    expect(gathers.every((g) => g.iceServers[0]?.urls === TURN_UDP)).toBe(true);
    expect(lineText(report.results.find((r) => r.id === 'turn'))).toBe('TURN server reachable (relay over UDP)');
    expect(lineText(report.results.find((r) => r.id === 'speaker'))).toBe('Played a tone on the speaker, Speakers (Realtek): you should have heard it');
    expect(verdict(report.verdict)).toEqual({ kind: 'ready', text: READY_TEXT });
  });

  it('a step that never answers ends at its own timeout, aborted, and the others still report', async () => {
    for (const hang of ['microphone', 'relay', 'gather'] as const) {
      const { parts, aborted } = timedParts({ stepMs: 10, hang });
      const started = Date.now();
      const report = await runSetupCheck(parts, { timings });
      expect(Date.now() - started).toBeLessThan(longestRunMs({ ...SETUP_CHECK_TIMINGS, ...timings }) + 250);
      expect(report.results).toHaveLength(SETUP_CHECK_IDS.length);
      expect(report.verdict.kind).toBe('will_fail');
      if (hang === 'microphone') {
        expect(aborted).toEqual(['microphone']);
        expect(verdictText(report.verdict)).toBe('Calls will not work: no microphone access.');
      }
      if (hang === 'relay') expect(lineText(report.results.find((r) => r.id === 'relay'))).toBe('Relay not reachable: no answer within 0.2 s');
      if (hang === 'gather') {
        expect(aborted.sort()).toEqual(['gather all', 'gather relay']);
        expect(verdictText(report.verdict)).toBe('Calls will not work: Relay only is on and the TURN server is not reachable.');
      }
    }
  });

  it('gathers nothing where no server is configured, and only the UDP check with STUN alone', async () => {
    const none = timedParts({ stepMs: 5, iceConfig: config([]) });
    const bare = await runSetupCheck(none.parts, { timings });
    expect(none.gathers).toEqual([]);
    expect(lineText(bare.results.find((r) => r.id === 'udp'))).toBe(UDP_UNKNOWN_TEXT);
    expect(bare.verdict.kind).toBe('ready');

    const stun = timedParts({ stepMs: 5, iceConfig: config([STUN]), found: () => [HOST, SRFLX] });
    const report = await runSetupCheck(stun.parts, { timings });
    expect(stun.gathers.map((g) => g.iceTransportPolicy)).toEqual(['all']);
    expect(lineText(report.results.find((r) => r.id === 'turn'))).toBe(NO_TURN_TEXT);
    expect(report.results.find((r) => r.id === 'udp')?.status).toBe('passed');
  });

  it('a window without media devices or WebRTC says so and still gives a verdict', async () => {
    const report = await runSetupCheck(
      { deviceNames: () => ({ microphone: 'm', speaker: 's', ringer: 'r' }), checkRelay: async () => ok({ reachable: true, roundTripMs: 1, relayTurn: 'not_offered' }), iceConfig: async () => ok(config([STUN])) },
      { timings },
    );
    expect(report.results.map((r) => r.status)).toEqual(['blocking', 'info', 'info', 'passed', 'info', 'info']);
    expect(verdictText(report.verdict)).toBe('Calls will not work: no microphone access.');
  });
});

describe('the diagnostics domain', () => {
  it('exports through the browser: the window\u2019s facts go along, the file is saved under main\u2019s name', async () => {
    const host = fakeApi({ exportDiagnostics: () => ok({ fileName: 'softphone-diagnostics-2025-01-02T03-04-05-000Z.json', content: '{"kind":"softphone-diagnostics"}' }) });
    const saved: { fileName: string; content: string }[] = [];
    const actions = new DiagnosticsActions({
      api: host.api,
      hostKind: 'browser',
      saveFile: (fileName, content) => void saved.push({ fileName, content }),
      windowInfo: () => ({ userAgent: 'U'.repeat(600), language: 'en-GB' }),
    });
    await actions.exportDiagnostics();
    expect(actions.view().exportStatus).toEqual({ kind: 'saved', fileName: 'softphone-diagnostics-2025-01-02T03-04-05-000Z.json' });
    expect(saved).toEqual([{ fileName: 'softphone-diagnostics-2025-01-02T03-04-05-000Z.json', content: '{"kind":"softphone-diagnostics"}' }]);
    const params = host.calls.find((c) => c.name === 'exportDiagnostics')?.params as { window: { userAgent: string; language: string; hostKind: string } };
    // Cut to the command's bound rather than refused by it.
    expect(params.window).toEqual({ userAgent: 'U'.repeat(512), language: 'en-GB', hostKind: 'browser' });
  });

  it('names what failed: the app putting the file together, or the browser saving it', async () => {
    const refused = new DiagnosticsActions({ api: fakeApi({ exportDiagnostics: () => err('internal', 'disk full') }).api, hostKind: 'electron', saveFile: () => undefined });
    await refused.exportDiagnostics();
    expect(exportText(refused)).toBe('Export failed: the app could not put the diagnostics together (Something went wrong inside the app. Try again).');

    const api = fakeApi({ exportDiagnostics: () => ok({ fileName: '../../etc/passwd', content: '{}' }) }).api;
    const names: string[] = [];
    const unsaved = new DiagnosticsActions({
      api,
      hostKind: 'browser',
      saveFile: (fileName) => {
        names.push(fileName);
        throw new Error('downloads are blocked');
      },
    });
    await unsaved.exportDiagnostics();
    // A name that is not a plain file name is not passed on.
    expect(names).toEqual(['softphone-diagnostics.json']);
    expect(exportText(unsaved)).toBe('Export failed: the browser could not save softphone-diagnostics.json (downloads are blocked).');
  });

  it('tests the devices the agent chose: the chosen microphone opened, the ringer through the ringtone itself', async () => {
    const devices = new AudioDevices({ mediaDevices: new FakeMediaDevices(deskDevices()) });
    devices.setChoices({
      microphone: { id: DESK.headsetMic.deviceId, label: DESK.headsetMic.label },
      speaker: null,
      ringer: { id: 'gone', label: 'Old USB speaker' },
    });
    await devices.refresh();
    const opened: string[] = [];
    const tones: string[] = [];
    const host = fakeApi({
      checkRelay: () => ok({ reachable: true, roundTripMs: 35, relayTurn: 'available' }),
      getIceConfig: () => ok(config([])),
    });
    const actions = new DiagnosticsActions({
      api: host.api,
      hostKind: 'browser',
      devices,
      soundCheck: { playTone: async (sinkId) => void tones.push(`tone ${sinkId === '' ? 'default' : sinkId}`) },
      ringer: { playTest: async () => void tones.push('ringtone test') },
      measureMicrophone: async (deviceId) => {
        opened.push(deviceId);
        return { peak: 0.42, muted: false, label: '' };
      },
      timings: { microphoneMs: 10 },
    });
    const states: string[] = [];
    actions.subscribe(() => states.push(actions.view().setup.kind));
    const report = await actions.testSetup();
    expect(opened).toEqual([DESK.headsetMic.deviceId]);
    expect(tones).toEqual(['tone default', 'ringtone test']);
    expect(report?.results.map((r) => settingsText(r.text))).toEqual([
      `Microphone works: level peaked at 42 % (${DESK.headsetMic.label})`,
      'Played a tone on the speaker, the system default (Speakers (Realtek)): you should have heard it',
      'Played a tone on the ringer, the system default (Speakers (Realtek)), as Old USB speaker is not connected: you should have heard it',
      'Relay reachable (35 ms)',
      NO_TURN_TEXT,
      UDP_UNKNOWN_TEXT,
    ]);
    expect(actions.view().setup).toEqual({ kind: 'done', report });
    expect(states[0]).toBe('running');
    expect(states.at(-1)).toBe('done');
    // Each line was shown as it came.
    expect(states.filter((s) => s === 'running').length).toBeGreaterThan(SETUP_CHECK_IDS.length);
  });
});

// Calls: the agent's call commands go to the running mode's call coordinator (its transfer commands
// to the runtime's TransferCommands) once a switch under way is done; a window that carried calls' audio
// and went ends them, or, bridged, has them rejoin; dial links from outside.
import { numberFromDialLink } from '../../../shared/dial-link';
import type { Logger } from '../../../shared/log';
import type { Preferences } from '../../../shared/preferences';
import { canRejoin } from '../../../shared/call-state';
import { english, text, type RuleText } from '../../../shared/i18n/text';
import { err, errText, ok, type Result } from '../../../shared/result';
import type { CallCoordinator } from '../call-coordinator';
import type { TransferCommands } from '../transfer-commands';
import type { CommandHandlers, Push } from './handlers';
import type { ModeMachine } from './mode';
import type { Runtime } from './runtime';

export function callCommands(mode: ModeMachine) {
  const withRuntime = async <T>(run: (runtime: Runtime) => Promise<Result<T>>): Promise<Result<T>> => {
    const runtime = await mode.settled();
    return runtime ? run(runtime) : errText('not_configured', text('service.notConfigured'));
  };
  const withCalls = <T>(run: (coordinator: CallCoordinator) => Promise<Result<T>>) => withRuntime((runtime) => run(runtime.coordinator));
  const withTransfers = <T>(run: (transfers: TransferCommands) => Promise<Result<T>>) => withRuntime((runtime) => run(runtime.transfers));
  return {
    startCall: ({ localId, to, sdp, anyway }) => withCalls((c) => c.startCall(to, sdp, localId, { anyway })),
    answerCall: ({ localId, sdp }) =>
      withRuntime(async (runtime) => {
        // A bridged ring's answer must fit a leg the relay can take: refused before the claim, the call rings on.
        const call = runtime.coordinator.call(localId);
        const fits = call?.phase === 'ringing' && call.direction === 'incoming' ? runtime.bridge.answerFits(call.callId, sdp) : ok(null);
        return fits.ok ? runtime.coordinator.answerCall(localId, sdp) : fits;
      }),
    declineCall: ({ localId }) => withCalls((c) => c.declineCall(localId)),
    hangUp: ({ localId }) => withCalls((c) => c.hangUp(localId)),
    holdCall: ({ localId }) => withCalls((c) => c.holdCall(localId)),
    resumeCall: ({ localId }) => withCalls((c) => c.resumeCall(localId)),
    setMuted: ({ localId, muted }) => withCalls((c) => c.setMuted(localId, muted)),
    rejoinCall: ({ localId, legId, sdp }) => withCalls((c) => c.rejoinCall(localId, legId, sdp)),
    ringAnswer: ({ localId, sdp, legId }) =>
      withRuntime(async (runtime) => {
        // Only a bridged call that rings here (not a colleague's transfer): its leg connects ahead of the click.
        const call = runtime.coordinator.call(localId);
        if (call === undefined) return errText('not_found', text('calls.noSuchCall', { localId }));
        if (call.phase !== 'ringing' || call.direction !== 'incoming' || call.bridged !== true || call.transfer !== undefined) return err('invalid_state', `call ${localId} is no bridged call ringing here`);
        return runtime.bridge.ringAnswer(call.callId, sdp, legId);
      }),
    transferCall: ({ localId, to, kind }) => withTransfers((t) => t.transferCall(localId, to, kind)),
    cancelTransfer: ({ localId }) => withTransfers((t) => t.cancelTransfer(localId)),
    completeTransfer: ({ localId }) => withTransfers((t) => t.completeTransfer(localId)),
    addToCall: ({ localId }) => withTransfers((t) => t.addToCall(localId)),
    getTeam: () => withTransfers((t) => t.team()),
    reportMedia: (report) => withCalls((c) => c.reportMedia(report)),
  } satisfies Partial<CommandHandlers>;
}

/**
 * The window that carried these calls' audio is gone: each is told so (`windowGone`). A bridged call
 * this agent is in rejoins with a new leg, for the next window to answer; any other ends now, with
 * `reason` and a terminate.
 */
export function callsOfGoneWindow(mode: ModeMachine, log: Logger, calls: readonly string[] | 'all', reason: RuleText): void {
  const runtime = mode.current();
  if (!runtime) return;
  const owned = calls === 'all' ? undefined : new Set(calls);
  // A ringing call lost nothing: every window prepares its own answer, and the reloaded one will too.
  const gone = runtime.coordinator.calls().filter((c) => c.phase !== 'ended' && c.phase !== 'ringing' && (owned === undefined || owned.has(c.localId)));
  const error = { code: 'media_failed', message: english(reason), text: reason };
  for (const call of gone) {
    const rejoins = canRejoin(runtime.coordinator.call(call.localId));
    log.warn(rejoins ? 'the window that carried a call\'s audio is gone: the call rejoins' : 'the window that carried a call\'s audio is gone: ending the call', { localId: call.localId, phase: call.phase });
    runtime.coordinator.windowGone(call.localId, error);
  }
}

export interface DialRequest {
  link: string;
  /** False: the number only fills the dialer, whatever the preference says. */
  dialAtOnce: boolean | undefined;
  preferences: Preferences;
}

/** A tel:/callto: link or a number from outside, checked and handed to every window as dialRequested. */
export function requestDial(mode: ModeMachine, push: Push, { link, dialAtOnce, preferences }: DialRequest): Result<{ number: string; dial: boolean }> {
  const runtime = mode.current();
  const number = numberFromDialLink(link, runtime?.account.defaultCountry);
  if (!number.ok) return number;
  // A number the numbering plan does not list waits in the dialer for the agent's "Call anyway".
  // Every window gets the push: main decides here, once, so that no window dials on top of a
  // call in progress (this keeps the link's page honest: the window's dialer waits for the call to end).
  const busy = runtime?.coordinator.hasBusyCall() ?? false;
  const dial = preferences.dialLinksAtOnce && number.value.verified && !busy && dialAtOnce !== false;
  const request = { number: number.value.digits, dial };
  push({ name: 'dialRequested', payload: request });
  return ok(request);
}

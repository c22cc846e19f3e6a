// What a supervisor asks of the relay (relay/REFERENCE.md "Supervisors"): the team's live calls, and
// joining one of them. Which calls can be joined is decided here from what the relay knows of each:
// a call it does not know is 404; a direct call, or one not answered yet, is 409; a bridged call this
// instance holds goes to its monitors (monitors.ts), which decide the rest.
import type { LiveCalls, MonitorMode } from '../shared/supervision';
import { done, refuse, type Outcome } from './bridged-call';
import type { LiveCallsSource, LiveCallsTracker } from './live-calls';
import { notJoined, type CallMonitors, type Supervisor } from './monitors';

export interface SupervisionOptions {
  tracker: LiveCallsTracker;
  liveCalls: LiveCallsSource;
  /** This instance's bridged calls' monitors; absent when calls are not bridged. */
  monitors?: CallMonitors;
}

export class Supervision {
  constructor(private readonly o: SupervisionOptions) {}

  /** GET /team/calls. */
  liveCalls(): Promise<LiveCalls> {
    return this.o.liveCalls.liveCalls();
  }

  /** POST …/monitor: join the call, or, joined already, its leg's offer again. */
  join(callId: string, supervisor: Supervisor, mode: MonitorMode): Promise<Outcome<{ legId: string; offer: string; mode: MonitorMode }>> {
    const { monitors, tracker } = this.o;
    const tracked = tracker.get(callId);
    if (monitors?.view(callId) === undefined) {
      if (tracked === undefined) return Promise.resolve(refuse({ status: 404, code: 'not_found', message: `no live call ${callId}` }));
      if (tracked.bridged) return Promise.resolve(refuse({ status: 404, code: 'not_found', message: `call ${callId} is held by another relay instance` }));
      return Promise.resolve(refuse({ status: 409, code: 'invalid_state', message: `call ${callId} is a direct call: only a call through the team's bridge can be joined` }));
    }
    // An outgoing call's agent is in it from the dial; the customer's answer is what makes it a call.
    if (tracked?.direction === 'outgoing' && tracked.answeredAt === undefined) return Promise.resolve(refuse({ status: 409, code: 'invalid_state', message: `call ${callId} is not answered yet` }));
    return monitors.join(callId, supervisor, mode);
  }

  /** POST …/monitor/answer: the window's answer to the join's offer. */
  answer(callId: string, supervisorId: string, legId: string, sdp: string): Promise<Outcome<null>> {
    const { monitors } = this.o;
    if (monitors?.view(callId) === undefined) return Promise.resolve(notJoined(callId));
    return monitors.answer(callId, supervisorId, legId, sdp);
  }

  /** PUT …/monitor: another mode, without dropping. */
  switchMode(callId: string, supervisorId: string, mode: MonitorMode): Promise<Outcome<{ mode: MonitorMode }>> {
    const { monitors } = this.o;
    if (monitors?.view(callId) === undefined) return Promise.resolve(notJoined(callId));
    return monitors.switchMode(callId, supervisorId, mode);
  }

  /** DELETE …/monitor: "Leave". Leaving a call it is not in (any more) is no error. */
  leave(callId: string, supervisorId: string): Promise<Outcome<{ ok: true }>> {
    return this.o.monitors?.leave(callId, supervisorId) ?? Promise.resolve(done({ ok: true as const }));
  }
}

import type { CallState } from '../../shared/call-state';
import { monitorText } from '../live-call-display';

/**
 * The supervisors in the agent's call, as the relay tells them: "NAME is whispering", "NAME joined
 * the call", and "NAME is listening" where the team tells of a listen. A polite status, there for
 * the call's whole length so that each change is heard.
 */
export function CallMonitors({ call }: { call: CallState }) {
  return (
    <div role="status" className="call-monitors">
      {(call.monitors ?? []).map((monitor) => (
        <p key={monitor.supervisorId} className={`call-monitor call-monitor-${monitor.mode}`}>
          {monitorText(monitor)}
        </p>
      ))}
    </div>
  );
}

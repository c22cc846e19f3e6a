import { useMonitor } from '../app/controllers-context';
import { MONITOR_MODES, type MonitorMode } from '../../shared/supervision';
import { modeButtonText } from '../live-call-display';
import type { CallParties } from '../store/supervision';

/**
 * "Listen", "Whisper", "Barge" for one live call: each joins it in that mode or, on the call this
 * window joined, switches to it without dropping. Pressed (and inert): the mode the supervisor is in
 * the call with now. Each button is described by the call it acts on (`describedBy`).
 */
export function MonitorModeButtons({
  callId,
  parties,
  describedBy,
  current,
  busy,
}: {
  callId: string;
  parties: CallParties;
  describedBy: string;
  /** The mode this window is in the call with; none when it has not joined it. */
  current: MonitorMode | undefined;
  /** A join or a switch of this call is under way: no button asks another meanwhile. */
  busy: boolean;
}) {
  const monitor = useMonitor();
  return (
    <div className="monitor-modes">
      {MONITOR_MODES.map((mode) => {
        const pressed = current === mode;
        const inert = pressed || busy;
        return (
          <button
            key={mode}
            type="button"
            className={`btn btn-toggle btn-monitor${pressed ? ' is-on' : ''}`}
            aria-pressed={pressed}
            aria-disabled={inert ? true : undefined}
            aria-describedby={describedBy}
            onClick={() => {
              if (!inert) void monitor.monitor(callId, parties, mode);
            }}
          >
            {modeButtonText(mode)}
          </button>
        );
      })}
    </div>
  );
}

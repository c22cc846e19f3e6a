// While bench:relay drives its load, its own process stands for machines that a deployment keeps
// apart from the relay: the service that sends the webhooks and the 10 000 agents that read them.
// On one machine it shares the relay's cores, and every answer and event the relay writes on
// loopback wakes it. Linux then runs the woken process at once, on the relay's core if need be, and
// the relay's event loop waits: measured here, 4 000–4 700 involuntary switches a second and 27–33 %
// of the loop's time spent runnable but not running. As SCHED_BATCH a woken process waits for the
// scheduler's next tick instead of taking the core, and at nice 10 it gives way when both want to
// run; the relay and PostgreSQL keep the policy they started with.
//
// Applied to this process's threads around a measured phase only, never while child processes are
// started: they would inherit it. Lowering the nice value again needs root, so without root only
// the policy changes. Linux only; elsewhere, or without `chrt` (util-linux), nothing changes and
// the report says why.
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { getPriority, setPriority } from 'node:os';

const SCHED_OTHER = 0;

/** The nice value this process's threads take while load is driven. */
export const LOAD_GENERATOR_NICE = 10;

export interface Yielded {
  /** What changed, for the report: "SCHED_BATCH, nice 10", or why nothing did. */
  readonly description: string;
  /** Puts back the policy and the nice values there were. Safe to call more than once. */
  restore(): void;
}

/** Linux's scheduling policy number of a thread (field 41 of /proc/…/stat): 0 SCHED_OTHER, 3 SCHED_BATCH. */
export function policyOf(tid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
    // The command name (field 2) may hold spaces and parentheses: count from the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const value = Number(fields[41 - 3]);
    return Number.isInteger(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

/** This process's thread ids (Linux), or undefined where /proc has none. */
export function threadIds(): number[] | undefined {
  try {
    return readdirSync('/proc/self/task').map(Number).filter((tid) => Number.isInteger(tid) && tid > 0);
  } catch {
    return undefined;
  }
}

function chrt(policy: '--batch' | '--other'): string | undefined {
  const run = spawnSync('chrt', [policy, '--all-tasks', '--pid', '0', String(process.pid)], { encoding: 'utf8' });
  if (run.error !== undefined) return (run.error as NodeJS.ErrnoException).code === 'ENOENT' ? 'chrt (util-linux) is not installed' : run.error.message;
  if (run.status !== 0) return run.stderr.trim() || `chrt exited with ${run.status}`;
  return undefined;
}

/**
 * Makes this process's threads SCHED_BATCH, and with root nice LOAD_GENERATOR_NICE, until
 * `restore()`. Call it with no child process about to start.
 */
export function yieldToTheRelay(): Yielded {
  const tids = process.platform === 'linux' ? threadIds() : undefined;
  if (tids === undefined) return { description: 'unchanged: scheduling policies are set on Linux only', restore: () => undefined };
  const policy = policyOf(process.pid);
  if (policy !== SCHED_OTHER) return { description: `unchanged: this process runs under scheduling policy ${policy ?? 'unknown'}, not SCHED_OTHER`, restore: () => undefined };
  const refused = chrt('--batch');
  if (refused !== undefined) return { description: `unchanged: ${refused}`, restore: () => undefined };
  const niced = new Map<number, number>();
  if (process.getuid?.() === 0) {
    for (const tid of tids) {
      try {
        const before = getPriority(tid);
        setPriority(tid, LOAD_GENERATOR_NICE);
        niced.set(tid, before);
      } catch {
        // A thread that ended meanwhile.
      }
    }
  }
  let restored = false;
  return {
    description: niced.size > 0 ? `SCHED_BATCH, nice ${LOAD_GENERATOR_NICE}` : 'SCHED_BATCH (nice unchanged: putting it back needs root)',
    restore: () => {
      if (restored) return;
      restored = true;
      for (const [tid, before] of niced) {
        try {
          setPriority(tid, before);
        } catch {
          // A thread that ended meanwhile.
        }
      }
      const failed = chrt('--other');
      if (failed !== undefined) throw new Error(`could not put this process back to SCHED_OTHER: ${failed}`);
    },
  };
}

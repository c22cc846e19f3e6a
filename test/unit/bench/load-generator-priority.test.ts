// bench:relay's load generator gives way to the relay while it drives load, and only then: its
// threads as Linux itself reports them (/proc), before, during and after.
import { getPriority } from 'node:os';
import { afterEach, describe, expect, it } from 'vitest';
import { LOAD_GENERATOR_NICE, policyOf, threadIds, yieldToTheRelay, type Yielded } from '../../../bench/load-generator-priority';

const SCHED_OTHER = 0;
const SCHED_BATCH = 3;
const linux = process.platform === 'linux' && threadIds() !== undefined;
const root = process.getuid?.() === 0;

let yielded: Yielded | undefined;
afterEach(() => {
  yielded?.restore();
  yielded = undefined;
});

function schedulingOfThreads(): { policy: number | undefined; nice: number }[] {
  return (threadIds() ?? []).map((tid) => ({ policy: policyOf(tid), nice: getPriority(tid) }));
}

describe.runIf(linux)('yieldToTheRelay', () => {
  it('makes every thread SCHED_BATCH at nice 10 (as root) and puts back what there was', () => {
    const before = schedulingOfThreads();
    expect(before.length).toBeGreaterThan(1);
    expect(before.every((t) => t.policy === SCHED_OTHER)).toBe(true);

    yielded = yieldToTheRelay();
    const during = schedulingOfThreads();
    expect(during.every((t) => t.policy === SCHED_BATCH)).toBe(true);
    if (root) {
      expect(yielded.description).toBe(`SCHED_BATCH, nice ${LOAD_GENERATOR_NICE}`);
      expect(during.every((t) => t.nice === LOAD_GENERATOR_NICE)).toBe(true);
    } else {
      expect(yielded.description).toMatch(/^SCHED_BATCH \(nice unchanged/);
    }

    yielded.restore();
    expect(schedulingOfThreads()).toEqual(before);
    // A second restore changes nothing and does not throw.
    yielded.restore();
    expect(schedulingOfThreads()).toEqual(before);
  });

  it('leaves a process that does not run as SCHED_OTHER as it is, and says so', () => {
    yielded = yieldToTheRelay();
    const again = yieldToTheRelay();
    expect(again.description).toBe('unchanged: this process runs under scheduling policy 3, not SCHED_OTHER');
    again.restore();
    expect(schedulingOfThreads().every((t) => t.policy === SCHED_BATCH)).toBe(true);
  });
});

describe('policyOf', () => {
  it('reads no policy for a thread that is not this process’s', () => {
    expect(policyOf(2 ** 30)).toBeUndefined();
  });
});

// The crash-recovery file, live-calls.json: what the gateway would still be owed if this run
// stopped now (shared/call-state.ts owedOnCrash), written whenever it changes, and read at the next
// start so that a call a crash left live is still ended (protocol.md: terminate must still be sent).
// Each record names its gateway: a run in sandbox mode leaves ids an account's gateway never saw.
import { join } from 'node:path';
import { z } from 'zod';
import type { GatewayEnd } from '../../shared/call-state';
import type { Logger } from '../../shared/log';
import { CoalescingWriter, readJsonFile, setAsideCorruptFile, writeFileAtomic } from './json-file';

export const LIVE_CALLS_FILE = 'live-calls.json';

const liveCallsFileSchema = z.object({
  version: z.literal(1),
  calls: z.array(z.object({ callId: z.string().min(1), action: z.enum(['terminate', 'reject']), gatewayUrl: z.string() })),
});

export interface OwedEnd {
  callId: string;
  action: GatewayEnd;
}

export class LiveCallsFile {
  private readonly path: string;
  private readonly writer: CoalescingWriter;
  private text: string | undefined;

  constructor(
    dataDir: string,
    private readonly gatewayUrl: string,
    private readonly log: Logger,
  ) {
    this.path = join(dataDir, LIVE_CALLS_FILE);
    this.writer = new CoalescingWriter(
      async () => {
        if (this.text !== undefined) await writeFileAtomic(this.path, this.text);
      },
      (e) => this.log.error('could not save the live calls', { error: e }),
    );
  }

  /**
   * What a previous run left owed on this gateway. Records of another gateway are left out (they
   * cannot be ended from here); an unreadable file is set aside and counts as empty.
   */
  async leftovers(now: number): Promise<OwedEnd[]> {
    const read = await readJsonFile(this.path);
    if (read.kind === 'missing') return [];
    const parsed = read.kind === 'json' ? liveCallsFileSchema.safeParse(read.value) : undefined;
    if (!parsed?.success) {
      this.log.warn('live calls file unreadable; kept aside', { keptAs: await setAsideCorruptFile(this.path, now) });
      return [];
    }
    const owed: OwedEnd[] = [];
    for (const record of parsed.data.calls) {
      if (record.gatewayUrl !== this.gatewayUrl) {
        this.log.warn('a call left live by a previous run belongs to another gateway; it cannot be ended from here', { callId: record.callId });
        continue;
      }
      owed.push({ callId: record.callId, action: record.action });
    }
    return owed;
  }

  /** Saves what is owed now (in the background, coalesced); nothing is written when it did not change. */
  save(owed: readonly OwedEnd[]): void {
    const calls = owed.map(({ callId, action }) => ({ callId, action, gatewayUrl: this.gatewayUrl }));
    const text = `${JSON.stringify({ version: 1, calls }, null, 2)}\n`;
    if (text === this.text) return;
    this.text = text;
    this.writer.request();
  }

  /** Resolves once the file holds the last state saved. */
  flush(): Promise<void> {
    return this.writer.flush();
  }
}

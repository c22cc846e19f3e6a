// The crash-recovery file, live-calls.json: what the gateway would still be owed if this run
// stopped now (shared/call-state.ts owedOnCrash), written whenever it changes, and read at the next
// start so that a call a crash left live is still ended (protocol.md: terminate must still be sent).
// Each record names its gateway: a run in sandbox mode leaves ids an account's gateway never saw.
// A bridged call this agent was in carries `restore`, the call as the window saw it: the next run
// takes it up again and rejoins it, muted if it was. The version stays 1: an app that does not know
// `restore` reads the record as it always did and terminates the call, which is safe.
import { join } from 'node:path';
import { z } from 'zod';
import type { GatewayEnd, RestorableCall } from '../../shared/call-state';
import type { Logger } from '../../shared/log';
import { colleagueSchema, TRANSFER_KINDS } from '../../shared/transfer';
import { CoalescingWriter, readJsonFile, setAsideCorruptFile, writeFileAtomic } from './json-file';

export const LIVE_CALLS_FILE = 'live-calls.json';

const time = z.number().nonnegative();
const callCommon = {
  localId: z.string().min(1),
  callId: z.string().min(1),
  peer: z.object({ number: z.string().optional(), userId: z.string().optional(), name: z.string().optional() }),
  createdAt: time,
  ctaPayload: z.string().optional(),
  bridged: z.literal(true),
  transfer: z
    .object({
      id: z.string().min(1),
      kind: z.enum(TRANSFER_KINDS),
      role: z.enum(['from', 'to']),
      colleague: colleagueSchema.optional(),
      state: z.enum(['ringing', 'consulting', 'joined', 'not_answered', 'done']),
      ringsUntil: time.optional(),
    })
    .optional(),
  answeredAt: time,
  // The agent's mute (shared/calls/mute.ts): the call comes back as quiet as it was left.
  muted: z.boolean().optional(),
};
const incoming = { ...callCommon, direction: z.literal('incoming'), offerSdp: z.string().min(1) };
const outgoing = { ...callCommon, direction: z.literal('outgoing'), answerSdp: z.string().min(1) };
const active = { phase: z.literal('active'), connectedAt: time, heldSince: time.optional(), heldMs: time.optional() };
/** A bridged call, connecting or active, as the window saw it (shared/calls/rejoin.ts `restorable`). */
const restorableCallSchema = z.union([
  z.object({ ...incoming, phase: z.literal('connecting') }),
  z.object({ ...incoming, ...active }),
  z.object({ ...outgoing, phase: z.literal('connecting') }),
  z.object({ ...outgoing, ...active }),
]);

const liveCallsFileSchema = z.object({
  version: z.literal(1),
  calls: z.array(z.object({ callId: z.string().min(1), action: z.enum(['terminate', 'reject']), gatewayUrl: z.string(), restore: z.unknown().optional() })),
});

export interface OwedEnd {
  callId: string;
  action: GatewayEnd;
  /** A bridged call this agent was in: taken up again (it rejoins) rather than ended. */
  restore?: RestorableCall;
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
        // The owner's only: a call to take up again keeps its customer's number and name and its SDP.
        if (this.text !== undefined) await writeFileAtomic(this.path, this.text, 0o600);
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
      owed.push({ callId: record.callId, action: record.action, ...this.restoreOf(record.callId, record.restore) });
    }
    return owed;
  }

  /** A record's call to restore, when it is one of its call id; one that is not is ended as any other. */
  private restoreOf(callId: string, saved: unknown): { restore?: RestorableCall } {
    if (saved === undefined) return {};
    const parsed = restorableCallSchema.safeParse(saved);
    if (parsed.success && parsed.data.callId === callId) {
      const restore: RestorableCall = parsed.data;
      return { restore };
    }
    this.log.warn('a call left live by a previous run cannot be taken up again; it is ended', { callId });
    return {};
  }

  /** Saves what is owed now (in the background, coalesced); nothing is written when it did not change. */
  save(owed: readonly OwedEnd[]): void {
    const calls = owed.map(({ callId, action, restore }) => ({ callId, action, gatewayUrl: this.gatewayUrl, ...(restore !== undefined ? { restore } : {}) }));
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

// A real relay keeping call records on a fresh database of one harness's kind, for the life of a
// describe block: started before its tests, closed after; every event it stores is kept, so that a
// test can wait for the one it needs.
import { afterAll, beforeAll, expect } from 'vitest';
import type { RelayEnvelope } from '../../../shared/events';
import { CallRecords } from '../../../relay/records/call-records';
import { startRelay, type RelayOptions, type RelayServer } from '../../../relay/server';
import { APP_SECRET } from '../relay/webhook-fixtures';
import type { Database } from '../../../relay/records/database';
import { migrated, type DatabaseHarness, type FreshDatabase } from './database-harness';
import { recordingLogger, T0 } from './records-fixtures';

export interface RelayWithRecords {
  relay(): RelayServer;
  records(): CallRecords;
  /** The relay's stored event of this type for this call (or message) id, once stored. */
  stored(type: string, id: string): Promise<RelayEnvelope>;
}

export function relayWithRecords(make: () => DatabaseHarness, options: Pick<RelayOptions, 'agents'> & Partial<Pick<RelayOptions, 'bridgeNodes' | 'teamSettings'>>): RelayWithRecords {
  const harness = make();
  let fresh: FreshDatabase | undefined;
  let records: CallRecords | undefined;
  let relay: RelayServer | undefined;
  const envelopes: RelayEnvelope[] = [];
  beforeAll(async () => {
    await harness.setup();
    const database = await harness.fresh();
    fresh = database;
    records = new CallRecords({ database: () => database.connect(), logger: recordingLogger(), writer: { flushIntervalMs: 5 } });
    relay = await startRelay({ port: 0, appSecret: APP_SECRET, heartbeatMs: 60_000, records, logger: recordingLogger(), ...options });
    relay.onEvent((envelope) => envelopes.push(envelope));
  }, 60_000);
  afterAll(async () => {
    await relay?.close();
    await records?.close();
    await fresh?.drop();
    await harness.teardown();
  }, 60_000);
  const found = (type: string, id: string) =>
    envelopes.find((e) => e.event.type === type && (('callId' in e.event && e.event.callId === id) || ('messageId' in e.event && e.event.messageId === id)));
  return {
    relay: () => relay!,
    records: () => records!,
    stored: async (type, id) => {
      const deadline = Date.now() + 5_000;
      for (;;) {
        const envelope = found(type, id);
        if (envelope !== undefined) return envelope;
        if (Date.now() > deadline) throw new Error(`${type} of ${id} was not stored`);
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    },
  };
}

/**
 * A fresh, migrated database of one harness's kind for a describe block, holding what `fill` plays
 * into call records (steps, states) at the records' clock, all written before the block's tests;
 * dropped after them. `db()` is the database the tests read.
 */
export function playedRecords(make: () => DatabaseHarness, fill: (records: CallRecords, clock: { now: number }) => void): { db(): Database } {
  const harness = make();
  let fresh: FreshDatabase | undefined;
  let db: Database | undefined;
  beforeAll(async () => {
    await harness.setup();
    fresh = await harness.fresh();
    db = await migrated(fresh);
    const clock = { now: T0 };
    const database = fresh;
    const records = new CallRecords({ database: () => database.connect(), logger: recordingLogger(), now: () => clock.now, writer: { flushIntervalMs: 5 } });
    fill(records, clock);
    expect(await records.flush()).toBe(true);
    await records.close();
  }, 60_000);
  afterAll(async () => {
    await fresh?.drop();
    await harness.teardown();
  }, 60_000);
  return { db: () => db! };
}

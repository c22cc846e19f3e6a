// The window's log records reach the main process in batches, bounded, never looping on a failure.
import { afterEach, describe, expect, it } from 'vitest';
import { LogForwarder } from '../../../renderer/app/log-forwarder';
import { configureLogging, createLogger } from '../../../shared/log';
import { err, ok, type Result } from '../../../shared/result';

type Records = Parameters<LogForwarder['api']['writeLogs']>[0]['records'];

function recordingApi(answer: () => Result<null> = () => ok(null)) {
  const batches: Records[] = [];
  return { batches, api: { writeLogs: async ({ records }: { records: Records }) => (batches.push(records), answer()) } };
}

const stops: Array<() => void> = [];
afterEach(() => {
  for (const stop of stops.splice(0)) stop();
});

describe('LogForwarder', () => {
  it('sends the window\'s records from info up, redacted, in batches of at most 50', async () => {
    const restore = configureLogging({ sink: () => undefined });
    stops.push(() => configureLogging(restore));
    const { api, batches } = recordingApi();
    const forwarder = new LogForwarder(api, { flushMs: 60_000 });
    stops.push(forwarder.start());
    const log = createLogger('media');
    log.debug('not sent');
    log.warn('media stopped', { localId: 'in:1', apiKey: 'k-123456789', to: '447700900123' });
    for (let i = 0; i < 60; i++) log.info(`line ${i}`);
    await forwarder.flush();
    expect(batches.map((b) => b.length)).toEqual([50, 11]);
    const first = batches[0]![0]!;
    expect(first).toMatchObject({ level: 'warn', logger: 'media', msg: 'media stopped', fields: { localId: 'in:1', apiKey: '[redacted]' } });
    expect(JSON.stringify(batches)).not.toContain('447700900123');
    expect(JSON.stringify(batches)).not.toContain('k-123456789');
  });

  it('keeps at most maxQueued records while the host does not take them, says how many were dropped, and does not log its own failure', async () => {
    const restore = configureLogging({ sink: () => undefined });
    stops.push(() => configureLogging(restore));
    let refuse = true;
    const { api, batches } = recordingApi(() => (refuse ? err('gateway_unreachable', 'host gone') : ok(null)));
    const forwarder = new LogForwarder(api, { flushMs: 60_000, maxQueued: 10 });
    stops.push(forwarder.start());
    const warned: unknown[] = [];
    const original = console.warn;
    console.warn = (...args: unknown[]) => void warned.push(args);
    stops.push(() => (console.warn = original));
    const log = createLogger('media');
    for (let i = 0; i < 25; i++) log.info(`line ${i}`);
    await forwarder.flush();
    expect(warned).toHaveLength(1);
    refuse = false;
    await forwarder.flush();
    const sent = batches.at(-1)!;
    expect(sent[0]).toMatchObject({ logger: 'log-forwarder', msg: '15 window log records were dropped: the host was not taking them' });
    expect(sent.slice(1).map((r) => r.msg)).toEqual(Array.from({ length: 10 }, (_, i) => `line ${i + 15}`));
  });
});

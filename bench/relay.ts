// `npm run bench:relay`: the relay under a team's load, on 127.0.0.1, for the memory and the Redis
// backends. The relay runs as a child process (`npx tsx relay/cli.ts`); with Redis, against a
// redis-server this benchmark starts on a free port. 1 000 agents hold server-sent-event streams
// (raw node:http, minimal parsing) and report presence; then signed webhooks are driven at a steady
// rate with a bounded number in flight, for a fixed time. Reported per backend:
//
//   sustained webhooks/s ingested (answered 200)                          target ≥ 3 000/s
//   p50 / p99 from webhook sent to event received by the agent it concerns target p99 ≤ 50 ms
//   memory per connected agent: (RSS with 1 000 agents − RSS with 0) / 1 000   target ≤ 50 KB
//
// TIMING. A webhook counts as sent when its first byte is written to the relay's socket (undici's
// `undici:client:sendHeaders`). This process sends through a pool of 32 connections with up to 128
// webhooks in flight, so a webhook may first wait here for a free connection; that wait belongs
// to this sender, not to the relay, and is printed apart, as is the split at the relay's
// receivedAt (sent → received by the relay, received → read by the agent).
//
// WORKLOAD. Fanning every webhook out to all 1 000 agents would be 3 M SSE writes/s, which is not
// what a team's relay does: most traffic concerns one agent. So the main phase is per-agent: every
// agent has placed outgoing calls and claimed them (POST /calls/{id}/claim, as the app does right
// after initiate), and each webhook is one status event of one of those calls (RINGING, ACCEPTED,
// terminate), which the relay delivers to that call's owner only. A second, separately measured
// phase sends incoming calls that ring all 1 000 agents, at a lower rate.
//
// Everything stops by itself: every phase is bounded in count and time, a watchdog ends a run that
// hangs, and the child processes are ended (by their process group) on every way out.
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash, createHmac, randomBytes } from 'node:crypto';
import diagnosticsChannel from 'node:diagnostics_channel';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { createServer, connect as netConnect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { Pool } from 'undici';
import { errorText } from '../shared/result';
import { customerOffer } from '../test/fixtures/sdp';

const env = (name: string, fallback: number): number => {
  const v = Number(process.env[name]);
  return Number.isFinite(v) && v > 0 ? v : fallback;
};

const AGENTS = Math.round(env('BENCH_RELAY_AGENTS', 1_000));
/** Offered webhooks per second in the per-agent phase: above the target, so that reaching it shows. */
const RATE = env('BENCH_RELAY_RATE', 3_500);
const DURATION_MS = env('BENCH_RELAY_SECONDS', 10) * 1_000;
/** Webhooks in flight at most: the gateway's own retries are what an unbounded sender would be. */
const MAX_IN_FLIGHT = Math.round(env('BENCH_RELAY_IN_FLIGHT', 128));
/** Incoming calls per second in the ring-everyone phase, and for how long. */
const RING_RATE = env('BENCH_RELAY_RING_RATE', 10);
const RING_DURATION_MS = env('BENCH_RELAY_RING_SECONDS', 5) * 1_000;
/** BENCH_RELAY_BACKENDS=redis (or memory) runs one of them; both by default. */
const BACKENDS = (['memory', 'redis'] as const).filter((b) => (process.env.BENCH_RELAY_BACKENDS ?? 'memory,redis').split(',').includes(b));
/** The whole run (both backends) never takes longer than this. */
const WATCHDOG_MS = 6 * 60_000;
const DRAIN_MS = 10_000;

const TARGET_RATE = 3_000;
const TARGET_P99_MS = 50;
const TARGET_KB_PER_AGENT = 50;

const HOST = '127.0.0.1';
const BUSINESS_NUMBER = '442079460000';

// ---------------------------------------------------------------------------------------------
// Child processes: started in their own process group, so that ending the group ends npx, tsx and
// the relay under them together.

const children = new Set<ChildProcess>();

function startChild(command: string, args: string[], name: string): ChildProcess {
  const child = spawn(command, args, { cwd: process.cwd(), detached: true, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, FORCE_COLOR: '0' } });
  children.add(child);
  child.on('exit', () => children.delete(child));
  child.stderr?.setEncoding('utf8');
  child.stderr?.on('data', (text: string) => {
    for (const line of text.split('\n')) if (line.trim() !== '' && !/npm warn/i.test(line)) process.stderr.write(`  [${name}] ${line.slice(0, 300)}\n`);
  });
  return child;
}

function signalGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    // Already gone.
  }
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  signalGroup(child, 'SIGTERM');
  const timer = setTimeout(() => signalGroup(child, 'SIGKILL'), 8_000);
  await exited;
  clearTimeout(timer);
  // tsx's own child may outlive the wrapper for a moment; the group takes it along.
  signalGroup(child, 'SIGKILL');
}

function killAllNow(): void {
  for (const child of children) signalGroup(child, 'SIGKILL');
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, HOST, () => resolve()));
  const port = (server.address() as { port: number }).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** Resolves with the first match of `pattern` on the child's stdout; rejects if it exits first or takes too long. */
function waitForOutput(child: ChildProcess, pattern: RegExp, what: string, timeoutMs = 60_000): Promise<RegExpMatchArray> {
  return new Promise((resolve, reject) => {
    let seen = '';
    const timer = setTimeout(() => done(new Error(`${what} did not start within ${timeoutMs / 1000} s; it printed: ${seen.slice(-500)}`)), timeoutMs);
    const onData = (text: string) => {
      seen += text;
      const match = pattern.exec(seen);
      if (match) done(undefined, match);
    };
    const onExit = (code: number | null) => done(new Error(`${what} exited (code ${code}) before it was ready; it printed: ${seen.slice(-500)}`));
    function done(error?: Error, match?: RegExpMatchArray) {
      clearTimeout(timer);
      child.stdout?.off('data', onData);
      child.off('exit', onExit);
      if (error) reject(error);
      else resolve(match!);
    }
    child.stdout?.setEncoding('utf8');
    child.stdout?.on('data', onData);
    child.once('exit', onExit);
  });
}

async function startRedis(): Promise<{ url: string; child: ChildProcess }> {
  const port = await freePort();
  const child = startChild(process.env.REDIS_SERVER_BIN ?? 'redis-server', ['--port', String(port), '--bind', HOST, '--save', '', '--appendonly', 'no', '--protected-mode', 'yes'], 'redis');
  await waitForOutput(child, /Ready to accept connections/, 'redis-server', 15_000);
  await new Promise<void>((resolve, reject) => {
    const socket = netConnect(port, HOST, () => {
      socket.end();
      resolve();
    });
    socket.on('error', reject);
  });
  return { url: `redis://${HOST}:${port}`, child };
}

interface RelayProcess {
  url: string;
  child: ChildProcess;
}

async function startRelayProcess(args: string[]): Promise<RelayProcess> {
  const child = startChild('npx', ['tsx', 'relay/cli.ts', ...args], 'relay');
  const match = await waitForOutput(child, /relay listening on (http:\/\/[^\s]+)/, 'the relay');
  // Drain stdout from now on, or a chatty relay would block on a full pipe.
  child.stdout?.resume();
  return { url: match[1]!.replace(/\/+$/, ''), child };
}

// ---------------------------------------------------------------------------------------------
// Agents: one raw SSE stream each.

interface Agent {
  id: string;
  token: string;
  authorization: string;
}

type Delivery = { agent: number; type: string; callId: string; status?: string; receivedAt?: number };

/** `call.claimed` is counted without parsing: the claims before the measured phase bring many of them. */
const CLAIMED_MARK = '"type":"call.claimed"';

/** Opens `agent`'s stream; every complete `data:` line is handed to `onData` (minimal SSE parsing). */
function openStream(baseUrl: string, agent: Agent, index: number, onEvent: (d: Delivery) => void, onClaimed: () => void): Promise<IncomingMessage> {
  const url = new URL('/events', baseUrl);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      { host: url.hostname, port: url.port, path: url.pathname, method: 'GET', agent: false, headers: { authorization: agent.authorization, accept: 'text/event-stream' } },
      (res) => {
        if (res.statusCode !== 200) {
          res.resume();
          reject(new Error(`agent ${agent.id}: /events answered HTTP ${res.statusCode}`));
          return;
        }
        res.socket.setNoDelay(true);
        res.setEncoding('utf8');
        let buffer = '';
        res.on('data', (chunk: string) => {
          buffer += chunk;
          let end: number;
          while ((end = buffer.indexOf('\n\n')) >= 0) {
            const block = buffer.slice(0, end);
            buffer = buffer.slice(end + 2);
            const at = block.indexOf('data: ');
            if (at < 0) continue; // heartbeat or comment
            const lineEnd = block.indexOf('\n', at);
            const data = block.slice(at + 6, lineEnd < 0 ? undefined : lineEnd);
            if (data.includes(CLAIMED_MARK)) {
              onClaimed();
              continue;
            }
            try {
              const envelope = JSON.parse(data) as { receivedAt?: number; event: { type: string; callId?: string; status?: string } };
              const event = envelope.event;
              if (event.callId !== undefined) {
                onEvent({
                  agent: index,
                  type: event.type,
                  callId: event.callId,
                  ...(event.status !== undefined ? { status: event.status } : {}),
                  ...(typeof envelope.receivedAt === 'number' ? { receivedAt: envelope.receivedAt } : {}),
                });
              }
            } catch {
              // Not ours to judge here: the relay's own tests check the wire format.
            }
          }
        });
        res.on('error', () => undefined);
        resolve(res);
      },
    );
    req.setTimeout(30_000, () => req.destroy(new Error(`agent ${agent.id}: /events did not answer`)));
    req.on('error', reject);
    req.end();
  });
}

/** Runs `task` over `items` with at most `limit` at a time. */
async function withLimit<T>(items: readonly T[], limit: number, task: (item: T, index: number) => Promise<void>): Promise<void> {
  let next = 0;
  const workers = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) {
      const i = next++;
      await task(items[i]!, i);
    }
  });
  await Promise.all(workers);
}

// ---------------------------------------------------------------------------------------------
// Webhooks, as the gateway sends them (protocol.md "Events").

const unixSeconds = () => String(Math.floor(Date.now() / 1000));

function envelope(value: Record<string, unknown>): string {
  return JSON.stringify({
    object: 'chatapp_business_account',
    entry: [{ id: 'WABA-BENCH', changes: [{ field: 'calls', value: { messaging_product: 'chatapp', metadata: { display_phone_number: BUSINESS_NUMBER, phone_number_id: 'PN-BENCH' }, ...value } }] }],
  });
}

const customerNumber = (n: number) => `4474${String(10_000_000 + (n % 90_000_000)).padStart(8, '0')}`;

/** Step 0 and 1: call statuses; step 2: the terminate. */
function outgoingStepWebhook(callId: string, step: number, n: number): { body: string; key: string } {
  if (step < 2) {
    const status = step === 0 ? 'RINGING' : 'ACCEPTED';
    return { body: envelope({ statuses: [{ id: callId, type: 'call', status, timestamp: unixSeconds(), recipient_id: customerNumber(n) }] }), key: `${callId}|${status}` };
  }
  const now = Math.floor(Date.now() / 1000);
  return {
    body: envelope({
      calls: [
        {
          id: callId,
          to: customerNumber(n),
          from: BUSINESS_NUMBER,
          event: 'terminate',
          direction: 'BUSINESS_INITIATED',
          timestamp: String(now),
          status: 'COMPLETED',
          start_time: String(now - 30),
          end_time: String(now),
          duration: 30,
        },
      ],
    }),
    key: `${callId}|terminated`,
  };
}

function incomingWebhook(callId: string, n: number): string {
  const from = customerNumber(n);
  return envelope({
    contacts: [{ profile: { name: `Bench Customer ${n}` }, wa_id: from }],
    calls: [{ id: callId, from, to: BUSINESS_NUMBER, event: 'connect', timestamp: unixSeconds(), direction: 'USER_INITIATED', session: { sdp_type: 'offer', sdp: customerOffer } }],
  });
}

const deliveryKey = (d: Delivery): string =>
  d.type === 'call.status' ? `${d.callId}|${d.status}` : d.type === 'call.terminated' ? `${d.callId}|terminated` : `${d.callId}|${d.type}`;

// ---------------------------------------------------------------------------------------------
// Measurement helpers.

const percentile = (sorted: readonly number[], p: number): number => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] ?? NaN;

async function relayMetrics(baseUrl: string): Promise<string> {
  const res = await fetch(`${baseUrl}/metrics`);
  return res.text();
}

async function relayRss(baseUrl: string): Promise<number> {
  const match = /^process_resident_memory_bytes\s+([0-9.eE+]+)\s*$/m.exec(await relayMetrics(baseUrl));
  if (!match) throw new Error('the relay /metrics has no process_resident_memory_bytes');
  return Number(match[1]);
}

/** Cumulative counts of the relay's own delivery-latency histogram (webhook received → written), by bucket bound. */
function latencyBuckets(metrics: string): Map<number, number> {
  const buckets = new Map<number, number>();
  for (const m of metrics.matchAll(/^relay_delivery_latency_seconds_bucket\{[^}]*le="([^"]+)"[^}]*\}\s+([0-9.eE+]+)\s*$/gm)) {
    const bound = m[1] === '+Inf' ? Infinity : Number(m[1]);
    buckets.set(bound, (buckets.get(bound) ?? 0) + Number(m[2]));
  }
  return buckets;
}

/** The bucket bound (ms) under which `p` % of the deliveries between two readings fell. */
function histogramQuantileMs(before: Map<number, number>, after: Map<number, number>, p: number): number {
  const bounds = [...after.keys()].sort((a, b) => a - b);
  const total = (after.get(Infinity) ?? 0) - (before.get(Infinity) ?? 0);
  if (total <= 0) return NaN;
  for (const bound of bounds) {
    if ((after.get(bound) ?? 0) - (before.get(bound) ?? 0) >= (p / 100) * total) return bound * 1000;
  }
  return Infinity;
}

/** CPU seconds used so far by every process in the child's process group (npx, tsx, the relay), from /proc. */
async function groupCpuSeconds(child: ChildProcess): Promise<number> {
  if (child.pid === undefined) return NaN;
  let ticks = 0;
  for (const entry of await readdir('/proc').catch(() => [] as string[])) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = await readFile(`/proc/${entry}/stat`, 'utf8').catch(() => '');
    // Fields after the command name (which may hold spaces): state ppid pgrp … utime(14) stime(15).
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (Number(fields[2]) !== child.pid) continue;
    ticks += Number(fields[11]) + Number(fields[12]);
  }
  return ticks / CLOCK_TICKS_PER_SECOND;
}
/** Linux's USER_HZ, which /proc/<pid>/stat counts in. */
const CLOCK_TICKS_PER_SECOND = 100;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface PhaseResult {
  offered: number;
  sent: number;
  accepted: number;
  refused: number;
  failed: number;
  /** accepted per second over the phase's duration. */
  ingestedPerSec: number;
  expectedDeliveries: number;
  deliveries: number;
  latencies: number[];
  /** Sent → the relay's receivedAt, and receivedAt → read by the agent (wall clocks of one machine, ms resolution on the relay's side). */
  toRelay: number[];
  fromRelay: number[];
  /** Handed to the sender's pool → read by the agent: also counts the wait for a free connection. */
  withQueue: number[];
  /** The bench process's own event-loop utilisation while sending: near 1 would make it the bottleneck. */
  benchLoad: number;
}

/**
 * Sends `total` webhooks at `rate` per second (open loop: on schedule, not after the previous one
 * answered), never more than MAX_IN_FLIGHT at once; a webhook whose slot comes while the limit is
 * reached waits, so a relay that falls behind shows as a lower ingested rate.
 */
/** Names each webhook, so that the moment it goes on the wire can be matched to it. */
const SEQ_HEADER = 'x-bench-seq';
/** Webhooks handed to the pool but not yet written, by sequence number: their delivery keys. */
const awaitingWire = new Map<string, string[]>();
/** When each delivery key's webhook was handed to the pool (before any wait for a connection). */
const queuedAt = new Map<string, number>();
let wireTarget: Map<string, number> | undefined;
const SEQ_PATTERN = new RegExp(`\\r\\n${SEQ_HEADER}: (\\d+)\\r\\n`, 'i');
// Published right before the request's first byte is written to its socket.
diagnosticsChannel.channel('undici:client:sendHeaders').subscribe((message) => {
  const { headers } = message as { headers: string };
  const seq = SEQ_PATTERN.exec(`\r\n${headers}`)?.[1];
  const keys = seq === undefined ? undefined : awaitingWire.get(seq);
  if (keys === undefined || seq === undefined) return;
  awaitingWire.delete(seq);
  const at = performance.now();
  for (const key of keys) wireTarget?.set(key, at);
});

async function drive(
  pool: Pool,
  secret: string,
  total: number,
  rate: number,
  durationMs: number,
  make: (n: number) => { body: string; keys: string[] },
  sentAt: Map<string, number>,
): Promise<Omit<PhaseResult, 'expectedDeliveries' | 'deliveries' | 'latencies' | 'toRelay' | 'fromRelay' | 'withQueue'>> {
  wireTarget = sentAt;
  awaitingWire.clear();
  let sent = 0;
  let accepted = 0;
  let refused = 0;
  let failed = 0;
  let inFlight = 0;
  const started = performance.now();
  let lastAnswerAt = started;
  const elu = performance.eventLoopUtilization();
  await new Promise<void>((resolve) => {
    const tick = setInterval(() => {
      const elapsed = performance.now() - started;
      // On schedule until the time is up; what the in-flight limit held back by then is not sent.
      const due = elapsed >= durationMs ? sent : Math.min(total, Math.floor((elapsed / 1000) * rate));
      while (sent < due && inFlight < MAX_IN_FLIGHT) {
        const n = sent++;
        const { body, keys } = make(n);
        const signature = `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
        inFlight++;
        // Timed from the moment its first byte is written (wireStamp below); until then it waits
        // for one of the pool's connections, and that wait is reported apart.
        const at = performance.now();
        for (const key of keys) queuedAt.set(key, at);
        awaitingWire.set(String(n), keys);
        pool
          .request({ path: '/webhook', method: 'POST', headers: { 'content-type': 'application/json', 'x-hub-signature-256': signature, [SEQ_HEADER]: String(n) }, body })
          .then(async (res) => {
            await res.body.dump();
            if (res.statusCode === 200) accepted++;
            else refused++;
          })
          .catch(() => {
            failed++;
          })
          .finally(() => {
            inFlight--;
            lastAnswerAt = performance.now();
          });
      }
      const finished = (sent >= total || elapsed >= durationMs) && inFlight === 0;
      if (finished || elapsed >= durationMs + DRAIN_MS) {
        clearInterval(tick);
        resolve();
      }
    }, 2);
  });
  const benchLoad = performance.eventLoopUtilization(elu).utilization;
  // Over the time it really took: answers that came after the sending window count at their pace.
  const seconds = Math.max(durationMs, lastAnswerAt - started) / 1000;
  return { offered: total, sent, accepted, refused, failed, ingestedPerSec: accepted / seconds, benchLoad };
}

async function waitForDeliveries(count: () => number, expected: number): Promise<void> {
  const deadline = performance.now() + DRAIN_MS;
  while (count() < expected && performance.now() < deadline) await sleep(20);
}

// ---------------------------------------------------------------------------------------------
// One backend.

interface BackendResult {
  backend: string;
  kbPerAgent: number;
  rssZeroMb: number;
  rssFullMb: number;
  main: PhaseResult;
  ring: PhaseResult & { calls: number };
  claims: { count: number; ms: number; claimedEvents: number };
  /** The relay's own view of the main phase: webhook received → written to the stream. */
  relaySideP50Ms: number;
  relaySideP99Ms: number;
  /** The relay's CPU use during the per-agent phase, in % of one core. */
  relayCpuPercent: number;
}

async function benchBackend(backend: 'memory' | 'redis', agents: Agent[], agentsFile: string, dataDir: string): Promise<BackendResult> {
  const secret = randomBytes(24).toString('base64url');
  const run = randomBytes(3).toString('hex');
  let redis: { url: string; child: ChildProcess } | undefined;
  let relay: RelayProcess | undefined;
  const streams: IncomingMessage[] = [];
  const pool = { current: undefined as Pool | undefined };
  try {
    const args = ['--port', '0', '--host', HOST, '--app-secret', secret, '--agents', agentsFile, '--data-dir', dataDir, '--log-level', 'error'];
    if (backend === 'redis') {
      redis = await startRedis();
      args.push('--redis', redis.url, '--redis-prefix', `bench:${run}:`);
    }
    relay = await startRelayProcess(args);
    const baseUrl = relay.url;
    pool.current = new Pool(baseUrl, { connections: 32, pipelining: 1, keepAliveTimeout: 30_000 });
    const http = pool.current;
    console.log(`  ${backend}: relay at ${baseUrl}${redis ? `, redis at ${redis.url}` : ''}`);

    await sleep(1_000);
    const rssZero = await relayRss(baseUrl);

    // Deliveries are matched to what was sent by key: "<callId>|<status or kind>".
    const sentAt = new Map<string, number>();
    const latencies: number[] = [];
    const toRelay: number[] = [];
    const withQueue: number[] = [];
    const fromRelay: number[] = [];
    let deliveries = 0;
    let wrongAgent = 0;
    let claimedEvents = 0;
    const onClaimed = () => {
      claimedEvents++;
    };
    let phase: 'idle' | 'main' | 'ring' = 'idle';
    const owner = new Map<string, number>();
    const onEvent = (d: Delivery) => {
      if (phase === 'idle') return;
      const at = performance.now();
      const sent = sentAt.get(deliveryKey(d));
      if (sent === undefined) return;
      if (phase === 'main') {
        if (owner.get(d.callId) !== d.agent) {
          wrongAgent++;
          return;
        }
        sentAt.delete(deliveryKey(d));
      }
      deliveries++;
      latencies.push(at - sent);
      const queued = queuedAt.get(deliveryKey(d));
      if (queued !== undefined) withQueue.push(at - queued);
      if (d.receivedAt !== undefined) {
        toRelay.push(d.receivedAt - (performance.timeOrigin + sent));
        fromRelay.push(performance.timeOrigin + at - d.receivedAt);
      }
    };

    const connectStarted = performance.now();
    await withLimit(agents, 50, async (agent, i) => {
      streams.push(await openStream(baseUrl, agent, i, onEvent, onClaimed));
    });
    await withLimit(agents, 64, async (agent) => {
      const res = await http.request({
        path: '/presence',
        method: 'PUT',
        headers: { authorization: agent.authorization, 'content-type': 'application/json' },
        body: '{"status":"available"}',
      });
      await res.body.dump();
      if (res.statusCode !== 200) throw new Error(`presence of ${agent.id}: HTTP ${res.statusCode}`);
    });
    console.log(`  ${backend}: ${agents.length} agents connected and available in ${Math.round(performance.now() - connectStarted)} ms`);
    await sleep(1_500);
    const rssFull = await relayRss(baseUrl);

    // Per-agent phase: every agent claims its own outgoing calls first (unmeasured), as the app does
    // right after initiate; then each webhook is one step of one call: RINGING, ACCEPTED, terminate.
    const total = Math.round((RATE * DURATION_MS) / 1000);
    const callsPerAgent = Math.ceil(total / (agents.length * 3));
    const callIds: string[][] = agents.map((_, i) => Array.from({ length: callsPerAgent }, (_u, k) => `wacid.bench-${run}-${i}-${k}`));
    const claimList = callIds.flatMap((ids, i) => ids.map((callId) => ({ callId, agent: agents[i]!, index: i })));
    const claimStarted = performance.now();
    await withLimit(claimList, 64, async ({ callId, agent, index }) => {
      const res = await http.request({ path: `/calls/${encodeURIComponent(callId)}/claim`, method: 'POST', headers: { authorization: agent.authorization } });
      await res.body.dump();
      if (res.statusCode !== 200) throw new Error(`claim of ${callId}: HTTP ${res.statusCode}`);
      owner.set(callId, index);
    });
    const claimMs = performance.now() - claimStarted;
    // Each claim stores a call.claimed event; let its deliveries finish before measuring anything.
    for (let last = -1; claimedEvents !== last; ) {
      last = claimedEvents;
      await sleep(500);
    }
    console.log(
      `  ${backend}: ${claimList.length} calls claimed in ${Math.round(claimMs)} ms (${fmt(claimList.length / (claimMs / 1000), 0)}/s); ` +
        `their call.claimed events reached ${claimedEvents} agent streams; sending ${total} webhooks at ${RATE}/s`,
    );

    const histogramBefore = latencyBuckets(await relayMetrics(baseUrl));
    const cpuBefore = await groupCpuSeconds(relay.child);
    const mainStarted = performance.now();
    phase = 'main';
    const main = await drive(
      http,
      secret,
      total,
      RATE,
      DURATION_MS,
      (n) => {
        // Round-robin over the agents, so each gets a steady stream; the steps of one call are an agent-round apart.
        const agent = n % agents.length;
        const round = Math.floor(n / agents.length);
        const callId = callIds[agent]![Math.floor(round / 3)]!;
        const { body, key } = outgoingStepWebhook(callId, round % 3, n);
        return { body, keys: [key] };
      },
      sentAt,
    );
    await waitForDeliveries(() => deliveries, main.accepted);
    const sorted = (values: number[]) => [...values].sort((a, b) => a - b);
    const mainResult: PhaseResult = { ...main, expectedDeliveries: main.accepted, deliveries, latencies: sorted(latencies), toRelay: sorted(toRelay), fromRelay: sorted(fromRelay), withQueue: sorted(withQueue) };
    if (wrongAgent > 0) console.log(`  ${backend}: ${wrongAgent} events reached an agent other than the call's owner`);
    const histogramAfter = latencyBuckets(await relayMetrics(baseUrl));
    const relayCpuPercent = (((await groupCpuSeconds(relay.child)) - cpuBefore) / ((performance.now() - mainStarted) / 1000)) * 100;

    // Ring-everyone phase.
    phase = 'ring';
    deliveries = 0;
    latencies.length = 0;
    toRelay.length = 0;
    fromRelay.length = 0;
    withQueue.length = 0;
    queuedAt.clear();
    sentAt.clear();
    const ringCalls = Math.round((RING_RATE * RING_DURATION_MS) / 1000);
    const ring = await drive(
      http,
      secret,
      ringCalls,
      RING_RATE,
      RING_DURATION_MS,
      (n) => {
        const callId = `wacid.bench-in-${run}-${n}`;
        return { body: incomingWebhook(callId, n), keys: [`${callId}|call.incoming`] };
      },
      sentAt,
    );
    await waitForDeliveries(() => deliveries, ring.accepted * agents.length);
    const ringResult = { ...ring, calls: ringCalls, expectedDeliveries: ring.accepted * agents.length, deliveries, latencies: sorted(latencies), toRelay: sorted(toRelay), fromRelay: sorted(fromRelay), withQueue: sorted(withQueue) };
    phase = 'idle';

    return {
      backend,
      kbPerAgent: (rssFull - rssZero) / agents.length / 1024,
      rssZeroMb: rssZero / 1024 / 1024,
      rssFullMb: rssFull / 1024 / 1024,
      main: mainResult,
      ring: ringResult,
      claims: { count: claimList.length, ms: claimMs, claimedEvents },
      relaySideP50Ms: histogramQuantileMs(histogramBefore, histogramAfter, 50),
      relaySideP99Ms: histogramQuantileMs(histogramBefore, histogramAfter, 99),
      relayCpuPercent,
    };
  } finally {
    for (const s of streams) s.destroy();
    await pool.current?.close().catch(() => undefined);
    if (relay) await stopChild(relay.child);
    if (redis) await stopChild(redis.child);
  }
}

// ---------------------------------------------------------------------------------------------

const fmt = (v: number, digits = 1) => (Number.isFinite(v) ? v.toFixed(digits) : '—');
const verdict = (ok: boolean) => (ok ? 'meets' : 'MISSES');

function printResults(results: BackendResult[]): void {
  const rows: string[][] = [
    ['backend', 'webhooks/s ingested', 'p50 ms', 'p99 ms', 'delivered', 'KB/agent', `RSS 0 → ${AGENTS} agents`],
    ...results.map((r) => [
      r.backend,
      `${fmt(r.main.ingestedPerSec, 0)} (${verdict(r.main.ingestedPerSec >= TARGET_RATE)})`,
      fmt(percentile(r.main.latencies, 50)),
      `${fmt(percentile(r.main.latencies, 99))} (${verdict(percentile(r.main.latencies, 99) <= TARGET_P99_MS)})`,
      `${r.main.deliveries}/${r.main.expectedDeliveries}`,
      `${fmt(r.kbPerAgent)} (${verdict(r.kbPerAgent <= TARGET_KB_PER_AGENT)})`,
      `${fmt(r.rssZeroMb)} → ${fmt(r.rssFullMb)} MB`,
    ]),
  ];
  const ringRows: string[][] = [
    ['backend', 'incoming calls/s', 'SSE deliveries/s', 'p50 ms', 'p99 ms', 'delivered'],
    ...results.map((r) => [
      r.backend,
      fmt(r.ring.ingestedPerSec, 1),
      fmt(r.ring.deliveries / (RING_DURATION_MS / 1000), 0),
      fmt(percentile(r.ring.latencies, 50)),
      fmt(percentile(r.ring.latencies, 99)),
      `${r.ring.deliveries}/${r.ring.expectedDeliveries}`,
    ]),
  ];
  const table = (t: string[][]) => {
    const widths = t[0]!.map((_, c) => Math.max(...t.map((row) => row[c]!.length)));
    return t.map((row, i) => {
      const line = row.map((cell, c) => cell.padEnd(widths[c]!)).join('  │  ');
      return i === 0 ? `${line}\n${widths.map((w) => '─'.repeat(w)).join('──┼──')}` : line;
    });
  };
  console.log('');
  console.log(`Per-agent traffic: ${fmt(RATE, 0)} webhooks/s offered for ${DURATION_MS / 1000} s, ≤ ${MAX_IN_FLIGHT} in flight, each event to its call's owner only`);
  console.log(`Targets: ≥ ${TARGET_RATE} webhooks/s, p99 ≤ ${TARGET_P99_MS} ms (webhook written to the relay → event read by the agent), ≤ ${TARGET_KB_PER_AGENT} KB per connected agent`);
  for (const line of table(rows)) console.log(`  ${line}`);
  console.log('');
  console.log(`Ring everyone: incoming calls at ${RING_RATE}/s for ${RING_DURATION_MS / 1000} s, each to all ${AGENTS} available agents (latency per agent that rang)`);
  for (const line of table(ringRows)) console.log(`  ${line}`);
  console.log('');
  for (const r of results) {
    const m = r.main;
    const notes: string[] = [];
    if (m.sent < m.offered) notes.push(`${m.offered - m.sent} webhooks not sent in time (in-flight limit reached)`);
    if (m.refused + m.failed > 0) notes.push(`${m.refused} refused, ${m.failed} failed`);
    notes.push(`from when the webhook was handed to the sender's pool of 32 connections (its wait for one included): p50 ${fmt(percentile(m.withQueue, 50))} / p99 ${fmt(percentile(m.withQueue, 99))} ms`);
    notes.push(
      `split of the latency: sent → received by the relay p50 ${fmt(percentile(m.toRelay, 50))} / p99 ${fmt(percentile(m.toRelay, 99))} ms; ` +
        `received by the relay → read by the agent p50 ${fmt(percentile(m.fromRelay, 50))} / p99 ${fmt(percentile(m.fromRelay, 99))} ms`,
    );
    notes.push(`relay's own histogram (received → written): p50 ≤ ${fmt(r.relaySideP50Ms, 0)} ms, p99 ≤ ${fmt(r.relaySideP99Ms, 0)} ms`);
    notes.push(`relay CPU ${fmt(r.relayCpuPercent, 0)} % of a core`);
    notes.push(`bench process event-loop load ${fmt(m.benchLoad * 100, 0)} % while sending`);
    notes.push(`set-up: ${r.claims.count} claims at ${fmt(r.claims.count / (r.claims.ms / 1000), 0)}/s, ${r.claims.claimedEvents} call.claimed deliveries`);
    console.log(`  ${r.backend}:`);
    for (const note of notes) console.log(`    - ${note}`);
  }
}

async function main(): Promise<number> {
  const watchdog = setTimeout(() => {
    console.error(`relay benchmark: still running after ${WATCHDOG_MS / 60_000} min; stopping`);
    killAllNow();
    process.exit(1);
  }, WATCHDOG_MS);
  const dir = await mkdtemp(join(tmpdir(), 'relay-bench-'));
  try {
    const agents: Agent[] = Array.from({ length: AGENTS }, (_, i) => {
      const token = randomBytes(24).toString('base64url');
      return { id: `a${String(i + 1).padStart(4, '0')}`, token, authorization: `Bearer ${token}` };
    });
    const agentsFile = join(dir, 'agents.json');
    const file = { agents: agents.map((a) => ({ id: a.id, name: `Bench agent ${a.id}`, tokenSha256: createHash('sha256').update(a.token).digest('hex') })) };
    await writeFile(agentsFile, JSON.stringify(file), { mode: 0o600 });

    console.log(`Relay benchmark: ${AGENTS} agents on ${HOST}; relay as a child process (npx tsx relay/cli.ts), memory then Redis`);
    console.log(`Call records: the embedded database (PGlite) in a temporary --data-dir under ${dir}, made afresh for each backend and removed after`);
    console.log('Workload: per-agent traffic — each agent owns outgoing calls it has claimed; every webhook is one status event of one');
    console.log(`such call (RINGING, ACCEPTED, terminate), delivered to that agent only (fanning each webhook out to all ${AGENTS} agents would`);
    console.log(`be ${fmt((RATE * AGENTS) / 1e6, 1)} M SSE writes/s). Then, measured apart: incoming calls that ring all ${AGENTS} agents, at a lower rate.`);
    const results: BackendResult[] = [];
    for (const backend of BACKENDS) results.push(await benchBackend(backend, agents, agentsFile, join(dir, `relay-data-${backend}`)));
    printResults(results);
    const ok = results.every(
      (r) => r.main.ingestedPerSec >= TARGET_RATE && percentile(r.main.latencies, 99) <= TARGET_P99_MS && r.kbPerAgent <= TARGET_KB_PER_AGENT,
    );
    console.log('');
    console.log(ok ? 'All targets met for both backends.' : 'Some targets were missed (see MISSES above).');
    return 0;
  } finally {
    clearTimeout(watchdog);
    await rm(dir, { recursive: true, force: true });
  }
}

process.on('exit', killAllNow);
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    killAllNow();
    process.exit(130);
  });
}

main().then(
  (code) => process.exit(code),
  (e: unknown) => {
    console.error(`relay benchmark failed: ${errorText(e)}`);
    killAllNow();
    process.exit(1);
  },
);

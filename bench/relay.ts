// `npm run bench:relay`: the relay under a team's load, on 127.0.0.1, for the memory and the Redis
// backends, with its call records going to PostgreSQL. The relay runs as a child process (`npx tsx
// relay/cli.ts`); with Redis, against a redis-server this benchmark starts on a free port. 10 000
// agents hold server-sent-event streams (raw node:http, minimal parsing) and report presence; then
// signed webhooks are driven at a steady rate with a bounded number in flight, for a fixed time.
// Reported per backend:
//
//   sustained webhooks/s ingested (answered 200)                          target ≥ 5 000/s
//   p50 / p99 from webhook sent to event received by the agent it concerns target p99 ≤ 50 ms
//   memory per connected agent: (RSS with 10 000 agents − RSS with 0) / 10 000   target ≤ 30 KB
//   the records: facts written, waiting, journaled and dropped (/healthz `records`) once the
//   writer has caught up, and how long that took after the last webhook
//
// RECORDS. The relay gets `--database postgres://…`: a PostgreSQL this benchmark starts from
// Debian's packages (bench/records-database.ts: a temporary folder, a free port, as `postgres` when
// root), with a fresh database for each backend run; or the server at BENCH_RELAY_DATABASE_URL,
// whose user must be able to CREATE DATABASE (the benchmark's databases are dropped after).
// BENCH_RELAY_RECORDS=embedded runs the embedded PGlite in a temporary --data-dir instead.
//
// REPORTS. Once, after the backends, on the same PostgreSQL: a database of its own filled with
// 1 000 000 ended calls over a 30-day month (BENCH_RELAY_REPORT_CALLS; 0 leaves the phase out), then
// timed against the target "the report query for a month of 1 000 000 calls in ≤ 2 s", taken to
// mean the month's summary (`summary` of relay/records/records-queries.ts, what the wallboard and a
// month's figures read). Beside it, the month's whole calls CSV through the relay's own
// `GET /reports/calls.csv` as a supervisor: its time, rows/s and the relay's RSS growth meanwhile.
//
// TIMING. A webhook counts as sent when it is written to the relay's socket. This process sends
// through 32 keep-alive connections (BENCH_RELAY_CONNECTIONS), one webhook on each at a time, with
// up to 128 webhooks in flight (BENCH_RELAY_IN_FLIGHT), so a webhook may first wait here for a free
// connection; that wait belongs to this sender, not to the relay, and is printed apart, as is the
// split at the relay's receivedAt (sent → received by the relay, received → read by the agent).
// Every phase's requests are made, signed and serialised before its clock starts, and written by a
// sender that does only what a correct HTTP/1.1 client must (bench/webhook-sender.ts), so that what
// this process does on the cores it shares with the relay while it sends is the sending; their
// timestamps are that moment's, so a phase longer than a minute would send connects the relay
// drops as stale.
//
// SCHEDULING. This process is the gateway and the 10 000 agents, other machines in a deployment;
// here it shares the relay's cores, and each answer and event the relay writes wakes it. While it
// drives a phase it runs as SCHED_BATCH at nice 10 (bench/load-generator-priority.ts), so that those
// wakeups do not take the core from the relay's event loop; the relay and PostgreSQL keep theirs.
// BENCH_RELAY_YIELD=0 leaves it as it was; the report says which it was.
//
// WORKLOAD. Fanning every webhook out to all 10 000 agents would be 55 M SSE writes/s, which is not
// what a team's relay does: most traffic concerns one agent. So the main phase is per-agent: every
// agent has placed outgoing calls and claimed them (POST /calls/{id}/claim, as the app does right
// after initiate), and each webhook is one status event of one of those calls (RINGING, ACCEPTED,
// terminate), which the relay delivers to that call's owner only. A second, separately measured
// phase sends incoming calls that ring every agent, at a rate that makes some 10 000 SSE deliveries
// a second (1 call/s with 10 000 agents).
//
// OPEN FILES. This process and the relay each hold one socket per agent. Node raises its own soft
// limit on open files to the hard one as it starts, in this process and in the relay alike; when
// even that is below what the agents need, the benchmark stops at once and says so (`ulimit -Hn`).
//
// Everything stops by itself: every phase is bounded in count and time, a watchdog ends a run that
// hangs, the child processes (relay, redis-server, postgres) are ended by their process group on
// every way out, and the temporary folders are removed.
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash, createHmac, randomBytes } from 'node:crypto';
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { createServer, connect as netConnect } from 'node:net';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { Pool } from 'undici';
import { migrate } from '../relay/records/migrations';
import { describePostgresUrl } from '../relay/records/database';
import { PostgresDatabase } from '../relay/records/postgres-database';
import { summary, type CallSummary } from '../relay/records/records-queries';
import type { RecordsStatus } from '../relay/records/relay-records';
import { errorText } from '../shared/result';
import { customerOffer } from '../test/fixtures/sdp';
import {
  createDatabase,
  dropDatabase,
  fillMonthOfCalls,
  initCluster,
  pastMonth,
  postgresLogWorthShowing,
  postgresMissingLine,
  postgresUrl,
  serverCommand,
  serverVersion,
  waitForServer,
  withClient,
  type MonthOfCalls,
} from './records-database';
import { yieldToTheRelay } from './load-generator-priority';
import { postBytes, WebhookSender } from './webhook-sender';

const env = (name: string, fallback: number): number => {
  const v = Number(process.env[name]);
  return Number.isFinite(v) && v > 0 ? v : fallback;
};

const AGENTS = Math.round(env('BENCH_RELAY_AGENTS', 10_000));
/** Offered webhooks per second in the per-agent phase: above the target, so that reaching it shows. */
const RATE = env('BENCH_RELAY_RATE', 5_500);
const DURATION_MS = env('BENCH_RELAY_SECONDS', 10) * 1_000;
/** Webhooks in flight at most: the gateway's own retries are what an unbounded sender would be. */
const MAX_IN_FLIGHT = Math.round(env('BENCH_RELAY_IN_FLIGHT', 128));
/** The sender's keep-alive connections to the relay, one webhook on each at a time. */
const CONNECTIONS = Math.round(env('BENCH_RELAY_CONNECTIONS', 32));
/** BENCH_RELAY_YIELD=0 keeps this process's scheduling as it is while it drives load (load-generator-priority.ts). */
const YIELD = process.env.BENCH_RELAY_YIELD !== '0';
/** Incoming calls per second in the ring-everyone phase (some 10 000 SSE deliveries a second), and for how long. */
const RING_RATE = env('BENCH_RELAY_RING_RATE', Math.max(1, Math.round(10_000 / AGENTS)));
const RING_DURATION_MS = env('BENCH_RELAY_RING_SECONDS', 5) * 1_000;
/** BENCH_RELAY_BACKENDS=redis (or memory) runs one of them; both by default. */
const BACKENDS = (['memory', 'redis'] as const).filter((b) => (process.env.BENCH_RELAY_BACKENDS ?? 'memory,redis').split(',').includes(b));
/** Where the relay's call records go: PostgreSQL (the benchmark's own, or BENCH_RELAY_DATABASE_URL's), or the embedded PGlite. */
const RECORDS: 'postgres' | 'embedded' = process.env.BENCH_RELAY_RECORDS === 'embedded' ? 'embedded' : 'postgres';
const DATABASE_URL = process.env.BENCH_RELAY_DATABASE_URL !== undefined && process.env.BENCH_RELAY_DATABASE_URL !== '' ? process.env.BENCH_RELAY_DATABASE_URL : undefined;
/** Calls in the report phase's month; 0 leaves the phase out. */
const REPORT_CALLS = process.env.BENCH_RELAY_REPORT_CALLS === '0' ? 0 : Math.round(env('BENCH_RELAY_REPORT_CALLS', 1_000_000));
/** The whole run (both backends and the reports) never takes longer than this. */
const WATCHDOG_MS = 25 * 60_000;
const DRAIN_MS = 10_000;
/** How long the records' writer gets to catch up after a backend's last webhook. */
const RECORDS_DRAIN_MS = 180_000;

const TARGET_RATE = 5_000;
const TARGET_P99_MS = 50;
const TARGET_KB_PER_AGENT = 30;
const TARGET_REPORT_MS = 2_000;
/** Open files each of this process and the relay needs beyond one socket per agent. */
const FILES_BESIDE_AGENTS = 512;

const HOST = '127.0.0.1';
const BUSINESS_NUMBER = '442079460000';

// ---------------------------------------------------------------------------------------------
// Child processes: started in their own process group, so that ending the group ends npx, tsx and
// the relay under them together.

const children = new Set<ChildProcess>();

/** `show` picks the lines of the child's stderr that are printed (default: all but npm's warnings). */
function startChild(command: string, args: string[], name: string, show: (line: string) => boolean = (line) => !/npm warn/i.test(line)): ChildProcess {
  const child = spawn(command, args, { cwd: process.cwd(), detached: true, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, FORCE_COLOR: '0' } });
  children.add(child);
  child.on('exit', () => children.delete(child));
  child.stderr?.setEncoding('utf8');
  child.stderr?.on('data', (text: string) => {
    for (const line of text.split('\n')) if (line.trim() !== '' && show(line)) process.stderr.write(`  [${name}] ${line.slice(0, 300)}\n`);
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

/** Ends the child's group with `signal` (PostgreSQL: SIGINT, its fast shutdown), and SIGKILL 8 s later if need be. */
async function stopChild(child: ChildProcess, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  signalGroup(child, signal);
  const timer = setTimeout(() => signalGroup(child, 'SIGKILL'), 8_000);
  await exited;
  clearTimeout(timer);
  // tsx's own child may outlive the wrapper for a moment; the group takes it along.
  signalGroup(child, 'SIGKILL');
}

/** Kills every child's group and every process under it by its id (PostgreSQL's backends are in sessions of their own). */
function killAllNow(): void {
  for (const child of children) {
    const tree = processTree(child);
    signalGroup(child, 'SIGKILL');
    for (const { pid } of tree) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // Already gone.
      }
    }
  }
}

/** The temporary folders of this run: removed at its end, and on the way out however it ends. */
const tempDirs = new Set<string>();

async function makeTempDir(prefix: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  tempDirs.add(dir);
  return dir;
}

async function removeTempDir(dir: string): Promise<void> {
  await rm(dir, { recursive: true, force: true, maxRetries: 3 });
  tempDirs.delete(dir);
}

/** At exit (the watchdog, a signal, an error): the children killed first, then their folders removed. */
function cleanUpNow(): void {
  killAllNow();
  for (const dir of tempDirs) {
    try {
      rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
    } catch {
      // A process killed a moment ago may still be letting go of a file; nothing more to do at exit.
    }
  }
  tempDirs.clear();
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

/** The relay's /healthz `records` (undefined when it keeps none). */
async function recordsStatus(baseUrl: string): Promise<RecordsStatus | undefined> {
  const res = await fetch(`${baseUrl}/healthz`);
  const body = (await res.json()) as { records?: RecordsStatus };
  return body.records;
}

/** Waits until the records' writer has nothing left in memory nor in its journal, `timeoutMs` at most; the last status, and how long it took (undefined: not within the time). */
async function recordsCaughtUp(baseUrl: string, timeoutMs: number): Promise<{ status: RecordsStatus | undefined; ms: number | undefined }> {
  const started = performance.now();
  for (;;) {
    const status = await recordsStatus(baseUrl);
    const waiting = status === undefined ? 0 : status.queued + status.journaled;
    if (waiting === 0 && status?.database !== 'connecting') return { status, ms: performance.now() - started };
    if (performance.now() - started > timeoutMs) return { status, ms: undefined };
    await sleep(250);
  }
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

/**
 * The processes under the child (itself included), from /proc: npx, tsx and the relay; runuser, the
 * postmaster and its backends, which PostgreSQL puts in sessions of their own, so that the child's
 * process group does not hold them.
 */
function processTree(child: ChildProcess): { pid: number; ticks: number }[] {
  if (child.pid === undefined) return [];
  const all = new Map<number, { ppid: number; ticks: number }>();
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return [];
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
    } catch {
      continue;
    }
    // Fields after the command name (which may hold spaces): state ppid pgrp … utime(14) stime(15) cutime(16) cstime(17).
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // cutime and cstime: the children it has reaped (a backend that ended), whose own entries are gone.
    all.set(Number(entry), { ppid: Number(fields[1]), ticks: Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14]) });
  }
  const tree: { pid: number; ticks: number }[] = [];
  const under = new Set([child.pid]);
  for (let grew = true; grew; ) {
    grew = false;
    for (const [pid, p] of all) {
      if (under.has(pid) || !under.has(p.ppid)) continue;
      under.add(pid);
      grew = true;
    }
  }
  for (const pid of under) {
    const p = all.get(pid);
    if (p !== undefined) tree.push({ pid, ticks: p.ticks });
  }
  return tree;
}

/** CPU seconds used so far by the child and every process under it (those it has reaped included). */
function treeCpuSeconds(child: ChildProcess): number {
  const tree = processTree(child);
  return tree.length === 0 ? NaN : tree.reduce((sum, p) => sum + p.ticks, 0) / CLOCK_TICKS_PER_SECOND;
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
  /** Handed to the sender → read by the agent: also counts the wait for a free connection. */
  withQueue: number[];
  /** The bench process's own event-loop utilisation while sending: near 1 would make it the bottleneck. */
  benchLoad: number;
  /** What the load generator's scheduling was while it drove the phase (load-generator-priority.ts). */
  priority: string;
}

/** When each delivery key's webhook was handed to the sender (before any wait for a connection). */
const queuedAt = new Map<string, number>();

/**
 * Sends `total` webhooks at `rate` per second (open loop: on schedule, not after the previous one
 * answered), never more than MAX_IN_FLIGHT at once (waiting for a connection or on the wire); a
 * webhook whose slot comes while the limit is reached waits, so a relay that falls behind shows as
 * a lower ingested rate.
 */
async function drive(
  relayUrl: string,
  secret: string,
  total: number,
  rate: number,
  durationMs: number,
  make: (n: number) => { body: string; keys: string[] },
  sentAt: Map<string, number>,
): Promise<Omit<PhaseResult, 'expectedDeliveries' | 'deliveries' | 'latencies' | 'toRelay' | 'fromRelay' | 'withQueue'>> {
  const url = new URL(relayUrl);
  const port = Number(url.port);
  let sent = 0;
  let accepted = 0;
  let refused = 0;
  let failed = 0;
  let inFlight = 0;
  // Every request is made, signed and serialised before the clock starts: this process shares the
  // machine's cores with the relay, and its own work while sending should be the sending alone.
  const prepared = Array.from({ length: total }, (_, n) => {
    const { body, keys } = make(n);
    const signature = `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
    return { bytes: postBytes(url.hostname, port, '/webhook', { 'Content-Type': 'application/json', 'X-Hub-Signature-256': signature }, body), keys };
  });
  const sender = new WebhookSender(url.hostname, port, CONNECTIONS);
  await sender.connected();
  const yielded = YIELD ? yieldToTheRelay() : { description: 'unchanged (BENCH_RELAY_YIELD=0)', restore: () => undefined };
  const started = performance.now();
  let lastAnswerAt = started;
  const elu = performance.eventLoopUtilization();
  try {
    await new Promise<void>((resolve) => {
      const tick = setInterval(() => {
        const elapsed = performance.now() - started;
        // On schedule until the time is up; what the in-flight limit held back by then is not sent.
        const due = elapsed >= durationMs ? sent : Math.min(total, Math.floor((elapsed / 1000) * rate));
        while (sent < due && inFlight < MAX_IN_FLIGHT) {
          const { bytes, keys } = prepared[sent]!;
          prepared[sent++] = undefined!;
          inFlight++;
          // Timed from the moment it is written to its socket; until then it waits for one of the
          // sender's connections, and that wait is reported apart.
          const at = performance.now();
          for (const key of keys) queuedAt.set(key, at);
          sender.send({
            bytes,
            written: (writtenAt) => {
              for (const key of keys) sentAt.set(key, writtenAt);
            },
            done: (status) => {
              if (status === 200) accepted++;
              else if (status === undefined) failed++;
              else refused++;
              inFlight--;
              lastAnswerAt = performance.now();
            },
          });
        }
        const finished = (sent >= total || elapsed >= durationMs) && inFlight === 0;
        if (finished || elapsed >= durationMs + DRAIN_MS) {
          clearInterval(tick);
          resolve();
        }
      }, 2);
    });
  } finally {
    sender.close();
    yielded.restore();
  }
  const benchLoad = performance.eventLoopUtilization(elu).utilization;
  // Over the time it really took: answers that came after the sending window count at their pace.
  const seconds = Math.max(durationMs, lastAnswerAt - started) / 1000;
  return { offered: total, sent, accepted, refused, failed, ingestedPerSec: accepted / seconds, benchLoad, priority: yielded.description };
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
  /** The benchmark's PostgreSQL's, in the same time (NaN when it is not this benchmark's). */
  postgresCpuPercent: number;
  records: {
    /** Facts written per second during the per-agent phase. */
    mainWrittenPerSec: number;
    /** The most facts seen waiting (memory and journal), and in the journal, during the run, read every second. */
    peakWaiting: number;
    peakJournaled: number;
    /** Waiting as the per-agent phase's deliveries were in. */
    waitingAfterMain: number;
    /** /healthz `records` once the writer caught up (or its time ran out). */
    final: RecordsStatus | undefined;
    /** From the last webhook of the run to nothing waiting; undefined when it did not within RECORDS_DRAIN_MS. */
    caughtUpMs: number | undefined;
  };
}

/** Where the relay's records go in a backend run. */
type RecordsTarget = { kind: 'embedded' } | { kind: 'postgres'; adminUrl: string; server: ChildProcess | undefined };

async function benchBackend(backend: 'memory' | 'redis', agents: Agent[], agentsFile: string, dataDir: string, records: RecordsTarget): Promise<BackendResult> {
  const secret = randomBytes(24).toString('base64url');
  const run = randomBytes(3).toString('hex');
  let redis: { url: string; child: ChildProcess } | undefined;
  let relay: RelayProcess | undefined;
  let database: string | undefined;
  let sampler: NodeJS.Timeout | undefined;
  const streams: IncomingMessage[] = [];
  const pool = { current: undefined as Pool | undefined };
  try {
    const args = ['--port', '0', '--host', HOST, `--app-secret=${secret}`, '--agents', agentsFile, '--data-dir', dataDir, '--log-level', 'error'];
    if (records.kind === 'postgres') {
      // A fresh database each run: the second backend's records do not land on the first one's.
      database = `bench_${backend}_${run}`;
      args.push('--database', await createDatabase(records.adminUrl, database));
    }
    if (backend === 'redis') {
      redis = await startRedis();
      args.push('--redis', redis.url, '--redis-prefix', `bench:${run}:`);
    }
    relay = await startRelayProcess(args);
    const baseUrl = relay.url;
    pool.current = new Pool(baseUrl, { connections: 32, pipelining: 1, keepAliveTimeout: 30_000 });
    const http = pool.current;
    // The records' queue and journal, read every second for the whole run: a journal used and emptied again shows only here.
    let peakWaiting = 0;
    let peakJournaled = 0;
    sampler = setInterval(() => {
      recordsStatus(baseUrl).then(
        (status) => {
          if (status === undefined) return;
          peakWaiting = Math.max(peakWaiting, status.queued + status.journaled);
          peakJournaled = Math.max(peakJournaled, status.journaled);
        },
        () => undefined,
      );
    }, 1_000);
    console.log(`  ${backend}: relay at ${baseUrl}${redis ? `, redis at ${redis.url}` : ''}${database !== undefined ? `, records in PostgreSQL database ${database}` : ', records in the embedded PGlite'}`);

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
    const cpuBefore = treeCpuSeconds(relay.child);
    const postgresCpuBefore = records.kind === 'postgres' && records.server !== undefined ? treeCpuSeconds(records.server) : NaN;
    const writtenBefore = (await recordsStatus(baseUrl))?.written ?? 0;
    const mainStarted = performance.now();
    phase = 'main';
    const main = await drive(
      baseUrl,
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
    const mainSeconds = (performance.now() - mainStarted) / 1000;
    const relayCpuPercent = ((treeCpuSeconds(relay.child) - cpuBefore) / mainSeconds) * 100;
    const postgresCpuPercent = records.kind === 'postgres' && records.server !== undefined ? ((treeCpuSeconds(records.server) - postgresCpuBefore) / mainSeconds) * 100 : NaN;
    const afterMain = await recordsStatus(baseUrl);
    const mainWrittenPerSec = ((afterMain?.written ?? 0) - writtenBefore) / mainSeconds;
    const waitingAfterMain = afterMain === undefined ? 0 : afterMain.queued + afterMain.journaled;
    peakWaiting = Math.max(peakWaiting, waitingAfterMain);

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
      baseUrl,
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
    const ringDone = performance.now();
    await waitForDeliveries(() => deliveries, ring.accepted * agents.length);
    const ringResult = { ...ring, calls: ringCalls, expectedDeliveries: ring.accepted * agents.length, deliveries, latencies: sorted(latencies), toRelay: sorted(toRelay), fromRelay: sorted(fromRelay), withQueue: sorted(withQueue) };
    phase = 'idle';

    // The records of everything sent: how long the writer needs to catch up, and what it says then.
    const caughtUp = await recordsCaughtUp(baseUrl, RECORDS_DRAIN_MS);
    const caughtUpMs = caughtUp.ms === undefined ? undefined : performance.now() - ringDone;
    clearInterval(sampler);
    const final = caughtUp.status;
    if (final !== undefined) peakJournaled = Math.max(peakJournaled, final.journaled);
    console.log(
      `  ${backend}: records ${caughtUpMs === undefined ? `NOT caught up within ${RECORDS_DRAIN_MS / 1000} s` : `caught up ${fmt(caughtUpMs / 1000)} s after the last webhook was answered`}` +
        (final !== undefined ? `: ${describeRecords(final)}` : ': the relay reports no records') +
        (peakJournaled > 0 ? `; FACTS WENT TO THE JOURNAL during the run (up to ${peakJournaled} at once)` : ''),
    );

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
      postgresCpuPercent,
      records: { mainWrittenPerSec, peakWaiting, peakJournaled, waitingAfterMain, final, caughtUpMs },
    };
  } finally {
    clearInterval(sampler);
    for (const s of streams) s.destroy();
    await pool.current?.close().catch(() => undefined);
    if (relay) await stopChild(relay.child);
    if (redis) await stopChild(redis.child);
    if (database !== undefined && records.kind === 'postgres') {
      await dropDatabase(records.adminUrl, database).catch((e: unknown) => console.error(`  ${backend}: could not drop the database ${database}: ${errorText(e)}`));
    }
  }
}

/** /healthz `records` in words; facts dropped or left in the journal are said loudly. */
function describeRecords(status: RecordsStatus): string {
  const parts = [`database ${status.database}`, `written ${status.written}`, `queued ${status.queued}`, `journaled ${status.journaled}`, `dropped ${status.dropped}`];
  if (status.dropped > 0) parts.push(`FACTS DROPPED: ${status.dropped}`);
  if (status.journaled > 0) parts.push(`FACTS IN THE JOURNAL: ${status.journaled} (the database did not take them in time)`);
  if (status.lastError !== undefined) parts.push(`last error at ${status.lastError.at}: ${status.lastError.message}`);
  return parts.join(', ');
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
  console.log(
    `Targets: ≥ ${fmt(TARGET_RATE, 0)} webhooks/s, p99 ≤ ${TARGET_P99_MS} ms (webhook written to the relay → event read by the agent), ≤ ${TARGET_KB_PER_AGENT} KB per connected agent, with the call records written`,
  );
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
    notes.push(`from when the webhook was handed to the sender's ${CONNECTIONS} connections (its wait for one included): p50 ${fmt(percentile(m.withQueue, 50))} / p99 ${fmt(percentile(m.withQueue, 99))} ms`);
    notes.push(
      `split of the latency: sent → received by the relay p50 ${fmt(percentile(m.toRelay, 50))} / p99 ${fmt(percentile(m.toRelay, 99))} ms; ` +
        `received by the relay → read by the agent p50 ${fmt(percentile(m.fromRelay, 50))} / p99 ${fmt(percentile(m.fromRelay, 99))} ms`,
    );
    notes.push(`relay's own histogram (received → written): p50 ≤ ${fmt(r.relaySideP50Ms, 0)} ms, p99 ≤ ${fmt(r.relaySideP99Ms, 0)} ms`);
    notes.push(`relay CPU ${fmt(r.relayCpuPercent, 0)} % of a core${Number.isFinite(r.postgresCpuPercent) ? `, PostgreSQL ${fmt(r.postgresCpuPercent, 0)} %` : ''}`);
    const rec = r.records;
    notes.push(
      `records: ${fmt(rec.mainWrittenPerSec, 0)} facts/s written during the per-agent phase; up to ${rec.peakWaiting} waiting, ${rec.waitingAfterMain} as its deliveries were in; ` +
        (rec.caughtUpMs === undefined ? `NOT caught up within ${RECORDS_DRAIN_MS / 1000} s of the last webhook` : `caught up ${fmt(rec.caughtUpMs / 1000)} s after the last webhook`),
    );
    notes.push(rec.final === undefined ? 'records /healthz: none' : `records /healthz at the end: ${describeRecords(rec.final)}${rec.peakJournaled > 0 ? `; FACTS WENT TO THE JOURNAL during the run (up to ${rec.peakJournaled} at once)` : ''}`);
    notes.push(`bench process event-loop load ${fmt(m.benchLoad * 100, 0)} % while sending; its scheduling meanwhile: ${m.priority}`);
    notes.push(`set-up: ${r.claims.count} claims at ${fmt(r.claims.count / (r.claims.ms / 1000), 0)}/s, ${r.claims.claimedEvents} call.claimed deliveries`);
    console.log(`  ${r.backend}:`);
    for (const note of notes) console.log(`    - ${note}`);
  }
}

// ---------------------------------------------------------------------------------------------
// Reports: a month of calls, its summary and its CSV.

interface ReportResult {
  month: MonthOfCalls;
  database: string;
  fillMs: number;
  vacuumMs: number;
  /** Each run of the month's summary, in order (the first one is judged). */
  summaryMs: number[];
  summary: CallSummary;
  /** The summary's plan as PostgreSQL ran it. */
  plan: string;
  csv: CsvDownload & { rssBeforeMb: number; rssPeakMb: number; rssAfterMb: number };
}

interface CsvDownload {
  status: number;
  /** The body ended as HTTP ends it (not cut). */
  complete: boolean;
  /** Lines after the header. */
  rows: number;
  bytes: number;
  firstByteMs: number;
  totalMs: number;
  /** The body of an answer other than 200. */
  error?: string;
}

/** GETs `path` and counts what comes (nothing of it kept: as streaming to /dev/null). */
function downloadCsv(baseUrl: string, path: string, authorization: string): Promise<CsvDownload> {
  const url = new URL(path, baseUrl);
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: url.hostname, port: url.port, path: `${url.pathname}${url.search}`, method: 'GET', agent: false, headers: { authorization } }, (res) => {
      let bytes = 0;
      let lines = 0;
      let firstByteMs = NaN;
      let complete = false;
      let error = '';
      res.on('data', (chunk: Buffer) => {
        if (bytes === 0) firstByteMs = performance.now() - started;
        bytes += chunk.length;
        if (res.statusCode !== 200) error += chunk.toString('utf8');
        for (let at = chunk.indexOf(10); at >= 0; at = chunk.indexOf(10, at + 1)) lines++;
      });
      res.on('end', () => {
        complete = true;
      });
      res.on('error', () => undefined);
      res.on('close', () =>
        resolve({
          status: res.statusCode ?? 0,
          complete,
          rows: Math.max(0, lines - 1),
          bytes,
          firstByteMs,
          totalMs: performance.now() - started,
          ...(res.statusCode !== 200 ? { error: error.slice(0, 300) } : {}),
        }),
      );
    });
    req.setTimeout(10 * 60_000, () => req.destroy(new Error(`${path} did not finish within 10 min`)));
    req.on('error', reject);
    req.end();
  });
}

/** The plan PostgreSQL ran `sql` with: its scans, rows and heap fetches, and its own execution time. */
async function planOf(db: PostgresDatabase, sql: string, params: readonly unknown[]): Promise<string> {
  const rows = await db.query<{ 'QUERY PLAN': [{ Plan: PlanNode; 'Execution Time': number }] }>(`EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${sql}`, params);
  const top = rows[0]!['QUERY PLAN'][0];
  const scans: string[] = [];
  const walk = (node: PlanNode) => {
    if (/Scan/.test(node['Node Type'])) {
      scans.push(
        `${node['Parallel Aware'] === true ? 'Parallel ' : ''}${node['Node Type']}${node['Index Name'] !== undefined ? ` using ${node['Index Name']}` : ''} (${node['Actual Rows']} rows${node['Actual Loops'] !== undefined && node['Actual Loops'] > 1 ? ` × ${node['Actual Loops']} loops` : ''}${node['Heap Fetches'] !== undefined ? `, ${node['Heap Fetches']} heap fetches` : ''}${node['Shared Read Blocks'] !== undefined ? `, ${node['Shared Read Blocks']} blocks read, ${node['Shared Hit Blocks'] ?? 0} hit` : ''})`,
      );
    }
    for (const child of node.Plans ?? []) walk(child);
  };
  walk(top.Plan);
  return `${scans.join('; ')}; executed in ${fmt(top['Execution Time'], 0)} ms`;
}

interface PlanNode {
  'Node Type': string;
  'Index Name'?: string;
  'Actual Rows'?: number;
  'Actual Loops'?: number;
  'Parallel Aware'?: boolean;
  'Heap Fetches'?: number;
  'Shared Read Blocks'?: number;
  'Shared Hit Blocks'?: number;
  Plans?: PlanNode[];
}

async function benchReports(adminUrl: string, dir: string): Promise<ReportResult> {
  const name = `bench_reports_${randomBytes(3).toString('hex')}`;
  const month = pastMonth(new Date());
  const url = await createDatabase(adminUrl, name);
  let relay: RelayProcess | undefined;
  let sampler: NodeJS.Timeout | undefined;
  try {
    const db = PostgresDatabase.open(url);
    let fillMs: number;
    let vacuumMs: number;
    const summaryMs: number[] = [];
    let result: CallSummary | undefined;
    let plan: string;
    try {
      await migrate(db);
      console.log(`  reports: filling ${REPORT_CALLS} calls over ${month.firstDay} … ${month.lastDay} (UTC) in database ${name}`);
      const fillStarted = performance.now();
      await fillMonthOfCalls(url, month, REPORT_CALLS, AGENTS);
      fillMs = performance.now() - fillStarted;
      // As autovacuum would have done over a month: statistics, and the visibility map an index-only scan reads.
      const vacuumStarted = performance.now();
      await withClient(url, (client) => client.query('VACUUM (ANALYZE) calls'));
      vacuumMs = performance.now() - vacuumStarted;
      console.log(`  reports: filled in ${fmt(fillMs / 1000)} s, VACUUM (ANALYZE) in ${fmt(vacuumMs / 1000)} s; timing the month's summary`);
      // The summary's own SQL, caught on its way to the database, is what EXPLAIN is asked about.
      const asked: { sql: string; params: readonly unknown[] }[] = [];
      const recording = {
        query: <Row extends object>(sql: string, params: readonly unknown[] = []) => {
          asked.push({ sql, params });
          return db.query<Row>(sql, params);
        },
        script: (sql: string) => db.script(sql),
      };
      for (let i = 0; i < 3; i++) {
        const started = performance.now();
        result = await summary(recording, { from: month.from, to: month.to, serviceLevelSec: 20 });
        summaryMs.push(performance.now() - started);
      }
      plan = await planOf(db, asked[0]!.sql, asked[0]!.params);
    } finally {
      await db.close();
    }

    const token = randomBytes(24).toString('base64url');
    const agentsFile = join(dir, 'report-agents.json');
    await writeFile(agentsFile, JSON.stringify({ agents: [{ id: 'lead', name: 'Bench supervisor', tokenSha256: createHash('sha256').update(token).digest('hex'), role: 'supervisor' }] }), { mode: 0o600 });
    relay = await startRelayProcess(['--port', '0', '--host', HOST, `--app-secret=${randomBytes(24).toString('base64url')}`, '--agents', agentsFile, '--data-dir', join(dir, 'relay-data-reports'), '--database', url, '--log-level', 'error']);
    const baseUrl = relay.url;
    const ready = performance.now();
    while ((await recordsStatus(baseUrl))?.database !== 'up') {
      if (performance.now() - ready > 60_000) throw new Error('the relay of the report phase did not reach its records within 60 s');
      await sleep(250);
    }
    await sleep(1_000);
    const rssBefore = await relayRss(baseUrl);
    let rssPeak = rssBefore;
    sampler = setInterval(() => {
      relayRss(baseUrl).then(
        (rss) => {
          rssPeak = Math.max(rssPeak, rss);
        },
        () => undefined,
      );
    }, 250);
    const path = `/reports/calls.csv?from=${month.firstDay}&to=${month.lastDay}`;
    console.log(`  reports: GET ${path} as a supervisor, from the relay at ${baseUrl}`);
    const csv = await downloadCsv(baseUrl, path, `Bearer ${token}`);
    clearInterval(sampler);
    const rssAfter = await relayRss(baseUrl);
    rssPeak = Math.max(rssPeak, rssAfter);
    const mb = (bytes: number) => bytes / 1024 / 1024;
    return {
      month,
      database: name,
      fillMs,
      vacuumMs,
      summaryMs,
      summary: result!,
      plan,
      csv: { ...csv, rssBeforeMb: mb(rssBefore), rssPeakMb: mb(rssPeak), rssAfterMb: mb(rssAfter) },
    };
  } finally {
    clearInterval(sampler);
    if (relay) await stopChild(relay.child);
    await dropDatabase(adminUrl, name).catch((e: unknown) => console.error(`  reports: could not drop the database ${name}: ${errorText(e)}`));
  }
}

function printReports(r: ReportResult): void {
  const judged = r.summaryMs[0]!;
  const s = r.summary;
  console.log('');
  console.log(`Reports: ${r.summary.total} calls over ${r.month.firstDay} … ${r.month.lastDay} (${r.month.days} days, UTC), ${AGENTS} agents; filled in ${fmt(r.fillMs / 1000)} s, VACUUM (ANALYZE) ${fmt(r.vacuumMs / 1000)} s`);
  console.log(`Target: the report query for a month of ${REPORT_CALLS} calls in ≤ ${TARGET_REPORT_MS / 1000} s — taken to mean the month's summary (records-queries.ts summary); the CSV export is reported beside it`);
  console.log(`  the month's summary: ${fmt(judged, 0)} ms (${verdict(judged <= TARGET_REPORT_MS)}; first run, judged), then ${r.summaryMs.slice(1).map((ms) => `${fmt(ms, 0)} ms`).join(', ')}`);
  console.log(`    plan: ${r.plan}`);
  console.log(
    `    ${s.total} calls: ${Object.entries(s.byOutcome).map(([o, n]) => `${o} ${n}`).join(', ')}, in progress ${s.inProgress}; ` +
      `average handle ${fmt((s.averageHandleMs ?? NaN) / 1000)} s; service level ${s.serviceLevel.answeredWithin}/${s.serviceLevel.offered} within ${s.serviceLevel.thresholdSec} s (${fmt((s.serviceLevel.ratio ?? NaN) * 100)} %)`,
  );
  const c = r.csv;
  if (c.status !== 200) {
    console.log(`  the month's calls CSV: HTTP ${c.status}: ${c.error ?? ''}`);
    return;
  }
  console.log(
    `  the month's calls CSV (GET /reports/calls.csv, a supervisor, to nowhere): ${c.rows} rows, ${fmt(c.bytes / 1024 / 1024)} MB in ${fmt(c.totalMs / 1000, 2)} s ` +
      `(${fmt(c.rows / (c.totalMs / 1000), 0)} rows/s; first byte after ${fmt(c.firstByteMs, 0)} ms)${c.complete ? '' : ' — THE TRANSFER WAS CUT'}; ` +
      `against ${TARGET_REPORT_MS / 1000} s it ${c.totalMs <= TARGET_REPORT_MS ? 'fits' : 'does not fit'}`,
  );
  console.log(`    relay RSS ${fmt(c.rssBeforeMb)} MB before, ${fmt(c.rssPeakMb)} MB at most during (+${fmt(c.rssPeakMb - c.rssBeforeMb)} MB), ${fmt(c.rssAfterMb)} MB after`);
  if (c.rows !== r.summary.total) console.log(`    THE CSV HAS ${c.rows} ROWS FOR ${r.summary.total} CALLS`);
}

const loadLine = () => `load average ${loadavg().map((l) => l.toFixed(2)).join(', ')} on ${availableCores()} cores`;
const availableCores = () => {
  try {
    return readFileSync('/proc/cpuinfo', 'utf8').match(/^processor\s*:/gm)?.length ?? NaN;
  } catch {
    return NaN;
  }
};

async function main(): Promise<number> {
  const watchdog = setTimeout(() => {
    console.error(`relay benchmark: still running after ${WATCHDOG_MS / 60_000} min; stopping`);
    cleanUpNow();
    process.exit(1);
  }, WATCHDOG_MS);
  let postgres: ChildProcess | undefined;
  try {
    const dir = await makeTempDir('relay-bench-');
    const agents: Agent[] = Array.from({ length: AGENTS }, (_, i) => {
      const token = randomBytes(24).toString('base64url');
      return { id: `a${String(i + 1).padStart(4, '0')}`, token, authorization: `Bearer ${token}` };
    });
    const agentsFile = join(dir, 'agents.json');
    const file = { agents: agents.map((a) => ({ id: a.id, name: `Bench agent ${a.id}`, tokenSha256: createHash('sha256').update(a.token).digest('hex') })) };
    await writeFile(agentsFile, JSON.stringify(file), { mode: 0o600 });

    let records: RecordsTarget = { kind: 'embedded' };
    let recordsLine = `the embedded database (PGlite) in a temporary --data-dir under ${dir}, made afresh for each backend and removed after (BENCH_RELAY_RECORDS=embedded)`;
    if (RECORDS === 'postgres') {
      let adminUrl: string;
      if (DATABASE_URL !== undefined) {
        adminUrl = DATABASE_URL;
        recordsLine = `PostgreSQL at BENCH_RELAY_DATABASE_URL (${describePostgresUrl(adminUrl)})`;
      } else {
        const missing = postgresMissingLine();
        if (missing !== undefined) {
          console.error(missing);
          return 1;
        }
        const cluster = await initCluster();
        tempDirs.add(cluster.dir);
        const port = await freePort();
        const command = serverCommand(cluster, port);
        postgres = startChild(command.command, command.args, 'postgres', postgresLogWorthShowing);
        adminUrl = postgresUrl(port);
        await waitForServer(adminUrl);
        recordsLine = `PostgreSQL started by this benchmark from ${cluster.bin} on ${HOST}:${port}, data in ${cluster.dir}`;
      }
      recordsLine += `: ${await serverVersion(adminUrl)}; a fresh database for each backend run (--database postgres://…)`;
      records = { kind: 'postgres', adminUrl, server: postgres };
    }

    console.log(`Relay benchmark: ${AGENTS} agents on ${HOST}; relay as a child process (npx tsx relay/cli.ts), ${BACKENDS.join(' then ')}`);
    console.log(`Call records: ${recordsLine}`);
    console.log(`Machine: ${loadLine()} at the start; open files allowed ${openFileLimits()?.soft ?? '?'}`);
    console.log('Workload: per-agent traffic — each agent owns outgoing calls it has claimed; every webhook is one status event of one');
    console.log(`such call (RINGING, ACCEPTED, terminate), delivered to that agent only (fanning each webhook out to all ${AGENTS} agents would`);
    console.log(`be ${fmt((RATE * AGENTS) / 1e6, 1)} M SSE writes/s). Then, measured apart: incoming calls that ring all ${AGENTS} agents, at a lower rate.`);
    const results: BackendResult[] = [];
    for (const backend of BACKENDS) results.push(await benchBackend(backend, agents, agentsFile, join(dir, `relay-data-${backend}`), records));
    printResults(results);
    const ok = results.every(
      (r) => r.main.ingestedPerSec >= TARGET_RATE && percentile(r.main.latencies, 99) <= TARGET_P99_MS && r.kbPerAgent <= TARGET_KB_PER_AGENT,
    );
    const recordsWhole = results.every((r) => r.records.final === undefined || (r.records.final.dropped === 0 && r.records.peakJournaled === 0 && r.records.caughtUpMs !== undefined));
    console.log('');
    console.log(ok ? `All targets met for ${results.map((r) => r.backend).join(' and ')}.` : 'Some targets were missed (see MISSES above).');
    if (!recordsWhole) console.log('The call records did NOT all reach the database in time, or went through the journal or were dropped (see records above).');

    if (records.kind === 'postgres' && REPORT_CALLS > 0) {
      console.log('');
      console.log(`Report phase: ${REPORT_CALLS} calls in a database of their own on the same PostgreSQL`);
      printReports(await benchReports(records.adminUrl, dir));
    } else {
      console.log('');
      console.log(records.kind === 'embedded' ? 'Report phase left out: it runs on PostgreSQL only.' : 'Report phase left out (BENCH_RELAY_REPORT_CALLS=0).');
    }
    console.log('');
    console.log(`Machine: ${loadLine()} at the end`);
    return 0;
  } finally {
    clearTimeout(watchdog);
    if (postgres !== undefined) await stopChild(postgres, 'SIGINT');
    for (const dir of [...tempDirs]) await removeTempDir(dir).catch((e: unknown) => console.error(`could not remove ${dir}: ${errorText(e)}`));
  }
}

/** This process's soft and hard limits on open files (Linux's /proc); undefined elsewhere. */
function openFileLimits(): { soft: number; hard: number } | undefined {
  try {
    const match = /^Max open files\s+(\S+)\s+(\S+)/m.exec(readFileSync('/proc/self/limits', 'utf8'));
    if (match === null) return undefined;
    const value = (v: string) => (v === 'unlimited' ? Infinity : Number(v));
    return { soft: value(match[1]!), hard: value(match[2]!) };
  } catch {
    return undefined;
  }
}

const limits = openFileLimits();
const filesNeeded = AGENTS + FILES_BESIDE_AGENTS;
if (limits !== undefined && limits.soft < filesNeeded) {
  console.error(
    `relay benchmark: ${AGENTS} agents need ${filesNeeded} open files in this process and as many in the relay; this system allows ${limits.soft} (hard limit ${limits.hard}): raise the hard limit (ulimit -Hn, limits.conf) or set BENCH_RELAY_AGENTS lower`,
  );
  process.exit(1);
} else {
  process.on('exit', cleanUpNow);
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.on(signal, () => {
      cleanUpNow();
      process.exit(130);
    });
  }
  main().then(
    (code) => process.exit(code),
    (e: unknown) => {
      console.error(`relay benchmark failed: ${errorText(e)}`);
      cleanUpNow();
      process.exit(1);
    },
  );
}

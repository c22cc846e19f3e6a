// `npm run bench:bridge`: one bridge node under many two-party calls, on 127.0.0.1.
//
// Three processes, so that each measure is taken where nothing else distorts it:
//   - the node (bridge/bridge-node.ts), alone in a child process and driven over IPC through its
//     BridgeControl methods: its processor time (process.cpuUsage) is its own;
//   - the load, a second child process holding most calls' peers: for each call a werift "customer"
//     shaped like the service (ice-lite, complete, Opus 111 + telephone-event 126) and a werift
//     "agent" answering the node's leg offer as a window does. It stands for phones and windows on
//     other machines, which send on time whatever this machine does; so it runs at the node's own
//     priority: a load that waits for a core sends what fell due in one burst, which the node
//     rightly drops as too late (see LOSS). A niceness would rank it only within its own session
//     (the child leads one, and Linux weighs each session as one: sched_autogroup); set on the
//     session, it starves the load whenever the machine is busy;
//   - this process, holding a few probe calls of the same kind through the same node and, for
//     comparison, direct calls where the same customer and agent peers talk face to face (direct
//     mode). Lightly loaded, it reads the time of each arrival promptly.
// Every peer sends a packet every 20 ms on its own phase (as independent phones do, not all at once).
// The peers' RTP goes through the same media path as the node's (bridge/legs/media-path.ts: SRTP on
// the socket, werift for ICE, DTLS and SRTCP): phones and browsers do this in native code, and
// werift's own per-packet path would make the peers, not the node, the machine's heaviest load.
//
//   node CPU, % of one core, for N calls and per call           goal: ≥ 100 calls within one core
//   one-way latency of the probes, bridged and direct             goal: bridged − direct ≤ 5 ms median
//   packets sent and lost, every call                             goal: none lost on 127.0.0.1
//
// LOSS. A peer whose process waited for a core sends what fell due at once, late; the node rightly
// passes on no audio that comes in a backlog too far behind (bridge/media/lateness.ts), and such a
// burst says how busy this machine is, not how the node carries calls. The node counts what it
// dropped so (its own rule, not a guess here): the loss verdict leaves out at most that many, and
// never more than were lost of the packets sent late (≥ 100 ms after due), printed beside it: a
// node that falls behind with its senders on time has lost what it dropped. With more than 1 % of the
// packets sent late, the machine was too busy to judge the node's loss: the verdict is inconclusive.
//
// TIMING. Each payload carries its sender's wall-clock send time (performance.timeOrigin + now, ms),
// and its receiver subtracts it on arrival. Both paths cross this process twice (sent, received);
// the bridged path the node too. So bridged − direct is what the bridge costs: two more hops on the
// loopback and the node's decrypt, forward and encrypt, and its waiting for a processor. The
// machine's load average is printed: the node shares the machine's cores with the load process and
// with whatever else runs there, and a node that waits for a core delays its packets.
//
// RECORDING. BENCH_BRIDGE_RECORD=1 measures a second window of the same length after the first, every
// call recording (bridge/media/call-recorder.ts: both sides decoded, one stereo frame encoded per
// 20 ms), and prints the node's CPU per call for both windows and what recording adds. The peers'
// payloads are not speech but CELT frames of arbitrary bytes, which decode to noise: the stereo
// encoder's hardest input, so the figure leans high.
//
// BENCH_BRIDGE_CALLS (default 100) bridged calls, of which BENCH_BRIDGE_PROBES (default 10) are
// probes here; BENCH_BRIDGE_DIRECT (default 10) direct calls; BENCH_BRIDGE_SECONDS (default 15)
// measured after a 3 s warm-up. BENCH_BRIDGE_PROFILE=FILE writes the node's CPU profile of the
// measured window there (open it in Chrome's DevTools): where the node's time goes;
// BENCH_BRIDGE_LOAD_PROFILE=FILE the load process's.
import { spawn, type ChildProcess } from 'node:child_process';
import { cpus, loadavg } from 'node:os';
import { monitorEventLoopDelay, performance, PerformanceObserver } from 'node:perf_hooks';
import { writeFile } from 'node:fs/promises';
import { Session as InspectorSession } from 'node:inspector/promises';
import { fileURLToPath } from 'node:url';
import { RTCPeerConnection, RTCRtpCodecParameters, type RTCRtpTransceiver } from 'werift';
import { BridgeNode } from '../bridge/bridge-node';
import { MediaPath } from '../bridge/legs/media-path';
import type { RtpFields } from '../bridge/media/srtp';
import type { BridgedCallReport } from '../shared/bridge';
import type { RecordingSink } from '../shared/bridge-recording';
import type { Logger } from '../shared/log';
import { errorText, ok, type Result } from '../shared/result';
import { shapeServiceSdp } from '../sandbox/customer-peer';
import { percentile } from './stats';

const env = (name: string, fallback: number): number => {
  const v = Number(process.env[name]);
  return Number.isFinite(v) && v > 0 ? v : fallback;
};

const CALLS = Math.round(env('BENCH_BRIDGE_CALLS', 100));
const PROBES = Math.min(CALLS, Math.round(env('BENCH_BRIDGE_PROBES', 10)));
const DIRECT_CALLS = Math.round(env('BENCH_BRIDGE_DIRECT', 10));
const MEASURE_MS = env('BENCH_BRIDGE_SECONDS', 15) * 1_000;
const PROFILE_FILE = process.env.BENCH_BRIDGE_PROFILE;
const LOAD_PROFILE_FILE = process.env.BENCH_BRIDGE_LOAD_PROFILE;
const RECORD = process.env.BENCH_BRIDGE_RECORD === '1';
/** Recording starts on every call this long before its window opens: the codecs made, the queues filled. */
const RECORD_WARM_UP_MS = 1_000;
const WARM_UP_MS = 3_000;
/** Packets still on their way when the window closes arrive within this. */
const DRAIN_MS = 1_000;
/** Calls set up at once: the node gathers and answers while the others wait their turn. */
const SETUP_CONCURRENCY = 8;
const WATCHDOG_MS = 5 * 60_000;
const HOST = '127.0.0.1';
const FRAME_MS = 20;
/** A 20 ms Opus frame at the service's ~20 kbit/s is about 50 bytes; the payload here is as long. */
const PAYLOAD_BYTES = 60;
/** First bytes of a payload this bench made: a CELT 20 ms TOC (what the node reads of it), then a mark. */
const TOC = 0xf8;
const MARK = 0xbe;
/** Where a payload says whether it went out late (1) or on time (0). */
const LATE_FLAG_AT = 14;
/** A packet sent this long after it was due went out late: its sender's process waited for a core. */
const LATE_SEND_MS = 100;
/** More than this share of the packets sent late: the machine, not the node, decided the losses. */
const INCONCLUSIVE_LATE_SHARE = 0.01;

const GOAL_CALLS = 100;
const GOAL_ADDED_MS = 5;

const quiet: Logger = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: (msg, fields) => console.error(msg, fields ?? '') };
const wallNow = (): number => performance.timeOrigin + performance.now();
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

// ---------------------------------------------------------------------------------------------
// Requests between the processes: one method name and its arguments, one value or error back.

interface Request {
  id: number;
  method: string;
  args: unknown[];
}
interface Reply {
  id: number;
  value?: unknown;
  error?: string;
}
type Handlers = Record<string, (...args: never[]) => unknown>;

/** A child's side: answers each request with its handler's value. */
function serve(handlers: Handlers): void {
  process.on('message', (request: Request) => {
    void (async () => {
      try {
        const handler = handlers[request.method] as ((...args: unknown[]) => unknown) | undefined;
        if (!handler) throw new Error(`no method ${request.method}`);
        process.send?.({ id: request.id, value: (await handler(...request.args)) ?? null } satisfies Reply);
      } catch (e) {
        process.send?.({ id: request.id, error: errorText(e) } satisfies Reply);
      }
    })();
  });
  process.on('disconnect', () => process.exit(0));
  process.send?.({ id: 0, value: 'ready' } satisfies Reply);
}

/** The parent's handle on a child: requests, and the end of its process group. */
class Child {
  private nextId = 1;
  private readonly waiting = new Map<number, (reply: Reply) => void>();

  private constructor(
    readonly name: string,
    readonly child: ChildProcess,
  ) {
    child.on('message', (reply: Reply) => {
      this.waiting.get(reply.id)?.(reply);
      this.waiting.delete(reply.id);
    });
  }

  static async start(role: '--node' | '--load'): Promise<Child> {
    const child = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(import.meta.url), role], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'], detached: true });
    children.add(child);
    const handle = new Child(role.slice(2), child);
    await new Promise<void>((resolve, reject) => {
      handle.waiting.set(0, () => resolve());
      child.once('exit', (code) => reject(new Error(`the ${handle.name} process exited (${code}) before it was ready`)));
    });
    return handle;
  }

  async ask<T>(method: string, ...args: unknown[]): Promise<T> {
    const id = this.nextId++;
    const reply = await new Promise<Reply>((resolve) => {
      this.waiting.set(id, resolve);
      this.child.send({ id, method, args } satisfies Request);
    });
    if (reply.error !== undefined) throw new Error(`${this.name} ${method}: ${reply.error}`);
    return reply.value as T;
  }

  /** A BridgeControl method's value; its error as a thrown one. */
  async control<T>(method: string, ...args: unknown[]): Promise<T> {
    const result = await this.ask<Result<T>>(method, ...args);
    if (!result.ok) throw new Error(`${method}: ${result.error.message}`);
    return result.value;
  }
}

const children = new Set<ChildProcess>();
function killChildren(): void {
  for (const child of children) {
    if (child.pid === undefined || child.exitCode !== null) continue;
    try {
      process.kill(-child.pid, 'SIGKILL');
    } catch {
      // Already gone.
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Peers: lean werift peers that send numbered, time-stamped packets and time what they receive.

const codecs = () => [
  new RTCRtpCodecParameters({ mimeType: 'audio/opus', clockRate: 48000, channels: 2, payloadType: 111, parameters: 'minptime=10;useinbandfec=1' }),
  new RTCRtpCodecParameters({ mimeType: 'audio/telephone-event', clockRate: 8000, payloadType: 126 }),
];

/** What a set of peers saw during the measured window. */
interface Tally {
  latencies: number[];
  sent: number;
  received: number;
  /** Packets the node made itself (silence filling a stall): not ours, not counted as received. */
  made: number;
  /** Of those sent and received, the ones that went out late (LATE_SEND_MS). */
  sentLate: number;
  receivedLate: number;
}
const newTally = (): Tally => ({ latencies: [], sent: 0, received: 0, made: 0, sentLate: 0, receivedLate: 0 });

/** The measured window, in wall-clock ms: packets sent in it are counted. */
const measured = { from: Infinity, to: Infinity };

class BenchPeer {
  readonly pc: RTCPeerConnection;
  private readonly transceiver: RTCRtpTransceiver;
  private sequence = 0;
  private timestamp = 0;
  private sent = 0;
  private readonly payload = Buffer.alloc(PAYLOAD_BYTES);
  /** The peer's RTP on the wire, once ICE connects. */
  private path: MediaPath | undefined;
  private readonly fields: RtpFields = { payloadType: 111, marker: false, sequenceNumber: 0, timestamp: 0, ssrc: 0 };
  /** When the next packet is due (performance.now()); set when sending starts, each peer on its own phase. */
  nextAt = Infinity;

  constructor(
    readonly role: 'service' | 'window',
    private readonly tally: Tally,
  ) {
    this.pc = new RTCPeerConnection({
      iceLite: role === 'service',
      iceUseIpv4: false,
      iceUseIpv6: false,
      iceAdditionalHostAddresses: [HOST],
      iceInterfaceAddresses: { udp4: HOST },
      iceServers: [],
      bundlePolicy: 'max-bundle',
      codecs: { audio: codecs(), video: [] },
      headerExtensions: { audio: [], video: [] },
    });
    this.transceiver = this.pc.addTransceiver('audio', { direction: 'sendrecv' });
    this.payload[0] = TOC;
    this.payload[1] = MARK;
    this.pc.onTrack.subscribe((track) => track.onReceiveRtp.subscribe((rtp) => this.path?.fromWerift(rtp)));
    this.pc.iceConnectionStateChange.subscribe((state) => {
      if (state === 'connected' || state === 'completed') this.attachPath();
    });
    this.pc.connectionStateChange.subscribe((state) => {
      if (state === 'connected') this.attachPath();
    });
  }

  private attachPath(): void {
    const dtls = this.transceiver.sender.dtlsTransport;
    if (!dtls) return;
    this.path ??= new MediaPath(dtls, (packet) => this.receive(packet.payload), quiet);
    this.path.attach();
  }

  get connected(): boolean {
    return this.transceiver.sender.dtlsTransport?.state === 'connected';
  }

  get state(): string {
    return `${this.role} ${this.pc.connectionState}/${this.pc.iceConnectionState}`;
  }

  /** The service's offer for an incoming call. */
  async offer(): Promise<string> {
    await this.pc.setLocalDescription(await this.pc.createOffer());
    return shapeServiceSdp(this.pc.localDescription!.sdp);
  }

  /** The window's answer to an offer. */
  async answer(offer: string): Promise<string> {
    await this.pc.setRemoteDescription({ type: 'offer', sdp: offer });
    await this.pc.setLocalDescription(await this.pc.createAnswer());
    return this.pc.localDescription!.sdp;
  }

  async applyAnswer(answer: string): Promise<void> {
    await this.pc.setRemoteDescription({ type: 'answer', sdp: answer });
  }

  /** Sends the packets due by `now`. */
  sendDue(now: number): void {
    while (this.nextAt <= now) {
      const due = this.nextAt;
      this.nextAt += FRAME_MS;
      const path = this.path;
      if (!path?.ready) continue;
      const late = performance.now() - due >= LATE_SEND_MS;
      const at = wallNow();
      this.payload.writeUInt32BE(this.sent++, 2);
      this.payload.writeDoubleBE(at, 6);
      this.payload[LATE_FLAG_AT] = late ? 1 : 0;
      const fields = this.fields;
      fields.ssrc = this.transceiver.sender.ssrc;
      fields.sequenceNumber = this.sequence;
      fields.timestamp = this.timestamp;
      this.sequence = (this.sequence + 1) & 0xffff;
      this.timestamp = (this.timestamp + 960) >>> 0;
      path.sendRtp(fields, this.payload);
      if (at >= measured.from && at < measured.to) {
        this.tally.sent++;
        if (late) this.tally.sentLate++;
      }
    }
  }

  close(): Promise<void> {
    return this.pc.close();
  }

  private receive(payload: Buffer): void {
    const arrived = wallNow();
    if (payload.length < PAYLOAD_BYTES || payload[1] !== MARK) {
      if (arrived >= measured.from && arrived < measured.to) this.tally.made++;
      return;
    }
    const sentAt = payload.readDoubleBE(6);
    if (sentAt < measured.from || sentAt >= measured.to) return;
    this.tally.received++;
    if (payload[LATE_FLAG_AT] === 1) this.tally.receivedLate++;
    this.tally.latencies.push(arrived - sentAt);
  }
}

/** Peers of one process, and the one timer that sends for them all. */
class Peers {
  readonly all: BenchPeer[] = [];
  private ticker: NodeJS.Timeout | undefined;

  add(peer: BenchPeer): BenchPeer {
    this.all.push(peer);
    return peer;
  }

  stuck(): string[] {
    return this.all.filter((p) => !p.connected).map((p) => p.state);
  }

  startSending(): void {
    const startedAt = performance.now();
    for (const peer of this.all) peer.nextAt = startedAt + Math.random() * FRAME_MS;
    this.ticker = setInterval(() => {
      const now = performance.now();
      for (const peer of this.all) peer.sendDue(now);
    }, 2);
  }

  async close(): Promise<void> {
    clearInterval(this.ticker);
    await Promise.all(this.all.map((p) => p.close().catch(() => undefined)));
  }
}

// ---------------------------------------------------------------------------------------------
// The children.

/** The node's CPU profile of the measured window (inspector), when BENCH_BRIDGE_PROFILE asks for one. */
const profiler = {
  session: undefined as InspectorSession | undefined,
  async start(): Promise<void> {
    this.session = new InspectorSession();
    this.session.connect();
    await this.session.post('Profiler.enable');
    await this.session.post('Profiler.start');
  },
  async stop(file: string): Promise<void> {
    if (!this.session) return;
    const { profile } = await this.session.post('Profiler.stop');
    await writeFile(file, JSON.stringify(profile));
    this.session.disconnect();
  },
};

/** What the node's process says of the measured window. */
interface NodeMeasures {
  cpu: NodeJS.CpuUsage;
  /** Event-loop delay percentiles, ms (a 10 ms timer's lateness). */
  loopP50: number;
  loopP99: number;
  /** Share of the window its event loop was busy (0..1). */
  busy: number;
  /** The longest garbage collection, ms. */
  gcMaxMs: number;
  /** The process's heap in use and its resident size at the window's start and end, MB. */
  heapMb: [number, number];
  rssMb: [number, number];
}

/** What the node's recordings came to: files handed to its sink (and let go there), their bytes and length. */
interface RecordingsMade {
  files: number;
  bytes: number;
  durationMs: number;
}

function runNode(): void {
  const made: RecordingsMade = { files: 0, bytes: 0, durationMs: 0 };
  const recordings: RecordingSink = {
    store: (_callId, file, durationMs) => {
      made.files++;
      made.bytes += file.length;
      made.durationMs += durationMs;
      return Promise.resolve(ok(null));
    },
  };
  const node = new BridgeNode({ bindAddress: HOST, logger: quiet, recordings });
  const loopDelay = monitorEventLoopDelay({ resolution: 10 });
  let utilisation = performance.eventLoopUtilization();
  let gcMaxMs = 0;
  let memoryBefore = process.memoryUsage();
  let lateDroppedBefore = 0;
  const mb = (bytes: number) => bytes / 1024 / 1024;
  new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) gcMaxMs = Math.max(gcMaxMs, entry.duration);
  }).observe({ entryTypes: ['gc'] });
  serve({
    prepareIncoming: (callId: string, offer: string) => node.prepareIncoming(callId, offer),
    offerAgentLeg: (callId: string, legId: string) => node.offerAgentLeg(callId, legId),
    applyAgentAnswer: (callId: string, legId: string, answer: string) => node.applyAgentAnswer(callId, legId, answer),
    connectCustomer: (callId: string) => node.connectCustomer(callId),
    report: (callId: string) => node.report(callId),
    load: () => node.load(),
    startRecording: (callId: string) => node.startRecording(callId),
    /** Every call ended: the recordings' files are finished and handed to the sink. */
    endCalls: async (callIds: string[]): Promise<RecordingsMade> => {
      await Promise.all(callIds.map((callId) => node.endCall(callId)));
      return made;
    },
    measure: async (profile = true) => {
      if (PROFILE_FILE && profile) await profiler.start();
      loopDelay.reset();
      loopDelay.enable();
      utilisation = performance.eventLoopUtilization();
      gcMaxMs = 0;
      memoryBefore = process.memoryUsage();
      lateDroppedBefore = node.lateDropped();
      return process.cpuUsage();
    },
    measured: async (profile = true): Promise<NodeMeasures> => {
      loopDelay.disable();
      if (PROFILE_FILE && profile) await profiler.stop(PROFILE_FILE);
      const busy = performance.eventLoopUtilization(utilisation).utilization;
      const memory = process.memoryUsage();
      return {
        cpu: process.cpuUsage(),
        loopP50: loopDelay.percentile(50) / 1e6,
        loopP99: loopDelay.percentile(99) / 1e6,
        busy,
        gcMaxMs,
        heapMb: [mb(memoryBefore.heapUsed), mb(memory.heapUsed)],
        rssMb: [mb(memoryBefore.rss), mb(memory.rss)],
      };
    },
    /** Audio the node dropped as too late since the window opened (asked after the drain). */
    lateDropped: () => node.lateDropped() - lateDroppedBefore,
    close: async () => {
      await node.close();
      setTimeout(() => process.exit(0), 50);
    },
  });
}

/** What the load process says of the measured window: its peers' counts, and its processor time. */
type LoadTally = Omit<Tally, 'latencies'> & { cpuPercent: number };

function runLoad(): void {
  const tally = newTally();
  let cpu = { used: process.cpuUsage(), at: performance.now() };
  const peers = new Peers();
  const calls = new Map<number, { customer: BenchPeer; agent?: BenchPeer }>();
  serve({
    offer: (i: number) => {
      const customer = peers.add(new BenchPeer('service', tally));
      calls.set(i, { customer });
      return customer.offer();
    },
    customerAnswer: (i: number, answer: string) => calls.get(i)!.customer.applyAnswer(answer),
    agentAnswer: (i: number, offer: string) => {
      const agent = peers.add(new BenchPeer('window', tally));
      calls.get(i)!.agent = agent;
      return agent.answer(offer);
    },
    stuck: () => peers.stuck(),
    start: () => peers.startSending(),
    measure: async (from: number, to: number) => {
      measured.from = from;
      measured.to = to;
      if (LOAD_PROFILE_FILE) await profiler.start();
      cpu = { used: process.cpuUsage(), at: performance.now() };
    },
    tally: async (): Promise<LoadTally> => {
      const used = process.cpuUsage(cpu.used);
      const wallMs = performance.now() - cpu.at;
      if (LOAD_PROFILE_FILE) await profiler.stop(LOAD_PROFILE_FILE);
      const { sent, received, made, sentLate, receivedLate } = tally;
      return { sent, received, made, sentLate, receivedLate, cpuPercent: ((used.user + used.system) / 1000 / wallMs) * 100 };
    },
    close: async () => {
      await peers.close();
      setTimeout(() => process.exit(0), 50);
    },
  });
}

// ---------------------------------------------------------------------------------------------
// This process: the calls set up through the node, the probes, the figures.

/** Where a call's peers live: here (a probe, timed) or in the load process. */
interface CallPeers {
  offer(): Promise<string>;
  customerAnswer(answer: string): Promise<void>;
  agentAnswer(offer: string): Promise<string>;
}

function localCall(peers: Peers, tally: Tally): CallPeers {
  const customer = peers.add(new BenchPeer('service', tally));
  const agent = peers.add(new BenchPeer('window', tally));
  return { offer: () => customer.offer(), customerAnswer: (a) => customer.applyAnswer(a), agentAnswer: (o) => agent.answer(o) };
}

function loadCall(load: Child, i: number): CallPeers {
  return {
    offer: () => load.ask<string>('offer', i),
    customerAnswer: (a) => load.ask('customerAnswer', i, a),
    agentAnswer: (o) => load.ask<string>('agentAnswer', i, o),
  };
}

/** An incoming call as the relay sets it up: the node answers the service, offers the agent's leg, connects. */
async function bridgedCall(node: Child, callId: string, peers: CallPeers): Promise<void> {
  const { answer } = await node.control<{ answer: string }>('prepareIncoming', callId, await peers.offer());
  await peers.customerAnswer(answer);
  const { offer } = await node.control<{ offer: string }>('offerAgentLeg', callId, 'leg-1');
  await node.control('applyAgentAnswer', callId, 'leg-1', await peers.agentAnswer(offer));
  await node.control('connectCustomer', callId);
}

async function inBatches(count: number, make: (i: number) => Promise<void>): Promise<void> {
  for (let start = 0; start < count; start += SETUP_CONCURRENCY) {
    await Promise.all(Array.from({ length: Math.min(SETUP_CONCURRENCY, count - start) }, (_, k) => make(start + k)));
  }
}

const fmt = (v: number, digits = 1) => (Number.isFinite(v) ? v.toFixed(digits) : '—');
const verdict = (ok: boolean) => (ok ? 'meets' : 'MISSES');

function table(rows: string[][]): string[] {
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((row) => row[c]!.length)));
  return rows.map((row, i) => {
    const line = row.map((cell, c) => cell.padEnd(widths[c]!)).join('  │  ');
    return i === 0 ? `${line}\n  ${widths.map((w) => '─'.repeat(w)).join('──┼──')}` : line;
  });
}

async function main(): Promise<void> {
  console.log(`Bridge benchmark: ${CALLS} bridged two-party calls through one node (a child process; ${PROBES} probe calls timed here, the rest in a load process),`);
  console.log(`${DIRECT_CALLS} direct calls here for comparison, on ${HOST}. Every peer sends a ${PAYLOAD_BYTES}-byte payload every ${FRAME_MS} ms on its own phase;`);
  console.log(`${WARM_UP_MS / 1000} s warm-up, ${MEASURE_MS / 1000} s measured. Machine: ${cpus().length} cores, load average ${loadavg()[0]!.toFixed(2)} before the run.`);
  const watchdog = setTimeout(() => {
    console.error(`bridge benchmark: still running after ${WATCHDOG_MS / 60_000} min; stopping`);
    killChildren();
    process.exit(1);
  }, WATCHDOG_MS);
  const [node, load] = await Promise.all([Child.start('--node'), Child.start('--load')]);
  const peers = new Peers();
  const bridged = newTally();
  const direct = newTally();
  try {
    const setupStarted = performance.now();
    await inBatches(CALLS, (i) => bridgedCall(node, `wacid.bench-${i}`, i < PROBES ? localCall(peers, bridged) : loadCall(load, i)));
    const setupMs = performance.now() - setupStarted;
    await inBatches(DIRECT_CALLS, async () => {
      const call = localCall(peers, direct);
      await call.customerAnswer(await call.agentAnswer(await call.offer()));
    });
    // Sending starts once every call is up: set-up (DTLS handshakes above all) is not what is measured.
    const deadline = Date.now() + 60_000;
    for (;;) {
      const stuck = [...peers.stuck(), ...(await load.ask<string[]>('stuck'))];
      if (stuck.length === 0) break;
      if (Date.now() > deadline) throw new Error(`${stuck.length} peers did not connect within 60 s: ${stuck.slice(0, 5).join('; ')}`);
      await sleep(100);
    }
    console.log(`Set up ${CALLS} bridged calls in ${fmt(setupMs / 1000)} s (${SETUP_CONCURRENCY} at a time) and ${DIRECT_CALLS} direct ones; all connected.`);
    peers.startSending();
    await load.ask('start');
    await sleep(WARM_UP_MS);

    const from = wallNow() + 50;
    const to = from + MEASURE_MS;
    measured.from = from;
    measured.to = to;
    await load.ask('measure', from, to);
    const loopDelay = monitorEventLoopDelay({ resolution: 10 });
    loopDelay.enable();
    const cpuBefore = await node.ask<NodeJS.CpuUsage>('measure');
    const wallBefore = performance.now();
    const ownCpuBefore = process.cpuUsage();
    await sleep(MEASURE_MS);
    const after = await node.ask<NodeMeasures>('measured');
    const wallMs = performance.now() - wallBefore;
    const ownCpu = process.cpuUsage(ownCpuBefore);
    loopDelay.disable();
    const loadAverage = loadavg()[0]!;
    await sleep(DRAIN_MS);
    const loadTally = await load.ask<LoadTally>('tally');
    const nodeLateDropped = await node.ask<number>('lateDropped');
    const { calls } = await node.ask<{ calls: number }>('load');
    // What the node's own receivers counted missing (sequence gaps on arrival): lost on the way in.
    let lostOnTheWayIn = 0;
    for (let i = 0; i < CALLS; i++) {
      const report = await node.control<BridgedCallReport>('report', `wacid.bench-${i}`);
      lostOnTheWayIn += report.customer.packetsLost + Object.values(report.agents).reduce((sum, leg) => sum + leg.packetsLost, 0);
    }

    const userPercent = ((after.cpu.user - cpuBefore.user) / 1000 / wallMs) * 100;
    const systemPercent = ((after.cpu.system - cpuBefore.system) / 1000 / wallMs) * 100;
    const cpuPercent = userPercent + systemPercent;
    const sorted = (t: Tally) => [...t.latencies].sort((a, b) => a - b);
    const probe = sorted(bridged);
    const face = sorted(direct);
    const added50 = percentile(probe, 50) - percentile(face, 50);
    const added95 = percentile(probe, 95) - percentile(face, 95);
    const allBridged = {
      sent: bridged.sent + loadTally.sent,
      received: bridged.received + loadTally.received,
      made: bridged.made + loadTally.made,
      sentLate: bridged.sentLate + loadTally.sentLate,
      receivedLate: bridged.receivedLate + loadTally.receivedLate,
    };
    const lost = allBridged.sent - allBridged.received;
    // Left out of the verdict: only packets a starved sender sent late and the node then dropped as
    // too late (its own count), never more than were lost among those sent late. A node that fell
    // behind by itself, its senders on time, has lost what it dropped.
    const lostOfLate = allBridged.sentLate - allBridged.receivedLate;
    const excused = Math.min(lost, nodeLateDropped, lostOfLate);
    const lostBridged = lost - excused;
    const lateShare = allBridged.sent > 0 ? allBridged.sentLate / allBridged.sent : 0;
    const lossVerdict =
      lateShare > INCONCLUSIVE_LATE_SHARE
        ? `none: INCONCLUSIVE (${fmt(lateShare * 100, 2)} % sent late, over ${fmt(INCONCLUSIVE_LATE_SHARE * 100, 0)} %: the machine was too busy)`
        : `none: ${verdict(lostBridged === 0)}`;

    console.log('');
    for (const line of table([
      ['path', 'calls timed', 'one-way p50 ms', 'p95 ms', 'p99 ms', 'calls counted', 'packets sent', 'lost', 'made by the node'],
      ['bridged', String(PROBES), fmt(percentile(probe, 50), 2), fmt(percentile(probe, 95), 2), fmt(percentile(probe, 99), 2), String(CALLS), String(allBridged.sent), String(lost), String(allBridged.made)],
      ['direct', String(DIRECT_CALLS), fmt(percentile(face, 50), 2), fmt(percentile(face, 95), 2), fmt(percentile(face, 99), 2), String(DIRECT_CALLS), String(direct.sent), String(direct.sent - direct.received), '—'],
    ]))
      console.log(`  ${line}`);
    console.log('');
    for (const line of table([
      ['measure', 'value', 'goal'],
      [`node CPU for ${calls} calls`, `${fmt(cpuPercent)} % of one core (user ${fmt(userPercent)}, system ${fmt(systemPercent)})`, `≥ ${GOAL_CALLS} calls within one core: ${verdict(calls >= GOAL_CALLS && cpuPercent < 100)}`],
      ['node CPU per call', `${fmt(cpuPercent / calls, 2)} % of one core (≈ ${fmt(100 / (cpuPercent / calls), 0)} calls a core)`, `≤ ${fmt(100 / GOAL_CALLS, 2)} %`],
      ['added latency (bridged − direct), median', `${fmt(added50, 2)} ms`, `≤ ${GOAL_ADDED_MS} ms: ${verdict(added50 <= GOAL_ADDED_MS)}`],
      ['added latency (bridged − direct), p95', `${fmt(added95, 2)} ms`, '—'],
      ['packets lost, bridged, less those sent late and dropped as too late', String(lostBridged), lossVerdict],
      ['  dropped by the node as too late (its own count)', String(nodeLateDropped), `(${excused} left out of the verdict: at most as many as were lost of those sent late)`],
      [`  sent late (≥ ${LATE_SEND_MS} ms after due: their process waited for a core), lost of them`, `${allBridged.sentLate} (${fmt(lateShare * 100, 2)} %), ${allBridged.sentLate - allBridged.receivedLate}`, `(the machine\u2019s load, not the bridge\u2019s; over ${fmt(INCONCLUSIVE_LATE_SHARE * 100, 0)} %: inconclusive)`],
      ['  lost before the node (its receivers’ count, whole call)', String(lostOnTheWayIn), ''],
      ['node event loop: busy, delay p50 / p99, longest GC', `${fmt(after.busy * 100, 0)} %, ${fmt(after.loopP50)} / ${fmt(after.loopP99)} ms, ${fmt(after.gcMaxMs)} ms`, ''],
      // Busy but not on a processor: the share of the window the node had work and no core to do it on.
      ['node waiting for a core (busy − CPU)', `${fmt(Math.max(0, after.busy * 100 - cpuPercent), 0)} % of the window`, '(the machine\u2019s other work, not the bridge\u2019s)'],
      ['node memory: heap in use, resident (window start → end)', `${fmt(after.heapMb[0], 0)} → ${fmt(after.heapMb[1], 0)} MB, ${fmt(after.rssMb[0], 0)} → ${fmt(after.rssMb[1], 0)} MB`, ''],
      ['load process CPU (its peers of the calls not timed)', `${fmt(loadTally.cpuPercent)} % of one core`, ''],
      ['this process: CPU, event-loop delay p50 / p99', `${fmt(((ownCpu.user + ownCpu.system) / 1000 / wallMs) * 100)} % of one core, ${fmt(loopDelay.percentile(50) / 1e6)} / ${fmt(loopDelay.percentile(99) / 1e6)} ms`, '(both paths cross it)'],
      ['machine load average (1 min) at the end', fmt(loadAverage, 2), `(${cpus().length} cores)`],
    ]))
      console.log(`  ${line}`);
    if (RECORD) await measureRecording(node, calls, { cpuPercent, busy: after.busy, rssMb: after.rssMb[1] });
  } finally {
    clearTimeout(watchdog);
    await peers.close();
    await Promise.all([load.ask('close').catch(() => undefined), node.ask('close').catch(() => undefined)]);
    await sleep(100);
    killChildren();
  }
}

/**
 * BENCH_BRIDGE_RECORD: every call starts recording, and a second window as long as the first
 * measures the node again; its CPU per call beside the plain window's is what recording costs.
 */
async function measureRecording(node: Child, calls: number, plain: { cpuPercent: number; busy: number; rssMb: number }): Promise<void> {
  const callIds = Array.from({ length: CALLS }, (_, i) => `wacid.bench-${i}`);
  for (const callId of callIds) await node.control('startRecording', callId);
  await sleep(RECORD_WARM_UP_MS);
  const cpuBefore = await node.ask<NodeJS.CpuUsage>('measure', false);
  const wallBefore = performance.now();
  await sleep(MEASURE_MS);
  const after = await node.ask<NodeMeasures>('measured', false);
  const wallMs = performance.now() - wallBefore;
  const cpuPercent = ((after.cpu.user - cpuBefore.user + after.cpu.system - cpuBefore.system) / 1000 / wallMs) * 100;
  const made = await node.ask<RecordingsMade>('endCalls', callIds);
  const minutes = made.durationMs / 60_000;
  console.log('');
  console.log(`Recording: every call recording for ${fmt(MEASURE_MS / 1000, 0)} s more (started ${fmt(RECORD_WARM_UP_MS / 1000, 0)} s before the window).`);
  for (const line of table([
    ['measure', 'plain', 'recorded', 'recording adds'],
    [`node CPU for ${calls} calls, % of one core`, fmt(plain.cpuPercent), fmt(cpuPercent), fmt(cpuPercent - plain.cpuPercent)],
    ['node CPU per call, % of one core', fmt(plain.cpuPercent / calls, 2), fmt(cpuPercent / calls, 2), fmt((cpuPercent - plain.cpuPercent) / calls, 2)],
    ['calls a core (100 % / CPU per call)', fmt(100 / (plain.cpuPercent / calls), 0), fmt(100 / (cpuPercent / calls), 0), ''],
    ['node event loop busy, %', fmt(plain.busy * 100, 0), fmt(after.busy * 100, 0), ''],
    ['node resident memory at the window’s end, MB', fmt(plain.rssMb, 0), fmt(after.rssMb[1], 0), fmt(after.rssMb[1] - plain.rssMb, 0)],
    ['recordings handed over at the calls’ end', '—', `${made.files} files, ${fmt(made.bytes / 1024 / 1024)} MB`, minutes > 0 ? `${fmt(made.bytes / 1024 / minutes, 0)} kB a call-minute` : '—'],
  ]))
    console.log(`  ${line}`);
}

if (process.argv.includes('--node')) runNode();
else if (process.argv.includes('--load')) runLoad();
else {
  process.on('exit', killChildren);
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.on(signal, () => {
      killChildren();
      process.exit(130);
    });
  }
  main().then(
    () => process.exit(0),
    (e: unknown) => {
      console.error(`bridge benchmark failed: ${errorText(e)}`);
      killChildren();
      process.exit(1);
    },
  );
}

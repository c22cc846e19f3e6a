// `npm run bench:bridge`: one bridge node under many two-party calls, on 127.0.0.1; then a few of
// them alone, plain, recorded and joined by a supervisor, side by side (KINDS OF CALL).
//
// Three processes, so that each measure is taken where nothing else distorts it:
//   - the node (bridge/bridge-node.ts), alone in a child process and driven over IPC through its
//     BridgeControl methods: its processor time (process.cpuUsage) is its own;
//   - the load, a second child process holding most calls' peers: for each call a werift "customer"
//     shaped like the service (ice-lite, complete, Opus 111 + telephone-event 126) and a werift
//     "agent" answering the node's leg offer as a window does (and, for the supervised windows, each
//     probe call's "supervisor", answering as the agent does). It stands for phones and windows on
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
// KINDS OF CALL. After that first window the other calls end and the probe calls go on alone on
// the node. They are measured again, plain, and then in a window of the same length for each other
// kind of call in turn, all of them of that kind. The node's CPU per call of each kind (its CPU over
// the probe calls) is printed side by side with what the kind adds to a plain call. Alone, because
// a supervised call costs several plain ones and a node asked for more than its core falls behind;
// so does one that waits for a core on a busy machine, and the load process's peers of the other
// calls keep it busy. Falling behind, the node drops what came too late and its clock skips the
// ticks it missed, so its CPU time covers only the work it got to do, not what the calls cost.
// A window where the node used over 90 % of its core, made 2 % fewer frames than were due, or lost
// over 1 % of the forwarded packets is named under the table, and its CPU figures are marked
// INCONCLUSIVE (all of them when the plain window is such a one). A call's share of the node's fixed
// work (its clock, its timers) is larger among 10 calls than among 100: the kinds compare within
// their own table, the first window says what a plain call costs on a full node.
//   - recorded: recording (bridge/media/call-recorder.ts: both sides decoded, one stereo frame
//     encoded per 20 ms), started 1 s before the window and stopped after it. The peers' payloads
//     are not speech but CELT frames of arbitrary bytes, which decode to noise: the stereo
//     encoder's hardest input, so the figure leans high;
//   - supervised: a third werift leg, the supervisor's window, in the load process (offered by the
//     node and answered as an agent's window answers, sending every 20 ms as a browser does even
//     with its microphone muted), joined once the recorded window is over, and routed as the relay
//     routes a supervisor in that mode (relay/bridged-call.ts routesOf): listen (it hears the
//     customer and the agent, a mix made for it alone, and nobody hears it), whisper (the agent's
//     listening becomes a mix too) or barge (everyone hears everyone: three mixes, the heaviest).
// Each window has its own counts, and latency and loss keep their meaning: they are taken, as in the
// first, of the packets that reach a listener as they were sent (forwarded, as the node's
// listening.ts decides): in a call recorded or listened to, the customer's and the agent's both
// ways; while a supervisor whispers, the agent's to the customer only; in a barge none (every
// listener hears a mix: the frames the node made for mixes are counted instead, against those due).
// The direct calls go on through every window, so each kind's added latency is taken against the
// direct calls of the same seconds.
// BENCH_BRIDGE_KINDS (default plain,recorded,listen,barge; whisper may be added) says which kinds to
// measure; plain always comes first, then the others in that order.
//
// BENCH_BRIDGE_CALLS (default 100) bridged calls, of which BENCH_BRIDGE_PROBES (default 10) are
// probes here; BENCH_BRIDGE_DIRECT (default 10) direct calls; BENCH_BRIDGE_SECONDS (default 15)
// measured after a 3 s warm-up, and as long again for each kind of the probe calls alone.
// BENCH_BRIDGE_PROFILE=FILE writes the node's CPU profile of the first window there (open it in
// Chrome's DevTools): where the node's time goes; BENCH_BRIDGE_LOAD_PROFILE=FILE the load process's.
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
import { defaultRoutes, listeningOf } from '../bridge/media/listening';
import { routesOf, type BridgedCall } from '../relay/bridged-call';
import { CUSTOMER, type BridgedCallReport, type ParticipantId, type Routes } from '../shared/bridge';
import type { RecordingSink } from '../shared/bridge-recording';
import type { Logger } from '../shared/log';
import { errorText, ok, type Result } from '../shared/result';
import { MONITOR_MODES } from '../shared/supervision';
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
/** A kind's work (a recording, a supervisor's routes) starts this long before its window opens: codecs made, queues filled. */
const SETTLE_MS = 1_000;
const WARM_UP_MS = 3_000;
/** Packets still on their way when the window closes arrive within this. */
const DRAIN_MS = 1_000;
/** Calls set up at once: the node gathers and answers while the others wait their turn. */
const SETUP_CONCURRENCY = 8;
/** Past set-up and warm-up; each kind's window adds its own length. */
const WATCHDOG_MS = 5 * 60_000;
const HOST = '127.0.0.1';
/** Every call's legs: its agent's, and its supervisor's once one joins. */
const AGENT_LEG = 'leg-1';
const SUPERVISOR_LEG = 'supervisor-1';
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

/** What a set of peers saw during one measured window. */
interface Tally {
  latencies: number[];
  sent: number;
  received: number;
  /** Packets the node made itself (a mix, silence filling a stall): not ours, not counted as received. */
  made: number;
  /** Of those, the ones received by a listener that hears only frames the node makes (MeasuredWindow.madeFor). */
  heardMade: number;
  /** Of those sent and received, the ones that went out late (LATE_SEND_MS). */
  sentLate: number;
  receivedLate: number;
}
const newTally = (): Tally => ({ latencies: [], sent: 0, received: 0, made: 0, heardMade: 0, sentLate: 0, receivedLate: 0 });

/**
 * Whose packets a peer sends: the customer, agent or supervisor of a probe call (of the window's
 * kind), either end of one of the load's calls (plain, in the first window only), or of a direct call.
 */
type Speaker = 'customer' | 'agent' | 'supervisor' | 'plain' | 'direct';

/**
 * A measured window, in wall-clock ms; whose packets reach one listener as they were sent
 * (forwarded) in it: only those are counted sent, so that what does not arrive was lost (a packet
 * that is only ever mixed arrives as the node's own frame, never as itself); and who hears only
 * frames the node makes (a mix, silence), one due every 20 ms.
 */
interface MeasuredWindow {
  from: number;
  to: number;
  forwarded: Record<Speaker, boolean>;
  madeFor: Record<Speaker, boolean>;
}

/** This process's measured windows, in turn; packets are counted in the one their send time falls in. */
const windows: MeasuredWindow[] = [];

function windowAt(at: number): number {
  for (let i = windows.length - 1; i >= 0; i--) if (at >= windows[i]!.from && at < windows[i]!.to) return i;
  return -1;
}

/** A set of peers' tallies, one per measured window. */
class Tallies {
  private readonly byWindow: Tally[] = [];

  of(window: number): Tally {
    return (this.byWindow[window] ??= newTally());
  }
}

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
    private readonly speaker: Speaker,
    private readonly tallies: Tallies,
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
      const window = windowAt(at);
      if (window >= 0 && windows[window]!.forwarded[this.speaker]) {
        const tally = this.tallies.of(window);
        tally.sent++;
        if (late) tally.sentLate++;
      }
    }
  }

  close(): Promise<void> {
    return this.pc.close();
  }

  private receive(payload: Buffer): void {
    const arrived = wallNow();
    if (payload.length < PAYLOAD_BYTES || payload[1] !== MARK) {
      const window = windowAt(arrived);
      if (window < 0) return;
      const tally = this.tallies.of(window);
      tally.made++;
      if (windows[window]!.madeFor[this.speaker]) tally.heardMade++;
      return;
    }
    const sentAt = payload.readDoubleBE(6);
    const window = windowAt(sentAt);
    if (window < 0) return;
    const tally = this.tallies.of(window);
    tally.received++;
    if (payload[LATE_FLAG_AT] === 1) tally.receivedLate++;
    tally.latencies.push(arrived - sentAt);
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

  /** Every peer not sending yet starts, on a phase of its own. */
  startSending(): void {
    const startedAt = performance.now();
    for (const peer of this.all) if (peer.nextAt === Infinity) peer.nextAt = startedAt + Math.random() * FRAME_MS;
    this.ticker ??= setInterval(() => {
      const now = performance.now();
      for (const peer of this.all) peer.sendDue(now);
    }, 2);
  }

  /** Every peer held now hangs up (its call ended); peers added later send on the same timer. */
  async hangUp(): Promise<void> {
    const gone = this.all.splice(0);
    await Promise.all(gone.map((p) => p.close().catch(() => undefined)));
  }

  async close(): Promise<void> {
    clearInterval(this.ticker);
    await this.hangUp();
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
    setRoutes: (callId: string, routes: Routes) => node.setRoutes(callId, routes),
    startRecording: (callId: string) => node.startRecording(callId),
    stopRecording: (callId: string) => node.stopRecording(callId),
    /** Every call ended: the recordings' files are finished and handed to the sink. */
    endCalls: async (callIds: string[]): Promise<RecordingsMade> => {
      await Promise.all(callIds.map((callId) => node.endCall(callId)));
      return made;
    },
    measure: async (profile: boolean) => {
      if (PROFILE_FILE && profile) await profiler.start();
      loopDelay.reset();
      loopDelay.enable();
      utilisation = performance.eventLoopUtilization();
      gcMaxMs = 0;
      memoryBefore = process.memoryUsage();
      lateDroppedBefore = node.lateDropped();
      return process.cpuUsage();
    },
    measured: async (profile: boolean): Promise<NodeMeasures> => {
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

/** What the load process says of one measured window: its peers' counts, and its processor time. */
type LoadTally = Omit<Tally, 'latencies'> & { cpuPercent: number };

function runLoad(): void {
  const tallies = new Tallies();
  let cpu = { used: process.cpuUsage(), at: performance.now() };
  const peers = new Peers();
  const customers = new Map<number, BenchPeer>();
  serve({
    offer: (i: number) => {
      const customer = peers.add(new BenchPeer('service', 'plain', tallies));
      customers.set(i, customer);
      return customer.offer();
    },
    customerAnswer: (i: number, answer: string) => customers.get(i)!.applyAnswer(answer),
    agentAnswer: (offer: string) => peers.add(new BenchPeer('window', 'plain', tallies)).answer(offer),
    supervisorAnswer: (offer: string) => peers.add(new BenchPeer('window', 'supervisor', tallies)).answer(offer),
    stuck: () => peers.stuck(),
    start: () => peers.startSending(),
    hangUp: () => peers.hangUp(),
    measure: async (window: MeasuredWindow) => {
      windows.push(window);
      if (LOAD_PROFILE_FILE && windows.length === 1) await profiler.start();
      cpu = { used: process.cpuUsage(), at: performance.now() };
    },
    tally: async (window: number): Promise<LoadTally> => {
      const used = process.cpuUsage(cpu.used);
      const wallMs = performance.now() - cpu.at;
      if (LOAD_PROFILE_FILE && window === 0) await profiler.stop(LOAD_PROFILE_FILE);
      const { sent, received, made, heardMade, sentLate, receivedLate } = tallies.of(window);
      return { sent, received, made, heardMade, sentLate, receivedLate, cpuPercent: ((used.user + used.system) / 1000 / wallMs) * 100 };
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

function localCall(peers: Peers, tallies: Tallies, direct = false): CallPeers {
  const customer = peers.add(new BenchPeer('service', direct ? 'direct' : 'customer', tallies));
  const agent = peers.add(new BenchPeer('window', direct ? 'direct' : 'agent', tallies));
  return { offer: () => customer.offer(), customerAnswer: (a) => customer.applyAnswer(a), agentAnswer: (o) => agent.answer(o) };
}

function loadCall(load: Child, i: number): CallPeers {
  return {
    offer: () => load.ask<string>('offer', i),
    customerAnswer: (a) => load.ask('customerAnswer', i, a),
    agentAnswer: (o) => load.ask<string>('agentAnswer', o),
  };
}

/** An incoming call as the relay sets it up: the node answers the service, offers the agent's leg, connects. */
async function bridgedCall(node: Child, callId: string, peers: CallPeers): Promise<void> {
  const { answer } = await node.control<{ answer: string }>('prepareIncoming', callId, await peers.offer());
  await peers.customerAnswer(answer);
  const { offer } = await node.control<{ offer: string }>('offerAgentLeg', callId, AGENT_LEG);
  await node.control('applyAgentAnswer', callId, AGENT_LEG, await peers.agentAnswer(offer));
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

// ---------------------------------------------------------------------------------------------
// Kinds of call: the probe calls alone, all of one kind in each window.

const CALL_KINDS = ['plain', 'recorded', ...MONITOR_MODES] as const;
type CallKind = (typeof CALL_KINDS)[number];
const KIND_TITLES: Record<CallKind, string> = {
  plain: 'plain',
  recorded: 'recorded',
  listen: 'supervisor listening',
  whisper: 'supervisor whispering',
  barge: 'supervisor barging',
};
const DEFAULT_KINDS = 'plain,recorded,listen,barge';

/** BENCH_BRIDGE_KINDS: plain first (the goals are judged on it), then those asked for in CALL_KINDS' order. */
function kindsAsked(): CallKind[] {
  const asked = (process.env.BENCH_BRIDGE_KINDS ?? DEFAULT_KINDS)
    .split(',')
    .map((kind) => kind.trim())
    .filter((kind) => kind !== '');
  const unknown = asked.filter((kind) => !(CALL_KINDS as readonly string[]).includes(kind));
  if (unknown.length > 0) throw new Error(`BENCH_BRIDGE_KINDS: no kind ${unknown.join(', ')} (the kinds: ${CALL_KINDS.join(', ')})`);
  return CALL_KINDS.filter((kind) => kind === 'plain' || asked.includes(kind));
}

const callIdOf = (i: number) => `wacid.bench-${i}`;
const everyCall = () => Array.from({ length: CALLS }, (_, i) => callIdOf(i));
/** The calls that change kind: the probes, timed here. */
const probeCalls = () => Array.from({ length: PROBES }, (_, i) => callIdOf(i));

/**
 * Who hears whom in a call of this kind. The bench sends the node no routes until a supervisor
 * joins, so plain and recorded calls run on the node's own (its first agent and the customer hear
 * each other); a supervised call on the routes the relay sends for a call with one agent and one
 * supervisor in that mode.
 */
function routesOfKind(kind: CallKind): { routes: Routes; participants: ParticipantId[] } {
  if (kind === 'plain' || kind === 'recorded') return { routes: defaultRoutes([AGENT_LEG]), participants: [CUSTOMER, AGENT_LEG] };
  const supervised: BridgedCall = {
    callId: callIdOf(0),
    nodeId: 'bench',
    direction: 'incoming',
    legs: new Map([[AGENT_LEG, 'agent']]),
    declined: new Set(),
    activeLeg: AGENT_LEG,
    members: new Map([['agent', AGENT_LEG]]),
    held: false,
    transfers: new Map(),
    everyone: new Set(['agent']),
    away: new Map(),
    strayLegs: [],
    monitors: new Map([['supervisor', { legId: SUPERVISOR_LEG, mode: kind, name: 'Supervisor', leg: { kind: 'connected', offer: '' } }]]),
    caller: {},
    createdAt: Date.now(),
  };
  return { routes: routesOf(supervised), participants: [CUSTOMER, AGENT_LEG, SUPERVISOR_LEG] };
}

/**
 * What a kind's window counts, as the node's listening.ts decides from the routes: whose packets
 * the node forwards to a listener (the calls that stay plain always), and which listeners of a
 * call of the kind hear only frames the node makes (a mix, silence).
 */
function countedInKind(kind: CallKind): Pick<MeasuredWindow, 'forwarded' | 'madeFor'> {
  const { routes, participants } = routesOfKind(kind);
  const connected = new Set(participants);
  // A participant not in calls of this kind (a supervisor before one joins) hears nothing at all.
  const listeningOfOne = (participant: ParticipantId) => (connected.has(participant) ? listeningOf(routes, participant, connected) : undefined);
  const forwardedOnce = (speaker: ParticipantId): boolean => {
    const listeners = participants.filter((listener) => {
      const listening = listeningOfOne(listener);
      return listening?.kind === 'forward' && listening.source === speaker;
    }).length;
    // One packet sent, one received: a packet forwarded to two listeners would be counted twice.
    if (listeners > 1) throw new Error(`${kind}: ${speaker} forwarded to ${listeners} listeners; the bench counts one`);
    return listeners === 1;
  };
  const hearsMade = (listener: ParticipantId): boolean => {
    const listening = listeningOfOne(listener);
    return listening !== undefined && listening.kind !== 'forward';
  };
  return {
    forwarded: { customer: forwardedOnce(CUSTOMER), agent: forwardedOnce(AGENT_LEG), supervisor: forwardedOnce(SUPERVISOR_LEG), plain: true, direct: true },
    madeFor: { customer: hearsMade(CUSTOMER), agent: hearsMade(AGENT_LEG), supervisor: hearsMade(SUPERVISOR_LEG), plain: false, direct: false },
  };
}

/** The processes and this process's tallies of one run. */
interface Bench {
  node: Child;
  load: Child;
  peers: Peers;
  bridged: Tallies;
  direct: Tallies;
  supervised: boolean;
}

/** What one window measured. */
interface WindowFigures {
  kind: CallKind;
  node: NodeMeasures;
  /** The node's processor time, % of one core. */
  userPercent: number;
  systemPercent: number;
  cpuPercent: number;
  /** One-way latencies of the probes and of the direct calls, sorted. */
  probe: number[];
  face: number[];
  /** Every bridged call's counts (the probes' and the load's). */
  bridged: Omit<Tally, 'latencies'>;
  direct: Tally;
  /** Audio the node dropped as too late in the window (its own count). */
  lateDropped: number;
  /** Frames the node was due to make for the probe calls, ≈ (a mix or silence, each 20 ms to each such listener). */
  madeDue: number;
  loadCpuPercent: number;
  own: { cpuPercent: number; loopP50: number; loopP99: number };
  loadAverage: number;
}

async function measureWindow({ node, load, bridged, direct }: Bench, kind: CallKind): Promise<WindowFigures> {
  const counted = countedInKind(kind);
  const index = windows.length;
  const from = wallNow() + 50;
  const window: MeasuredWindow = { from, to: from + MEASURE_MS, ...counted };
  windows.push(window);
  await load.ask('measure', window);
  const loopDelay = monitorEventLoopDelay({ resolution: 10 });
  loopDelay.enable();
  const cpuBefore = await node.ask<NodeJS.CpuUsage>('measure', index === 0);
  const wallBefore = performance.now();
  const ownCpuBefore = process.cpuUsage();
  await sleep(MEASURE_MS);
  const after = await node.ask<NodeMeasures>('measured', index === 0);
  const wallMs = performance.now() - wallBefore;
  const ownCpu = process.cpuUsage(ownCpuBefore);
  loopDelay.disable();
  const loadAverage = loadavg()[0]!;
  await sleep(DRAIN_MS);
  const loadTally = await load.ask<LoadTally>('tally', index);
  const lateDropped = await node.ask<number>('lateDropped');

  const percentOf = (microseconds: number) => (microseconds / 1000 / wallMs) * 100;
  const userPercent = percentOf(after.cpu.user - cpuBefore.user);
  const systemPercent = percentOf(after.cpu.system - cpuBefore.system);
  const sorted = (t: Tally) => [...t.latencies].sort((a, b) => a - b);
  const probes = bridged.of(index);
  return {
    kind,
    node: after,
    userPercent,
    systemPercent,
    cpuPercent: userPercent + systemPercent,
    probe: sorted(probes),
    face: sorted(direct.of(index)),
    bridged: {
      sent: probes.sent + loadTally.sent,
      received: probes.received + loadTally.received,
      made: probes.made + loadTally.made,
      heardMade: probes.heardMade + loadTally.heardMade,
      sentLate: probes.sentLate + loadTally.sentLate,
      receivedLate: probes.receivedLate + loadTally.receivedLate,
    },
    direct: direct.of(index),
    lateDropped,
    madeDue: Math.round((Object.values(counted.madeFor).filter(Boolean).length * PROBES * MEASURE_MS) / FRAME_MS),
    loadCpuPercent: loadTally.cpuPercent,
    own: { cpuPercent: percentOf(ownCpu.user + ownCpu.system), loopP50: loopDelay.percentile(50) / 1e6, loopP99: loopDelay.percentile(99) / 1e6 },
    loadAverage,
  };
}

/**
 * The window's loss verdict. Left out of it: only packets a starved sender sent late and the node
 * then dropped as too late (its own count), never more than were lost among those sent late. A node
 * that fell behind by itself, its senders on time, has lost what it dropped.
 */
function lossOf({ bridged, lateDropped }: WindowFigures): { lost: number; excused: number; counted: number; lateShare: number; inconclusive: boolean } {
  const lost = bridged.sent - bridged.received;
  const excused = Math.min(lost, lateDropped, bridged.sentLate - bridged.receivedLate);
  const lateShare = bridged.sent > 0 ? bridged.sentLate / bridged.sent : 0;
  return { lost, excused, counted: lost - excused, lateShare, inconclusive: lateShare > INCONCLUSIVE_LATE_SHARE };
}

/** Every peer here and in the load process connected (DTLS up), within 60 s. */
async function allConnected(peers: Peers, load: Child): Promise<void> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const stuck = [...peers.stuck(), ...(await load.ask<string[]>('stuck'))];
    if (stuck.length === 0) return;
    if (Date.now() > deadline) throw new Error(`${stuck.length} peers did not connect within 60 s: ${stuck.slice(0, 5).join('; ')}`);
    await sleep(100);
  }
}

/**
 * A supervisor joins every probe call as the relay joins one (monitors.ts): the node offers its leg,
 * the supervisor's window (in the load process) answers, and once every leg is up they send. Until
 * routed, a supervisor hears silence and nobody hears it.
 */
async function joinSupervisors(bench: Bench): Promise<void> {
  const { node, load } = bench;
  const started = performance.now();
  await inBatches(PROBES, async (i) => {
    const { offer } = await node.control<{ offer: string }>('offerAgentLeg', callIdOf(i), SUPERVISOR_LEG);
    await node.control('applyAgentAnswer', callIdOf(i), SUPERVISOR_LEG, await load.ask<string>('supervisorAnswer', offer));
  });
  await allConnected(bench.peers, load);
  await load.ask('start');
  bench.supervised = true;
  console.log(`Joined a supervisor to each of the ${PROBES} probe calls in ${fmt((performance.now() - started) / 1000)} s (${SETUP_CONCURRENCY} at a time, the calls going on); all connected.`);
}

/**
 * The calls other than the probes end (at the node, then their peers hang up): the probe calls go on
 * alone, so that a kind's calls have the node to themselves and the bench takes less of the machine.
 * A warm-up again before the next window: what the ended calls leave (their legs' closing, their
 * garbage) is not a plain call's cost.
 */
async function leaveProbesAlone({ node, load }: Bench): Promise<void> {
  await node.ask('endCalls', everyCall().slice(PROBES));
  await load.ask('hangUp');
  await sleep(WARM_UP_MS);
}

/** A kind's work starts on the probe calls, settles, and is measured; a recording stops after its window. */
async function measureKind(bench: Bench, kind: Exclude<CallKind, 'plain'>): Promise<WindowFigures> {
  const { node } = bench;
  if (kind === 'recorded') {
    for (const callId of probeCalls()) await node.control('startRecording', callId);
    await sleep(SETTLE_MS);
    const figures = await measureWindow(bench, kind);
    for (const callId of probeCalls()) await node.control('stopRecording', callId);
    return figures;
  }
  if (!bench.supervised) await joinSupervisors(bench);
  const { routes } = routesOfKind(kind);
  for (const callId of probeCalls()) await node.control('setRoutes', callId, routes);
  await sleep(SETTLE_MS);
  return measureWindow(bench, kind);
}

async function main(): Promise<void> {
  const kinds = kindsAsked();
  const others = kinds.filter((kind) => kind !== 'plain').map((kind) => KIND_TITLES[kind]);
  console.log(`Bridge benchmark: ${CALLS} bridged two-party calls through one node (a child process; ${PROBES} probe calls timed here, the rest in a load process),`);
  console.log(`${DIRECT_CALLS} direct calls here for comparison, on ${HOST}. Every peer sends a ${PAYLOAD_BYTES}-byte payload every ${FRAME_MS} ms on its own phase;`);
  console.log(`${WARM_UP_MS / 1000} s warm-up, ${MEASURE_MS / 1000} s measured. Machine: ${cpus().length} cores, load average ${loadavg()[0]!.toFixed(2)} before the run.`);
  if (others.length > 0) console.log(`Then the ${PROBES} probe calls alone, ${MEASURE_MS / 1000} s for each kind of call in turn: plain, ${others.join(', ')}.`);
  const watchdogMs = WATCHDOG_MS + kinds.length * (MEASURE_MS + SETTLE_MS + DRAIN_MS);
  const watchdog = setTimeout(() => {
    console.error(`bridge benchmark: still running after ${fmt(watchdogMs / 60_000)} min; stopping`);
    killChildren();
    process.exit(1);
  }, watchdogMs);
  const [node, load] = await Promise.all([Child.start('--node'), Child.start('--load')]);
  const bench: Bench = { node, load, peers: new Peers(), bridged: new Tallies(), direct: new Tallies(), supervised: false };
  const { peers } = bench;
  try {
    const setupStarted = performance.now();
    await inBatches(CALLS, (i) => bridgedCall(node, callIdOf(i), i < PROBES ? localCall(peers, bench.bridged) : loadCall(load, i)));
    const setupMs = performance.now() - setupStarted;
    await inBatches(DIRECT_CALLS, async () => {
      const call = localCall(peers, bench.direct, true);
      await call.customerAnswer(await call.agentAnswer(await call.offer()));
    });
    // Sending starts once every call is up: set-up (DTLS handshakes above all) is not what is measured.
    await allConnected(peers, load);
    console.log(`Set up ${CALLS} bridged calls in ${fmt(setupMs / 1000)} s (${SETUP_CONCURRENCY} at a time) and ${DIRECT_CALLS} direct ones; all connected.`);
    peers.startSending();
    await load.ask('start');
    await sleep(WARM_UP_MS);

    const plain = await measureWindow(bench, 'plain');
    const { calls } = await node.ask<{ calls: number }>('load');
    // What the node's own receivers counted missing (sequence gaps on arrival): lost on the way in.
    let lostOnTheWayIn = 0;
    for (const callId of everyCall()) {
      const report = await node.control<BridgedCallReport>('report', callId);
      lostOnTheWayIn += report.customer.packetsLost + Object.values(report.agents).reduce((sum, leg) => sum + leg.packetsLost, 0);
    }
    printPlain(plain, calls, lostOnTheWayIn);
    if (kinds.length === 1) return;

    await leaveProbesAlone(bench);
    const figures = [await measureWindow(bench, 'plain')];
    for (const kind of kinds) if (kind !== 'plain') figures.push(await measureKind(bench, kind));
    // Ending the calls finishes their recordings and hands them to the node's sink.
    const made = kinds.includes('recorded') ? await node.ask<RecordingsMade>('endCalls', probeCalls()) : undefined;
    printKinds(figures, { calls, cpuPercent: plain.cpuPercent }, made);
  } finally {
    clearTimeout(watchdog);
    await peers.close();
    await Promise.all([load.ask('close').catch(() => undefined), node.ask('close').catch(() => undefined)]);
    await sleep(100);
    killChildren();
  }
}

/** The plain window: latency, loss and CPU against the goals. */
function printPlain(plain: WindowFigures, calls: number, lostOnTheWayIn: number): void {
  const { probe, face, bridged, direct, node: after, cpuPercent, userPercent, systemPercent, lateDropped } = plain;
  const added50 = percentile(probe, 50) - percentile(face, 50);
  const added95 = percentile(probe, 95) - percentile(face, 95);
  const { lost, excused, counted, lateShare, inconclusive } = lossOf(plain);
  const lossVerdict = inconclusive
    ? `none: INCONCLUSIVE (${fmt(lateShare * 100, 2)} % sent late, over ${fmt(INCONCLUSIVE_LATE_SHARE * 100, 0)} %: the machine was too busy)`
    : `none: ${verdict(counted === 0)}`;

  console.log('');
  for (const line of table([
    ['path', 'calls timed', 'one-way p50 ms', 'p95 ms', 'p99 ms', 'calls counted', 'packets sent', 'lost', 'made by the node'],
    ['bridged', String(PROBES), fmt(percentile(probe, 50), 2), fmt(percentile(probe, 95), 2), fmt(percentile(probe, 99), 2), String(CALLS), String(bridged.sent), String(lost), String(bridged.made)],
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
    ['packets lost, bridged, less those sent late and dropped as too late', String(counted), lossVerdict],
    ['  dropped by the node as too late (its own count)', String(lateDropped), `(${excused} left out of the verdict: at most as many as were lost of those sent late)`],
    [`  sent late (≥ ${LATE_SEND_MS} ms after due: their process waited for a core), lost of them`, `${bridged.sentLate} (${fmt(lateShare * 100, 2)} %), ${bridged.sentLate - bridged.receivedLate}`, `(the machine\u2019s load, not the bridge\u2019s; over ${fmt(INCONCLUSIVE_LATE_SHARE * 100, 0)} %: inconclusive)`],
    ['  lost before the node (its receivers’ count, whole call)', String(lostOnTheWayIn), ''],
    ['node event loop: busy, delay p50 / p99, longest GC', `${fmt(after.busy * 100, 0)} %, ${fmt(after.loopP50)} / ${fmt(after.loopP99)} ms, ${fmt(after.gcMaxMs)} ms`, ''],
    // Busy but not on a processor: the share of the window the node had work and no core to do it on.
    ['node waiting for a core (busy − CPU)', `${fmt(Math.max(0, after.busy * 100 - cpuPercent), 0)} % of the window`, '(the machine\u2019s other work, not the bridge\u2019s)'],
    ['node memory: heap in use, resident (window start → end)', `${fmt(after.heapMb[0], 0)} → ${fmt(after.heapMb[1], 0)} MB, ${fmt(after.rssMb[0], 0)} → ${fmt(after.rssMb[1], 0)} MB`, ''],
    ['load process CPU (its peers of the calls not timed)', `${fmt(plain.loadCpuPercent)} % of one core`, ''],
    ['this process: CPU, event-loop delay p50 / p99', `${fmt(plain.own.cpuPercent)} % of one core, ${fmt(plain.own.loopP50)} / ${fmt(plain.own.loopP99)} ms`, '(both paths cross it)'],
    ['machine load average (1 min) at the end', fmt(plain.loadAverage, 2), `(${cpus().length} cores)`],
  ]))
    console.log(`  ${line}`);
}

/** The node's CPU over this share of its one core: at its limit, it falls behind the work. */
const SATURATED_CPU_PERCENT = 90;
/**
 * Frames made short of those due by more than this share: the node's clock started afresh after
 * stalls (media-clock.ts), and what it skipped it neither made nor spent CPU on.
 */
const SHORT_MADE_SHARE = 0.02;
/** Forwarded packets lost beyond this share: the node dropped them as too late, and did not send them. */
const LOST_SHARE = 0.01;

/**
 * Why the node did not do all the work the window gave it, if it did not: then its CPU time is that
 * of the work it got to do, not of the calls, and says nothing of what a kind costs.
 */
function fellBehind(f: WindowFigures): string[] {
  const reasons: string[] = [];
  if (f.cpuPercent > SATURATED_CPU_PERCENT) reasons.push(`its CPU over ${SATURATED_CPU_PERCENT} % of its core`);
  const short = f.madeDue > 0 ? 1 - f.bridged.heardMade / f.madeDue : 0;
  if (short > SHORT_MADE_SHARE) reasons.push(`${fmt(short * 100)} % fewer frames made than due`);
  const lost = f.bridged.sent > 0 ? (f.bridged.sent - f.bridged.received) / f.bridged.sent : 0;
  if (lost > LOST_SHARE) reasons.push(`${fmt(lost * 100)} % of the forwarded packets lost`);
  return reasons;
}

/**
 * Every kind's window side by side, the probe calls alone on the node and all of that kind: its CPU
 * per call, and what it adds to a plain call. A window in which the node fell behind, or a plain
 * one that did, makes those figures inconclusive.
 */
function printKinds(figures: WindowFigures[], amongAll: { calls: number; cpuPercent: number }, made: RecordingsMade | undefined): void {
  const plain = figures[0]!;
  const perCall = (f: WindowFigures) => f.cpuPercent / PROBES;
  const behind = new Map(figures.map((f) => [f, fellBehind(f)]));
  const judged = (f: WindowFigures, cell: string) => (behind.get(f)!.length > 0 || behind.get(plain)!.length > 0 ? `${cell} INCONCLUSIVE` : cell);
  const row = (measure: string, cell: (f: WindowFigures) => string) => [measure, ...figures.map(cell)];
  // In a barge every listener hears a mix: no packet arrives as it was sent, none is counted or timed.
  const forwarded = (f: WindowFigures, cell: string) => (f.bridged.sent > 0 ? cell : '— (all mixed)');
  const timed = (f: WindowFigures, cell: string) => (f.probe.length > 0 ? cell : '— (all mixed)');
  const minutes = made ? made.durationMs / 60_000 : 0;
  const ended = CALLS - PROBES;
  console.log('');
  console.log(`Kinds of call: ${ended > 0 ? `the other ${ended} calls ended, ` : ''}the ${PROBES} probe calls alone on the node, all of one kind in each window (${fmt(MEASURE_MS / 1000, 0)} s, its work started ${fmt(SETTLE_MS / 1000, 0)} s before).`);
  console.log(`A call's share of the node's fixed work (its clock, its timers) is larger among ${PROBES} than among ${amongAll.calls} (${fmt(amongAll.cpuPercent / amongAll.calls, 2)} % a plain call above): compare the kinds within this table.`);
  for (const line of table([
    row('measure', (f) => KIND_TITLES[f.kind]),
    row('node CPU per call, % of one core', (f) => judged(f, fmt(perCall(f), 2))),
    row('  added to a plain call, % of one core', (f) => (f === plain ? '—' : judged(f, fmt(perCall(f) - perCall(plain), 2)))),
    row('  calls a core (100 % / CPU per call)', (f) => judged(f, fmt(100 / perCall(f), 0))),
    row(`node CPU for the ${PROBES} calls, % of one core`, (f) => fmt(f.cpuPercent)),
    row('node event loop busy / waiting for a core, % of the window', (f) => `${fmt(f.node.busy * 100, 0)} / ${fmt(Math.max(0, f.node.busy * 100 - f.cpuPercent), 0)}`),
    row('node resident memory at the window’s end, MB', (f) => fmt(f.node.rssMb[1], 0)),
    row('one-way p50 / p95 ms, the probe calls', (f) => timed(f, `${fmt(percentile(f.probe, 50), 2)} / ${fmt(percentile(f.probe, 95), 2)}`)),
    row('one-way p50 / p95 ms, direct', (f) => `${fmt(percentile(f.face, 50), 2)} / ${fmt(percentile(f.face, 95), 2)}`),
    row('added latency (probes − direct), median / p95 ms', (f) => timed(f, `${fmt(percentile(f.probe, 50) - percentile(f.face, 50), 2)} / ${fmt(percentile(f.probe, 95) - percentile(f.face, 95), 2)}`)),
    row('packets forwarded: sent, lost', (f) => forwarded(f, `${f.bridged.sent}, ${f.bridged.sent - f.bridged.received}`)),
    row('  lost less those sent late and dropped as too late', (f) => {
      const { counted, lateShare, inconclusive } = lossOf(f);
      return forwarded(f, inconclusive ? `${counted}: INCONCLUSIVE (${fmt(lateShare * 100, 2)} % sent late)` : `${counted}: ${verdict(counted === 0)}`);
    }),
    row('  sent late, %', (f) => forwarded(f, fmt(lossOf(f).lateShare * 100, 2))),
    row('frames the node made for mixes, received / due', (f) => `${f.bridged.heardMade} / ${f.madeDue}`),
    row('load process CPU (the supervisors), % of one core', (f) => fmt(f.loadCpuPercent)),
    row('machine load average (1 min) at the window’s end', (f) => fmt(f.loadAverage, 2)),
    ...(made
      ? [row('recordings handed over at the calls’ end', (f) => (f.kind === 'recorded' ? `${made.files} files, ${fmt(made.bytes / 1024 / 1024)} MB${minutes > 0 ? `, ${fmt(made.bytes / 1024 / minutes, 0)} kB a call-minute` : ''}` : '—'))]
      : []),
  ]))
    console.log(`  ${line}`);
  for (const f of figures) {
    const reasons = behind.get(f)!;
    if (reasons.length === 0) continue;
    const waited = Math.max(0, f.node.busy * 100 - f.cpuPercent);
    console.log(`  ${KIND_TITLES[f.kind]}: the node fell behind (${reasons.join('; ')}; it waited for a core ${fmt(waited, 0)} % of the window):`);
    console.log('    its CPU time is that of the work it got to do, not of the calls. Run it on a quieter machine, or with fewer BENCH_BRIDGE_PROBES.');
  }
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

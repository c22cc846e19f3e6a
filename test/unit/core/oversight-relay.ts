// The relay's agent-facing contract for who else hears a bridged call, on a team relay (team-relay.ts)
// on 127.0.0.1, for the core tests of the team's recordings and of supervisors: the bridged call's
// own path as an agent takes it (BRIDGE_AGENT_PATHS leg, answer, accepted, leave, hold), the
// recording toggle and file (RECORDING_AGENT_PATHS, shared/bridge-recording.ts) and the supervisors'
// endpoints (SUPERVISOR_PATHS, shared/supervision.ts), each with the refusals its contract lists, in
// its order (403 to a non-supervisor before anything else), and the events the relay sends with
// them: `call.recording` to every member and every supervisor whose leg is answered (and to one whose
// leg is answered while it records), `call.monitor` always to the supervisor and to the members for
// a whisper or a barge (a listen only when the team tells). Bodies are checked with the
// contract's own schemas.
import { z } from 'zod';
import { answerBodySchema, holdBodySchema, legIdSchema } from '../../../shared/bridge';
import { recordingToggleBodySchema, type RecordMode } from '../../../shared/bridge-recording';
import type { RelayEvent } from '../../../shared/events';
import { liveCallSchema, monitorBodySchema, type LiveCall, type MonitorMode } from '../../../shared/supervision';
import { OFFER_SDP } from '../../fixtures/sdp';
import { BRIDGE_ANSWER_SDP, LEG_OFFER_SDP } from './bridge-relay';
import { startTeamRelay, type RouteAnswer, type TeamAgent, type TeamRelay } from './team-relay';

/** The node's offer of a supervisor's leg. */
export const MONITOR_OFFER_SDP = LEG_OFFER_SDP.replace('o=- 10 20', 'o=- 12 22');

export interface Monitor {
  legId: string;
  mode: MonitorMode;
  answer?: string;
}

export interface OverseenCall {
  callId: string;
  from: string;
  name?: string;
  bridged: boolean;
  /** The agents in the call now. */
  members: Set<string>;
  /** The customer's leg is connected (the accept went through). */
  connected: boolean;
  startedAt: number;
  answeredAt?: number;
  recording: boolean;
  /** Every agent who was a member while the call had a recording. */
  heard: Set<string>;
  /** By supervisor id. */
  monitors: Map<string, Monitor>;
}

export interface OversightRelay {
  relay: TeamRelay;
  url: string;
  /** The relay's `--record`. */
  record: RecordMode;
  /** The relay's `--tell-agents-when-monitored`. */
  tellAgents: boolean;
  /** Agents whose role is supervisor. */
  supervisors: Set<string>;
  calls: Map<string, OverseenCall>;
  /** The recordings the relay keeps, by call id, with who may hear them. */
  recordings: Map<string, { bytes: Buffer; agents: Set<string> }>;
  /** A bridged call (or, `bridged: false`, a direct one) rings for `agentIds`. */
  ring(callId: string, from: string, agentIds: string[], o?: { bridged?: boolean; name?: string }): void;
  /** The customer hangs up: the members hear the terminate, each supervisor in it `left` with `call_ended`; a recorded call's file is kept when `file` is given. */
  end(callId: string, file?: Buffer): void;
  /** The requests to paths matching `pattern`, as "METHOD path". */
  seen(pattern?: RegExp): string[];
  close(): Promise<void>;
}

const refusal = (status: number, code: string, message: string, field?: string): RouteAnswer => ({ status, json: { error: { code, message, ...(field !== undefined ? { field } : {}) } } });
const reply = (json: unknown): RouteAnswer => ({ status: 200, json });

export async function startOversightRelay(agents: TeamAgent[]): Promise<OversightRelay> {
  const relay = await startTeamRelay(agents);
  relay.me = { bridged: true };
  let legs = 0;
  const nameOf = (agentId: string): string => agents.find((a) => a.id === agentId)?.name ?? agentId;
  const o: OversightRelay = {
    relay,
    url: relay.url,
    record: 'on-demand',
    tellAgents: false,
    supervisors: new Set(),
    calls: new Map(),
    recordings: new Map(),
    ring(callId, from, agentIds, ring = {}) {
      const bridged = ring.bridged ?? true;
      o.calls.set(callId, { callId, from, ...(ring.name !== undefined ? { name: ring.name } : {}), bridged, members: new Set(), connected: false, startedAt: Date.now(), recording: false, heard: new Set(), monitors: new Map() });
      relay.send({ type: 'call.incoming', callId, from, ...(ring.name !== undefined ? { name: ring.name } : {}), sdp: OFFER_SDP, timestamp: Date.now(), ...(bridged ? { bridged: true } : {}) }, agentIds);
    },
    end(callId, file) {
      const call = o.calls.get(callId);
      if (call === undefined) return;
      o.calls.delete(callId);
      relay.send({ type: 'call.terminated', callId, status: 'COMPLETED', durationSec: 30, timestamp: Date.now() }, [...call.members]);
      for (const [supervisorId] of call.monitors) monitorEvent(call, supervisorId, 'left', undefined, 'call_ended');
      if (file !== undefined) o.recordings.set(callId, { bytes: file, agents: new Set(call.heard) });
    },
    seen: (pattern) => relay.requests.filter((r) => pattern === undefined || pattern.test(r.path)).map((r) => `${r.method} ${r.path}`),
    close: () => relay.close(),
  };

  const setRecording = (call: OverseenCall, recording: boolean, by?: string): void => {
    if (call.recording === recording) return;
    call.recording = recording;
    if (recording) for (const member of call.members) call.heard.add(member);
    const supervisors = [...call.monitors].flatMap(([id, monitor]) => (monitor.answer !== undefined ? [id] : []));
    relay.send({ type: 'call.recording', callId: call.callId, recording, ...(by !== undefined ? { by } : {}), timestamp: Date.now() }, [...call.members, ...supervisors]);
  };

  /** `call.monitor`: always to the supervisor; to the members for a whisper or a barge, and for a listen (or the leave of one) only when the team tells. */
  const monitorEvent = (call: OverseenCall, supervisorId: string, mode: MonitorMode | 'left', before: MonitorMode | undefined, reason?: 'left' | 'call_ended'): void => {
    const told = mode === 'left' ? before !== undefined && (before !== 'listen' || o.tellAgents) : mode !== 'listen' || o.tellAgents;
    const event: RelayEvent = { type: 'call.monitor', callId: call.callId, supervisorId, name: nameOf(supervisorId), mode, ...(reason !== undefined ? { reason } : {}), timestamp: Date.now() };
    relay.send(event, [supervisorId, ...(told ? [...call.members].filter((m) => m !== supervisorId) : [])]);
  };

  const liveCall = (call: OverseenCall): LiveCall =>
    liveCallSchema.parse({
      callId: call.callId,
      direction: 'incoming',
      customer: { number: call.from, ...(call.name !== undefined ? { name: call.name } : {}) },
      agents: [...call.members].map((id) => ({ id, name: nameOf(id) })),
      state: call.members.size === 0 ? 'ringing' : 'talking',
      startedAt: call.startedAt,
      ...(call.answeredAt !== undefined ? { answeredAt: call.answeredAt } : {}),
      bridged: call.bridged,
      ...(call.bridged && call.connected ? { quality: { mos: 4.3, lossPercent: 0, jitterMs: 3 } } : {}),
      monitors: [...call.monitors].map(([id, m]) => ({ id, name: nameOf(id), mode: m.mode })),
    });

  relay.routes.push(async ({ method, path, agentId, body }) => {
    let m: RegExpExecArray | null;
    const callOf = (encoded: string) => o.calls.get(decodeURIComponent(encoded));

    // The bridged call's own path, as the app takes it.
    if ((m = /^\/calls\/([^/]+)\/bridge\/(leg|answer|accepted|leave|hold|quality)$/.exec(path))) {
      const call = callOf(m[1]!);
      if (call === undefined || !call.bridged) return refusal(404, 'not_found', 'no such bridged call');
      switch (`${method} ${m[2]!}`) {
        case 'POST leg':
          return reply({ legId: `leg-${agentId}-${++legs}`, offer: LEG_OFFER_SDP });
        case 'POST answer':
          if (!answerBodySchema.safeParse(body).success) return refusal(400, 'invalid_input', 'the body breaks the contract');
          call.members.add(agentId);
          call.answeredAt = Date.now();
          if (call.recording) call.heard.add(agentId);
          return reply({ sdp: BRIDGE_ANSWER_SDP });
        case 'POST accepted':
          call.connected = true;
          if (o.record === 'always') setRecording(call, true);
          return reply({});
        case 'POST leave':
          call.members.delete(agentId);
          return reply({ last: call.members.size === 0 });
        case 'POST hold':
          return holdBodySchema.safeParse(body).success ? reply({}) : refusal(400, 'invalid_input', 'the body breaks the contract');
        default:
          return refusal(404, 'not_found', 'no quality to report');
      }
    }

    // RECORDING_AGENT_PATHS.toggle
    if (method === 'POST' && (m = /^\/calls\/([^/]+)\/bridge\/recording$/.exec(path))) {
      const call = callOf(m[1]!);
      if (call === undefined || !call.bridged) return refusal(404, 'not_found', 'no such bridged call');
      if (!call.members.has(agentId)) return refusal(403, 'forbidden', 'only an agent in the call can record it');
      const asked = recordingToggleBodySchema.safeParse(body);
      if (!asked.success) return refusal(400, 'invalid_input', 'recording: must be true or false', 'recording');
      if (o.record !== 'on-demand') return refusal(409, 'invalid_state', o.record === 'always' ? 'the team records every call (--record always)' : 'the team does not record calls (--record never)');
      if (!call.connected) return refusal(409, 'invalid_state', 'the customer is not connected yet');
      setRecording(call, asked.data.recording, agentId);
      return reply({ recording: call.recording });
    }

    // RECORDING_AGENT_PATHS.file
    if (method === 'GET' && (m = /^\/recordings\/([^/]+)$/.exec(path))) {
      const kept = o.recordings.get(decodeURIComponent(m[1]!));
      if (kept === undefined) return refusal(404, 'not_found', 'the team has no recording of this call');
      if (!kept.agents.has(agentId) && !o.supervisors.has(agentId)) return refusal(403, 'forbidden', 'only the agents of the call and supervisors may hear its recording');
      return { status: 200, bytes: kept.bytes, headers: { 'Content-Type': 'audio/ogg', 'Content-Length': String(kept.bytes.length), 'Accept-Ranges': 'bytes' } };
    }

    // SUPERVISOR_PATHS: 403 to any other agent, before anything else.
    const supervised = path === '/team/calls' || path.startsWith('/team/calls/');
    if (!supervised) return undefined;
    if (!o.supervisors.has(agentId)) return refusal(403, 'forbidden', 'only supervisors may see and join the team’s live calls');
    if (method === 'GET' && path === '/team/calls') return reply({ at: Date.now(), calls: [...o.calls.values()].map(liveCall) });

    if ((m = /^\/team\/calls\/([^/]+)\/monitor\/answer$/.exec(path)) && method === 'POST') {
      const asked = z.object({ legId: legIdSchema, sdp: z.string().min(1) }).safeParse(body);
      if (!asked.success) return refusal(400, 'invalid_input', 'the body breaks the contract', String(asked.error.issues[0]?.path[0] ?? ''));
      const call = callOf(m[1]!);
      const monitor = call?.monitors.get(agentId);
      if (call === undefined || monitor === undefined) return refusal(404, 'not_found', 'not joined to this call');
      if (monitor.legId !== asked.data.legId) return refusal(409, 'invalid_state', 'not the leg offered');
      const connects = monitor.answer === undefined;
      monitor.answer = asked.data.sdp;
      // A supervisor whose leg connects to a call that records hears so at once.
      if (connects && call.recording) relay.send({ type: 'call.recording', callId: call.callId, recording: true, timestamp: Date.now() }, [agentId]);
      return reply({ ok: true });
    }

    if (!(m = /^\/team\/calls\/([^/]+)\/monitor$/.exec(path))) return refusal(404, 'not_found', `no ${method} ${path}`);
    const call = callOf(m[1]!);
    const joined = call?.monitors.get(agentId);
    if (method === 'DELETE') {
      if (call !== undefined && joined !== undefined) {
        call.monitors.delete(agentId);
        monitorEvent(call, agentId, 'left', joined.mode, 'left');
      }
      return reply({ ok: true });
    }
    const asked = monitorBodySchema.safeParse(body);
    if (!asked.success) return refusal(400, 'invalid_input', 'mode: must be one of listen, whisper, barge', 'mode');
    const { mode } = asked.data;
    if (method === 'PUT') {
      if (call === undefined || joined === undefined) return refusal(404, 'not_found', 'not joined to this call');
      if (joined.mode !== mode) {
        const before = joined.mode;
        joined.mode = mode;
        monitorEvent(call, agentId, mode, before);
      }
      return reply({ mode });
    }
    if (method !== 'POST') return refusal(404, 'not_found', `no ${method} ${path}`);
    if (call === undefined) return refusal(404, 'not_found', 'no live call with this id');
    if (!call.bridged) return refusal(409, 'invalid_state', 'a direct call cannot be joined');
    if (call.answeredAt === undefined) return refusal(409, 'invalid_state', 'the call is not answered yet');
    if (call.members.has(agentId)) return refusal(409, 'invalid_state', 'you are an agent of this call');
    const monitor = joined ?? { legId: `leg-monitor-${agentId}-${++legs}`, mode };
    const before = joined?.mode;
    monitor.mode = mode;
    call.monitors.set(agentId, monitor);
    if (before !== mode) monitorEvent(call, agentId, mode, before);
    return reply({ legId: monitor.legId, offer: MONITOR_OFFER_SDP, mode });
  });
  return o;
}

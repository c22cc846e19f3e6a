// A BridgeControl that records what it is asked and answers what the test scripts, for the control
// API's HTTP tests; the round trip with a real BridgeNode is control-roundtrip.test.ts.
import type { BridgeControl, BridgedCallReport, Routes } from '../../../shared/bridge';
import type { LogFields, Logger, LogLevel } from '../../../shared/log';
import { ok, type Result } from '../../../shared/result';

export const BRIDGE_TOKEN = 'bridge-token-0123456789abcdef-0123456789';

export interface ControlCall {
  method: keyof BridgeControl;
  args: unknown[];
}

export const REPORT: BridgedCallReport = {
  callId: 'wacid.1',
  customer: { state: 'connected', packetsReceived: 120, packetsLost: 1, jitterMs: 3.5, roundTripMs: 41, lastPacketAt: 1_760_000_000_000 },
  agents: { 'leg-1': { state: 'connecting', packetsReceived: 0, packetsLost: 0 } },
  routes: { customer: ['leg-1'], 'leg-1': ['customer'] },
};

export type Scripted = Result<unknown> | (() => Promise<Result<unknown>>);

export class ScriptedControl implements BridgeControl {
  readonly calls: ControlCall[] = [];
  /** The next answer of a method, used once (a function is called when the method is): otherwise each method's default success. */
  private readonly scripted = new Map<keyof BridgeControl, Array<Scripted>>();

  answerNext(method: keyof BridgeControl, answer: Scripted): void {
    this.scripted.set(method, [...(this.scripted.get(method) ?? []), answer]);
  }

  prepareIncoming(callId: string, offer: string) {
    return this.answer('prepareIncoming', [callId, offer], { answer: `answer to ${offer}` });
  }
  connectCustomer(callId: string) {
    return this.answer('connectCustomer', [callId], null);
  }
  prepareOutgoing(ref: string) {
    return this.answer('prepareOutgoing', [ref], { offer: `offer for ${ref}` });
  }
  bindOutgoing(ref: string, callId: string) {
    return this.answer('bindOutgoing', [ref, callId], null);
  }
  applyCustomerAnswer(callId: string, answer: string) {
    return this.answer('applyCustomerAnswer', [callId, answer], null);
  }
  offerAgentLeg(callId: string, legId: string) {
    return this.answer('offerAgentLeg', [callId, legId], { offer: `offer for ${legId}` });
  }
  applyAgentAnswer(callId: string, legId: string, answer: string) {
    return this.answer('applyAgentAnswer', [callId, legId, answer], null);
  }
  answerAgentLeg(callId: string, legId: string, offer: string) {
    return this.answer('answerAgentLeg', [callId, legId, offer], { answer: `answer to ${offer}` });
  }
  setRoutes(callId: string, routes: Routes) {
    return this.answer('setRoutes', [callId, routes], null);
  }
  releaseCustomer(callId: string) {
    return this.answer('releaseCustomer', [callId], null);
  }
  closeAgentLeg(callId: string, legId: string) {
    return this.answer('closeAgentLeg', [callId, legId], null);
  }
  endCall(callId: string) {
    return this.answer('endCall', [callId], null);
  }
  report(callId: string) {
    return this.answer('report', [callId], { ...REPORT, callId });
  }
  startRecording(callId: string, notice?: Int16Array) {
    return this.answer('startRecording', notice === undefined ? [callId] : [callId, notice], null);
  }
  stopRecording(callId: string) {
    return this.answer('stopRecording', [callId], null);
  }

  private async answer<T>(method: keyof BridgeControl, args: unknown[], fallback: T): Promise<Result<T>> {
    this.calls.push({ method, args });
    const next = this.scripted.get(method)?.shift();
    if (next === undefined) return ok(fallback);
    return (await (typeof next === 'function' ? next() : next)) as Result<T>;
  }
}

/** Keeps the test output quiet and lets tests read what was logged. */
export class RecordingLogger implements Logger {
  readonly lines: Array<{ level: LogLevel; msg: string; fields?: LogFields }> = [];
  readonly debug = (msg: string, fields?: LogFields) => this.lines.push({ level: 'debug', msg, fields });
  readonly info = (msg: string, fields?: LogFields) => this.lines.push({ level: 'info', msg, fields });
  readonly warn = (msg: string, fields?: LogFields) => this.lines.push({ level: 'warn', msg, fields });
  readonly error = (msg: string, fields?: LogFields) => this.lines.push({ level: 'error', msg, fields });
  messages(level: LogLevel): string[] {
    return this.lines.filter((l) => l.level === level).map((l) => l.msg);
  }
  /** Everything logged, as one text: what a secret must never be part of. */
  text(): string {
    return JSON.stringify(this.lines);
  }
}

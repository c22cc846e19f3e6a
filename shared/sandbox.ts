// The sandbox's control API (sandbox/README.md): what the app's embedded mode and the tests use to
// drive simulated customers. The gateway endpoints themselves follow gateway-spec.md.

export type CustomerBehaviour =
  | 'answers' // rings ~1 s, answers, talks
  | 'rejects' // rings, then rejects
  | 'no_answer' // rings until the business gives up
  | 'no_permission' // initiate answered with error 138006
  | 'busy'; // initiate answered with error 138003

export interface SandboxCustomer {
  /** Digits with country code (gateway form). */
  number: string;
  name: string;
  behaviour: CustomerBehaviour;
}

/** A simulated customer's view of one call, for tests and diagnostics. */
export interface SandboxCallReport {
  callId: string;
  number: string;
  direction: 'USER_INITIATED' | 'BUSINESS_INITIATED';
  state: 'ringing' | 'connected' | 'ended';
  /** Gateway requests for this call, in order received: "accept", "reject", "terminate", "initiate". */
  requests: { action: string; at: number }[];
  /** When the customer's peer received its first packet of any kind from the business (unix ms). */
  firstPacketAt?: number;
  /** Decoded Opus frames heard from the business, and their RMS energy (0..1). */
  framesHeard: number;
  heardRms: number;
  /** When the customer first decoded a non-silent frame from the business (unix ms). */
  firstHeardAt?: number;
  /** Frames the customer sent. */
  framesSent: number;
  /** DTMF digits (RFC 4733, payload type 126) heard from the business, in order. */
  digitsHeard?: string;
}

export const SANDBOX_PATHS = {
  customers: '/control/customers', // GET → SandboxCustomer[]
  incoming: '/control/incoming', // POST { number } → { callId }
  hangup: '/control/hangup', // POST { callId } → {}
  calls: '/control/calls', // GET → SandboxCallReport[]; GET /control/calls/{id} → SandboxCallReport
  log: '/control/log', // GET → { action, callId?, at, status }[]
} as const;

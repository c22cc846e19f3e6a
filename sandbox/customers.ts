// The sandbox's simulated customers: behaviour is chosen by number (shared/sandbox.ts). The numbers
// are valid ones from ranges set aside for fiction (US 202-555-01xx, UK 020 7946 0xxx).
import type { SandboxCustomer } from '../shared/sandbox';

export const DEFAULT_CUSTOMERS: readonly SandboxCustomer[] = [
  { number: '12025550101', name: 'Ada Lovelace', behaviour: 'answers' },
  { number: '442079460101', name: 'Grace Hopper', behaviour: 'answers' },
  { number: '12025550102', name: 'Alan Turing', behaviour: 'rejects' },
  { number: '12025550103', name: 'Katherine Johnson', behaviour: 'no_answer' },
  { number: '442079460102', name: 'Tim Berners-Lee', behaviour: 'no_permission' },
  { number: '12025550104', name: 'Margaret Hamilton', behaviour: 'busy' },
  // Bad networks built in, for calls either way: what the app's call-quality warnings and
  // reconnection are tested against (POST /control/network makes any call's network bad).
  {
    number: '12025550105',
    name: 'Hedy Lamarr',
    behaviour: 'answers',
    network: { label: 'lossy network (5 % loss, 40 ms jitter)', lossPercent: 5, jitterMs: 40 },
  },
  {
    number: '442079460103',
    name: 'Claude Shannon',
    behaviour: 'answers',
    network: { label: 'network blackout (10 s, 8 s into the call)', blackoutMs: 10_000, blackoutAfterMs: 8_000 },
  },
];

/** An unknown number behaves like a customer who answers, with a generic name. */
export function findCustomer(customers: readonly SandboxCustomer[], number: string): SandboxCustomer {
  return customers.find((c) => c.number === number) ?? { number, name: 'Customer', behaviour: 'answers' };
}

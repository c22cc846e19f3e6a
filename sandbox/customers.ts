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
];

/** An unknown number behaves like a customer who answers, with a generic name. */
export function findCustomer(customers: readonly SandboxCustomer[], number: string): SandboxCustomer {
  return customers.find((c) => c.number === number) ?? { number, name: 'Customer', behaviour: 'answers' };
}

// Each domain of the service answers its own commands in a table of its own; the service composes
// them into the one table the hosts call through `handle`. The compiler checks the composition:
// every command of `commandSchemas` is answered, and by one domain only.
import type { z } from 'zod';
import type { CommandName, CommandResults, commandSchemas, PushMessage } from '../../../shared/api';
import type { Result } from '../../../shared/result';

export type CommandParamsOut<N extends CommandName> = z.output<(typeof commandSchemas)[N]>;
export type CommandHandlers = { [N in CommandName]: (params: CommandParamsOut<N>) => Promise<Result<CommandResults[N]>> };

/** Sends a push to every window. */
export type Push = (message: PushMessage) => void;

type DomainTables = Record<string, Partial<CommandHandlers>>;
type Answered<D> = { [K in keyof D]: keyof D[K] }[keyof D];
type AnsweredTwice<D> = { [K in keyof D]: keyof D[K] & Answered<Omit<D, K>> }[keyof D];
type Unanswered<D> = Exclude<CommandName, Answered<D>>;
/** D itself when it answers every command once; otherwise a type that names what is wrong. */
type ExactlyOnce<D> = [Unanswered<D>] extends [never] ? ([AnsweredTwice<D>] extends [never] ? D : { answeredTwice: AnsweredTwice<D> }) : { unanswered: Unanswered<D> };

/** The domains' tables as one, keyed by domain name so that a refusal says which domains overlap. */
export function composeHandlers<D extends DomainTables>(domains: D & ExactlyOnce<D>): CommandHandlers {
  const table: Partial<CommandHandlers> = {};
  for (const handlers of Object.values<Partial<CommandHandlers>>(domains)) Object.assign(table, handlers);
  // ExactlyOnce<D> has proved that every command has its handler.
  return table as CommandHandlers;
}

// First-claim-wins without a relay. The coordinator runs the same path as in a team (claim before
// accept, a decline verdict before reject); with no relay this agent is the whole team, so its
// claim always wins and nobody else is left to answer a call it declines.
import { ok, type Result } from '../../shared/result';
import type { CallClaims, DeclineOutcome } from './relay-client';

export class LocalClaims implements CallClaims {
  constructor(readonly agentId = 'local') {}

  claim(): Promise<Result<{ agentId: string }>> {
    return Promise.resolve(ok({ agentId: this.agentId }));
  }

  decline(): Promise<Result<DeclineOutcome>> {
    return Promise.resolve(ok({ othersRinging: 0 }));
  }
}

// Imported first by the relay's command line (cli.ts), before the relay allocates anything.
//
// V8 learns from an allocation site whose objects outlive a young-generation collection and from
// then on places every object it makes straight in the old generation ("allocation-site
// pretenuring"). The relay starts with a burst of long-lived objects (every agent's stream, its
// session, its calls), after which the same sites make short-lived objects for each webhook: the
// parsed body, the event, the frame written. Placed in the old generation, those die where only a
// full mark-compact finds them, and under a team's load the old generation then grows by tens of
// megabytes a second. Without pretenuring they die young, where a scavenge frees them for almost
// nothing; `npm run bench:relay` measured 10–20 % more webhooks a second on one core.
import { setFlagsFromString } from 'node:v8';

setFlagsFromString('--no-allocation-site-pretenuring');
